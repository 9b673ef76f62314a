/* bench/dwconv: what bench-dwconv.c and old-depthwise.c share. */
#ifndef BENCH_DWCONV_H
#define BENCH_DWCONV_H

#include "k-nn.h"

/* The depthwise loops k_conv ran before k-dwconv.c, as they were. */
void old_depthwise(const k_window *w, const float *x, const float *weights, const float *bias, float *y,
                   const st_exec_ctx *ctx);

#endif
