/* What the ONNX importer's two files share: the import's state, known
 * values, and the helpers the operator mappings (io-onnx-ops.c) build
 * layers with. Not installed; nothing outside src/io uses it. */
#ifndef IO_ONNX_INTERNAL_H
#define IO_ONNX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "st-io.h"
#include "st-onnx.h"

/* A tensor whose values are known: an initializer, a Constant node, a
 * test's fixed input, or the result of folding. Values are decoded on
 * demand: doubles for float types, int64 for integer and bool types. */
typedef struct cten {
	int32_t type;             /* ONNX data type */
	int rank;
	int64_t dims[ST_MAX_RANK];
	int64_t count;
	const st_onnx_tensor *src; /* where the values come from, or NULL */
	double *f;                /* float types, once decoded (owned) */
	int64_t *i;               /* integer and bool types, once decoded (owned) */
} cten;

/* One ONNX value (a tensor name): produced by a layer at run time, or known. */
typedef struct val {
	char *name;
	st_port port;             /* port.layer NULL: not produced by a layer */
	cten *c;                  /* known values, or NULL */
	st_layer *const_layer;    /* the constant layer made for c, once needed */
	int uses;                 /* nodes and graph outputs reading it */
	bool graph_output;
} val;

/* The state of one import. */
typedef struct imp {
	const st_onnx_model *m;
	const st_onnx_graph *g;
	const st_onnx_import_options *opt;
	const st_registry *r;
	st_graph *graph;
	st_diag *d;
	st_map vals;              /* name -> val */
	val **all;
	int n_all, cap_all;
	int opset;
	const st_onnx_node *node; /* the node being imported, for messages */
	size_t node_index;
	char why[512];            /* why a node is kept as a placeholder */
	int n_placeholders, n_folded;
	int errors;
	struct xwn_plan *xwn;     /* io-onnx-xwn.c: the XWN layers the metadata names */
	int n_xwn, n_xwn_transformed;
} imp;

/* Most elements a tensor computed at import may have (a guard against
 * files that ask for absurd constants). */
#define FOLD_LIMIT ((int64_t)1 << 26)

/* Shared by the two files only: hidden from libstrata's users. */
#pragma GCC visibility push(hidden)

/* io-onnx-import.c: known values, messages, values, attributes, layers,
 * weights, shapes and run-time operands. */
bool is_float_type(int32_t t);
void cten_free(cten *c);
bool dims_ok(int rank, const int64_t *dims);
cten *cten_new(int32_t type, int rank, const int64_t *dims);
cten *cten_reshaped(const cten *c, const int64_t *dims, int r);
int cten_decode(cten *c, char *why, size_t size);
cten *cten_from_tensor(const st_onnx_tensor *t, char *why, size_t size);
double cget(const cten *c, int64_t k);
int64_t cgeti(const cten *c, int64_t k);
void cseti(cten *c, int64_t k, int64_t v);
void cset(cten *c, int64_t k, double v);
int32_t onnx_of(st_dtype t);
void node_msg(imp *I, st_severity sev, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int unsupported(imp *I, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
val *find_val(imp *I, st_onnx_str name);
val *get_val(imp *I, st_onnx_str name);
val *in_val(imp *I, size_t k);
bool has_input(imp *I, size_t k);
bool output_used(imp *I, size_t k);
void set_out_const(imp *I, size_t k, cten *c);
void set_out_port(imp *I, size_t k, st_layer *l, int port);
cten *in_const(imp *I, size_t k);
const st_onnx_attribute *attr(imp *I, const char *name);
int64_t attr_i(imp *I, const char *name, int64_t def);
double attr_f(imp *I, const char *name, double def);
const char *attr_s(imp *I, const char *name, const char *def, char *buf, size_t size);
int attr_ints(imp *I, const char *name, int64_t *out, int cap);
const char *node_hint(imp *I, char *buf, size_t size);
st_layer *add_layer(imp *I, const char *type, const char *hint);
st_layer *node_layer(imp *I, const char *type);
int set_param(imp *I, st_layer *l, const char *name, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int set_dims(imp *I, st_layer *l, const char *name, const int64_t *v, int n);
int set_floats(imp *I, st_layer *l, const char *name, const double *v, int n);
int set_double(imp *I, st_layer *l, const char *name, double v);
void link_in(imp *I, st_layer *l, int input, st_port src);
int write_weight(imp *I, st_layer *l, const char *weight, cten *c, int rank, const int64_t *dims);
int write_floats(imp *I, st_layer *l, const char *weight, const float *v, int rank, const int64_t *dims);
const st_shape *in_shape(imp *I, size_t k, st_shape *tmp);
int const_port(imp *I, val *v, st_port *out);
int in_port(imp *I, size_t k, st_port *out);
int unary_layer(imp *I, const char *type, st_layer **out);
int ints_attr_or_input(imp *I, const char *name, int since, size_t k, int64_t *out, int cap);
void rollback(imp *I, int mark);
/* Imports node index through its own mapping (or as a placeholder). */
int import_plain(imp *I, size_t index);

/* io-onnx-ops.c: the operator mappings. Each returns 0 (mapped), 1 (keep
 * the node as a placeholder, why in I->why) or -1 (an error reported). */
int set_act_param(imp *I, st_layer *l, const char *name, double v);
int activation(imp *I, const char *act, st_layer **out);
int layer_norm_layer(imp *I, int64_t axis, double eps, cten *gamma, cten *beta);
int map_node(imp *I);
/* A convolution layer for the current Conv (ConvTranspose when transposed)
 * node: of type (NULL: the standard one), named after hint (NULL: the
 * node), with weights (NULL: the node's own; else as many floats). */
int conv_layer(imp *I, bool transposed, const char *type, const char *hint, const float *weights,
               st_layer **out);

/* io-onnx-xwn.c: XWN layers restored from metadata_props. xwn_plan_read reads
 * the entries and checks them against the graph (role: find_patterns');
 * xwn_role says what node index is: 0 an ordinary node, k + 1 where entry
 * k is imported, -1 a part imported with its entry; xwn_import makes the
 * layer (or, failing, imports its nodes plainly). */
void xwn_plan_read(imp *I, const int *role);
int xwn_role(const imp *I, size_t index);
int xwn_import(imp *I, int entry);
void xwn_plan_free(imp *I);

#pragma GCC visibility pop

#endif
