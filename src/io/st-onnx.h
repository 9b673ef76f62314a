/* The ONNX protobuf layer: a zero-copy reader and a canonical writer for the
 * subset of onnx.proto that Strata uses (field numbers in
 * /usr/include/onnx/onnx.proto). It knows the wire format and the schema,
 * not what the operators mean; importing is the importer's job. */
#ifndef ST_ONNX_H
#define ST_ONNX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "st-core.h"

/* Bytes or text inside the model's buffer or mapping (not NUL-terminated).
 * data is NULL when the field is absent; a present empty field has data set
 * and len 0 (proto2 keeps presence). */
typedef struct st_onnx_str {
	const char *data;
	size_t len;
} st_onnx_str;

/* A field this layer does not model, kept as it was written (key
 * included) so that the writer can put it back where it belongs. */
typedef struct st_onnx_extra {
	uint32_t field;
	const uint8_t *data;
	size_t len;
} st_onnx_extra;

typedef struct st_onnx_extras {
	st_onnx_extra *items;
	size_t count;
} st_onnx_extras;

/* TensorProto.DataType */
enum {
	ST_ONNX_UNDEFINED = 0, ST_ONNX_FLOAT = 1, ST_ONNX_UINT8 = 2, ST_ONNX_INT8 = 3,
	ST_ONNX_UINT16 = 4, ST_ONNX_INT16 = 5, ST_ONNX_INT32 = 6, ST_ONNX_INT64 = 7,
	ST_ONNX_STRING = 8, ST_ONNX_BOOL = 9, ST_ONNX_FLOAT16 = 10, ST_ONNX_DOUBLE = 11,
	ST_ONNX_UINT32 = 12, ST_ONNX_UINT64 = 13, ST_ONNX_COMPLEX64 = 14, ST_ONNX_COMPLEX128 = 15,
	ST_ONNX_BFLOAT16 = 16
};

/* AttributeProto.AttributeType */
enum {
	ST_ONNX_ATTR_UNDEFINED = 0, ST_ONNX_ATTR_FLOAT = 1, ST_ONNX_ATTR_INT = 2, ST_ONNX_ATTR_STRING = 3,
	ST_ONNX_ATTR_TENSOR = 4, ST_ONNX_ATTR_GRAPH = 5, ST_ONNX_ATTR_FLOATS = 6, ST_ONNX_ATTR_INTS = 7,
	ST_ONNX_ATTR_STRINGS = 8, ST_ONNX_ATTR_TENSORS = 9, ST_ONNX_ATTR_GRAPHS = 10
};

/* StringStringEntryProto (metadata and external-data entries). */
typedef struct st_onnx_entry {
	st_onnx_str key, value;
	st_onnx_extras extras;
} st_onnx_entry;

/* OperatorSetIdProto: domain "" or "ai.onnx" is the default domain. */
typedef struct st_onnx_opset {
	st_onnx_str domain;
	bool has_version;
	int64_t version;
	st_onnx_extras extras;
} st_onnx_opset;

/* TensorShapeProto.Dimension: a value, a parameter name, or neither. */
typedef struct st_onnx_dim {
	bool has_value;
	int64_t value;          /* below 0 (Paddle writes -1): unknown, like no value */
	st_onnx_str param;
	st_onnx_str denotation;
	st_onnx_extras extras;
} st_onnx_dim;

typedef enum st_onnx_type_kind {
	ST_ONNX_TYPE_NONE,      /* no value kind given */
	ST_ONNX_TYPE_TENSOR,
	ST_ONNX_TYPE_OTHER      /* sequence, map, optional, sparse, opaque: not a tensor (kept in extras) */
} st_onnx_type_kind;

/* TypeProto, with TypeProto.Tensor and its TensorShapeProto flattened in. */
typedef struct st_onnx_type {
	st_onnx_type_kind kind;
	bool has_elem_type;
	int32_t elem_type;
	bool has_shape;         /* false: rank unknown */
	st_onnx_dim *dims;
	size_t n_dims;
	st_onnx_str denotation;
	st_onnx_extras extras, tensor_extras, shape_extras;
} st_onnx_type;

typedef struct st_onnx_value_info {
	st_onnx_str name;
	bool has_type;
	st_onnx_type type;
	st_onnx_str doc_string;
	st_onnx_extras extras;
} st_onnx_value_info;

/* TensorProto. The numeric *_data arrays are copies (they are small in
 * practice: Constant values); raw_data and external data stay in the
 * mappings. */
typedef struct st_onnx_tensor {
	int64_t *dims;
	size_t n_dims;
	int64_t count;          /* elements: the product of dims (1 for a scalar) */
	bool has_data_type;
	int32_t data_type;
	float *float_data;
	size_t n_float_data;
	int32_t *int32_data;
	size_t n_int32_data;
	st_onnx_str *string_data;
	size_t n_string_data;
	int64_t *int64_data;
	size_t n_int64_data;
	st_onnx_str name;
	st_onnx_str raw_data;
	double *double_data;
	size_t n_double_data;
	uint64_t *uint64_data;
	size_t n_uint64_data;
	st_onnx_str doc_string;
	st_onnx_entry *external_data;
	size_t n_external_data;
	bool has_data_location;
	int32_t data_location;  /* 1: EXTERNAL */
	st_onnx_extras extras;
	/* Where external data was found by st_onnx_open (inside a mapping of
	 * the data file), or NULL. */
	const uint8_t *external;
	size_t external_len;
} st_onnx_tensor;

typedef struct st_onnx_graph st_onnx_graph;

typedef struct st_onnx_attribute {
	st_onnx_str name;
	bool has_f;
	float f;
	bool has_i;
	int64_t i;
	st_onnx_str s;
	st_onnx_tensor *t;      /* NULL when absent */
	st_onnx_graph *g;       /* NULL when absent */
	float *floats;
	size_t n_floats;
	int64_t *ints;
	size_t n_ints;
	st_onnx_str *strings;
	size_t n_strings;
	st_onnx_tensor *tensors;
	size_t n_tensors;
	st_onnx_graph *graphs;
	size_t n_graphs;
	st_onnx_str doc_string;
	bool has_type;
	int32_t type;           /* ST_ONNX_ATTR_* */
	st_onnx_str ref_attr_name;
	st_onnx_extras extras;
} st_onnx_attribute;

typedef struct st_onnx_node {
	st_onnx_str *inputs;    /* an empty name is an omitted optional input */
	size_t n_inputs;
	st_onnx_str *outputs;
	size_t n_outputs;
	st_onnx_str name;
	st_onnx_str op_type;
	st_onnx_attribute *attributes;
	size_t n_attributes;
	st_onnx_str doc_string;
	st_onnx_str domain;
	st_onnx_extras extras;
} st_onnx_node;

struct st_onnx_graph {
	st_onnx_node *nodes;
	size_t n_nodes;
	st_onnx_str name;
	st_onnx_tensor *initializers;
	size_t n_initializers;
	st_onnx_str doc_string;
	st_onnx_value_info *inputs;
	size_t n_inputs;
	st_onnx_value_info *outputs;
	size_t n_outputs;
	st_onnx_value_info *value_info;
	size_t n_value_info;
	st_onnx_extras extras;
};

/* ModelProto, and what holds its memory. Everything the model points to
 * lives until st_onnx_free: arrays in allocations listed here, strings and
 * raw_data in the caller's buffer (st_onnx_parse) or in the mappings
 * (st_onnx_open). */
typedef struct st_onnx_model {
	bool has_ir_version;
	int64_t ir_version;
	st_onnx_str producer_name, producer_version, domain;
	bool has_model_version;
	int64_t model_version;
	st_onnx_str doc_string;
	st_onnx_graph *graph;   /* NULL when absent */
	st_onnx_opset *opsets;
	size_t n_opsets;
	st_onnx_entry *metadata_props;
	size_t n_metadata_props;
	st_onnx_extras extras;  /* training_info, functions, ... */
	/* private */
	void **allocs;
	size_t n_allocs, cap_allocs;
	struct st_onnx_mapping *maps; /* [0] the model file, then external data files */
	size_t n_maps;
} st_onnx_model;

/* io-onnx.c */
/* Parses a serialized ModelProto in memory; the model points into data,
 * which must outlive it. Unknown fields are kept, groups (wire types 3, 4)
 * refused. External data is not resolved (there is no folder). Returns 0,
 * or -1 with "path: reason at byte N" in err and *model left empty. Free
 * with st_onnx_free either way. */
int st_onnx_parse(const void *data, size_t len, st_onnx_model *model, char *err, size_t err_size);
/* Maps the file read-only and parses it; tensors with external data get
 * their bytes mapped from files in the model's folder (never outside it).
 * Free with st_onnx_free either way. */
int st_onnx_open(const char *path, st_onnx_model *model, char *err, size_t err_size);
/* Releases the allocations and mappings; the model is empty after. */
void st_onnx_free(st_onnx_model *model);
/* Appends the model serialized canonically (fields in ascending order;
 * dims, ints, floats unpacked; numeric *_data packed; external data left
 * where it is) to out. */
void st_onnx_encode(const st_onnx_model *model, st_buf *out);
/* Writes the encoding to path atomically. */
int st_onnx_write(const char *path, const st_onnx_model *model, char *err, size_t err_size);

/* Parses one serialized TensorProto (a test's input_N.pb); data must
 * outlive out, and holder (an empty model, freed with st_onnx_free) keeps
 * the allocations. Returns 0, or -1 with a reason in err. */
int st_onnx_parse_tensor(const void *data, size_t len, st_onnx_model *holder, st_onnx_tensor *out,
                         char *err, size_t err_size);
/* Appends a node's attributes serialized (NodeProto field 5 entries), so
 * that an operator Strata cannot represent is written back unchanged. */
void st_onnx_encode_attributes(const st_onnx_node *n, st_buf *out);
/* Reads what st_onnx_encode_attributes wrote into out->attributes (every
 * other field of out empty); holder keeps the allocations, data must
 * outlive out. Returns 0, or -1 with a reason. */
int st_onnx_parse_attributes(const void *data, size_t len, st_onnx_model *holder, st_onnx_node *out,
                             char *err, size_t err_size);
/* Standard base64 with padding; caller frees. */
char *st_base64_encode(const void *data, size_t len);
/* Decodes text written by st_base64_encode into *out (caller frees).
 * Returns 0, or -1 when it is not base64. */
int st_base64_decode(const char *text, uint8_t **out, size_t *len);

/* "FLOAT", "INT64", ... or "UNKNOWN". */
const char *st_onnx_data_type_name(int32_t type);
/* The st_dtype holding an ONNX data type, or -1 (double, string, ...). */
int st_onnx_dtype(int32_t type);
/* Bytes per element, or 0 (STRING, UNDEFINED, unknown). */
int st_onnx_data_type_size(int32_t type);
/* The tensor's bytes when they are stored as bytes (raw_data or resolved
 * external data), checked against dims and data_type. Returns 0 with *data
 * pointing into the model's buffer or mappings, or -1 with a reason (the
 * values are in the typed fields, the external data was not resolved, or
 * the length disagrees with the dims). */
int st_onnx_tensor_bytes(const st_onnx_tensor *t, const void **data, size_t *len, char *err,
                         size_t err_size);
/* s equals the NUL-terminated text. */
bool st_onnx_str_eq(st_onnx_str s, const char *text);
/* A NUL-terminated copy ("" when absent); caller frees. */
char *st_onnx_str_dup(st_onnx_str s);

/* ---- io-onnx-import.c: ONNX graph -> Strata graph ---- */

typedef struct st_onnx_import_options {
	/* Folder the weights go to as layerName_weightType.npy (created when
	 * missing; files of the same names are replaced). NULL: none written. */
	const char *weights_dir;
	/* Sizes of named dimensions (dim_param "N", "height"...). */
	int n_dims;
	const char *const *dim_names;
	const int64_t *dim_values;
	/* Whole shapes for some graph inputs, by name (batch first), in place
	 * of what the file declares. */
	int n_shapes;
	const char *const *shape_names;
	const st_shape *shapes;
	/* Size given to the other symbolic dimensions; 0 means 1. */
	int64_t default_dim;
	/* Values fixed for some graph inputs (the conformance runner's test
	 * data): used where Strata needs a constant (shapes, pads, scales,
	 * weights); an input used elsewhere too still becomes an input layer. */
	int n_known;
	const char *const *known_names;
	const st_onnx_tensor *const *known_values;
} st_onnx_import_options;

typedef struct st_onnx_import {
	st_graph *graph;        /* owned; set to NULL to take it */
	int n_inputs;           /* graph inputs that are not initializers, in ONNX order */
	char **input_layers;    /* the input layer fed for each, or NULL when frozen */
	int n_outputs;
	char **output_layers;   /* the output layer of each graph output */
	int n_placeholders;     /* onnx_operator layers made */
	int n_folded;           /* nodes evaluated or folded away */
	int opset;              /* the default domain's version the model imported */
	int n_xwn;              /* XWN layers restored from the metadata (docs/onnx.md) */
	int n_xwn_transformed;  /* of them, restored with the transformed weights and the transform off */
} st_onnx_import;

/* Builds a graph over registry r from an ONNX model: standard layers for
 * the operators Strata maps, constants folded, activations attached,
 * onnx_operator placeholders for the rest. Positions are left at 0 (lay
 * the graph out afterwards). Errors and notes go to d, naming the node
 * (graph.node[i] "name" (OpType)). Returns 0 or -1; free out with
 * st_onnx_import_free either way. */
int st_onnx_import_model(const st_onnx_model *m, const st_registry *r, const st_onnx_import_options *opt,
                         st_onnx_import *out, st_diag *d);
void st_onnx_import_free(st_onnx_import *imp);

typedef struct st_onnx_file_options {
	int64_t default_dim;          /* as in st_onnx_import_options */
	int n_dims;                   /* likewise */
	const char *const *dim_names;
	const int64_t *dim_values;
	int n_shapes;
	const char *const *shape_names;
	const st_shape *shapes;
	bool force;                   /* replace an existing model file and weights folder */
	void (*place)(st_graph *g);   /* lays the graph out before it is saved, or NULL */
} st_onnx_file_options;

typedef struct st_onnx_import_summary {
	int n_layers, errors, opset, n_placeholders, n_folded;
	int n_xwn, n_xwn_transformed; /* as in st_onnx_import */
	bool weights_outside;         /* the weights folder is not inside the model's folder */
} st_onnx_import_summary;

/* Imports the ONNX file onnx into the model file model and the weights
 * folder weights. The weights are written into a new folder first and
 * moved into place, and the model saved atomically, only when everything
 * worked: a failure leaves the user's files as they were. Returns 0; -2
 * when the files cannot be used (unreadable, or existing without force);
 * -1 when the import failed. Reasons and notes go to d. */
int st_onnx_import_file(const char *onnx, const char *model, const char *weights, const st_registry *r,
                        const st_onnx_file_options *fo, st_onnx_import_summary *sum, st_diag *d);
/* "dir/name.onnx" -> "name.strata.json" (in the current folder); caller frees. */
char *st_onnx_default_model_path(const char *onnx);
/* "dir/name.strata.json" -> "dir/name-weights"; caller frees. */
char *st_onnx_default_weights_path(const char *model);

#endif
