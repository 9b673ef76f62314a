/* bench/xwn: what the XWN transform costs when weights are bound. The 53
 * convolutions of ResNet-50 (their real shapes, 23.5M weights) are written
 * once as a model in four variants that share one weights folder: plain
 * convolution layers, xwn_convolution with the XWN set off, with the
 * transform (bit 4), and with the transform and pruning. Each variant's
 * plan is compiled once and then bound to the folder again and again, the
 * variants taking turns, so all see the same machine state; prints each
 * median bind time, its difference from the plain model's and their ratio,
 * and the transform alone (k_xwn_apply over every filter, on weights
 * already in memory). Binding runs on the calling thread, so its CPU time
 * is printed too: on a machine shared with other work it is the steadier
 * figure, and the load average says how shared the machine was.
 *   bench-xwn DIR [RUNS] [THREADS]     DIR: where the models and weights go */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "k-xwn.h"
#include "st-engine.h"
#include "st-io.h"

/* One convolution of ResNet-50 (torchvision's v1.5: the stride of a
 * bottleneck sits on its 3 x 3). */
typedef struct conv_spec {
	char name[32], input[32];
	int in, out, kernel, stride;
} conv_spec;

#define MAX_CONVS 64
static conv_spec convs[MAX_CONVS];
static int n_convs;

/* The bottlenecks' element-wise sums: name and its two inputs. */
typedef struct add_spec {
	char name[32], a[32], b[32];
} add_spec;
static add_spec adds[16];
static int n_adds;

static void
add_conv(const char *name, const char *input, int in, int out, int kernel, int stride)
{
	conv_spec *c = &convs[n_convs++];
	snprintf(c->name, sizeof c->name, "%s", name);
	snprintf(c->input, sizeof c->input, "%s", input);
	c->in = in;
	c->out = out;
	c->kernel = kernel;
	c->stride = stride;
}

/* conv1, then four stages of 3, 4, 6 and 3 bottlenecks; each bottleneck's
 * last convolution is summed with its shortcut (the downsampling
 * convolution in a stage's first block). Batch normalisation, ReLU and the
 * classifier are left out: they bind no transformed weights. */
static const char *
resnet50(void)
{
	static char last[32];
	static const int blocks[4] = { 3, 4, 6, 3 }, widths[4] = { 64, 128, 256, 512 };
	add_conv("conv1", "data", 3, 64, 7, 2);
	snprintf(last, sizeof last, "pool1");
	int channels = 64;
	for (int s = 0; s < 4; s++) {
		for (int b = 0; b < blocks[s]; b++) {
			int w = widths[s], stride = (b == 0 && s > 0) ? 2 : 1;
			char n[32], a[32], bb[32], c[32], d[32];
			snprintf(a, sizeof a, "l%d_%d_conv1", s + 1, b);
			snprintf(bb, sizeof bb, "l%d_%d_conv2", s + 1, b);
			snprintf(c, sizeof c, "l%d_%d_conv3", s + 1, b);
			add_conv(a, last, channels, w, 1, 1);
			add_conv(bb, a, w, w, 3, stride);
			add_conv(c, bb, w, 4 * w, 1, 1);
			const char *shortcut = last;
			if (b == 0) {
				snprintf(d, sizeof d, "l%d_%d_down", s + 1, b);
				add_conv(d, last, channels, 4 * w, 1, stride);
				shortcut = d;
			}
			snprintf(n, sizeof n, "l%d_%d_add", s + 1, b);
			add_spec *e = &adds[n_adds++];
			snprintf(e->name, sizeof e->name, "%s", n);
			snprintf(e->a, sizeof e->a, "%s", c);
			snprintf(e->b, sizeof e->b, "%s", shortcut);
			snprintf(last, sizeof last, "%s", n);
			channels = 4 * w;
		}
	}
	return last;
}

/* A splitmix64 step: the weights' generator. */
static uint64_t
next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double
uniform(uint64_t *state)
{
	return (double)(next_random(state) >> 11) * 0x1.0p-53;
}

/* Trained filters are roughly normal with slice scales that vary; the sum
 * of four uniforms stands for the normal, a per-slice factor for the rest.
 * The level search's cost depends on this spread, so it matters a little. */
static int
write_weights(const char *dir)
{
	uint64_t state = 50;
	for (int i = 0; i < n_convs; i++) {
		const conv_spec *c = &convs[i];
		int64_t taps = (int64_t)c->kernel * c->kernel, n = (int64_t)c->out * c->in * taps;
		float *w = malloc(sizeof *w * (size_t)n);
		if (w == NULL)
			return -1;
		double bound = 1.0 / sqrt((double)(c->in * taps));
		for (int64_t s = 0; s < (int64_t)c->out * c->in; s++) {
			double scale = bound * (0.25 + 1.5 * uniform(&state));
			for (int64_t t = 0; t < taps; t++) {
				double g = uniform(&state) + uniform(&state) + uniform(&state) + uniform(&state) - 2.0;
				w[s * taps + t] = (float)(g * 1.7 * scale);
			}
		}
		st_shape shape = { .dtype = ST_DTYPE_FLOAT32, .rank = 4,
		                   .dims = { c->out, c->in, c->kernel, c->kernel } };
		char path[4096], err[512];
		int rc = -1;
		if (snprintf(path, sizeof path, "%s/%s_weights.npy", dir, c->name) >= (int)sizeof path)
			snprintf(err, sizeof err, "the folder's name is too long");
		else
			rc = st_npy_write(path, &shape, w, err, sizeof err);
		free(w);
		if (rc != 0) {
			fprintf(stderr, "bench-xwn: %s\n", err);
			return -1;
		}
	}
	return 0;
}

/* Runs k_xwn_apply and k_xwn_apply_ref on cases random tensors of every kind the
 * fast path treats apart (taps 1 and many, slices in and out of exact
 * levels, ties, zeros, -0, subnormals, inf, NaN, pruning, in place). Returns
 * the number that differ in a bit of the output or in the figures. */
static int
check_exactness(int cases)
{
	static const float scales[] = { 4, 4, 4, 2, 3, 1, 0.5f, 7.3f, 1e-3f, 0, 1e6f, 1e-30f, 1e-38f };
	static const float bases[] = { 1, 1, 1e-3f, 1e3f, 1e-37f, 1e-40f, 1e30f };
	static const int tap_counts[] = { 1, 1, 2, 3, 9, 9, 25, 49, 130 };
	uint64_t state = 7;
	size_t room = 300 * 100 * 9;
	float *w = malloc(sizeof *w * room), *a_out = malloc(sizeof *a_out * room), *b_out = malloc(sizeof *b_out * room);
	int bad = 0;
	for (int c = 0; c < cases; c++) {
		int64_t a = 1 + (int64_t)(next_random(&state) % 40), b = 1 + (int64_t)(next_random(&state) % 40);
		int64_t taps = tap_counts[next_random(&state) % 9];
		if (taps == 130)
			a = 1 + a % 4;
		if (next_random(&state) % 40 == 0) { /* several parts */
			a = 9 + (int64_t)(next_random(&state) % 290);
			b = 30 + (int64_t)(next_random(&state) % 70);
			taps = next_random(&state) % 2 ? 1 : 9;
		}
		bool transposed = next_random(&state) % 2;
		k_xwn_settings s = {
			.transform = next_random(&state) % 8 != 0,
			.bit = (int)(next_random(&state) % 9),
			.max_scale = scales[next_random(&state) % 13],
			.pruning = next_random(&state) % 2,
			.prun_weight = (float[]){ 0.5f, 0.5f, 0.3f, 1.0f, 2.0f, 0.0f }[next_random(&state) % 6],
		};
		int mode = (int)(next_random(&state) % 8);
		float base = bases[next_random(&state) % 7];
		int64_t n = a * b * taps;
		for (int64_t i = 0; i < n; i++) {
			float v = (float)((uniform(&state) + uniform(&state) + uniform(&state) + uniform(&state) - 2.0) * base);
			uint64_t r = next_random(&state);
			if (mode == 1 && r % 4 == 0)
				v = r % 8 == 0 ? -0.0f : 0.0f;
			else if (mode == 2)
				v = (float)((int)(r % 9) - 4) * 0.25f; /* many ties */
			else if (mode == 3 && r % 40 == 0)
				v = r % 80 == 0 ? INFINITY : NAN;
			else if (mode == 4)
				v = ldexpf(r % 2 ? 1.5f : -0.75f, (int)(r % 20) - 10); /* midpoints of max_scale 4 */
			w[i] = v;
		}
		k_xwn_stats sa, sb;
		k_xwn_apply_ref(w, a_out, a, b, taps, transposed, &s, &sa);
		int rc;
		if (c % 2) {
			memcpy(b_out, w, sizeof *w * (size_t)n);
			rc = k_xwn_apply(b_out, b_out, a, b, taps, transposed, &s, &sb);
		} else {
			rc = k_xwn_apply(w, b_out, a, b, taps, transposed, &s, &sb);
		}
		bool same = rc == 0 && sa.slices == sb.slices && sa.pruned == sb.pruned && sa.weights == sb.weights &&
		            sa.levels == sb.levels &&
		            memcmp(sa.level_count, sb.level_count, sizeof sa.level_count) == 0;
		for (int64_t i = 0; same && i < n; i++) {
			uint32_t x, y;
			memcpy(&x, &a_out[i], sizeof x);
			memcpy(&y, &b_out[i], sizeof y);
			same = x == y || (isnan(a_out[i]) && isnan(b_out[i]));
		}
		if (!same && bad++ < 5)
			fprintf(stderr, "bench-xwn: case %d differs (%" PRId64 " x %" PRId64 " x %" PRId64 ", bit %d, max_scale %g, "
			        "pruning %d, transposed %d)\n", c, a, b, taps, s.bit, s.max_scale, s.pruning, transposed);
	}
	free(w);
	free(a_out);
	free(b_out);
	return bad;
}

enum { PLAIN, XWN_OFF, XWN_TRANSFORM, XWN_BOTH, VARIANTS };
static const char *variant_names[VARIANTS] = {
	"convolution", "xwn_convolution, XWN off", "xwn, transform (bit 4)", "xwn, transform + pruning",
};

static int
write_model(const char *path, int variant, const char *last)
{
	FILE *f = fopen(path, "w");
	if (f == NULL) {
		fprintf(stderr, "bench-xwn: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	static const char *xwn_sets[VARIANTS] = {
		"", ", \"use_transform\": false, \"use_pruning\": false",
		", \"use_transform\": true, \"bit\": 4, \"max_scale\": 4.0, \"use_pruning\": false",
		", \"use_transform\": true, \"bit\": 4, \"max_scale\": 4.0, \"use_pruning\": true, \"prun_weight\": 0.5",
	};
	fprintf(f, "{\"format\": \"strata-model\", \"version\": 1,\n"
	           " \"network\": {\"name\": \"resnet50_convs\", \"weights\": \"weights\"},\n"
	           " \"layers\": [\n"
	           "  {\"name\": \"data\", \"type\": \"input\", \"params\": {\"dims\": [3, 224, 224]}},\n");
	for (int i = 0; i < n_convs; i++) {
		const conv_spec *c = &convs[i];
		fprintf(f,
		        "  {\"name\": \"%s\", \"type\": \"%s\", \"params\": {\"num_output\": %d, \"kernel\": [%d, %d], "
		        "\"stride\": [%d, %d], \"pads\": [%d], \"bias\": false%s}, \"inputs\": [\"%s.0\"]},\n",
		        c->name, variant == PLAIN ? "convolution" : "xwn_convolution", c->out, c->kernel, c->kernel,
		        c->stride, c->stride, c->kernel / 2, xwn_sets[variant], c->input);
		if (i == 0)
			fprintf(f, "  {\"name\": \"pool1\", \"type\": \"pooling\", \"params\": {\"kernel\": [3, 3], "
			           "\"stride\": [2, 2], \"pads\": [1]}, \"inputs\": [\"conv1.0\"]},\n");
	}
	for (int i = 0; i < n_adds; i++)
		fprintf(f, "  {\"name\": \"%s\", \"type\": \"elementwise\", \"params\": {\"operation\": \"add\"}, "
		           "\"inputs\": [\"%s.0\", \"%s.0\"]},\n",
		        adds[i].name, adds[i].a, adds[i].b);
	fprintf(f, "  {\"name\": \"out\", \"type\": \"output\", \"inputs\": [\"%s.0\"]}\n ]}\n", last);
	return fclose(f) == 0 ? 0 : -1;
}

/* Seconds of CPU time this thread has used. */
static double
cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int
compare(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, compare);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench-xwn DIR [RUNS] [THREADS]\n");
		return 2;
	}
	const char *dir = argv[1];
	int runs = argc > 2 ? atoi(argv[2]) : 15, threads = argc > 3 ? atoi(argv[3]) : 0;
	if (runs < 3)
		runs = 3;
	int bad = check_exactness(20000);
	printf("k_xwn_apply against k_xwn_apply_ref, 20000 random tensors: %s\n",
	       bad ? "DIFFERENT (see above)" : "bit for bit the same");
	if (bad)
		return 1;
	const char *last = resnet50();
	char weights[2048], path[4096];
	if (snprintf(weights, sizeof weights, "%s/weights", dir) >= (int)sizeof weights) {
		fprintf(stderr, "bench-xwn: the folder's name is too long\n");
		return 2;
	}
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "bench-xwn: cannot make %s: %s\n", dir, strerror(errno));
		return 2;
	}
	if (mkdir(weights, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "bench-xwn: cannot make %s: %s\n", weights, strerror(errno));
		return 2;
	}
	if (write_weights(weights) != 0)
		return 2;
	int64_t total = 0;
	for (int i = 0; i < n_convs; i++)
		total += (int64_t)convs[i].out * convs[i].in * convs[i].kernel * convs[i].kernel;

	st_registry *r = st_registry_new();
	st_registry_load_default(r);
	st_diag d;
	st_diag_init(&d);
	st_graph *g[VARIANTS];
	st_plan *p[VARIANTS];
	st_plan_options opt = { .format = -1, .threads = threads };
	for (int v = 0; v < VARIANTS; v++) {
		if (snprintf(path, sizeof path, "%s/variant%d.strata.json", dir, v) >= (int)sizeof path ||
		    write_model(path, v, last) != 0)
			return 2;
		g[v] = st_model_load(path, r, &d);
		if (g[v] == NULL) {
			st_diag_print(&d, stderr);
			return 2;
		}
		st_graph_check(g[v]);
		p[v] = st_plan_compile(g[v], &opt, &d);
		/* The first binding also faults in the plan's copies and scratch. */
		if (p[v] == NULL || st_plan_bind_weights(p[v], weights, &d) != 0) {
			st_diag_print(&d, stderr);
			return 2;
		}
	}

	double *t[VARIANTS], *c[VARIANTS];
	for (int v = 0; v < VARIANTS; v++) {
		t[v] = calloc((size_t)runs, sizeof *t[v]);
		c[v] = calloc((size_t)runs, sizeof *c[v]);
	}
	for (int k = 0; k < runs; k++) {
		for (int j = 0; j < VARIANTS; j++) {
			int v = (j + k) % VARIANTS; /* each variant takes each place in turn */
			double t0 = st_now(), c0 = cpu_now();
			if (st_plan_bind_weights(p[v], weights, &d) != 0) {
				st_diag_print(&d, stderr);
				return 3;
			}
			c[v][k] = (cpu_now() - c0) * 1e3;
			t[v][k] = (st_now() - t0) * 1e3;
		}
	}

	/* The transform alone, over the filters of the bound plan (mapped,
	 * already read once), into one buffer. */
	float *out = malloc(sizeof *out * (size_t)total);
	double *kt = calloc((size_t)runs, sizeof *kt), *kp = calloc((size_t)runs, sizeof *kp);
	double *ktc = calloc((size_t)runs, sizeof *ktc), *kpc = calloc((size_t)runs, sizeof *kpc);
	k_xwn_settings transform = { .transform = true, .bit = 4, .max_scale = 4.0f, .prun_weight = 0.5f };
	k_xwn_settings both = transform;
	both.pruning = true;
	int64_t pruned = 0, slices = 0;
	for (int k = 0; k < runs; k++) {
		for (int pass = 0; pass < 2; pass++) {
			double t0 = st_now(), c0 = cpu_now();
			float *o = out;
			for (int i = 0; i < n_convs; i++) {
				st_shape s;
				const float *w = st_plan_layer_weight(p[XWN_BOTH], st_graph_find(g[XWN_BOTH], convs[i].name),
				                                      "weights", &s);
				k_xwn_stats st;
				if (w == NULL || k_xwn_apply(w, o, s.dims[0], s.dims[1], s.dims[2] * s.dims[3], false,
				                             pass ? &both : &transform, &st) != 0) {
					fprintf(stderr, "bench-xwn: no weights for %s\n", convs[i].name);
					return 3;
				}
				o += s.dims[0] * s.dims[1] * s.dims[2] * s.dims[3];
				if (k == 0 && pass == 1) {
					pruned += st.pruned;
					slices += st.slices;
				}
			}
			(pass ? kp : kt)[k] = (st_now() - t0) * 1e3;
			(pass ? kpc : ktc)[k] = (cpu_now() - c0) * 1e3;
		}
	}

	double load[3] = { 0, 0, 0 };
	getloadavg(load, 3);
	printf("ResNet-50's %d convolutions, %.1fM weights (%.0f MiB), %d binds each, %d threads, load %.1f\n",
	       n_convs, (double)total / 1e6, (double)total * 4 / (1 << 20), runs, st_plan_threads(p[PLAIN]), load[0]);
	double plain = median(t[PLAIN], runs), plain_cpu = median(c[PLAIN], runs);
	printf("%-28s %10s %12s %8s %10s %12s\n", "median of", "bind (ms)", "- plain (ms)", "ratio", "CPU (ms)",
	       "- plain (ms)");
	for (int v = 0; v < VARIANTS; v++) {
		double m = median(t[v], runs), mc = median(c[v], runs);
		printf("%-28s %10.2f %12.2f %8.2f %10.2f %12.2f\n", variant_names[v], m, m - plain, m / plain, mc,
		       mc - plain_cpu);
	}
	printf("%-28s %10.2f %12s %8s %10.2f\n", "k_xwn_apply, transform", median(kt, runs), "", "",
	       median(ktc, runs));
	printf("%-28s %10.2f %12s %8s %10.2f   (%.1f%% of %" PRId64 " slices pruned)\n", "k_xwn_apply, + pruning",
	       median(kp, runs), "", "", median(kpc, runs), slices ? 100.0 * (double)pruned / (double)slices : 0.0,
	       slices);
	for (int v = 0; v < VARIANTS; v++) {
		free(t[v]);
		free(c[v]);
		st_plan_free(p[v]);
		st_graph_free(g[v]);
	}
	free(out);
	free(kt);
	free(kp);
	free(ktc);
	free(kpc);
	st_registry_free(r);
	st_diag_free(&d);
	return 0;
}
