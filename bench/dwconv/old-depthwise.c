/* bench/dwconv: the depthwise loops k_conv used before k-dwconv.c (main at
 * 06af549, kernels/cpu/k-conv.c), kept unchanged as the "old" column of
 * bench-dwconv; only the names and the entry point are the bench's. */
#include "config.h"

#include "bench-dwconv.h"

static int64_t
clamp64(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* One output of a plane with one input channel, every tap checked. */
static float
direct_output(const k_geometry *g, const float *in, const float *filter, float bias, int64_t od,
              int64_t oh, int64_t ow)
{
	float sum = bias;
	for (int64_t kd = 0; kd < g->kernel[0]; kd++) {
		int64_t id = od * g->stride[0] - g->pad[0] + kd * g->dilation[0];
		if (id < 0 || id >= g->in[0])
			continue;
		for (int64_t kh = 0; kh < g->kernel[1]; kh++) {
			int64_t ih = oh * g->stride[1] - g->pad[1] + kh * g->dilation[1];
			if (ih < 0 || ih >= g->in[1])
				continue;
			const float *src = in + (id * g->in[1] + ih) * g->in[2];
			const float *taps = filter + (kd * g->kernel[1] + kh) * g->kernel[2];
			for (int64_t kw = 0; kw < g->kernel[2]; kw++) {
				int64_t iw = ow * g->stride[2] - g->pad[2] + kw * g->dilation[2];
				if (iw >= 0 && iw < g->in[2])
					sum += taps[kw] * src[iw];
			}
		}
	}
	return sum;
}

/*
 * Outputs [ow, ow + 8 * blocks) of row (od, oh), 1 or 2 blocks of eight, all
 * of whose horizontal taps lie inside the input (stride 1): the sums stay in
 * registers while the taps are added.
 */
static inline void
direct_blocks(const k_geometry *g, const float *in, const float *filter, float bias, int64_t od,
              int64_t oh, int64_t ow, int blocks, float *out)
{
	k_v8 a0 = K_V8_SPLAT(bias), a1 = a0, x;
	for (int64_t kd = 0; kd < g->kernel[0]; kd++) {
		int64_t id = od * g->stride[0] - g->pad[0] + kd * g->dilation[0];
		if (id < 0 || id >= g->in[0])
			continue;
		for (int64_t kh = 0; kh < g->kernel[1]; kh++) {
			int64_t ih = oh * g->stride[1] - g->pad[1] + kh * g->dilation[1];
			if (ih < 0 || ih >= g->in[1])
				continue;
			const float *src = in + (id * g->in[1] + ih) * g->in[2] + ow - g->pad[2];
			const float *taps = filter + (kd * g->kernel[1] + kh) * g->kernel[2];
			for (int64_t kw = 0; kw < g->kernel[2]; kw++) {
				k_v8 v = K_V8_SPLAT(taps[kw]);
				const float *s = src + kw * g->dilation[2];
				K_V8_LOAD(x, s);
				a0 += v * x;
				if (blocks == 2) {
					K_V8_LOAD(x, s + 8);
					a1 += v * x;
				}
			}
		}
	}
	K_V8_STORE(out + ow, a0);
	if (blocks == 2)
		K_V8_STORE(out + ow + 8, a1);
}

/*
 * One output plane of a convolution whose groups have one input channel
 * each (depthwise). With stride 1 along the rows, the outputs whose taps all
 * lie inside a row go eight or sixteen at a time; the few at the ends, and
 * every output of a strided row, one at a time with every tap checked.
 */
K_SIMD_CLONES static void
conv_direct_plane(const k_geometry *g, const float *in, const float *filter, float bias, float *plane)
{
	int64_t inner_lo = 0, inner_hi = 0;
	if (g->stride[2] == 1) {
		inner_lo = g->pad[2];
		inner_hi = g->in[2] + g->pad[2] - (g->kernel[2] - 1) * g->dilation[2];
		inner_hi = clamp64(inner_hi, inner_lo, g->out[2]);
		inner_lo = clamp64(inner_lo, 0, inner_hi);
	}
	for (int64_t od = 0; od < g->out[0]; od++)
	for (int64_t oh = 0; oh < g->out[1]; oh++) {
		float *out = plane + (od * g->out[1] + oh) * g->out[2];
		int64_t ow = 0;
		for (; ow < inner_lo; ow++)
			out[ow] = direct_output(g, in, filter, bias, od, oh, ow);
		for (; ow + 16 <= inner_hi; ow += 16)
			direct_blocks(g, in, filter, bias, od, oh, ow, 2, out);
		for (; ow + 8 <= inner_hi; ow += 8)
			direct_blocks(g, in, filter, bias, od, oh, ow, 1, out);
		/* The last few inner outputs: a block that overlaps the one before
		 * (it writes the same values again). */
		if (ow < inner_hi && inner_hi - inner_lo >= 8) {
			direct_blocks(g, in, filter, bias, od, oh, inner_hi - 8, 1, out);
			ow = inner_hi;
		}
		for (; ow < g->out[2]; ow++)
			out[ow] = direct_output(g, in, filter, bias, od, oh, ow);
	}
}

typedef struct old_args {
	k_geometry g;
	const float *x, *weights, *bias;
	float *y;
} old_args;

static void
conv_direct_range(void *arg, int64_t t0, int64_t t1)
{
	const old_args *a = arg;
	const k_geometry *g = &a->g;
	for (int64_t t = t0; t < t1; t++) {
		int64_t n = t / g->out_channels, oc = t % g->out_channels;
		int64_t group = oc / g->out_per_group;
		conv_direct_plane(g, a->x + (n * g->in_channels + group) * g->in_size,
		                  a->weights + oc * g->kernel_size, a->bias ? a->bias[oc] : 0.0f,
		                  a->y + t * g->out_size);
	}
}

void
old_depthwise(const k_window *w, const float *x, const float *weights, const float *bias, float *y,
              const st_exec_ctx *ctx)
{
	old_args a = { .x = x, .weights = weights, .bias = bias, .y = y };
	k_geometry_expand(w, &a.g);
	int64_t work = a.g.out_size * a.g.kernel_size;
	k_parallel_for(ctx, a.g.batch * a.g.out_channels, work >= 16384 ? 1 : 16384 / (work + 1) + 1,
	               conv_direct_range, &a);
}
