/* Strata's own SGEMM: packing into panels, the blocked loops around the
 * micro-kernels, edge tiles, threading, and the reference loops. */
#include "config.h"

#include <assert.h>
#include <limits.h>
#include <string.h>

#include "k-nn.h"
#include "k-sgemm.h"
#include "k-int.h"

const k_gemm_kernel *
k_gemm_kernel_of(k_isa isa)
{
	switch (isa) {
	case K_ISA_PORTABLE:
		return &k_gemm_kernel_portable;
#if defined(K_HAVE_AVX2) && (defined(__x86_64__) || defined(__i386__))
	case K_ISA_AVX2:
		return &k_gemm_kernel_avx2;
#endif
#if defined(K_HAVE_AVX512) && (defined(__x86_64__) || defined(__i386__))
	case K_ISA_AVX512:
		return &k_gemm_kernel_avx512;
#endif
	default:
		return NULL;
	}
}

int k_conv_tile_prefetch = 4;
bool k_sgemm_fetch_next = true;
bool k_sgemm_split_tiles = true;

const k_gemm_kernel *
k_gemm_kernel_now(void)
{
	const k_gemm_kernel *kr = k_gemm_kernel_of(k_cpu_isa());
	return kr ? kr : &k_gemm_kernel_portable;
}

/* The share of an m x n product's tiles that is real work. */
static double
tile_use(const k_gemm_kernel *kr, int64_t m, int64_t n)
{
	double mt = (double)((m + kr->mr - 1) / kr->mr * kr->mr), nt = (double)((n + kr->nr - 1) / kr->nr * kr->nr);
	return (double)m * (double)n / (mt * nt);
}

const k_gemm_kernel *
k_gemm_kernel_for(k_isa isa, int64_t m, int64_t n)
{
	const k_gemm_kernel *kr = k_gemm_kernel_of(isa);
	if (kr == NULL)
		kr = &k_gemm_kernel_portable;
	if (kr->narrow != NULL && m > 0 && n > 0 && tile_use(kr->narrow, m, n) > 1.05 * tile_use(kr, m, n))
		return kr->narrow;
	return kr;
}

const k_gemm_kernel *
k_gemm_kernel_by_width(k_isa isa, int nr)
{
	const k_gemm_kernel *kr = k_gemm_kernel_of(isa);
	if (kr == NULL || kr->nr == nr)
		return kr;
	if (kr->narrow != NULL && kr->narrow->nr == nr)
		return kr->narrow;
	if (kr->few_rows != NULL && kr->few_rows->nr == nr)
		return kr->few_rows;
	if (kr->cols24 != NULL && kr->cols24->nr == nr)
		return kr->cols24;
	return NULL;
}

/* ---- packing ---- */

/* n floats from s to d; the usual panel widths as fixed-size copies, which
 * the compiler turns into a few vector moves. */
static inline void
copy_floats(float *d, const float *s, int64_t n)
{
	switch (n) {
	case 8:
		memcpy(d, s, 8 * sizeof *d);
		break;
	case 16:
		memcpy(d, s, 16 * sizeof *d);
		break;
	case 32:
		memcpy(d, s, 32 * sizeof *d);
		break;
	case 48:
		memcpy(d, s, 48 * sizeof *d);
		break;
	case 64:
		memcpy(d, s, 64 * sizeof *d);
		break;
	default:
		memcpy(d, s, (size_t)n * sizeof *d);
		break;
	}
}

/* Interleaves `rows` rows of src (rs apart) step by step into dst. */
static inline __attribute__((always_inline)) void
pack_rows(float *dst, const float *src, int64_t rs, int64_t depth, int rows)
{
	for (int64_t s = 0; s < depth; s++) {
		for (int r = 0; r < rows; r++)
			dst[s * rows + r] = src[r * rs + s];
	}
}

void
k_sgemm_pack_a_block(const k_gemm_kernel *kr, k_matrix a, int64_t m, int64_t i0, int64_t rows, int64_t t0,
                     int64_t depth, float *dst)
{
	int mr = kr->mr;
	for (int64_t p = 0; p < rows; p += mr) {
		float *panel = dst + p / mr * depth * mr;
		int64_t live = k_min64(k_min64(mr, rows - p), m - (i0 + p));
		if (live < 0)
			live = 0;
		if (a.cs == 1 && live == mr) {
			/* Rows are contiguous: one value of each row per step, so that
			 * the stores are contiguous (the widths as constants, for the
			 * compiler to unroll and combine them). */
			const float *src = a.data + (i0 + p) * a.rs + t0;
			switch (mr) {
			case 6:
				pack_rows(panel, src, a.rs, depth, 6);
				break;
			case 7:
				pack_rows(panel, src, a.rs, depth, 7);
				break;
			case 8:
				pack_rows(panel, src, a.rs, depth, 8);
				break;
			case 16:
				pack_rows(panel, src, a.rs, depth, 16);
				break;
			default:
				pack_rows(panel, src, a.rs, depth, mr);
				break;
			}
		} else if (a.cs == 1) {
			for (int64_t r = 0; r < live; r++) {
				const float *src = a.data + (i0 + p + r) * a.rs + t0;
				for (int64_t s = 0; s < depth; s++)
					panel[s * mr + r] = src[s];
			}
		} else {
			for (int64_t s = 0; s < depth; s++) {
				const float *src = a.data + (i0 + p) * a.rs + (t0 + s) * a.cs;
				for (int64_t r = 0; r < live; r++)
					panel[s * mr + r] = src[r * a.rs];
			}
		}
		if (live < mr) {
			for (int64_t s = 0; s < depth; s++)
				memset(panel + s * mr + live, 0, (size_t)(mr - live) * sizeof *panel);
		}
	}
}

void
k_sgemm_pack_b_block(const k_gemm_kernel *kr, k_matrix b, int64_t n, int64_t j0, int64_t cols, int64_t t0,
                     int64_t depth, float *dst)
{
	int nr = kr->nr;
	for (int64_t q = 0; q < cols; q += nr) {
		float *panel = dst + q / nr * depth * nr;
		int64_t live = k_min64(k_min64(nr, cols - q), n - (j0 + q));
		if (live < 0)
			live = 0;
		if (b.cs == 1) {
			const float *src = b.data + t0 * b.rs + j0 + q;
			for (int64_t s = 0; s < depth; s++)
				copy_floats(panel + s * nr, src + s * b.rs, live);
		} else {
			/* Columns are contiguous (a transposed B): read down each. */
			for (int64_t j = 0; j < live; j++) {
				const float *src = b.data + (j0 + q + j) * b.cs + t0 * b.rs;
				for (int64_t s = 0; s < depth; s++)
					panel[s * nr + j] = src[s * b.rs];
			}
		}
		if (live < nr) {
			for (int64_t s = 0; s < depth; s++)
				memset(panel + s * nr + live, 0, (size_t)(nr - live) * sizeof *panel);
		}
	}
}

size_t
k_sgemm_packed_a_bytes(const k_gemm_kernel *kr, int64_t m, int64_t k)
{
	return k_line_floats(k_round_up(m, kr->mr) * k) * sizeof(float);
}

void
k_sgemm_pack_a(const k_gemm_kernel *kr, int64_t m, int64_t k, k_matrix a, float *packed)
{
	k_sgemm_pack_a_block(kr, a, m, 0, m, 0, k, packed);
}

size_t
k_sgemm_packed_b_bytes(const k_gemm_kernel *kr, int64_t k, int64_t n)
{
	return k_line_floats(k_round_up(n, kr->nr) * k) * sizeof(float);
}

void
k_sgemm_pack_b(const k_gemm_kernel *kr, int64_t k, int64_t n, k_matrix b, float *packed)
{
	k_sgemm_pack_b_block(kr, b, n, 0, n, 0, k, packed);
}

/* ---- tiles ---- */

void
k_gemm_tile_part(const k_gemm_kernel *kr, const k_tile *t, int rows, int cols)
{
	if (cols == kr->nr && rows > 0) {
		/* Whole columns: the tile stores the rows there are itself. */
		k_tile u = *t;
		u.rows = rows;
		kr->tile(&u);
		return;
	}
	float buf[K_GEMM_MAX_TILE] __attribute__((aligned(64)));
	k_tile u = *t;
	u.rows = 0;
	u.c = buf;
	u.ldc = kr->nr;
	u.load_c = false;
	u.row_bias = u.col_bias = NULL;
	u.clamp = false;
	kr->tile(&u);
	for (int r = 0; r < rows; r++) {
		const float *src = buf + r * kr->nr;
		float *dst = t->c + r * t->ldc;
		for (int j = 0; j < cols; j++) {
			float v = src[j];
			if (t->load_c)
				v += dst[j];
			if (t->row_bias)
				v += t->row_bias[r];
			if (t->col_bias)
				v += t->col_bias[j];
			if (t->clamp)
				v = k_clamp(v, t->lo, t->hi);
			dst[j] = v;
		}
	}
}

/* ---- the blocked product ---- */

/* The depth of each block of op's product: the kernel's kc, or its
 * kc_whole where nothing is packed per call; evened out so that the last
 * block is not a sliver. */
static int64_t
depth_block(const k_gemm_kernel *kr, const k_sgemm_op *op)
{
	bool whole = (op->a_packed || op->a_in_place) && op->b_packed && kr->kc_whole > kr->kc;
	int64_t k = op->k;
	return k_div_up(k, k_div_up(k, whole ? kr->kc_whole : kr->kc));
}

/* Columns of each B block for a range of `cols`: nc evened out, whole panels. */
static int64_t
col_block(const k_gemm_kernel *kr, int64_t cols)
{
	int64_t blocks = k_div_up(cols, kr->nc);
	return k_round_up(k_div_up(cols, blocks), kr->nr);
}

static int64_t
row_block(const k_gemm_kernel *kr, int64_t rows)
{
	int64_t blocks = k_div_up(rows, kr->mc);
	return k_round_up(k_div_up(rows, blocks), kr->mr);
}

/* Floats of packed A and of packed B one block needs (0 for a pre-packed operand). */
static void
scratch_floats(const k_gemm_kernel *kr, const k_sgemm_op *op, size_t *a_floats, size_t *b_floats)
{
	int64_t kc = op->k > 0 ? depth_block(kr, op) : 0;
	/* A read in place is packed only for a last panel of fewer rows. */
	*a_floats = op->a_packed ? 0
	            : op->a_in_place ? k_line_floats(kr->mr * kc)
	                             : k_line_floats(row_block(kr, op->m > 0 ? op->m : 1) * kc);
	*b_floats = op->b_packed ? 0 : k_line_floats(col_block(kr, op->n > 0 ? op->n : 1) * kc);
}

size_t
k_sgemm_scratch_bytes(const k_gemm_kernel *kr, const k_sgemm_op *op)
{
	size_t a, b;
	scratch_floats(kr, op, &a, &b);
	return (a + b) * sizeof(float);
}

/* C = C or 0, plus the biases: a product over no steps. */
static void
empty_product(const k_sgemm_op *op, int64_t i0, int64_t i1, int64_t j0, int64_t j1)
{
	for (int64_t i = i0; i < i1; i++) {
		float *row = op->c + i * op->ldc;
		for (int64_t j = j0; j < j1; j++) {
			float v = op->accumulate ? row[j] : 0.0f;
			if (op->row_bias)
				v += op->row_bias[i];
			if (op->col_bias)
				v += op->col_bias[j];
			row[j] = op->clamp ? k_clamp(v, op->lo, op->hi) : v;
		}
	}
}

/*
 * The loops around the micro-kernel (the GotoBLAS/BLIS arrangement, with
 * A as the broadcast side): a block of A (mc x kc) is packed once per depth
 * block; for it, each block of B (kc x nc, in L2) is packed and swept by
 * every A panel of kc x mr (in L1) in turn, one register tile per B panel.
 * Each operand is packed once when m <= mc. The first depth block stores,
 * the later ones add to C.
 */
void
k_sgemm_block(const k_gemm_kernel *kr, const k_sgemm_op *op, int64_t i0, int64_t i1, int64_t j0, int64_t j1,
              void *scratch)
{
	if (i0 >= i1 || j0 >= j1)
		return;
	if (op->k == 0) {
		empty_product(op, i0, i1, j0, j1);
		return;
	}
	int mr = kr->mr, nr = kr->nr;
	assert(i0 % mr == 0 && j0 % nr == 0);
	int64_t k = op->k, kc = depth_block(kr, op);
	int64_t nc_most = col_block(kr, j1 - j0), mc_most = row_block(kr, i1 - i0);
	size_t a_floats, b_floats;
	scratch_floats(kr, op, &a_floats, &b_floats);
	float *a_buf = scratch, *b_buf = (float *)scratch + a_floats;
	for (int64_t ic = i0; ic < i1; ic += mc_most) {
		int64_t mc = k_min64(mc_most, i1 - ic);
		for (int64_t pc = 0; pc < k; pc += kc) {
			int64_t depth = k_min64(kc, k - pc);
			bool first = pc == 0, last = pc + depth >= k;
			const float *ap;
			int64_t a_step;
			bool in_place = op->a_in_place && !op->a_packed;
			if (op->a_packed) {
				ap = op->a_packed + ic / mr * k * mr + pc * mr;
				a_step = k * mr;
			} else if (in_place) {
				ap = op->a.data + ic * op->a.rs + pc;
				a_step = mr * op->a.rs;
			} else {
				k_sgemm_pack_a_block(kr, op->a, op->m, ic, mc, pc, depth, a_buf);
				ap = a_buf;
				a_step = depth * mr;
			}
			for (int64_t jc = j0; jc < j1; jc += nc_most) {
				int64_t nc = k_min64(nc_most, j1 - jc);
				const float *bp, *next = NULL;
				int64_t b_step, next_panels = 0;
				if (op->b_packed) {
					bp = op->b_packed + jc / nr * k * nr + pc * nr;
					b_step = k * nr;
					/* Filters packed once come from memory in a network:
					 * the next block's, fetched while this one runs. */
					if (k_sgemm_fetch_next && jc + nc_most < j1) {
						next = op->b_packed + (jc + nc_most) / nr * k * nr + pc * nr;
						next_panels = k_div_up(k_min64(nc_most, j1 - jc - nc_most), nr);
					} else if (k_sgemm_fetch_next && pc + kc < k) {
						next = op->b_packed + j0 / nr * k * nr + (pc + kc) * nr;
						next_panels = k_div_up(k_min64(nc_most, j1 - j0), nr);
					}
				} else {
					k_sgemm_pack_b_block(kr, op->b, op->n, jc, nc, pc, depth, b_buf);
					bp = b_buf;
					b_step = depth * nr;
				}
				for (int64_t ir = 0; ir < mc; ir += mr) {
					int rows = (int)k_min64(mr, mc - ir);
					const float *at = ap + ir / mr * a_step;
					int64_t lda = in_place ? op->a.rs : 0;
					if (in_place && rows < mr) {
						/* Past the last row: pack these rows, zero below. */
						k_sgemm_pack_a_block(kr, op->a, op->m, ic + ir, rows, pc, depth, a_buf);
						at = a_buf;
						lda = 0;
					}
					k_tile t = {
						.depth = depth, .a = at, .lda = lda, .ldc = op->ldc,
						.load_c = !first || op->accumulate,
						.row_bias = first && op->row_bias ? op->row_bias + ic + ir : NULL,
						.clamp = last && op->clamp, .lo = op->lo, .hi = op->hi,
					};
					/* The first row panels share the next block's panels
					 * out, one vector of each step apiece (the tile
					 * knows how many vectors a step has and ignores the
					 * lanes past them). */
					bool fetch = next != NULL;
					t.b_next_lane = (int)k_min64(ir / mr, INT_MAX);
					for (int64_t jr = 0; jr < nc; jr += nr) {
						int cols = (int)k_min64(nr, nc - jr);
						t.b = bp + jr / nr * b_step;
						t.b_next = fetch && jr / nr < next_panels ? next + jr / nr * b_step : NULL;
						t.c = op->c + (ic + ir) * op->ldc + jc + jr;
						t.col_bias = first && op->col_bias ? op->col_bias + jc + jr : NULL;
						if (rows == mr && cols == nr)
							kr->tile(&t);
						else
							k_gemm_tile_part(kr, &t, rows, cols);
					}
				}
			}
		}
	}
}

void
k_sgemm(const k_gemm_kernel *kr, const k_sgemm_op *op, void *scratch)
{
	k_sgemm_block(kr, op, 0, op->m, 0, op->n, scratch);
}

/* ---- threads ---- */

typedef struct par_args {
	const k_gemm_kernel *kr;
	const k_sgemm_op *op;
	char *scratch;
	size_t slot_bytes;
	int64_t chunks, panels;
	bool by_rows;
	/* By tiles: `panels` counts the tiles, column panel after column
	 * panel, mp of them in each. */
	bool by_tiles;
	int64_t mp;
} par_args;

static void
par_range(void *arg, int64_t c0, int64_t c1)
{
	const par_args *p = arg;
	const k_sgemm_op *op = p->op;
	for (int64_t c = c0; c < c1; c++) {
		int64_t q0 = c * p->panels / p->chunks, q1 = (c + 1) * p->panels / p->chunks;
		void *slot = p->scratch + (size_t)c * p->slot_bytes;
		if (p->by_tiles) {
			/* The run of row tiles of each column panel in [q0, q1). */
			for (int64_t q = q0; q < q1;) {
				int64_t j = q / p->mp, r0 = q % p->mp, r1 = k_min64(p->mp, r0 + q1 - q);
				k_sgemm_block(p->kr, op, r0 * p->kr->mr, k_min64(r1 * p->kr->mr, op->m), j * p->kr->nr,
				              k_min64((j + 1) * p->kr->nr, op->n), slot);
				q += r1 - r0;
			}
		} else if (p->by_rows)
			k_sgemm_block(p->kr, op, q0 * p->kr->mr, k_min64(q1 * p->kr->mr, op->m), 0, op->n, slot);
		else
			k_sgemm_block(p->kr, op, 0, op->m, q0 * p->kr->nr, k_min64(q1 * p->kr->nr, op->n), slot);
	}
}

static size_t
slot_bytes(const k_gemm_kernel *kr, const k_sgemm_op *op)
{
	return k_line_floats((int64_t)(k_sgemm_scratch_bytes(kr, op) / sizeof(float))) * sizeof(float);
}

size_t
k_sgemm_parallel_scratch_bytes(const k_gemm_kernel *kr, const k_sgemm_op *op, int slots)
{
	return slot_bytes(kr, op) * (size_t)(slots > 1 ? slots : 1);
}

/*
 * Threads take whole panels of columns (each packs all of A for its own)
 * or of rows (each packs all of B): whichever duplicates less packing, as
 * long as there are panels enough; a few column panels that do not divide
 * evenly, runs of tiles. A product too small to pay for a hand-over stays
 * on one thread.
 */
void
k_sgemm_parallel(const k_gemm_kernel *kr, const k_sgemm_op *op, void *scratch, int slots,
                 const st_exec_ctx *ctx)
{
	int threads = ctx && ctx->parallel_for ? ctx->n_threads : 1;
	if (threads > slots)
		threads = slots;
	int64_t mp = k_div_up(op->m, kr->mr), np = k_div_up(op->n, kr->nr);
	double work = (double)op->m * (double)op->n * (double)op->k;
	if (work < 262144.0)
		threads = 1;
	par_args p = { kr, op, scratch, slot_bytes(kr, op), 1, np, false, false, mp };
	if (threads > 1) {
		p.by_rows = np < threads || (op->m > op->n && mp >= threads);
		p.panels = p.by_rows ? mp : np;
		p.chunks = k_min64(threads, p.panels);
		/* A few column panels that the threads cannot share evenly (3 on
		 * 2: one thread does twice the other's work) are shared out tile
		 * by tile instead. */
		if (k_sgemm_split_tiles && !p.by_rows && np % threads != 0 && np < 4 * threads && mp > 1) {
			p.by_tiles = true;
			p.panels = mp * np;
			p.chunks = threads;
		}
	}
	if (p.chunks <= 1) {
		k_sgemm(kr, op, scratch);
		return;
	}
	k_parallel_for(ctx, p.chunks, 1, par_range, &p);
}

/* ---- reference ---- */

void
k_sgemm_ref(const k_sgemm_op *op)
{
	for (int64_t i = 0; i < op->m; i++) {
		for (int64_t j = 0; j < op->n; j++) {
			double sum = 0.0;
			for (int64_t t = 0; t < op->k; t++)
				sum += (double)op->a.data[i * op->a.rs + t * op->a.cs] *
				       (double)op->b.data[t * op->b.rs + j * op->b.cs];
			float *c = op->c + i * op->ldc + j;
			if (op->accumulate)
				sum += *c;
			if (op->row_bias)
				sum += op->row_bias[i];
			if (op->col_bias)
				sum += op->col_bias[j];
			*c = op->clamp ? k_clamp((float)sum, op->lo, op->hi) : (float)sum;
		}
	}
}
