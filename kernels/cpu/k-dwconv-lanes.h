/* Depthwise convolution on small planes with the channels in the lanes:
 * part of k-dwconv-body.h, included at its end for each variant (it uses
 * that file's L, DW_VEC, DW_FN, DW_UNROLL and loads).
 *
 * A plane of 14 x 14 or 7 x 7 outputs fits a vector's width badly and its
 * few sums are chains of multiply-adds that wait on each other, so these
 * loops take L channels at a time instead. Their input planes are copied
 * into the slot transposed, each padded position one vector of L channels
 * (dw_lanes_plan in k-dwconv.c says where), and an output position is then
 * the sum of its taps' vectors times the taps' weight vectors: L outputs
 * of L channels per block of sums, L independent chains. The sums are
 * transposed back, one vector of consecutive outputs per channel, into
 * the slot's staging rows, which are copied to the output planes without
 * their padding columns. */

/* Vector transposes: after the stages of every distance d (a power of two
 * below L), v[i] lane j holds what v[j] lane i held. A stage exchanges the
 * lanes with bit d set in v[i] with the lanes of v[i + d] that have it
 * clear, for each i with bit d clear. */
#if DW_LANES == 16
#define DWL_LO1 0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30
#define DWL_HI1 1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31
#define DWL_LO2 0, 1, 16, 17, 4, 5, 20, 21, 8, 9, 24, 25, 12, 13, 28, 29
#define DWL_HI2 2, 3, 18, 19, 6, 7, 22, 23, 10, 11, 26, 27, 14, 15, 30, 31
#define DWL_LO4 0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27
#define DWL_HI4 4, 5, 6, 7, 20, 21, 22, 23, 12, 13, 14, 15, 28, 29, 30, 31
#define DWL_LO8 0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23
#define DWL_HI8 8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31
#elif DW_LANES == 8
#define DWL_LO1 0, 8, 2, 10, 4, 12, 6, 14
#define DWL_HI1 1, 9, 3, 11, 5, 13, 7, 15
#define DWL_LO2 0, 1, 8, 9, 4, 5, 12, 13
#define DWL_HI2 2, 3, 10, 11, 6, 7, 14, 15
#define DWL_LO4 0, 1, 2, 3, 8, 9, 10, 11
#define DWL_HI4 4, 5, 6, 7, 12, 13, 14, 15
#else
#define DWL_LO1 0, 4, 2, 6
#define DWL_HI1 1, 5, 3, 7
#define DWL_LO2 0, 1, 4, 5
#define DWL_HI2 2, 3, 6, 7
#endif

#define DWL_STAGE(v, d, lo, hi)                                       \
	do {                                                              \
		DW_UNROLL                                                     \
		for (int i_ = 0; i_ < L; i_++) {                              \
			if (i_ & (d))                                             \
				continue;                                             \
			DW_VEC a_ = (v)[i_], b_ = (v)[i_ + (d)];                  \
			(v)[i_] = __builtin_shufflevector(a_, b_, lo);            \
			(v)[i_ + (d)] = __builtin_shufflevector(a_, b_, hi);      \
		}                                                             \
	} while (0)

DW_FN void
DW_NAME(lanes_transpose)(DW_VEC *v)
{
#if DW_LANES == 16
	DWL_STAGE(v, 8, DWL_LO8, DWL_HI8);
#endif
#if DW_LANES >= 8
	DWL_STAGE(v, 4, DWL_LO4, DWL_HI4);
#endif
	DWL_STAGE(v, 2, DWL_LO2, DWL_HI2);
	DWL_STAGE(v, 1, DWL_LO1, DWL_HI1);
}

/* The first `keep` lanes of v to out (keep at most L). */
DW_FN void
DW_NAME(store_first)(float *out, DW_VEC v, int64_t keep)
{
#if DW_MASKED_LOADS == 512
	_mm512_mask_storeu_ps(out, DW_NAME(mask_of)(0, keep), v);
#elif DW_MASKED_LOADS == 256
	k_store_part_avx2(out, (__m256)v, keep);
#else
	for (int64_t j = 0; j < keep; j++)
		out[j] = v[j];
#endif
}

/*
 * The input planes of block (n, oc0), `count` channels, into buf: input
 * row ih, column iw goes to the position dw_lanes_at gives for ih + pad
 * top, iw + pad left; rows and columns no output reads are left out, and
 * the positions no input reaches keep the zeros the slot started with.
 * Lanes from `count` on repeat the last channel (their weights are zero
 * and their sums are never stored). L columns at a time, transposed in
 * registers.
 */
DW_FN void
DW_NAME(lanes_fill)(const dw_args *a, int64_t n, int64_t oc0, int count, float *buf)
{
	const k_geometry *g = &a->g;
	const dw_lanes_plan *p = &a->lanes;
	const float *src[L];
	for (int l = 0; l < L; l++) {
		int64_t oc = oc0 + (l < count ? l : count - 1);
		src[l] = a->x + (n * g->in_channels + oc / g->out_per_group) * g->in_size;
	}
	int64_t rows = g->in[1], cols = g->in[2];
	if (rows > p->last_row + 1 - g->pad[1])
		rows = p->last_row + 1 - g->pad[1];
	if (cols > p->last_col + 1 - g->pad[2])
		cols = p->last_col + 1 - g->pad[2];
	int64_t full = cols / L * L, rs = p->sh - 1, cs = p->sw - 1, phase = p->rows * p->cols;
	for (int64_t ih = 0; ih < rows; ih++) {
		int64_t row = ih + g->pad[1], from = ih * g->in[2];
		float *dst = buf + ((((row & rs) << cs) * p->rows + (row >> rs)) * p->cols) * L;
		for (int64_t iw = 0; iw < cols; iw += L) {
			DW_VEC v[L];
			if (iw < full) {
				DW_UNROLL
				for (int l = 0; l < L; l++)
					v[l] = DW_NAME(load)(src[l] + from + iw);
			} else {
				DW_NAME(mask) keep = DW_NAME(mask_of)(0, cols - iw);
				DW_UNROLL
				for (int l = 0; l < L; l++)
					v[l] = DW_NAME(load_masked)(src[l] + from, iw, keep);
			}
			DW_NAME(lanes_transpose)(v);
			int64_t take = cols - iw < L ? cols - iw : L;
			DW_UNROLL
			for (int j = 0; j < L; j++) {
				if (j >= take)
					break;
				int64_t col = iw + j + g->pad[2];
				DW_NAME(store)(dst + ((col & cs) * phase + (col >> cs)) * L, v[j]);
			}
		}
	}
}

/*
 * Block (n, oc0) of `count` channels: fills buf, gathers the weights and
 * biases into vectors, computes every output q = oh * p->cols + ow in
 * blocks of L into the staging rows (one per channel), copies them to the
 * output planes and applies the post step.
 */
DW_FN void
DW_NAME(lanes_block)(const dw_args *a, int64_t n, int64_t oc0, int count, float *slot)
{
	const k_geometry *g = &a->g;
	const dw_lanes_plan *p = &a->lanes;
	float *buf = slot, *wts = slot + p->buf_floats, *stage = wts + p->wts_floats;
	DW_NAME(lanes_fill)(a, n, oc0, count, buf);
	int taps = p->taps;
	for (int t = 0; t < taps; t++) {
		for (int l = 0; l < L; l++)
			wts[t * L + l] = l < count ? a->weights[(oc0 + l) * g->kernel_size + p->tap_index[t]] : 0.0f;
	}
	float lanes_bias[L];
	for (int l = 0; l < L; l++)
		lanes_bias[l] = a->bias != NULL && l < count ? a->bias[oc0 + l] : 0.0f;
	DW_VEC bias = DW_NAME(load)(lanes_bias);
	int64_t first = n * g->out_channels + oc0, width = g->out[2];
	/* Rows of exactly L positions (14 x 14 at stride 1 in 16 lanes, 7 x 7
	 * at stride 2 in 8): a block of sums is one output row of each
	 * channel, stored in place, no staging. */
	bool rows = p->cols == L;
	for (int64_t q = 0; q < p->q_end; q += L) {
		DW_VEC acc[L];
		DW_UNROLL
		for (int j = 0; j < L; j++)
			acc[j] = bias;
		for (int t = 0; t < taps; t++) {
			DW_VEC w = DW_NAME(load)(wts + t * L);
			const float *in = buf + (q + p->tap_at[t]) * L;
			DW_UNROLL
			for (int j = 0; j < L; j++)
				acc[j] = DW_FMA(DW_NAME(load)(in + j * L), w, acc[j]);
		}
		DW_NAME(lanes_transpose)(acc);
		if (rows) {
			float *out = a->y + first * g->out_size + q / L * width;
			for (int l = 0; l < count; l++)
				DW_NAME(store_first)(out + l * g->out_size, acc[l], width);
			continue;
		}
		DW_UNROLL
		for (int l = 0; l < L; l++)
			DW_NAME(store)(stage + l * p->stage_pitch + q, acc[l]);
	}
	int64_t full = width / L * L;
	for (int l = 0; l < count && !rows; l++) {
		float *plane = a->y + (first + l) * g->out_size;
		const float *row = stage + l * p->stage_pitch;
		for (int64_t oh = 0; oh < g->out[1]; oh++, plane += width, row += p->cols) {
			for (int64_t ow = 0; ow < full; ow += L)
				DW_NAME(store)(plane + ow, DW_NAME(load)(row + ow));
			if (full < width)
				DW_NAME(store_first)(plane + full, DW_NAME(load_inside)(row + full, 0, width - full),
				                     width - full);
		}
	}
	k_post_planes(a->post, a->y, g->out_size, first, first + count);
}

/* Chunk c of the blocks of L channels (n x channel blocks), with scratch
 * slot c, zeroed first: the positions no input reaches stay zero from
 * block to block. */
static DW_TARGET void
DW_NAME(dw_lanes)(void *arg, int64_t c0, int64_t c1)
{
	const dw_args *a = arg;
	const k_geometry *g = &a->g;
	int64_t per_sample = k_div_up(g->out_channels, L), blocks = g->batch * per_sample;
	for (int64_t c = c0; c < c1; c++) {
		float *slot = a->scratch + (size_t)c * (size_t)a->lanes.slot_floats;
		memset(slot, 0, (size_t)a->lanes.buf_floats * sizeof *slot);
		for (int64_t b = c * blocks / a->chunks; b < (c + 1) * blocks / a->chunks; b++) {
			int64_t n = b / per_sample, oc0 = b % per_sample * L;
			int count = g->out_channels - oc0 < L ? (int)(g->out_channels - oc0) : L;
			DW_NAME(lanes_block)(a, n, oc0, count, slot);
		}
	}
}

#undef DWL_STAGE
#undef DWL_LO1
#undef DWL_HI1
#undef DWL_LO2
#undef DWL_HI2
#undef DWL_LO4
#undef DWL_HI4
#undef DWL_LO8
#undef DWL_HI8
