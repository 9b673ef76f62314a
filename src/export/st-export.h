/* The export module: a Strata graph written out for other tools (ONNX now;
 * a C project and PyTorch later). */
#ifndef ST_EXPORT_H
#define ST_EXPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "st-core.h"

/* What st_export_onnx returns. */
enum {
	ST_EXPORT_OK = 0,
	ST_EXPORT_REFUSED = 1,    /* the model cannot be exported as asked (type errors, placeholders, opset) */
	ST_EXPORT_UNREADABLE = 2  /* a weights file or folder is missing or cannot be read */
};

#define ST_EXPORT_ONNX_DEFAULT_OPSET 17
#define ST_EXPORT_ONNX_MIN_OPSET 13
#define ST_EXPORT_ONNX_MAX_OPSET 21

typedef struct st_export_onnx_options {
	int opset;               /* default domain version; 0: ST_EXPORT_ONNX_DEFAULT_OPSET */
	bool fp16;               /* float32 inputs, outputs, initializers and computation as FLOAT16 */
	bool no_tensor_sizes;    /* graph inputs and outputs get dimension variables, not sizes */
	bool allow_placeholders; /* layers with no ONNX operator become ai.strata nodes instead of errors */
	bool xwn_source_weights; /* XWN layers also keep their full-precision weights (docs/onnx.md) */
	bool random_weights;     /* the seeded weights strata run --random-weights uses, not files */
	uint64_t seed;
	const char *file;        /* names the model in messages; may be NULL */
} st_export_onnx_options;

/* export-onnx.c */
/* The ONNX IR version that goes with a default-domain opset (13 to 21), or
 * -1 for an opset this exporter does not write. */
int st_export_onnx_ir_version(int opset);
/*
 * Checks g (st_graph_check) and translates it into an ONNX ModelProto,
 * reading the weights from weights_dir (layerName_weightType.npy; NULL when
 * the model has none or opt->random_weights) and appending the encoding to
 * out, which the caller owns and frees with st_buf_free. Nothing is
 * appended on failure. Problems go to d as "file: layer 'name': text".
 * Returns ST_EXPORT_OK, ST_EXPORT_REFUSED or ST_EXPORT_UNREADABLE.
 */
int st_export_onnx(st_graph *g, const char *weights_dir, const st_export_onnx_options *opt, st_buf *out,
                   st_diag *d);
/* The same, written atomically to path (a failed write is ST_EXPORT_UNREADABLE). */
int st_export_onnx_file(st_graph *g, const char *weights_dir, const st_export_onnx_options *opt,
                        const char *path, st_diag *d);

#endif
