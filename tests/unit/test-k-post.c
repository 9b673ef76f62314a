/* Unit tests: an activation applied by the convolution kernels as they write
 * their output (k_post, k_conv_packed_post) gives, to the bit, what the
 * convolution followed by k_activation over the whole output gives, on
 * every path k_conv_packed takes (our SGEMM from each source, the small-
 * image swap, Winograd, the direct depthwise and first-layer loops), at
 * every SIMD level, serially and split among threads. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

#include "k-nn.h"
#include "k-winograd.h"

/* Values in [-1, 1) from a xorshift state; a few exact zeros and NaNs in
 * the input so that relu's and clip's treatment of them is compared too.
 * Caller frees. */
static float *
values(uint64_t *s, int64_t n, bool specials)
{
	float *v = malloc((size_t)(n ? n : 1) * sizeof *v);
	cr_assert_not_null(v);
	for (int64_t i = 0; i < n; i++) {
		*s ^= *s << 13;
		*s ^= *s >> 7;
		*s ^= *s << 17;
		v[i] = (float)((double)(*s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
		if (specials && *s % 97 == 0)
			v[i] = *s % 2 ? 0.0f : NAN;
	}
	return v;
}

typedef struct conv_case {
	const char *what;
	int64_t c, oc, groups, h, w, kernel, stride, dilation, pad;
} conv_case;

/* One convolution, one activation, one SIMD level, one way of running. */
static void
check_case(const conv_case *cc, const k_post *post, int threads)
{
	k_window w = { .spatial = 2, .batch = 2, .in_channels = cc->c, .out_channels = cc->oc, .groups = cc->groups };
	w.in[0] = cc->h, w.in[1] = cc->w;
	for (int i = 0; i < 2; i++) {
		w.kernel[i] = cc->kernel, w.stride[i] = cc->stride, w.dilation[i] = cc->dilation;
		w.pad_begin[i] = w.pad_end[i] = cc->pad;
		w.out[i] = (w.in[i] + 2 * cc->pad - (cc->kernel - 1) * cc->dilation - 1) / cc->stride + 1;
	}
	uint64_t s = 0x9e3779b97f4a7c15u ^ (uint64_t)(cc->c * 131 + cc->oc);
	int64_t nx = w.batch * w.in_channels * w.in[0] * w.in[1];
	int64_t plane = w.out[0] * w.out[1], ny = w.batch * w.out_channels * plane;
	float *x = values(&s, nx, true);
	float *filters = values(&s, w.out_channels * (w.in_channels / w.groups) * cc->kernel * cc->kernel, false);
	float *bias = values(&s, w.out_channels, false);
	size_t packed_bytes = k_conv_packed_bytes(&w);
	void *packed = packed_bytes ? aligned_alloc(64, (packed_bytes + 63) / 64 * 64) : NULL;
	if (packed)
		k_conv_pack(&w, filters, packed);
	size_t scratch_bytes = k_conv_packed_scratch_bytes(&w, threads);
	void *scratch = scratch_bytes ? aligned_alloc(64, (scratch_bytes + 63) / 64 * 64) : NULL;
	float *want = malloc((size_t)ny * sizeof *want), *got = malloc((size_t)ny * sizeof *got);
	cr_assert(want && got);
	st_exec_ctx ctx = { .n_threads = threads, .parallel_for = test_pieces_run };
	const st_exec_ctx *c = threads > 1 ? &ctx : NULL;
	k_conv_packed(&w, x, filters, packed, bias, want, scratch, threads, c);
	k_activation(post->act, post->a, post->b, want, ny);
	memset(got, 0x7f, (size_t)ny * sizeof *got);
	k_conv_packed_post(&w, x, filters, packed, bias, got, scratch, threads, post, c);
	for (int64_t i = 0; i < ny; i++) {
		bool same = memcmp(&got[i], &want[i], sizeof got[i]) == 0 || (isnan(got[i]) && isnan(want[i]));
		cr_assert(same, "%s, %s, act %d [%g, %g], %d thread(s): element %lld is %.9g, want %.9g", cc->what,
		          k_cpu_isa_name(k_cpu_isa()), (int)post->act, post->a, post->b, threads, (long long)i, got[i],
		          want[i]);
	}
	free(x), free(filters), free(bias), free(packed), free(scratch), free(want), free(got);
}

Test(k_post, every_path_every_level)
{
	static const conv_case cases[] = {
		{ "1x1 (pointwise)", 24, 40, 1, 17, 19, 1, 1, 1, 0 },
		{ "3x3 same size (direct)", 16, 24, 1, 15, 13, 3, 1, 1, 1 },
		{ "3x3 stride 2 (phased)", 16, 24, 1, 15, 14, 3, 2, 1, 1 },
		{ "3x3 same size, 13 filters (a part panel)", 8, 13, 1, 9, 21, 3, 1, 1, 1 },
		{ "3x3 stride 2, 11 filters (a part panel)", 8, 11, 1, 15, 14, 3, 2, 1, 1 },
		{ "3x3 no padding, 7 filters", 8, 7, 1, 12, 13, 3, 1, 1, 0 },
		{ "1x1 stride 2", 32, 20, 1, 14, 14, 1, 2, 1, 0 },
		{ "3x3 dilated (im2col)", 12, 20, 1, 16, 15, 3, 1, 2, 2 },
		{ "3x3 no padding", 16, 20, 1, 12, 12, 3, 1, 1, 0 },
		{ "5x5 grouped", 16, 32, 2, 13, 11, 5, 1, 1, 2 },
		{ "3x3 512 at 7x7 (swap, Winograd)", 64, 96, 1, 7, 7, 3, 1, 1, 1 },
		{ "1x1 at 7x7 (swap)", 96, 128, 1, 7, 7, 1, 1, 1, 0 },
		/* 63 positions (7 whole row panels of 8 and 7 rows), 92 filters
		 * (a panel and 44, five 8-column blocks and 4): the transposing
		 * store's vector and scalar parts. */
		{ "1x1 at 7x9 (swap, part panels)", 40, 92, 1, 7, 9, 1, 1, 1, 0 },
		{ "3x3 64 at 28x28 (Winograd)", 64, 64, 1, 28, 28, 3, 1, 1, 1 },
		{ "3x3 depthwise", 24, 24, 24, 19, 17, 3, 1, 1, 1 },
		{ "3x3 depthwise stride 2", 24, 24, 24, 20, 21, 3, 2, 1, 1 },
		{ "5x5 depthwise x2", 8, 16, 8, 21, 9, 5, 1, 1, 2 },
		{ "3x3 depthwise 14x14 to 7x7 (channels in lanes)", 40, 40, 40, 14, 14, 3, 2, 1, 1 },
		{ "first layer 3x3/2", 3, 20, 1, 33, 31, 3, 2, 1, 1 },
		{ "first layer 7x7/2", 3, 16, 1, 30, 30, 7, 2, 1, 3 },
	};
	const k_post posts[] = {
		{ .on = true, .act = K_ACT_RELU },
		{ .on = true, .act = K_ACT_CLIP, .a = 0.0f, .b = 0.25f },
		{ .on = true, .act = K_ACT_CLIP, .a = -0.1f, .b = 0.05f },
		/* Not a clamp: a pass over what each path has written. */
		{ .on = true, .act = K_ACT_LEAKY_RELU, .a = 0.125f },
	};
	k_isa before = k_cpu_isa();
	int levels = 0;
	for (int isa = 0; isa < K_ISA_COUNT; isa++) {
		if (k_cpu_isa_force((k_isa)isa) != 0)
			continue;
		levels++;
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
			for (size_t p = 0; p < sizeof posts / sizeof posts[0]; p++) {
				check_case(&cases[i], &posts[p], 1);
				check_case(&cases[i], &posts[p], 3);
			}
		}
		/* Winograd, both tile sizes, whatever the rule picks by default:
		 * tiles cut off at the right and bottom edges, blocks of tiles
		 * that start and end inside a tile row. */
		static const conv_case wino[] = {
			{ "Winograd 3x3 at 13x11", 16, 24, 1, 13, 11, 3, 1, 1, 1 },
			{ "Winograd 3x3 at 30x29", 24, 16, 1, 30, 29, 3, 1, 1, 1 },
			{ "Winograd 3x3 unpadded", 16, 16, 1, 17, 23, 3, 1, 1, 0 },
		};
		for (int m = 2; m <= 4; m += 2) {
			k_winograd_force(m);
			for (size_t i = 0; i < sizeof wino / sizeof wino[0]; i++) {
				for (size_t p = 0; p < sizeof posts / sizeof posts[0]; p++) {
					check_case(&wino[i], &posts[p], 1);
					check_case(&wino[i], &posts[p], 3);
				}
			}
			k_winograd_force(-1);
		}
	}
	cr_assert_geq(levels, 1);
	k_cpu_isa_force(before);
}

/* No activation (on false, or NULL): the output is the convolution's. */
Test(k_post, off_changes_nothing)
{
	float y[6] = { -1, 2, -3, NAN, 0, 5 }, z[6];
	memcpy(z, y, sizeof y);
	k_post off = { .on = false, .act = K_ACT_RELU };
	k_post_planes(&off, y, 3, 0, 2);
	k_post_planes(NULL, y, 3, 0, 2);
	k_post_block(&off, y, 3, 0, 2, 1, 3);
	cr_assert(memcmp(y, z, sizeof y) == 0);
	k_post relu = { .on = true, .act = K_ACT_RELU };
	/* Channels [0, 2) x positions [1, 3) of planes of 3. */
	k_post_block(&relu, y, 3, 0, 2, 1, 3);
	cr_assert(y[0] == -1 && y[1] == 2 && y[2] == 0 && isnan(y[3]) && y[4] == 0 && y[5] == 5);
}
