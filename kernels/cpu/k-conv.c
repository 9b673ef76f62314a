/* Convolution and deconvolution on the CPU: direct reference loops, and fast
 * paths: products on Strata's own SGEMM (k-conv-gemm.c), Winograd
 * (k-winograd.c), the channel-blocked kernel (k-nchwc.c) with conversions
 * in the scratch, im2col (or col2im) with OpenBLAS sgemm, or the direct
 * loops of k-dwconv.c for depthwise and first-layer shapes. */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "k-conv-gemm.h"
#include "k-nchwc.h"
#include "k-nn.h"
#include "k-winograd.h"
#include "k-int.h"

void
k_geometry_expand(const k_window *w, k_geometry *g)
{
	*g = (k_geometry){
		.batch = w->batch, .in_channels = w->in_channels, .out_channels = w->out_channels,
		.groups = w->groups < 1 ? 1 : w->groups,
	};
	g->in_per_group = g->in_channels / g->groups;
	g->out_per_group = g->out_channels / g->groups;
	int missing = 3 - w->spatial;
	for (int i = 0; i < 3; i++) {
		int j = i - missing;
		bool real = j >= 0;
		g->in[i] = real ? w->in[j] : 1;
		g->out[i] = real ? w->out[j] : 1;
		g->kernel[i] = real ? w->kernel[j] : 1;
		g->stride[i] = real ? w->stride[j] : 1;
		g->dilation[i] = real ? w->dilation[j] : 1;
		g->pad[i] = real ? w->pad_begin[j] : 0;
		g->pad_end[i] = real ? w->pad_end[j] : 0;
	}
	g->in_size = g->in[0] * g->in[1] * g->in[2];
	g->out_size = g->out[0] * g->out[1] * g->out[2];
	g->kernel_size = g->kernel[0] * g->kernel[1] * g->kernel[2];
}

/* ---- reference ---- */

void
k_conv_ref(const k_window *w, const float *x, const float *weights, const float *bias, float *y)
{
	k_geometry g;
	k_geometry_expand(w, &g);
	for (int64_t n = 0; n < g.batch; n++) {
		for (int64_t oc = 0; oc < g.out_channels; oc++) {
			int64_t group = oc / g.out_per_group;
			const float *filter = weights + oc * g.in_per_group * g.kernel_size;
			float *plane = y + (n * g.out_channels + oc) * g.out_size;
			for (int64_t od = 0; od < g.out[0]; od++)
			for (int64_t oh = 0; oh < g.out[1]; oh++)
			for (int64_t ow = 0; ow < g.out[2]; ow++) {
				double sum = bias ? bias[oc] : 0.0;
				for (int64_t c = 0; c < g.in_per_group; c++) {
					const float *in = x + (n * g.in_channels + group * g.in_per_group + c) * g.in_size;
					const float *f = filter + c * g.kernel_size;
					for (int64_t kd = 0; kd < g.kernel[0]; kd++)
					for (int64_t kh = 0; kh < g.kernel[1]; kh++)
					for (int64_t kw = 0; kw < g.kernel[2]; kw++) {
						int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dilation[0];
						int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dilation[1];
						int64_t iw = ow * g.stride[2] - g.pad[2] + kw * g.dilation[2];
						if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1] || iw < 0 ||
						    iw >= g.in[2])
							continue;
						sum += (double)in[(id * g.in[1] + ih) * g.in[2] + iw] *
						       f[(kd * g.kernel[1] + kh) * g.kernel[2] + kw];
					}
				}
				plane[(od * g.out[1] + oh) * g.out[2] + ow] = (float)sum;
			}
		}
	}
}

void
k_deconv_ref(const k_window *w, const float *x, const float *weights, const float *bias, float *y)
{
	k_geometry g;
	k_geometry_expand(w, &g);
	for (int64_t n = 0; n < g.batch; n++) {
		for (int64_t oc = 0; oc < g.out_channels; oc++) {
			float *plane = y + (n * g.out_channels + oc) * g.out_size;
			for (int64_t i = 0; i < g.out_size; i++)
				plane[i] = bias ? bias[oc] : 0.0f;
		}
		/* Every input element is scattered through the kernel of each output
		 * channel of its group. */
		for (int64_t ic = 0; ic < g.in_channels; ic++) {
			int64_t group = ic / g.in_per_group;
			const float *in = x + (n * g.in_channels + ic) * g.in_size;
			for (int64_t o = 0; o < g.out_per_group; o++) {
				int64_t oc = group * g.out_per_group + o;
				const float *f = weights + (ic * g.out_per_group + o) * g.kernel_size;
				float *plane = y + (n * g.out_channels + oc) * g.out_size;
				for (int64_t id = 0; id < g.in[0]; id++)
				for (int64_t ih = 0; ih < g.in[1]; ih++)
				for (int64_t iw = 0; iw < g.in[2]; iw++) {
					float v = in[(id * g.in[1] + ih) * g.in[2] + iw];
					for (int64_t kd = 0; kd < g.kernel[0]; kd++)
					for (int64_t kh = 0; kh < g.kernel[1]; kh++)
					for (int64_t kw = 0; kw < g.kernel[2]; kw++) {
						int64_t od = id * g.stride[0] - g.pad[0] + kd * g.dilation[0];
						int64_t oh = ih * g.stride[1] - g.pad[1] + kh * g.dilation[1];
						int64_t ow = iw * g.stride[2] - g.pad[2] + kw * g.dilation[2];
						if (od < 0 || od >= g.out[0] || oh < 0 || oh >= g.out[1] || ow < 0 ||
						    ow >= g.out[2])
							continue;
						plane[(od * g.out[1] + oh) * g.out[2] + ow] +=
							v * f[(kd * g.kernel[1] + kh) * g.kernel[2] + kw];
					}
				}
			}
		}
	}
}

/* ---- shared by the fast paths ---- */

/* Bytes of im2col or col2im buffer one thread aims to keep: it is written
 * and read back at once, so it should stay in the L2 of one core (2 MiB
 * here). Measured on the 3x3 convolutions of ResNet-18's stages, 256 KiB to
 * 1 MiB are all within 3 % of each other, 128 KiB is 10 % slower and 1 MiB
 * best for the deeper layers. */
#define SLOT_TARGET_BYTES (1024 * 1024)

/* Floats of a slot rounded up to whole 64-byte lines, so slots never share one. */
static size_t
slot_round(int64_t floats)
{
	return (size_t)((floats + 15) / 16 * 16);
}

/*
 * Along a row of `run` positions whose first maps to coordinate start and
 * each next one `step` further, the positions t in [*lo, *hi) land inside
 * [0, size).
 */
static void
row_inside(int64_t start, int64_t step, int64_t size, int64_t run, int64_t *lo, int64_t *hi)
{
	*lo = k_clamp64(k_div_up(-start, step), 0, run);
	*hi = k_clamp64(k_div_up(size - start, step), *lo, run);
}

/* ---- convolution ---- */

typedef struct conv_plan {
	k_geometry g;
	bool reference;   /* sizes beyond the BLAS interface: run the reference */
	bool direct;      /* depthwise or first layer: k-dwconv.c's direct loops */
	bool pointwise;   /* 1x1, stride 1, unpadded: the input is the GEMM's B as it is */
	int64_t rows;     /* GEMM K: in_per_group x kernel_size */
	int64_t tile, tiles;     /* output positions per task */
	int64_t mblock, mblocks; /* output channels per task */
	int64_t tasks;           /* batch x groups x tiles x mblocks */
	size_t slot_floats;
} conv_plan;

/* Plans a convolution for `threads` threads working at once. */
static void
conv_plan_make(const k_window *w, int threads, conv_plan *p)
{
	*p = (conv_plan){ 0 };
	k_geometry *g = &p->g;
	k_geometry_expand(w, g);
	p->rows = g->in_per_group * g->kernel_size;
	p->direct = k_conv_direct_chosen(w) != K_DIRECT_NONE;
	p->pointwise = g->kernel_size == 1 && g->in_size == g->out_size;
	for (int i = 0; i < 3; i++) {
		if (g->stride[i] != 1 || g->pad[i] != 0)
			p->pointwise = false;
	}
	if (p->rows == 0 || p->rows > INT_MAX || g->out_size > INT_MAX || g->in_size > INT_MAX ||
	    g->out_per_group > INT_MAX) {
		p->reference = true;
		return;
	}
	/* Column tiles small enough that the im2col buffer stays in L2. */
	int64_t tile = SLOT_TARGET_BYTES / (p->rows * (int64_t)sizeof(float)) / 16 * 16;
	if (tile < 64)
		tile = 64;
	if (p->pointwise)
		tile = g->out_size;
	/* Enough tasks for every thread: narrower tiles, then channel blocks. */
	int64_t planes = g->batch * g->groups;
	if (planes < threads) {
		int64_t want = k_div_up(g->out_size, k_div_up(threads, planes));
		want = (want + 15) / 16 * 16;
		if (want < 32)
			want = 32;
		if (want < tile)
			tile = want;
	}
	if (tile > g->out_size)
		tile = g->out_size;
	p->tile = tile;
	p->tiles = k_div_up(g->out_size, tile);
	p->mblocks = 1;
	if (planes * p->tiles < threads && g->out_per_group >= 32) {
		p->mblocks = k_div_up(threads, planes * p->tiles);
		if (p->mblocks > g->out_per_group / 16)
			p->mblocks = g->out_per_group / 16;
	}
	p->mblock = k_div_up(g->out_per_group, p->mblocks);
	p->mblocks = k_div_up(g->out_per_group, p->mblock);
	p->tasks = planes * p->tiles * p->mblocks;
	p->slot_floats = p->pointwise ? 0 : slot_round(p->rows * p->tile);
}

/* Whether a convolution the fast paths take as a product runs on our own
 * SGEMM rather than im2col and OpenBLAS: always, unless k_gemm_force says
 * otherwise (tests, benchmarks). Ours was as fast or faster on every
 * convolution shape of ResNet-18 (bench-gemm --resnet, docs/performance.md). */
static bool
own_gemm(const conv_plan *p)
{
	return !p->reference && !p->direct && k_gemm_forced() != K_GEMM_OPENBLAS && k_conv_gemm_fits(&p->g);
}

/* Each thread count up to `slots` plans differently (fewer threads take
 * wider tiles): room for whichever the run will use. */
size_t
k_conv_scratch_bytes(const k_window *w, int slots)
{
	if (k_conv_direct_chosen(w) != K_DIRECT_NONE)
		return k_conv_direct_scratch_bytes(w, slots);
	conv_plan own;
	conv_plan_make(w, 1, &own);
	if (own_gemm(&own))
		return k_conv_gemm_scratch_bytes(&own.g, slots, false);
	return k_conv_im2col_scratch_bytes(w, slots);
}

size_t
k_conv_im2col_scratch_bytes(const k_window *w, int slots)
{
	size_t most = 0;
	for (int t = 1; t <= slots || t == 1; t++) {
		conv_plan p;
		conv_plan_make(w, t, &p);
		size_t bytes = p.slot_floats * sizeof(float) * (size_t)t;
		most = bytes > most ? bytes : most;
	}
	return most;
}

/* Declared in k-conv-gemm.h, which its other user includes. */
void
k_im2col(const k_geometry *g, const float *x, int64_t p0, int64_t p1, int64_t pitch, float *col)
{
	int64_t oplane = g->out[1] * g->out[2];
	for (int64_t c = 0; c < g->in_per_group; c++) {
		const float *in = x + c * g->in_size;
		for (int64_t kd = 0; kd < g->kernel[0]; kd++)
		for (int64_t kh = 0; kh < g->kernel[1]; kh++)
		for (int64_t kw = 0; kw < g->kernel[2]; kw++) {
			float *row = col + (((c * g->kernel[0] + kd) * g->kernel[1] + kh) * g->kernel[2] + kw) * pitch;
			int64_t od = p0 / oplane, oh = p0 % oplane / g->out[2], ow = p0 % g->out[2];
			for (int64_t p = p0; p < p1;) {
				int64_t run = g->out[2] - ow < p1 - p ? g->out[2] - ow : p1 - p;
				float *dst = row + (p - p0);
				int64_t id = od * g->stride[0] - g->pad[0] + kd * g->dilation[0];
				int64_t ih = oh * g->stride[1] - g->pad[1] + kh * g->dilation[1];
				if (id < 0 || id >= g->in[0] || ih < 0 || ih >= g->in[1]) {
					memset(dst, 0, (size_t)run * sizeof *dst);
				} else {
					const float *src = in + (id * g->in[1] + ih) * g->in[2];
					int64_t iw = ow * g->stride[2] - g->pad[2] + kw * g->dilation[2], lo, hi;
					row_inside(iw, g->stride[2], g->in[2], run, &lo, &hi);
					memset(dst, 0, (size_t)lo * sizeof *dst);
					if (g->stride[2] == 1) {
						memcpy(dst + lo, src + iw + lo, (size_t)(hi - lo) * sizeof *dst);
					} else {
						for (int64_t t = lo; t < hi; t++)
							dst[t] = src[iw + t * g->stride[2]];
					}
					memset(dst + hi, 0, (size_t)(run - hi) * sizeof *dst);
				}
				p += run;
				ow = 0;
				if (++oh == g->out[1]) {
					oh = 0;
					od++;
				}
			}
		}
	}
}

typedef struct conv_args {
	const conv_plan *p;
	const float *x, *weights, *bias;
	float *y;
	float *scratch;
	int64_t chunks;
} conv_args;

/* Runs tasks [t0, t1) with one im2col buffer, reusing it while consecutive
 * tasks differ only in their block of output channels. */
static void
conv_tasks(const conv_args *a, int64_t t0, int64_t t1, float *col)
{
	const conv_plan *p = a->p;
	const k_geometry *g = &p->g;
	int64_t filled = -1; /* the (sample, group, tile) col holds */
	for (int64_t t = t0; t < t1; t++) {
		int64_t mb = t % p->mblocks, field = t / p->mblocks;
		int64_t tile = field % p->tiles, plane = field / p->tiles;
		int64_t n = plane / g->groups, group = plane % g->groups;
		int64_t q0 = tile * p->tile, q1 = q0 + p->tile < g->out_size ? q0 + p->tile : g->out_size;
		int64_t m0 = mb * p->mblock;
		int64_t m1 = m0 + p->mblock < g->out_per_group ? m0 + p->mblock : g->out_per_group;
		const float *in = a->x + (n * g->in_channels + group * g->in_per_group) * g->in_size;
		const float *b;
		int ldb;
		if (p->pointwise) {
			b = in + q0;
			ldb = (int)g->in_size;
		} else {
			if (filled != field) {
				k_im2col(g, in, q0, q1, q1 - q0, col);
				filled = field;
			}
			b = col;
			ldb = (int)(q1 - q0);
		}
		int64_t oc0 = group * g->out_per_group + m0;
		float *out = a->y + (n * g->out_channels + oc0) * g->out_size + q0;
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)(m1 - m0), (int)(q1 - q0),
		            (int)p->rows, 1.0f, a->weights + oc0 * p->rows, (int)p->rows, b, ldb, 0.0f, out,
		            (int)g->out_size);
		if (a->bias) {
			for (int64_t m = 0; m < m1 - m0; m++) {
				float v = a->bias[oc0 + m], *row = out + m * g->out_size;
				for (int64_t q = 0; q < q1 - q0; q++)
					row[q] += v;
			}
		}
	}
}

/* Chunk c of the tasks, with scratch slot c. */
static void
conv_chunks(void *arg, int64_t c0, int64_t c1)
{
	const conv_args *a = arg;
	for (int64_t c = c0; c < c1; c++) {
		int64_t t0 = c * a->p->tasks / a->chunks, t1 = (c + 1) * a->p->tasks / a->chunks;
		conv_tasks(a, t0, t1, a->scratch + (size_t)c * a->p->slot_floats);
	}
}

/* ---- channel-blocked convolution inside an NCHW layer ---- */

/* The header of filters packed for k_conv_nchwc. */
typedef struct blocked_head {
	uint32_t magic;
	int32_t reserved0;
	int64_t cin, cout;
	int64_t reserved[5];
} blocked_head;
_Static_assert(sizeof(blocked_head) == 64, "the packed filters start 64 bytes in");
#define BLOCKED_MAGIC 0x42434e4bu /* "KNCB" */

static int blocked_forced = -1;

void
k_conv_blocked_force(int on)
{
	blocked_forced = on;
}

/* 0 or 1 where k_conv_blocked_force or STRATA_BLOCKED (off or on) says
 * so, -1 where the rules decide; the variable is read where the rules
 * are asked (at prepare and while a plan is built). */
static int
blocked_override(void)
{
	static const char *const words[] = { "off", "0", "on", "1" };
	static const int values[] = { 0, 0, 1, 1 };
	return blocked_forced >= 0 ? blocked_forced : k_env_choice("STRATA_BLOCKED", words, values, 4);
}

bool
k_conv_blocked_chosen(const k_window *w, k_isa isa)
{
	if (!k_conv_nchwc_fits(w) || k_gemm_kernel_of(isa) == NULL)
		return false;
	int on = blocked_override();
	if (on >= 0)
		return on;
	if (k_winograd_forced_on(w))
		return false;
	if (isa != K_ISA_AVX512 || w->in_channels < 64 || w->out_channels < 64 || w->kernel[0] * w->kernel[1] == 1)
		return false;
	/* Measured in ResNet-18 on a Xeon with two 512-bit FMA units, by the
	 * profiler (docs/performance.md, session 6): its 3x3/2 layers and the
	 * 3x3 ones at 14x14 and 7x7, whose filters come from memory, run 1.1 to
	 * 1.4 times faster, their conversions counted; the 28x28 ones tie with
	 * Winograd, and the 1x1/2 projections lose to their conversions. */
	return w->stride[0] > 1 || w->stride[1] > 1 || w->out[0] * w->out[1] <= 14 * 14;
}

bool
k_conv_blocked_layout(const k_window *w, k_isa isa, bool in_blocked)
{
	if (!k_conv_nchwc_fits(w))
		return false;
	int on = blocked_override();
	if (on >= 0)
		return on;
	if (isa != K_ISA_AVX512 || k_gemm_kernel_of(isa) == NULL)
		return false;
	if (k_conv_blocked_chosen(w, isa))
		return true;
	/* From blocked input also the 1x1 and strided layers, and everything
	 * on planes of 14x14 and less. Not the 3x3 layers at 28x28, which
	 * ResNet-18's profiles put 1.2 to 1.3 times slower than Winograd on two
	 * threads (docs/performance.md, session 9). */
	return in_blocked && (w->out[0] * w->out[1] <= 14 * 14 || w->stride[0] > 1 || w->stride[1] > 1 ||
	                      w->kernel[0] * w->kernel[1] == 1);
}

static bool
blocked_is_packed(const void *packed)
{
	const blocked_head *h = packed;
	return h != NULL && h->magic == BLOCKED_MAGIC;
}

/* Floats of the blocked copy of the input, rounded to whole vectors, and
 * then of the output, in the scratch. */
static int64_t
blocked_in_floats(const k_window *w)
{
	return (k_nchwc_floats(w->batch, w->in_channels, w->in[0], w->in[1]) + 15) / 16 * 16;
}

static size_t
blocked_scratch_bytes(const k_window *w)
{
	int64_t out = k_nchwc_floats(w->batch, w->out_channels, w->out[0], w->out[1]);
	return (size_t)(blocked_in_floats(w) + out) * sizeof(float);
}

/* x converted to the blocked layout in the scratch, convolved, and the
 * result converted back into y; relu and clip applied as the kernel
 * stores, other activations after. */
static void
blocked_run(const k_window *w, const float *x, const void *packed, const float *bias, float *y, void *scratch,
            const k_post *post, const st_exec_ctx *ctx)
{
	float *xb = scratch, *yb = xb + blocked_in_floats(w);
	k_nchwc_from_nchw(w->batch, w->in_channels, w->in[0], w->in[1], x, xb, ctx);
	float lo = 0.0f, hi = 0.0f;
	bool clamp = k_post_clamp(post, &lo, &hi);
	k_conv_nchwc(w, xb, (const float *)((const blocked_head *)packed + 1), bias, clamp, lo, hi, yb, ctx);
	k_nchwc_to_nchw(w->batch, w->out_channels, w->out[0], w->out[1], yb, y, ctx);
	if (post != NULL && !clamp)
		k_post_planes(post, y, w->out[0] * w->out[1], 0, w->batch * w->out_channels);
}

size_t
k_conv_packed_bytes(const k_window *w)
{
	if (k_conv_blocked_chosen(w, k_cpu_isa()))
		return sizeof(blocked_head) + k_conv_nchwc_packed_floats(w) * sizeof(float);
	/* Winograd (k-winograd.c) where it was measured faster. */
	int wm = k_winograd_chosen(w, k_cpu_isa());
	if (wm != 0)
		return k_winograd_packed_bytes(w, wm, k_cpu_isa());
	conv_plan p;
	conv_plan_make(w, 1, &p);
	return own_gemm(&p) ? k_conv_gemm_packed_bytes(&p.g) : 0;
}

void
k_conv_pack(const k_window *w, const float *weights, void *packed)
{
	if (k_conv_blocked_chosen(w, k_cpu_isa())) {
		blocked_head *h = packed;
		*h = (blocked_head){ .magic = BLOCKED_MAGIC, .cin = w->in_channels, .cout = w->out_channels };
		k_conv_nchwc_pack(w, weights, (float *)(h + 1));
		return;
	}
	int wm = k_winograd_chosen(w, k_cpu_isa());
	if (wm != 0) {
		k_winograd_pack(w, wm, k_cpu_isa(), weights, packed);
		return;
	}
	conv_plan p;
	conv_plan_make(w, 1, &p);
	/* Nothing to pack where k_conv_packed_bytes says 0 (the direct loops,
	 * OpenBLAS): packed may be an empty block then. */
	if (own_gemm(&p))
		k_conv_gemm_pack(&p.g, weights, packed);
}

size_t
k_conv_packed_scratch_bytes(const k_window *w, int slots)
{
	if (k_conv_blocked_chosen(w, k_cpu_isa()))
		return blocked_scratch_bytes(w);
	conv_plan p;
	conv_plan_make(w, 1, &p);
	size_t bytes = own_gemm(&p) ? k_conv_gemm_scratch_bytes(&p.g, slots, true) : k_conv_scratch_bytes(w, slots);
	/* Winograd filters (k_conv_pack chose them) need their own scratch. */
	int wm = k_winograd_chosen(w, k_cpu_isa());
	if (wm != 0) {
		size_t wb = k_winograd_scratch_bytes(w, wm, k_cpu_isa(), slots);
		bytes = wb > bytes ? wb : bytes;
	}
	return bytes;
}

void
k_conv(const k_window *w, const float *x, const float *weights, const float *bias, float *y,
       void *scratch, int slots, const st_exec_ctx *ctx)
{
	k_conv_packed(w, x, weights, NULL, bias, y, scratch, slots, ctx);
}

void
k_post_planes(const k_post *post, float *y, int64_t plane_size, int64_t p0, int64_t p1)
{
	if (post != NULL && post->on && p1 > p0)
		k_activation(post->act, post->a, post->b, y + p0 * plane_size, (p1 - p0) * plane_size);
}

void
k_post_block(const k_post *post, float *y, int64_t plane_size, int64_t c0, int64_t c1, int64_t q0, int64_t q1)
{
	if (post == NULL || !post->on || q1 <= q0)
		return;
	if (q0 == 0 && q1 == plane_size) {
		k_post_planes(post, y, plane_size, c0, c1);
		return;
	}
	for (int64_t c = c0; c < c1; c++)
		k_activation(post->act, post->a, post->b, y + c * plane_size + q0, q1 - q0);
}

typedef struct post_args {
	const k_post *post;
	float *y;
	int64_t plane_size;
} post_args;

static void
post_range(void *arg, int64_t p0, int64_t p1)
{
	const post_args *a = arg;
	k_post_planes(a->post, a->y, a->plane_size, p0, p1);
}

void
k_conv_packed(const k_window *w, const float *x, const float *weights, const void *packed, const float *bias,
              float *y, void *scratch, int slots, const st_exec_ctx *ctx)
{
	k_conv_packed_post(w, x, weights, packed, bias, y, scratch, slots, NULL, ctx);
}

void
k_conv_packed_post(const k_window *w, const float *x, const float *weights, const void *packed,
                   const float *bias, float *y, void *scratch, int slots, const k_post *post,
                   const st_exec_ctx *ctx)
{
	if (post != NULL && !post->on)
		post = NULL;
	bool posted = false; /* whether the path applied post itself */
	int threads = k_threads_used(slots, ctx);
	conv_plan p;
	conv_plan_make(w, threads, &p);
	conv_args a = { .p = &p, .x = x, .weights = weights, .bias = bias, .y = y, .scratch = scratch };
	/* Filters k_conv_pack transformed for Winograd say so in their header;
	 * then the paths that take the weights as they are (direct, reference),
	 * which own_gemm and k_conv_packed_bytes leave alone. */
	if (packed != NULL && blocked_is_packed(packed)) {
		blocked_run(w, x, packed, bias, y, scratch, post, threads > 1 ? ctx : NULL);
		posted = true;
	} else if (packed != NULL && k_winograd_is_packed(packed)) {
		k_winograd_post(w, packed, x, bias, y, scratch, slots, post, ctx);
		posted = true;
	} else if (p.direct) {
		k_conv_direct_post(w, x, weights, bias, y, scratch, slots, post, ctx);
		posted = true;
	} else if (p.reference) {
		k_conv_ref(w, x, weights, bias, y);
	} else if (packed != NULL || own_gemm(&p)) {
		posted = k_conv_gemm(&p.g, x, weights, packed, bias, y, scratch, slots, post, ctx);
	} else {
		a.chunks = p.tasks < threads ? p.tasks : threads;
		k_parallel_for(ctx, a.chunks, 1, conv_chunks, &a);
	}
	if (post != NULL && !posted) {
		/* A path that cannot apply it per thread: one pass over the planes. */
		post_args pa = { .post = post, .y = y, .plane_size = p.g.out_size };
		int64_t planes = p.g.batch * p.g.out_channels;
		k_parallel_for(ctx, planes, p.g.out_size >= 16384 ? 1 : 16384 / (p.g.out_size + 1) + 1, post_range, &pa);
	}
}

/* The im2col + OpenBLAS path whatever the shape (benchmarks compare it with
 * the direct kernels). */
void
k_conv_im2col(const k_window *w, const float *x, const float *weights, const float *bias, float *y,
              void *scratch, int slots, const st_exec_ctx *ctx)
{
	int threads = k_threads_used(slots, ctx);
	conv_plan p;
	conv_plan_make(w, threads, &p);
	conv_args a = { .p = &p, .x = x, .weights = weights, .bias = bias, .y = y, .scratch = scratch };
	if (p.reference) {
		k_conv_ref(w, x, weights, bias, y);
	} else {
		a.chunks = p.tasks < threads ? p.tasks : threads;
		k_parallel_for(ctx, a.chunks, 1, conv_chunks, &a);
	}
}

/* ---- deconvolution ---- */

typedef struct deconv_plan {
	k_geometry g;
	bool reference;
	int64_t tile;            /* input positions per GEMM */
	int64_t oblock, oblocks; /* output channels per task */
	int64_t tasks;           /* batch x groups x oblocks */
	size_t slot_floats;
} deconv_plan;

/* Plans a deconvolution for `threads` threads working at once. */
static void
deconv_plan_make(const k_window *w, int threads, deconv_plan *p)
{
	*p = (deconv_plan){ 0 };
	k_geometry *g = &p->g;
	k_geometry_expand(w, g);
	int64_t cols = g->out_per_group * g->kernel_size;
	if (g->in_per_group == 0 || g->in_per_group > INT_MAX || cols > INT_MAX || g->in_size > INT_MAX) {
		p->reference = true;
		return;
	}
	/* Output channels are split when there are fewer planes than threads:
	 * each task owns its output channels, so tasks never add into the same
	 * element. */
	int64_t planes = g->batch * g->groups;
	p->oblocks = planes < threads ? k_div_up(threads, planes) : 1;
	if (p->oblocks > g->out_per_group)
		p->oblocks = g->out_per_group;
	p->oblock = k_div_up(g->out_per_group, p->oblocks);
	p->oblocks = k_div_up(g->out_per_group, p->oblock);
	int64_t rows = p->oblock * g->kernel_size;
	int64_t tile = SLOT_TARGET_BYTES / (rows * (int64_t)sizeof(float)) / 16 * 16;
	if (tile < 16)
		tile = 16;
	if (tile > g->in_size)
		tile = g->in_size;
	p->tile = tile;
	p->tasks = planes * p->oblocks;
	p->slot_floats = slot_round(rows * tile);
}

size_t
k_deconv_scratch_bytes(const k_window *w, int slots)
{
	size_t most = 0;
	for (int t = 1; t <= slots || t == 1; t++) {
		deconv_plan p;
		deconv_plan_make(w, t, &p);
		size_t bytes = p.slot_floats * sizeof(float) * (size_t)t;
		most = bytes > most ? bytes : most;
	}
	return most;
}

/*
 * Adds col into the output planes of channels [0, count) (plane points at
 * the first): col row (o, kd, kh, kw) holds, for input positions [q0, q1),
 * what that tap of output channel o receives from each.
 */
static void
col2im(const k_geometry *g, const float *col, int64_t q0, int64_t q1, int64_t count, float *plane)
{
	int64_t width = q1 - q0, iplane = g->in[1] * g->in[2];
	for (int64_t o = 0; o < count; o++) {
		float *out = plane + o * g->out_size;
		for (int64_t kd = 0; kd < g->kernel[0]; kd++)
		for (int64_t kh = 0; kh < g->kernel[1]; kh++)
		for (int64_t kw = 0; kw < g->kernel[2]; kw++) {
			const float *row =
				col + (((o * g->kernel[0] + kd) * g->kernel[1] + kh) * g->kernel[2] + kw) * width;
			int64_t id = q0 / iplane, ih = q0 % iplane / g->in[2], iw = q0 % g->in[2];
			for (int64_t q = q0; q < q1;) {
				int64_t run = g->in[2] - iw < q1 - q ? g->in[2] - iw : q1 - q;
				int64_t od = id * g->stride[0] - g->pad[0] + kd * g->dilation[0];
				int64_t oh = ih * g->stride[1] - g->pad[1] + kh * g->dilation[1];
				if (od >= 0 && od < g->out[0] && oh >= 0 && oh < g->out[1]) {
					float *dst = out + (od * g->out[1] + oh) * g->out[2];
					const float *src = row + (q - q0);
					int64_t ow = iw * g->stride[2] - g->pad[2] + kw * g->dilation[2], lo, hi;
					row_inside(ow, g->stride[2], g->out[2], run, &lo, &hi);
					if (g->stride[2] == 1) {
						for (int64_t t = lo; t < hi; t++)
							dst[ow + t] += src[t];
					} else {
						for (int64_t t = lo; t < hi; t++)
							dst[ow + t * g->stride[2]] += src[t];
					}
				}
				q += run;
				iw = 0;
				if (++ih == g->in[1]) {
					ih = 0;
					id++;
				}
			}
		}
	}
}

typedef struct deconv_args {
	const deconv_plan *p;
	const float *x, *weights, *bias;
	float *y;
	float *scratch;
	int64_t chunks;
} deconv_args;

static void
deconv_tasks(const deconv_args *a, int64_t t0, int64_t t1, float *col)
{
	const deconv_plan *p = a->p;
	const k_geometry *g = &p->g;
	int64_t cols = g->out_per_group * g->kernel_size;
	for (int64_t t = t0; t < t1; t++) {
		int64_t ob = t % p->oblocks, plane = t / p->oblocks;
		int64_t n = plane / g->groups, group = plane % g->groups;
		int64_t o0 = ob * p->oblock, o1 = o0 + p->oblock < g->out_per_group ? o0 + p->oblock : g->out_per_group;
		int64_t oc0 = group * g->out_per_group + o0;
		float *out = a->y + (n * g->out_channels + oc0) * g->out_size;
		for (int64_t o = 0; o < o1 - o0; o++) {
			float v = a->bias ? a->bias[oc0 + o] : 0.0f, *dst = out + o * g->out_size;
			for (int64_t i = 0; i < g->out_size; i++)
				dst[i] = v;
		}
		const float *in = a->x + (n * g->in_channels + group * g->in_per_group) * g->in_size;
		const float *filters = a->weights + group * g->in_per_group * cols + o0 * g->kernel_size;
		int rows = (int)((o1 - o0) * g->kernel_size);
		for (int64_t q0 = 0; q0 < g->in_size; q0 += p->tile) {
			int64_t q1 = q0 + p->tile < g->in_size ? q0 + p->tile : g->in_size;
			/* col = filters^T (rows x in_per_group) x the input tile. */
			cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, rows, (int)(q1 - q0),
			            (int)g->in_per_group, 1.0f, filters, (int)cols, in + q0, (int)g->in_size, 0.0f,
			            col, (int)(q1 - q0));
			col2im(g, col, q0, q1, o1 - o0, out);
		}
	}
}

static void
deconv_chunks(void *arg, int64_t c0, int64_t c1)
{
	const deconv_args *a = arg;
	for (int64_t c = c0; c < c1; c++) {
		int64_t t0 = c * a->p->tasks / a->chunks, t1 = (c + 1) * a->p->tasks / a->chunks;
		deconv_tasks(a, t0, t1, a->scratch + (size_t)c * a->p->slot_floats);
	}
}

void
k_deconv(const k_window *w, const float *x, const float *weights, const float *bias, float *y,
         void *scratch, int slots, const st_exec_ctx *ctx)
{
	int threads = k_threads_used(slots, ctx);
	deconv_plan p;
	deconv_plan_make(w, threads, &p);
	if (p.reference) {
		k_deconv_ref(w, x, weights, bias, y);
		return;
	}
	deconv_args a = { .p = &p, .x = x, .weights = weights, .bias = bias, .y = y, .scratch = scratch };
	a.chunks = p.tasks < threads ? p.tasks : threads;
	k_parallel_for(ctx, a.chunks, 1, deconv_chunks, &a);
}
