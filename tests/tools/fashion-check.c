/* Test tool for the Fashion-MNIST example: splits the Debian package's test
 * images into .npy batches for strata run, and compares what strata run wrote
 * with PyTorch's logits and the labels.
 *   fashion-check split IMAGES.gz BATCH OUTDIR
 *   fashion-check compare OUTDIR BATCHES REFERENCE.npy LABELS.gz
 *   fashion-check accuracy OUTDIR BATCHES LABELS.gz MINIMUM
 * accuracy is for variants without a reference (the XWN model): it prints
 * the top-1 accuracy and fails below MINIMUM. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "st-io.h"

/* Reads a whole gzip file; caller frees. */
static unsigned char *
read_gz(const char *path, size_t *len)
{
	gzFile f = gzopen(path, "rb");
	if (f == NULL) {
		fprintf(stderr, "cannot open %s\n", path);
		exit(2);
	}
	size_t cap = 1 << 20, n = 0;
	unsigned char *buf = st_xmalloc(cap);
	int got;
	while ((got = gzread(f, buf + n, (unsigned)(cap - n))) > 0) {
		n += (size_t)got;
		if (n == cap)
			buf = st_xrealloc(buf, cap *= 2);
	}
	gzclose(f);
	*len = n;
	return buf;
}

static int
split(const char *images, int batch, const char *dir)
{
	size_t len;
	unsigned char *raw = read_gz(images, &len);
	int count = (int)((len - 16) / 784);
	for (int b = 0; b * batch < count; b++) {
		int n = count - b * batch < batch ? count - b * batch : batch;
		st_shape s = { .dtype = ST_DTYPE_UINT8, .rank = 4, .dims = { n, 1, 28, 28 } };
		char path[4096], err[256];
		snprintf(path, sizeof path, "%s/images_%d.npy", dir, b);
		if (st_npy_write(path, &s, raw + 16 + (size_t)b * batch * 784, err, sizeof err) != 0) {
			fprintf(stderr, "%s\n", err);
			return 2;
		}
	}
	free(raw);
	printf("%d\n", (count + batch - 1) / batch);
	return 0;
}

static int
compare(const char *dir, int batches, const char *reference, const char *labels_path)
{
	char err[512];
	st_npy ref;
	if (st_npy_read(reference, &ref, err, sizeof err) != 0 || st_npy_convert(&ref, ST_DTYPE_FLOAT32, err, sizeof err) != 0) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	size_t len;
	unsigned char *labels = read_gz(labels_path, &len);
	const float *want = ref.data;
	int64_t row = 0, agree = 0, right_strata = 0, right_torch = 0;
	double worst = 0;
	for (int b = 0; b < batches; b++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/logits_%d.npy", dir, b);
		st_npy got;
		if (st_npy_read(path, &got, err, sizeof err) != 0) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		const float *x = got.data;
		for (int64_t i = 0; i < got.dims[0]; i++, row++) {
			const float *a = x + i * 10, *w = want + row * 10;
			int best_a = 0, best_w = 0;
			double max_w = 0;
			for (int k = 0; k < 10; k++)
				max_w = fmax(max_w, fabs(w[k]));
			for (int k = 0; k < 10; k++) {
				/* ARCHITECTURE's agreement with rtol 1e-4, atol scaled by the largest logit. */
				double excess = fabs(a[k] - w[k]) - (1e-4 * max_w + 1e-4 * fabs(w[k]));
				worst = fmax(worst, fabs(a[k] - w[k]) / (max_w > 0 ? max_w : 1));
				if (excess > 0) {
					fprintf(stderr, "image %lld, logit %d: strata %.8g, PyTorch %.8g\n", (long long)row, k,
					        a[k], w[k]);
					return 1;
				}
				if (a[k] > a[best_a])
					best_a = k;
				if (w[k] > w[best_w])
					best_w = k;
			}
			agree += best_a == best_w;
			right_strata += best_a == labels[8 + row];
			right_torch += best_w == labels[8 + row];
		}
		st_npy_free(&got);
	}
	printf("%lld images; logits agree (largest relative difference %.2g); top-1 accuracy: strata %.4f, "
	       "PyTorch %.4f; same prediction on %lld\n",
	       (long long)row, worst, (double)right_strata / (double)row, (double)right_torch / (double)row,
	       (long long)agree);
	free(labels);
	st_npy_free(&ref);
	return row == 10000 && right_strata == right_torch && agree == row ? 0 : 1;
}

static int
accuracy(const char *dir, int batches, const char *labels_path, double minimum)
{
	size_t len;
	unsigned char *labels = read_gz(labels_path, &len);
	int64_t row = 0, right = 0;
	for (int b = 0; b < batches; b++) {
		char path[4096], err[512];
		snprintf(path, sizeof path, "%s/logits_%d.npy", dir, b);
		st_npy got;
		if (st_npy_read(path, &got, err, sizeof err) != 0) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		const float *x = got.data;
		for (int64_t i = 0; i < got.dims[0] && (size_t)(8 + row) < len; i++, row++) {
			int best = 0;
			for (int k = 1; k < 10; k++)
				if (x[i * 10 + k] > x[i * 10 + best])
					best = k;
			right += best == labels[8 + row];
		}
		st_npy_free(&got);
	}
	free(labels);
	double acc = row ? (double)right / (double)row : 0;
	printf("%lld images; top-1 accuracy %.4f (at least %.4f wanted)\n", (long long)row, acc, minimum);
	return row == 10000 && acc >= minimum ? 0 : 1;
}

int
main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "split") == 0)
		return split(argv[2], atoi(argv[3]), argv[4]);
	if (argc == 6 && strcmp(argv[1], "compare") == 0)
		return compare(argv[2], atoi(argv[3]), argv[4], argv[5]);
	if (argc == 6 && strcmp(argv[1], "accuracy") == 0)
		return accuracy(argv[2], atoi(argv[3]), argv[4], atof(argv[5]));
	fprintf(stderr, "usage: fashion-check split IMAGES.gz BATCH OUTDIR | compare OUTDIR BATCHES REFERENCE LABELS.gz "
	        "| accuracy OUTDIR BATCHES LABELS.gz MINIMUM\n");
	return 2;
}
