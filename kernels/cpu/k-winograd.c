/*
 * Winograd convolution F(m x m, 3 x 3) for 3x3 stride-1 layers, m = 2 or 4.
 * The output is cut into m x m tiles, each reading an (m+2) x (m+2) patch
 * of input. In the transformed domain a tile's outputs come from an
 * element-wise product of transformed input and transformed filter, so
 * summed over input channels every one of the (m+2)^2 frequencies is an
 * ordinary matrix product: [out channels x in channels] by [in channels x
 * tiles]. That is where the work goes, on the SGEMM micro-kernels
 * (k-sgemm.h), with 2.25 (m = 2) or 4 (m = 4) times fewer multiplications
 * than the direct convolution.
 *
 * The filters are transformed once, at prepare, straight into the A panels
 * of each frequency. Each thread works on blocks of tiles small enough that
 * their transformed input (the B panels, written by the input transform in
 * the layout the micro-kernel reads) and the products stay in its L2; the
 * output transform reads the products back and adds the bias. Threads
 * share nothing they write: a task is (sample, block of tiles, block of
 * output channels), and each thread runs a contiguous run of tasks on its
 * own scratch slot.
 */
#include "config.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "k-sgemm.h"
#include "k-winograd.h"
#include "k-int.h"

/* The transforms (Lavin and Gray's construction): B^T for the input, G for
 * the filters, A^T for the output. F(2,3) uses the points 0, 1, -1 and
 * infinity. */
static const float wino_bt2[4][4] = {
	{ 1, 0, -1, 0 }, { 0, 1, 1, 0 }, { 0, -1, 1, 0 }, { 0, 1, 0, -1 },
};
static const float wino_at2[2][4] = {
	{ 1, 1, 1, 0 }, { 0, 1, -1, -1 },
};
static const double wino_g2[4][3] = {
	{ 1, 0, 0 }, { 0.5, 0.5, 0.5 }, { 0.5, -0.5, 0.5 }, { 0, 0, 1 },
};
/* F(4,3) on the points 0, 1, -1, 1/2, -2 and infinity rather than the
 * usual 0, 1, -1, 2, -2: its error against the direct sum was 2.9 times
 * smaller in a float32 simulation with 256 input channels (4.9e-6 against
 * 1.4e-5 of the agreement scale), and B^T and A^T stay exact in binary. */
static const float wino_bt4[6][6] = {
	{ 1, -1.5f, -2, 1.5f, 1, 0 },   { 0, -1, 0.5f, 2.5f, 1, 0 },  { 0, 1, -2.5f, 0.5f, 1, 0 },
	{ 0, -2, -1, 2, 1, 0 },         { 0, 0.5f, -1, -0.5f, 1, 0 }, { 0, 1, -1.5f, -2, 1.5f, 1 },
};
static const float wino_at4[4][6] = {
	{ 1, 1, 1, 1, 1, 0 }, { 0, 1, -1, 0.5f, -2, 0 }, { 0, 1, 1, 0.25f, 4, 0 }, { 0, 1, -1, 0.125f, -8, 1 },
};
static const double wino_g4[6][3] = {
	{ 1, 0, 0 },
	{ 1.0 / 3, 1.0 / 3, 1.0 / 3 },
	{ -1.0 / 3, 1.0 / 3, -1.0 / 3 },
	{ -16.0 / 15, -8.0 / 15, -4.0 / 15 },
	{ 1.0 / 15, -2.0 / 15, 4.0 / 15 },
	{ 0, 0, 1 },
};

/* Bytes of transformed input and products one block keeps. Each block
 * streams every filter panel once, so larger blocks read the filters less
 * often; the products of one frequency at a time are what must stay in
 * cache. Measured on the ResNet-18 and SqueezeNet shapes (one thread):
 * 160 to 640 KiB were 3 to 15 % slower than 1.25 MiB, 2.5 MiB within 2 %
 * of it. */
#define BLOCK_TARGET_BYTES (1280 * 1024)

/* The widest vector of any level, in floats: slack past buffers that
 * full-vector loads may read. */
#define VL_MAX 16

/* The header of packed filters: which level, kernel and tile size. */
typedef struct wino_head {
	uint32_t magic;
	int32_t isa;
	int32_t m;
	int32_t nr;            /* which of the level's kernels: the width of its tile */
	int64_t cin, cout;
	int64_t cout_r;        /* cout rounded up to the kernel's mr */
	int64_t freq_floats;   /* floats of one frequency's panels */
	int64_t reserved[2];
} wino_head;
_Static_assert(sizeof(wino_head) == 64, "the packed filters start 64 bytes in");
#define WINO_MAGIC 0x4e49574bu /* "KWIN" */

typedef struct wplan {
	k_geometry g;
	const k_gemm_kernel *kr;
	int m, alpha, a2;            /* tile size, patch size, frequencies */
	int64_t nr, mr;
	int64_t th, tw, tiles;       /* tile rows and columns of a sample, and their product */
	int64_t block, blocks;       /* tiles per block (a multiple of nr), blocks per sample */
	int64_t tr;                  /* columns of a block's panels and products: block */
	int64_t mblock, mblocks;     /* output channels per task, a multiple of mr */
	int64_t mrows;               /* rows of the product buffer: mblock */
	int64_t tasks;               /* batch x blocks x mblocks */
	int64_t rowlen;              /* floats of one phase row (k-winograd-body.h) */
	size_t v_floats, prod_floats, phase_floats, slot_floats;
	/* A relu or clip the output transform applies as it stores (k_clamp). */
	bool clamp;
	float lo, hi;
} wplan;

/* ---- the transforms, per level ---- */

typedef struct wino_level {
	void (*input)(const wplan *p, const float *x, int64_t b0, int64_t b1, int64_t c0, int64_t c1, float *v,
	              float *phase);
	void (*output)(const wplan *p, const float *prod, int64_t b0, int64_t b1, int64_t m0, int64_t m1,
	               const float *bias, float *y);
} wino_level;

#define VL 4
#define EVENS 0, 2, 4, 6
#define ODDS 1, 3, 5, 7
#define ILO 0, 4, 1, 5
#define IHI 2, 6, 3, 7
#define SUF portable
#define K_TARGET
#define STORE_PART(dst, v, n)                   \
	do {                                    \
		for (int l_ = 0; l_ < (n); l_++) \
			(dst)[l_] = (v)[l_];    \
	} while (0)
#include "k-winograd-body.h"
#undef VL
#undef EVENS
#undef ODDS
#undef ILO
#undef IHI
#undef SUF
#undef K_TARGET
#undef STORE_PART

#if defined(K_HAVE_AVX2) && (defined(__x86_64__) || defined(__i386__))
#define VL 8
#define EVENS 0, 2, 4, 6, 8, 10, 12, 14
#define ODDS 1, 3, 5, 7, 9, 11, 13, 15
#define ILO 0, 8, 1, 9, 2, 10, 3, 11
#define IHI 4, 12, 5, 13, 6, 14, 7, 15
#define SUF avx2
#define K_TARGET __attribute__((target("avx2,fma")))
#define STORE_PART(dst, v, n) k_store_part_avx2((dst), (__m256)(v), (n))
#include "k-winograd-body.h"
#undef VL
#undef EVENS
#undef ODDS
#undef ILO
#undef IHI
#undef SUF
#undef K_TARGET
#undef STORE_PART
#endif

#if defined(K_HAVE_AVX512) && (defined(__x86_64__) || defined(__i386__))
#define VL 16
#define EVENS 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30
#define ODDS 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31
#define ILO 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23
#define IHI 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31
#define SUF avx512
#define K_TARGET __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")))
#define STORE_PART(dst, v, n) _mm512_mask_storeu_ps((dst), (__mmask16)((1u << (n)) - 1u), (__m512)(v))
#include "k-winograd-body.h"
#undef VL
#undef EVENS
#undef ODDS
#undef ILO
#undef IHI
#undef SUF
#undef K_TARGET
#undef STORE_PART
#endif

/*
 * The transforms for level isa and tile rows of tw tiles. The input
 * transform's lanes are the tiles of one row, so a vector much wider than
 * the row is mostly wasted: rows under 12 tiles take the 8-lane input
 * transform and rows under 6 the 4-lane one (a lower level's, which the CPU
 * also runs); on the 13x13 layers at F(4,3), 4 tiles a row, that made the
 * layer 1.3 times faster (cuts at 4, 8, 12, 16 and 32 tiles were tried, 12
 * was best or tied on every shape measured). The output transform's lanes
 * run on over the next tile rows instead (output_any), at the level's full
 * width: SqueezeNet's four 13x13 layers 1.28 -> 1.02 ms together with 16
 * lanes, 1.06 with 8.
 */
static const wino_level *
level_of(k_isa isa, int64_t tw)
{
	static const wino_level portable = { input_block_portable, output_block_portable };
	int lanes = 12;
#if defined(K_HAVE_AVX512) && (defined(__x86_64__) || defined(__i386__))
	static const wino_level avx512 = { input_block_avx512, output_block_avx512 };
	static const wino_level avx512_small = { input_block_avx2, output_any_avx512 };
	static const wino_level avx512_smaller = { input_block_portable, output_any_avx512 };
	if (isa == K_ISA_AVX512)
		return tw >= lanes ? &avx512 : tw >= lanes / 2 ? &avx512_small : &avx512_smaller;
#endif
#if defined(K_HAVE_AVX2) && (defined(__x86_64__) || defined(__i386__))
	static const wino_level avx2 = { input_block_avx2, output_block_avx2 };
	static const wino_level avx2_small = { input_block_portable, output_any_avx2 };
	if (isa >= K_ISA_AVX2)
		return tw >= lanes / 2 ? &avx2 : &avx2_small;
#endif
	(void)tw;
	return &portable;
}

/* ---- choosing ---- */

static int forced = -1;

void
k_winograd_force(int m)
{
	forced = m;
}

bool
k_winograd_fits(const k_window *w)
{
	if (w->spatial != 2 || (w->groups > 1) || w->in_channels < 1 || w->out_channels < 1 || w->batch < 1)
		return false;
	for (int i = 0; i < 2; i++) {
		if (w->kernel[i] != 3 || w->stride[i] != 1 || w->dilation[i] != 1 || w->pad_begin[i] < 0 ||
		    w->pad_end[i] < 0 || w->out[i] < 1 || w->in[i] < 1)
			return false;
	}
	/* Sizes far beyond any network's keep to the other paths. */
	return w->in_channels <= 65536 && w->out_channels <= 65536 && w->in[0] * w->in[1] <= (INT64_C(1) << 26);
}

/* What k_winograd_force or else STRATA_WINOGRAD (off, 2, 4; anything else:
 * the rule) asks for: -1 for the rule. The variable is for whole-network
 * comparisons, read at prepare, where the choice is made. */
static int
forced_now(void)
{
	static const char *const words[] = { "off", "0", "2", "4" };
	static const int values[] = { 0, 0, 2, 4 };
	return forced >= 0 ? forced : k_env_choice("STRATA_WINOGRAD", words, values, 4);
}

bool
k_winograd_forced_on(const k_window *w)
{
	int m = forced_now();
	return (m == 2 || m == 4) && k_winograd_fits(w);
}

int
k_winograd_chosen(const k_window *w, k_isa isa)
{
	if (!k_winograd_fits(w) || k_gemm_kernel_of(isa) == NULL || k_conv_direct_chosen(w) != K_DIRECT_NONE)
		return 0;
	int m = forced_now();
	if (m >= 0)
		return m == 2 || m == 4 ? m : 0;
	/*
	 * Measured on Zen 4 (bench-gemm --winograd, docs/performance.md), one
	 * thread, against the direct kernel. F(4,3)'s error grows with the
	 * input channels (3.9e-6 of the agreement scale at 256, 6e-6 at 512,
	 * the bound being 1e-5), so it is kept to 256; F(2,3) is as accurate
	 * as the direct kernel. With AVX-512: F(4,3) won at 55x55 and 56x56
	 * (1.35 to 1.85 times), with 128 and 256 channels at 28x28 and 14x14
	 * (1.8) and on the 13x13 layers with 192 and 256 outputs (1.3); F(2,3)
	 * at 27x27 with 32 channels (1.3) and at 7x7 with 512 (1.4, where
	 * F(4,3) has too few tiles); 64 to 64 channels at 14x14 lost. With AVX2
	 * and the portable level, whose direct kernels are slower, Winograd
	 * won on every shape measured, F(4,3) from 13x13 up.
	 */
	if (w->in_channels < 16 || w->out_channels < 16)
		return 0;
	int64_t area = w->out[0] * w->out[1];
	if (w->in_channels > 256)
		return 2;
	if (isa != K_ISA_AVX512)
		return area >= 13 * 13 ? 4 : w->in_channels > 64 ? 2 : 0;
	if (w->in_channels > 64)
		return area >= 13 * 13 ? 4 : 2;
	if (area >= 48 * 48)
		return 4;
	if (area >= 20 * 20)
		return 2;
	/* Not below: F(4,3) won SqueezeNet's 13 x 13 layers with 48 input
	 * channels alone (1.3 times), its filters warm. In the network they
	 * come from L3 or memory, four times their size once transformed (36
	 * values for 9, 1.3 MB for 48 -> 192, each serving only 16 tiles);
	 * with the direct kernels SqueezeNet ran 3 to 5 % faster on one and
	 * two threads beside onnxruntime (session 8, docs/performance.md). */
	return 0;
}

/* ---- planning ---- */

static const k_gemm_kernel *
kernel_for(const k_window *w, int m, k_isa isa)
{
	int64_t tiles = k_div_up(w->out[0], m) * k_div_up(w->out[1], m);
	return k_gemm_kernel_for(isa, w->out_channels, tiles);
}

/* The most tiles one of `threads` threads computes when blocks of `block`
 * tiles (the last one shorter) of each of `batch` samples are dealt out as
 * contiguous runs of tasks, as k_winograd_post does; a block's products
 * cost whole panels of nr tiles. */
static int64_t
busiest_thread(int64_t batch, int64_t tiles, int64_t block, int64_t nr, int threads)
{
	int64_t blocks = k_div_up(tiles, block), tasks = batch * blocks, chunks = k_min64(tasks, threads), most = 0;
	for (int64_t c = 0; c < chunks; c++) {
		int64_t sum = 0;
		for (int64_t t = c * tasks / chunks; t < (c + 1) * tasks / chunks; t++)
			sum += k_round_up(k_min64(block, tiles - t % blocks * block), nr);
		most = sum > most ? sum : most;
	}
	return most;
}

/* Of the block sizes up to `most` (multiples of nr), the largest whose
 * busiest thread has at most a twentieth more tiles than the best one's:
 * 196 tiles in 16-tile panels on 2 threads as 64 + 64 | 64 + 4 (a panel)
 * keep one thread waiting a third of the time; as 48 + 48 | 48 + 48 + 4,
 * 96 against 112, hardly. */
static int64_t
balanced_block(int64_t batch, int64_t tiles, int64_t most, int64_t nr, int threads)
{
	int64_t best = -1, pick = most;
	for (int64_t b = nr; b <= most; b += nr) {
		int64_t load = busiest_thread(batch, tiles, b, nr, threads);
		if (best < 0 || load < best)
			best = load;
	}
	for (int64_t b = most; b >= nr; b -= nr) {
		if (busiest_thread(batch, tiles, b, nr, threads) * 20 <= best * 21) {
			pick = b;
			break;
		}
	}
	return pick;
}

/* Plans for `threads` threads with kernel kr: blocks as large as
 * BLOCK_TARGET_BYTES allows, cut finer while there are fewer tasks than
 * threads, first along the tiles, then along the output channels. */
static void
wplan_make(const k_window *w, const k_gemm_kernel *kr, int m, int threads, wplan *p)
{
	*p = (wplan){ .kr = kr, .m = m, .alpha = m + 2, .a2 = (m + 2) * (m + 2), .nr = kr->nr, .mr = kr->mr };
	k_geometry *g = &p->g;
	k_geometry_expand(w, g);
	int64_t cin = g->in_channels, cout = g->out_channels, nr = p->nr, mr = p->mr;
	p->th = k_div_up(g->out[1], m);
	p->tw = k_div_up(g->out[2], m);
	p->tiles = p->th * p->tw;
	int64_t per_tile = p->a2 * (cin + k_round_up(cout, mr)) * (int64_t)sizeof(float);
	int64_t block = BLOCK_TARGET_BYTES / per_tile / nr * nr;
	if (block < nr)
		block = nr;
	block = k_min64(block, k_round_up(p->tiles, nr));
	if (g->batch < threads) {
		int64_t want = k_round_up(k_div_up(p->tiles, k_div_up(threads, g->batch)), nr);
		block = k_min64(block, want);
	}
	/* Few tasks a thread: how they divide decides how long one waits. */
	int64_t tasks = g->batch * k_div_up(p->tiles, block);
	if (k_winograd_balance && threads > 1 && tasks >= threads && tasks < 8 * (int64_t)threads)
		block = balanced_block(g->batch, p->tiles, block, nr, threads);
	p->block = block;
	p->blocks = k_div_up(p->tiles, block);
	p->tr = block;
	p->mblocks = 1;
	if (g->batch * p->blocks < threads && cout >= 2 * mr) {
		p->mblocks = k_min64(k_div_up(threads, g->batch * p->blocks), cout / mr);
	}
	p->mblock = k_round_up(k_div_up(cout, p->mblocks), mr);
	p->mblocks = k_div_up(cout, p->mblock);
	p->mrows = p->mblock;
	p->tasks = g->batch * p->blocks * p->mblocks;
	p->rowlen = k_round_up(p->tw + 1 + VL_MAX, 16);
	p->v_floats = (size_t)k_round_up(p->a2 * cin * p->tr, 16);
	p->prod_floats = (size_t)k_round_up(p->a2 * p->mrows * p->tr + VL_MAX, 16);
	/* Phase rows of every input row a block reads, then one line buffer. */
	int64_t trows = k_min64(p->th, p->block / p->tw + 2);
	p->phase_floats = (size_t)k_round_up((m * trows + 2) * m * p->rowlen + m * p->rowlen, 16);
	p->slot_floats = p->v_floats + p->prod_floats + p->phase_floats;
}

/* ---- packing ---- */

size_t
k_winograd_packed_bytes(const k_window *w, int m, k_isa isa)
{
	const k_gemm_kernel *kr = kernel_for(w, m, isa);
	int64_t a2 = (m + 2) * (m + 2);
	return sizeof(wino_head) + (size_t)(a2 * k_round_up(w->out_channels, kr->mr) * w->in_channels) * sizeof(float);
}

void
k_winograd_pack(const k_window *w, int m, k_isa isa, const float *weights, void *packed)
{
	assert(m == 2 || m == 4);
	const k_gemm_kernel *kr = kernel_for(w, m, isa);
	int alpha = m + 2;
	int64_t cin = w->in_channels, cout = w->out_channels, mr = kr->mr, cout_r = k_round_up(cout, mr);
	wino_head *h = packed;
	*h = (wino_head){ .magic = WINO_MAGIC, .isa = (int32_t)isa, .m = m, .nr = kr->nr, .cin = cin,
		          .cout = cout, .cout_r = cout_r, .freq_floats = cout_r * cin };
	float *u = (float *)(h + 1);
	/* Rows past cout are zero, so that whole tiles can run on them. */
	memset(u, 0, (size_t)(alpha * alpha * h->freq_floats) * sizeof *u);
	const double *gm = m == 2 ? &wino_g2[0][0] : &wino_g4[0][0];
	for (int64_t o = 0; o < cout; o++) {
		for (int64_t c = 0; c < cin; c++) {
			const float *f = weights + (o * cin + c) * 9;
			/* G f G^T in double, rounded once. */
			double t[6][3];
			for (int i = 0; i < alpha; i++)
				for (int b = 0; b < 3; b++)
					t[i][b] = gm[i * 3] * f[b] + gm[i * 3 + 1] * f[3 + b] + gm[i * 3 + 2] * f[6 + b];
			int64_t at = (o / mr) * cin * mr + c * mr + o % mr;
			for (int i = 0; i < alpha; i++)
				for (int k = 0; k < alpha; k++) {
					double s = t[i][0] * gm[k * 3] + t[i][1] * gm[k * 3 + 1] + t[i][2] * gm[k * 3 + 2];
					u[(i * alpha + k) * h->freq_floats + at] = (float)s;
				}
		}
	}
}

bool
k_winograd_is_packed(const void *packed)
{
	const wino_head *h = packed;
	return h != NULL && h->magic == WINO_MAGIC;
}

size_t
k_winograd_scratch_bytes(const k_window *w, int m, k_isa isa, int slots)
{
	const k_gemm_kernel *kr = kernel_for(w, m, isa);
	size_t most = 0;
	for (int t = 1; t <= slots || t == 1; t++) {
		wplan p;
		wplan_make(w, kr, m, t, &p);
		size_t bytes = p.slot_floats * sizeof(float) * (size_t)t;
		most = bytes > most ? bytes : most;
	}
	return most;
}

/* ---- running ---- */

typedef struct wargs {
	const wplan *p;
	const wino_level *lv;
	const float *u;  /* the first frequency's panels */
	int64_t freq_floats;
	const float *x, *bias;
	const k_post *post; /* applied to each task's tiles once written, or NULL */
	float *y;
	float *scratch;
	int64_t chunks;
	bool shared; /* the input transformed first, each field's in the slot of its number */
} wargs;

/* a->post over the outputs of tiles [b0, b1) (row-major over the sample's
 * tile grid) of channels [m0, m1) of sample n: tile row by tile row, only
 * the columns of tiles in the range. */
static void
post_tiles(const wargs *a, int64_t n, int64_t b0, int64_t b1, int64_t m0, int64_t m1)
{
	const wplan *p = a->p;
	const k_geometry *g = &p->g;
	int64_t oh = g->out[1], ow = g->out[2];
	float *y = a->y + n * g->out_channels * g->out_size;
	for (int64_t r = b0 / p->tw; r <= (b1 - 1) / p->tw; r++) {
		int64_t c0 = r == b0 / p->tw ? b0 % p->tw : 0;
		int64_t c1 = r == (b1 - 1) / p->tw ? (b1 - 1) % p->tw + 1 : p->tw;
		int64_t y0 = r * p->m, y1 = k_min64(y0 + p->m, oh);
		int64_t x0 = c0 * p->m, x1 = k_min64(c1 * p->m, ow);
		for (int64_t c = m0; c < m1; c++)
			for (int64_t row = y0; row < y1; row++)
				k_activation(a->post->act, a->post->a, a->post->b, y + c * g->out_size + row * ow + x0,
				             x1 - x0);
	}
}

/* Input channels [c0, c1) of field `field` (sample x block of tiles)
 * transformed into v, with phase rows in phase. */
static void
wino_input(const wargs *a, int64_t field, int64_t c0, int64_t c1, float *v, float *phase)
{
	const wplan *p = a->p;
	const k_geometry *g = &p->g;
	int64_t nr = p->nr, cin = g->in_channels, tr = p->tr;
	int64_t blk = field % p->blocks, n = field / p->blocks;
	int64_t b0 = blk * p->block, b1 = k_min64(b0 + p->block, p->tiles);
	int64_t panels = k_div_up(b1 - b0, nr);
	a->lv->input(p, a->x + n * cin * g->in_size, b0, b1, c0, c1, v, phase);
	/* The columns of the last panel past the block: zero, so that the
	 * products there stay finite (they are never read). */
	int64_t used = (b1 - b0) - (panels - 1) * nr;
	if (used < nr) {
		for (int f = 0; f < p->a2; f++)
			for (int64_t c = c0; c < c1; c++)
				memset(v + f * cin * tr + (panels - 1) * cin * nr + c * nr + used, 0,
				       (size_t)(nr - used) * sizeof *v);
	}
}

/* Tasks [t0, t1) on one slot; the input is transformed again only when the
 * block of tiles changes, or read from the slot of its field when
 * a->shared (wino_shared_input). */
static void
wino_tasks(const wargs *a, int64_t t0, int64_t t1, float *slot)
{
	const wplan *p = a->p;
	const k_geometry *g = &p->g;
	const k_gemm_kernel *kr = p->kr;
	int64_t nr = p->nr, mr = p->mr, cin = g->in_channels, tr = p->tr;
	float *v = slot, *prod = v + p->v_floats, *phase = prod + p->prod_floats;
	int64_t have = -1;
	for (int64_t t = t0; t < t1; t++) {
		int64_t mb = t % p->mblocks, field = t / p->mblocks;
		int64_t blk = field % p->blocks, n = field / p->blocks;
		int64_t b0 = blk * p->block, b1 = k_min64(b0 + p->block, p->tiles);
		int64_t panels = k_div_up(b1 - b0, nr);
		if (a->shared)
			v = a->scratch + (size_t)field * p->slot_floats;
		else if (have != field) {
			wino_input(a, field, 0, cin, v, phase);
			have = field;
		}
		int64_t m0 = mb * p->mblock, m1 = k_min64(m0 + p->mblock, g->out_channels);
		/* One tile for the block, changed member by member (a compound
		 * literal per panel is a rep stos of its 112 bytes). */
		k_tile tile = { .depth = cin, .ldc = tr };
		for (int f = 0; f < p->a2; f++) {
			const float *u = a->u + f * a->freq_floats;
			for (int64_t q = 0; q < panels; q++) {
				tile.b = v + f * cin * tr + q * cin * nr;
				for (int64_t i = m0; i < m1; i += mr) {
					tile.a = u + (i / mr) * cin * mr;
					tile.c = prod + f * p->mrows * tr + (i - m0) * tr + q * nr;
					kr->tile(&tile);
				}
			}
		}
		a->lv->output(p, prod, b0, b1, m0, m1, a->bias, a->y + n * g->out_channels * g->out_size);
		if (a->post != NULL)
			post_tiles(a, n, b0, b1, m0, m1);
	}
}

bool k_winograd_share_input = true;
bool k_winograd_balance = true;

/*
 * Where the threads share out the output channels of one block of tiles
 * (a small plane, 13 x 13 or 14 x 14 at F(4,3), 7 x 7 at F(2,3)), each
 * would transform the whole input again: there, first the threads share
 * out the input transform, by input channels, each field's into the v of
 * the slot of its number (there are fewer fields than slots), then the
 * products and output transforms as the tasks run (wino_tasks with
 * a->shared). Chunk c of the first pass transforms its share of (field,
 * channel) pairs, with its own slot's phase rows.
 */
static void
wino_shared_input(void *arg, int64_t c0, int64_t c1)
{
	const wargs *a = arg;
	const wplan *p = a->p;
	int64_t cin = p->g.in_channels, fields = p->g.batch * p->blocks, pairs = fields * cin;
	for (int64_t c = c0; c < c1; c++) {
		float *phase = a->scratch + (size_t)c * p->slot_floats + p->v_floats + p->prod_floats;
		int64_t q0 = c * pairs / a->chunks, q1 = (c + 1) * pairs / a->chunks;
		for (int64_t q = q0; q < q1;) {
			int64_t field = q / cin, ch0 = q % cin, ch1 = k_min64(cin, ch0 + (q1 - q));
			wino_input(a, field, ch0, ch1, a->scratch + (size_t)field * p->slot_floats, phase);
			q += ch1 - ch0;
		}
	}
}

static void
wino_chunks(void *arg, int64_t c0, int64_t c1)
{
	const wargs *a = arg;
	for (int64_t c = c0; c < c1; c++) {
		int64_t t0 = c * a->p->tasks / a->chunks, t1 = (c + 1) * a->p->tasks / a->chunks;
		wino_tasks(a, t0, t1, a->scratch + (size_t)c * a->p->slot_floats);
	}
}

void
k_winograd(const k_window *w, const void *packed, const float *x, const float *bias, float *y, void *scratch,
           int slots, const st_exec_ctx *ctx)
{
	k_winograd_post(w, packed, x, bias, y, scratch, slots, NULL, ctx);
}

void
k_winograd_post(const k_window *w, const void *packed, const float *x, const float *bias, float *y,
                void *scratch, int slots, const k_post *post, const st_exec_ctx *ctx)
{
	const wino_head *h = packed;
	assert(k_winograd_is_packed(h) && h->cin == w->in_channels && h->cout == w->out_channels);
	const k_gemm_kernel *kr = k_gemm_kernel_by_width((k_isa)h->isa, h->nr);
	assert(kr != NULL);
	int threads = k_threads_used(slots, ctx);
	wplan p;
	wplan_make(w, kr, h->m, threads, &p);
	/* A relu or clip is applied by the output transform; other activations
	 * by a pass over each task's tiles. */
	p.clamp = k_post_clamp(post, &p.lo, &p.hi);
	wargs a = { .p = &p, .lv = level_of((k_isa)h->isa, p.tw), .u = (const float *)(h + 1), .freq_floats = h->freq_floats,
		    .x = x, .bias = bias, .post = post != NULL && post->on && !p.clamp ? post : NULL, .y = y,
		    .scratch = scratch };
	a.chunks = k_min64(p.tasks, threads);
	int64_t fields = p.g.batch * p.blocks;
	if (k_winograd_share_input && p.mblocks > 1 && a.chunks > 1 && fields < a.chunks) {
		a.shared = true;
		k_parallel_for(ctx, a.chunks, 1, wino_shared_input, &a);
	}
	k_parallel_for(ctx, a.chunks, 1, wino_chunks, &a);
}
