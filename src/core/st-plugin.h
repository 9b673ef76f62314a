/* The plugin ABI: what a layer collection sees of Strata, and what it gives back. */
#ifndef ST_PLUGIN_H
#define ST_PLUGIN_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A plugin is a shared object exporting two symbols:
 *
 *   const uint32_t st_plugin_abi = ST_PLUGIN_ABI_VERSION;
 *   int st_plugin_entry(const st_host_api *api, st_plugin_ctx *ctx);
 *
 * The host reads st_plugin_abi first and refuses the plugin when it differs
 * from its own version. Otherwise it calls st_plugin_entry once; the entry
 * declares the plugin (api->declare) and registers its layer types and
 * activations. Descriptors are borrowed, not copied: they must stay valid for
 * as long as the plugin is loaded (static tables are the normal case).
 * st_plugin_entry returns 0, or -1 to refuse loading (after api->declare
 * has been called, with a reason given through api->refuse).
 */
#define ST_PLUGIN_ABI_VERSION 1u

#define ST_MAX_RANK 8     /* tensors have rank 0 to 8 */
#define ST_MAX_OUTPUTS 64 /* most outputs one layer may have */
#define ST_MAX_WEIGHTS 8  /* most weight tensors one layer may declare */
#define ST_WEIGHT_NAME_MAX 32

typedef enum st_dtype {
	ST_DTYPE_FLOAT32,
	ST_DTYPE_FLOAT16,
	ST_DTYPE_INT64,
	ST_DTYPE_INT32,
	ST_DTYPE_INT8,
	ST_DTYPE_UINT8,
	ST_DTYPE_BOOL,
	ST_DTYPE_COUNT
} st_dtype;

/* A tensor shape: dims[0..rank-1], outermost first (N, C, H, W for images). */
typedef struct st_shape {
	st_dtype dtype;
	int rank;
	int64_t dims[ST_MAX_RANK];
} st_shape;

typedef enum st_severity {
	ST_SEVERITY_ERROR,
	ST_SEVERITY_WARNING,
	ST_SEVERITY_INFO
} st_severity;

typedef enum st_param_kind {
	ST_PARAM_INT,    /* int64 */
	ST_PARAM_FLOAT,  /* double */
	ST_PARAM_BOOL,
	ST_PARAM_ENUM,   /* one of enum_values; the value holds its index */
	ST_PARAM_STRING,
	ST_PARAM_DIMS,   /* a list of int64 (kernel sizes, pads, permutations) */
	ST_PARAM_FLOATS  /* a list of doubles (resize scales) */
} st_param_kind;

/*
 * A parameter value as a reshape function sees it. Lists and strings point
 * into storage owned by the layer; they stay valid during the call only.
 */
typedef struct st_value {
	st_param_kind kind;
	int count; /* list length for DIMS and FLOATS, 0 otherwise */
	union {
		int64_t i;     /* INT, and ENUM (the index into enum_values) */
		double f;      /* FLOAT */
		bool b;        /* BOOL */
		const char *s; /* STRING */
		const int64_t *ints;   /* DIMS */
		const double *floats;  /* FLOATS */
	};
} st_value;

/* Flags of st_param_desc. */
#define ST_PARAM_HAS_MIN 0x1u /* numbers (and list elements) must be >= min */
#define ST_PARAM_HAS_MAX 0x2u /* numbers (and list elements) must be <= max */

/*
 * One parameter of a layer type or activation. default_value is written as
 * the edit command `set` takes it ("1", "0.5", "true", "max", "[1, 1]"; a
 * string as its plain text, without quotes); the host checks it at
 * registration.
 */
typedef struct st_param_desc {
	const char *name;          /* lower-case identifier, unique in the type */
	st_param_kind kind;
	const char *default_value;
	unsigned flags;            /* ST_PARAM_HAS_MIN, ST_PARAM_HAS_MAX */
	double min, max;
	int min_count, max_count;  /* list length bounds; max_count 0 = no bound */
	const char *const *enum_values; /* NULL-terminated, for ENUM */
	const char *doc;           /* one or two sentences; required */
} st_param_desc;

/* Flags of st_port_desc. */
#define ST_PORT_OPTIONAL 0x1u /* need not be connected */
#define ST_PORT_INFINITE 0x2u /* the last input terminal repeats as links arrive */

/* An input or output terminal. */
typedef struct st_port_desc {
	const char *name;
	unsigned flags;
	const char *doc;
} st_port_desc;

/* A weight tensor a layer needs, as declared by its reshape function. */
typedef struct st_weight_desc {
	char name[ST_WEIGHT_NAME_MAX]; /* weight type: file is layerName_<name>.npy */
	st_shape shape;
	bool optional;                 /* a default is used when the file is absent */
} st_weight_desc;

typedef struct st_host_api st_host_api;
typedef struct st_plugin_ctx st_plugin_ctx;

/*
 * What a reshape function receives and fills in. The host sets the inputs,
 * parameters and the default output count; the function sets the output
 * shapes (and n_outputs for ST_LAYER_VARIABLE_OUTPUTS types), declares
 * weights with api->add_weight, adds the floating-point operations of one
 * inference to flops, and reports problems with api->message.
 */
typedef struct st_reshape {
	const char *layer_name;
	const struct st_layer_desc *desc;
	int n_inputs;                  /* input terminals present (grows for infinite ones) */
	const st_shape *const *inputs; /* inputs[i] is NULL when terminal i is unconnected */
	const st_value *params;        /* params[i] belongs to desc->params[i], defaults filled */
	int n_outputs;                 /* preset to desc->n_outputs */
	st_shape *outputs;             /* room for ST_MAX_OUTPUTS */
	int n_weights;
	st_weight_desc weights[ST_MAX_WEIGHTS];
	double flops;                  /* one multiply-add counts as 2 */
	void *host_private;            /* the host's; do not touch */
} st_reshape;

/* Returns 0 when the outputs are valid, -1 after reporting an error. */
typedef int (*st_reshape_fn)(st_reshape *r, const st_host_api *api);

/* Flags of st_layer_desc. */
#define ST_LAYER_ACTIVATION 0x1u       /* an activation may be attached */
#define ST_LAYER_VARIABLE_OUTPUTS 0x2u /* reshape decides n_outputs */
#define ST_LAYER_GRAPH_INPUT 0x4u      /* a network input (fed at run time) */
#define ST_LAYER_GRAPH_OUTPUT 0x8u     /* a network output */

typedef struct st_layer_desc {
	const char *name;           /* serialized type name, lower-case identifier */
	const char *display_name;
	const char *category;       /* palette category ("General", "Pooling", ...) */
	const char *const *aliases; /* NULL-terminated short names, or NULL */
	const char *summary;        /* one line for the palette */
	const char *doc;            /* a paragraph or more; may be NULL when docs/layers has prose */
	const st_port_desc *inputs;
	int n_inputs;
	const st_port_desc *outputs;
	int n_outputs;
	const st_param_desc *params;
	int n_params;
	unsigned flags;
	st_reshape_fn reshape;
} st_layer_desc;

typedef struct st_activation_desc {
	const char *name;           /* serialized name, lower-case identifier */
	const char *display_name;
	const char *summary;        /* one line, with the formula */
	const st_param_desc *params; /* its coefficients */
	int n_params;
} st_activation_desc;

typedef struct st_plugin_info {
	const char *name;        /* identifier, unique among loaded plugins */
	const char *author;
	const char *description;
	const char *version;     /* the plugin's own version, e.g. "1.2.0" */
} st_plugin_info;

/*
 * The host's side of the ABI. Later ABI versions only append members; size
 * says how many bytes of this struct the host filled.
 */
struct st_host_api {
	uint32_t abi_version;
	uint32_t size;
	/* Registration, from st_plugin_entry only. Each returns 0 or -1 (refused;
	 * the host records why and the plugin may go on registering). */
	int (*declare)(st_plugin_ctx *ctx, const st_plugin_info *info);
	int (*register_layer)(st_plugin_ctx *ctx, const st_layer_desc *desc);
	int (*register_activation)(st_plugin_ctx *ctx, const st_activation_desc *desc);
	void (*refuse)(st_plugin_ctx *ctx, const char *reason);
	/* From reshape functions. */
	void (*message)(st_reshape *r, st_severity severity, const char *fmt, ...)
#if defined(__GNUC__)
		__attribute__((format(printf, 3, 4)))
#endif
		;
	int (*add_weight)(st_reshape *r, const char *name, const st_shape *shape, bool optional);
	/* Helpers, so plugins need not link against libstrata. */
	const char *(*dtype_name)(st_dtype dtype);
	int64_t (*shape_elements)(const st_shape *shape); /* -1 on overflow */
	int (*shape_format)(const st_shape *shape, char *buf, int size); /* "1x3x224x224" */
};

typedef int (*st_plugin_entry_fn)(const st_host_api *api, st_plugin_ctx *ctx);

#define ST_PLUGIN_ENTRY_SYMBOL "st_plugin_entry"
#define ST_PLUGIN_ABI_SYMBOL "st_plugin_abi"

#ifdef __cplusplus
}
#endif

#endif
