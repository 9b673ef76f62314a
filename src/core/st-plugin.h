/* The plugin ABI: what a layer collection sees of Strata, and what it gives back. */
#ifndef ST_PLUGIN_H
#define ST_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
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
#define ST_PLUGIN_ABI_VERSION 2u
/*
 * Minor revisions of an ABI version only add: flag bits, and members at the
 * end of st_host_api. A plugin built against a later minor still loads on an
 * earlier host of the same version; before it calls a member added since,
 * it checks that the host filled it (ST_HOST_HAS). Minor 1 added runtime
 * options (ST_PARAM_RUNTIME, ST_PARAM_TRIGGER, ST_PARAM_LABEL), api->status
 * and api->colormap_rgb. Minor 2 added st_exec_layer.weights_generation and
 * api->abi_minor (which an earlier host leaves unfilled: ST_HOST_HAS).
 * Minor 3 added expansions (a layer type's parts as ordinary layers) and
 * blocks (ready-made chains of layers): api->register_expansion,
 * api->register_block and the api->expand_* calls. Minor 4 added the
 * layout choice per layer: ST_IMPL_CHOOSES_LAYOUT and
 * st_impl_desc.choose_layout, which a host reads only under that flag.
 * Minor 5 added a pooling computed by the layer before it:
 * ST_IMPL_FUSES_POOL and st_exec_layer.pool. Minor 6 added the blocked
 * layout ST_LAYOUT_NCHW16C, which a host hands only to implementations
 * declaring it. Minor 7 added the float type choice per layer:
 * ST_IMPL_CHOOSES_DTYPE and st_impl_desc.choose_dtype, read only under
 * that flag. Minor 8 added devices: st_exec_ctx.device (the device memory
 * and stream of a backend other than the CPU) and st_exec_layer.ctx
 * (the context at prepare, so that an implementation can keep state in
 * device memory), and api->algo_find and api->algo_keep.
 */
#define ST_PLUGIN_ABI_MINOR 8u

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
 * ABI 2.1: runtime options. A runtime option changes what run computes but
 * never a shape: a change takes effect at the next run of a compiled plan,
 * without a new type check or plan (st_plan_set_runtime). So reshape must
 * not read it, and prepare must not cache anything derived from it; run
 * reads it from L->params every time. Only scalar kinds may be runtime
 * options: BOOL, INT, FLOAT, ENUM (a pick list) and STRING (free text); the
 * host refuses the layer type at registration otherwise. An editor offers a
 * FLOAT option with a step of (max - min) / 100 when both bounds are
 * declared, else 0.1 (INT options step by 1).
 */
#define ST_PARAM_RUNTIME 0x4u
/* A BOOL runtime option shown as a button: the host sets it back to false
 * after the next run, so run sees it true exactly once per press (a reset).
 * Implies ST_PARAM_RUNTIME. */
#define ST_PARAM_TRIGGER 0x8u
/* A read-only STRING the editor shows as a label (a caption, a unit); the
 * user cannot change it. Implies ST_PARAM_RUNTIME. */
#define ST_PARAM_LABEL 0x10u

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
	unsigned flags;            /* ST_PARAM_HAS_MIN, ST_PARAM_HAS_MAX, ST_PARAM_RUNTIME... */
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

/* ------------------------------------------------------------------------
 * Execution (ABI 2): tensors, implementations, the thread pool
 * ------------------------------------------------------------------------ */

/* How a tensor's elements lie in memory. The shape is always logical
 * (N, C, spatial... for images); NCHW stores it in that order (row-major),
 * NHWC stores channels last: N, spatial..., C. Below rank 3 all are the
 * same, and a host calls them NCHW.
 *
 * NCHW16C (ABI 2.6) blocks channels by sixteen: N, ceil(C / 16),
 * spatial..., 16, the sixteen channels of one position side by side (a
 * 64-byte vector). Only float32 tensors take it. The lanes past C of the
 * last block are zero: every implementation that writes such a tensor
 * leaves them zero, and may count on them being zero in its inputs. Such a
 * tensor holds N * ceil(C / 16) * 16 * spatial... elements. */
typedef enum st_layout {
	ST_LAYOUT_NCHW,
	ST_LAYOUT_NHWC,
	ST_LAYOUT_NCHW16C,
	ST_LAYOUT_COUNT
} st_layout;

/* Channels of one block of ST_LAYOUT_NCHW16C. */
#define ST_LAYOUT_BLOCK 16

/* A tensor handed to an implementation. data holds float (FLOAT32), uint16_t
 * IEEE binary16 bits (FLOAT16), int64_t, int32_t, int8_t, uint8_t or uint8_t
 * 0/1 (BOOL) by shape.dtype. Buffers are 64-byte aligned. */
typedef struct st_tensor {
	void *data;
	st_shape shape;
	st_layout layout;
} st_tensor;

typedef struct st_exec_ctx st_exec_ctx;

/*
 * One layer as an implementation sees it, at prepare and at run time. The
 * host owns everything but state. Inputs and outputs have the layout and
 * dtype the implementation declared it accepts (the host converts around it
 * otherwise). Weights are FP32 NCHW, in the order reshape declared them,
 * often memory-mapped: read them, never write them.
 */
typedef struct st_exec_layer {
	const char *name;
	const struct st_layer_desc *desc;
	const st_value *params;            /* by desc->params order, defaults filled */
	int n_inputs;
	const st_tensor *inputs;           /* data NULL for an unlinked optional input */
	int n_outputs;
	st_tensor *outputs;
	int n_weights;
	const st_tensor *weights;          /* data NULL for an optional weight without a file */
	const struct st_activation_desc *act; /* the attached activation, or NULL */
	const st_value *act_params;
	void *state;                       /* the implementation's: packed weights, plans */
	size_t scratch_bytes;              /* set by prepare: scratch one run needs */
	void *scratch;                     /* at run: scratch_bytes of 64-byte aligned memory */
	void *host_private;
	/* ABI 2.2: changes (never to 0) every time weights are bound, and only
	 * then: prepare redoes what it derives from the weights (packing, a
	 * weight transform) when it differs from the value it last saw, and
	 * keeps it otherwise (a prepare for new input sizes). 0 from an
	 * earlier host: derive again at every prepare. */
	uint64_t weights_generation;
	/* ABI 2.5: a pooling layer this run computes too, or NULL. Given only
	 * to an implementation with ST_IMPL_FUSES_POOL, by a host of minor 5
	 * or later (read the member only then: api->abi_minor at prepare):
	 * the host's description of a layer of type "pooling" whose
	 * implementation comes from the same plugin, which reads this layer's
	 * output 0 and which nothing else reads. Its params and shapes are
	 * its own; its outputs[0] is where run writes, and this layer's
	 * outputs[0] then has its shape and layout but no data. The pooling
	 * comes after the attached activation (a relu or clip, applied by
	 * the implementation: the host fuses no other). */
	const struct st_exec_layer *pool;
	/* ABI 2.8: the context the layer runs in, set by a host of minor 8
	 * or later before prepare, run and release: on a device backend,
	 * ctx->device is where state that runs need (packed weights,
	 * descriptors) is kept. */
	const struct st_exec_ctx *ctx;
} st_exec_layer;

/* A range of work, [begin, end). */
typedef void (*st_range_fn)(void *arg, int64_t begin, int64_t end);

/*
 * ABI 2.8: a device of a backend other than the CPU, as implementations of
 * that backend see it. Tensors, weights and scratch they receive lie in its
 * memory; run enqueues work on its stream (in order) and returns without
 * waiting. While the host records a run for replay (a CUDA graph), run only
 * enqueues: nothing it launched has executed when it returns, and the
 * recording keeps its arguments, so an implementation never reads device
 * results on the host in run. The module opening the device fills this;
 * the host and implementations only read it.
 */
typedef struct st_device st_device;
struct st_device {
	const char *backend; /* "cuda" */
	int index;           /* which of the backend's devices */
	/* The backend's own handles (for cuda: a const st_cuda_native *, the
	 * stream and the cuDNN and cuBLAS handles, st-plugin-cuda.h). */
	const void *native;
	/* FP32 layers may compute in TF32 (--allow-tf32). */
	bool allow_tf32;
	/* Implementations time their candidate algorithms once per
	 * configuration and keep the fastest (api->algo_keep) rather than
	 * take the library's heuristic choice (--measure-algorithms); a
	 * choice already kept is used either way. */
	bool measure_algorithms;
	/* bytes of device memory, aligned to 256 bytes; NULL when there is no
	 * room (error() says so). Freed with free_mem. */
	void *(*alloc)(st_device *dev, size_t bytes);
	void (*free_mem)(st_device *dev, void *ptr);
	/* Copies between host and device memory in stream order, returning 0
	 * or -1 (error() says why). The host memory must stay as it is until
	 * the stream is synchronised. */
	int (*upload)(st_device *dev, void *dst, const void *src, size_t bytes);
	int (*download)(st_device *dev, void *dst, const void *src, size_t bytes);
	/* Waits for everything enqueued; 0, or -1 with the first failure. */
	int (*sync)(st_device *dev);
	/* The last failure, naming the call that failed ("cudaMalloc of
	 * 2.0 GiB: out of memory"); owned by the device. */
	const char *(*error)(const st_device *dev);
};

/* ABI 2.8: one choice of the algorithm-choice cache (api->algo_find). */
typedef struct st_algo_choice {
	int algo;           /* the library's algorithm number */
	int math;           /* the library's math mode number */
	uint64_t workspace; /* bytes of workspace it needs */
	double ms;          /* the time measured; negative when unknown */
} st_algo_choice;

/* What run receives: the thread pool, and the host API for api->fail. */
struct st_exec_ctx {
	const st_host_api *api;
	int n_threads;
	/* Splits [0, n) into at most n_threads contiguous ranges of at least grain
	 * items and runs fn on each, in parallel; returns when all are done. */
	void (*parallel_for)(const st_exec_ctx *ctx, int64_t n, int64_t grain, st_range_fn fn, void *arg);
	void *host_private;
	/* ABI 2.8: the device of a backend other than the CPU; NULL on the
	 * CPU (and from a host before minor 8: read it only then). */
	st_device *device;
};

/* Flags of st_impl_desc. */
#define ST_IMPL_FUSES_ACTIVATION 0x1u /* run applies the attached activation itself */
#define ST_IMPL_IN_PLACE 0x2u         /* output 0 may share input 0's buffer */
/* run applies an attached relu or clip itself (as it writes the output),
 * other activations being left to the host. Both are idempotent, so a host
 * from before this flag, which applies them again, gets the same result. */
#define ST_IMPL_FUSES_RELU_CLIP 0x4u
/* ABI 2.4: the descriptor has choose_layout, which picks the layout of each
 * layer (the host reads that member only under this flag, so descriptors
 * from before it, which lack the member, stay valid). */
#define ST_IMPL_CHOOSES_LAYOUT 0x8u
/* ABI 2.5: run computes a pooling layer given in st_exec_layer.pool after
 * its own output, which it need not write whole (a first convolution and
 * its max pooling, band by band). */
#define ST_IMPL_FUSES_POOL 0x10u
/* ABI 2.7: the descriptor has choose_dtype (after choose_layout), which
 * says of each layer whether it computes on float16 tensors in a float16
 * plan; without the flag an implementation that lists float16 takes it
 * for every layer. */
#define ST_IMPL_CHOOSES_DTYPE 0x20u

#define ST_LAYOUT_BIT(l) (1u << (l))
#define ST_DTYPE_BIT(t) (1u << (t))
#define ST_DTYPE_BITS_ALL ((1u << ST_DTYPE_COUNT) - 1u)

/*
 * An implementation of a layer type on a backend. prepare runs once the
 * shapes and weights are known (again when input sizes change): it checks
 * what it needs, may pack weights into L->state (kept across prepares, freed
 * by release) and sets L->scratch_bytes. run computes the outputs and must
 * not allocate. Both return 0, or -1 after api->fail.
 */
typedef struct st_impl_desc {
	const char *layer;   /* the layer type's name */
	const char *backend; /* "cpu" */
	unsigned layouts;    /* ST_LAYOUT_BIT()s its tensors may have */
	unsigned dtypes;     /* ST_DTYPE_BIT()s of float tensors it computes in directly */
	unsigned flags;
	int (*prepare)(st_exec_layer *L, const st_host_api *api);
	int (*run)(st_exec_layer *L, const st_exec_ctx *ctx);
	void (*release)(st_exec_layer *L);
	/*
	 * ABI 2.4, read only when flags has ST_IMPL_CHOOSES_LAYOUT. Called when
	 * a plan whose layouts are the host's to choose is built: L has its
	 * name, desc, params, weights and the shapes of its inputs and outputs,
	 * no data, no state; each input's layout is the one its producer left
	 * it in. Returns the layout to run L in, one of `layouts`: the host
	 * converts the inputs to it (where they differ) and the outputs stay in
	 * it for the next layers. Where a layout is the user's choice (a plan
	 * format naming one), the host does not ask.
	 */
	st_layout (*choose_layout)(const st_exec_layer *L);
	/*
	 * ABI 2.7, read only when flags has ST_IMPL_CHOOSES_DTYPE. Called when
	 * a plan in float16 is built, for an implementation whose dtypes list
	 * float16 and float32, once the layer's layout is known: L as for
	 * choose_layout, its inputs in the layout it will run in and float16
	 * where they are floating-point. Returns ST_DTYPE_FLOAT16 to run L on
	 * float16 tensors, or ST_DTYPE_FLOAT32 to have the host convert its
	 * inputs to float32 and its outputs back (the layout is then asked
	 * again, for float32 tensors).
	 */
	st_dtype (*choose_dtype)(const st_exec_layer *L, st_layout layout);
} st_impl_desc;

/*
 * An activation's computation, in place on float32 values. slope is NULL, or
 * per-element coefficients for channel-wise activations (prelu): with
 * slope_step 0 every element uses slope[0], with 1 element i uses slope[i].
 */
typedef struct st_activation_impl {
	const char *activation; /* the activation's name */
	void (*apply)(const st_value *coef, float *x, int64_t n, const float *slope, int slope_step);
} st_activation_impl;

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

/* ------------------------------------------------------------------------
 * Expansions and blocks (ABI 2.3)
 * ------------------------------------------------------------------------ */

/*
 * An expansion says what a layer of some type is made of, as ordinary
 * layers ("parts"), so that the editor can replace the layer by them (the
 * edit command `expand`). The host calls the type's expand function with
 * the layer's parameters and the shapes of its inputs; the function
 * describes every part through api->expand_part, expand_set,
 * expand_activation and expand_link, names the part (and output) that
 * gives each of the layer's outputs with api->expand_output, and returns
 * 0. When the layer cannot be expanded (an input shape it needs is not
 * known, a parameter is out of range) it says why with api->expand_fail
 * and returns -1; the model is then left as it was.
 *
 * A part is named by a suffix: the part "stage0" of layer "casc" becomes
 * the layer "casc_stage0", which is also the prefix of its weight files, so
 * an expansion whose parts' weights are named "<suffix>_<weight>" on the
 * whole layer needs no renaming of files. The layer's attached activation
 * moves to the part giving output 0; the host links the layer's inputs and
 * consumers to the parts, and places the parts on the canvas from their
 * (column, row) hints, relative to where the layer was.
 */
typedef struct st_expansion {
	const char *layer_name;
	const struct st_layer_desc *desc;
	const st_value *params;        /* by desc->params order, defaults filled */
	int n_inputs;
	const st_shape *const *inputs; /* inputs[i] NULL: unlinked, or its shape is not known */
	void *host_private;            /* the host's; do not touch */
} st_expansion;

/* Returns 0 when the parts are described, -1 after api->expand_fail. */
typedef int (*st_expand_fn)(st_expansion *e, const st_host_api *api);

/*
 * A block: a ready-made chain of layers, such as the DDesigner API's
 * ConvBlock (convolution, batch normalisation, activation, dropout). Each
 * part has a role; an order (a list of roles) says which parts a block
 * instance has and how they are chained, the first part's input being the
 * block's input and the last part's output its output. Until the editor
 * has templates, a block is inserted as its parts, ordinary layers named
 * "<instance>_<role>" (the edit command `add-block`); a later version may
 * keep an instance as one template built from the same description, which
 * is why it is data rather than code.
 *
 * These structs are borrowed like layer descriptors. Arrays of them keep
 * their size across minor revisions: reserved members are NULL now and a
 * later minor may give them a meaning.
 */
typedef struct st_block_part {
	const char *role;           /* lower-case identifier, unique in the block ("conv", "bn") */
	const char *layer_type;     /* the part's layer type, from any plugin */
	const char *const *params;  /* defaults as name, value pairs in `set` syntax, NULL-terminated
	                               ({ "kernel", "3", "bias", "false", NULL }); or NULL */
	const char *activation;     /* attached by default ("relu"), or NULL */
	const char *doc;            /* one line: what the part is for */
	const void *reserved[2];
} st_block_part;

typedef struct st_block_desc {
	const char *name;           /* lower-case identifier ("conv_block_2d") */
	const char *display_name;   /* as the API calls it ("Conv2DBlock") */
	const char *category;       /* palette category; NULL: "Blocks" */
	const char *const *aliases; /* NULL-terminated other names, or NULL */
	const char *summary;        /* one line for the palette */
	const char *doc;            /* a paragraph or more */
	const st_block_part *parts;
	int n_parts;
	const char *const *order;   /* the default order: roles, NULL-terminated */
	const void *reserved[4];
} st_block_desc;

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
	/* ABI 2: execution. */
	int (*register_impl)(st_plugin_ctx *ctx, const st_impl_desc *impl);
	int (*register_activation_impl)(st_plugin_ctx *ctx, const st_activation_impl *impl);
	/* From prepare or run: why the layer cannot run. */
	void (*fail)(st_exec_layer *L, const char *fmt, ...)
#if defined(__GNUC__)
		__attribute__((format(printf, 2, 3)))
#endif
		;
	float (*half_to_float)(uint16_t h);
	uint16_t (*float_to_half)(float f); /* round to nearest even */
	/* ABI 2.1. From run: the layer's status line for the user ("mean 0.31,
	 * 2 NaN"), shown beside it after the run; a later call in the same run
	 * replaces it, and every run starts without one. At most 255 bytes are
	 * kept. Call it from run itself, not from ranges given to parallel_for. */
	void (*status)(st_exec_layer *L, st_severity severity, const char *fmt, ...)
#if defined(__GNUC__)
		__attribute__((format(printf, 3, 4)))
#endif
		;
	/* ABI 2.1. The colour of t in [0, 1] (clamped; NaN is 0) in one of the
	 * host's colour maps (ST_COLORMAP_*), components 0 to 1: the maps the
	 * channel inspector draws with. */
	void (*colormap_rgb)(int map, double t, float rgb[3]);
	/* ABI 2.2. The host's minor version (ST_PLUGIN_ABI_MINOR it was built
	 * with). */
	uint32_t abi_minor;
	/* ABI 2.3. Registration, from st_plugin_entry: the expansion of a layer
	 * type (registered by this plugin or another; looked up by name when a
	 * layer is expanded), and a block. */
	int (*register_expansion)(st_plugin_ctx *ctx, const char *layer_type, st_expand_fn expand);
	int (*register_block)(st_plugin_ctx *ctx, const st_block_desc *block);
	/* ABI 2.3. From expand functions; each returns 0, or -1 when the host
	 * refuses the call (the expansion then fails with the reason). A part:
	 * suffix (an identifier, unique in the expansion), layer type, and where
	 * it goes in columns and rows of glyphs from the layer's place. */
	int (*expand_part)(st_expansion *e, const char *suffix, const char *layer_type, int column, int row);
	/* A parameter of a part, as the edit command `set` takes it ("3x3",
	 * "true", "[1, 1]"); block-style settings (transform, pruning) too. */
	int (*expand_set)(st_expansion *e, const char *part, const char *param, const char *value);
	/* An activation attached to a part, with its default coefficients. */
	int (*expand_activation)(st_expansion *e, const char *part, const char *activation);
	/* Links input terminal `input` of part to output `output` of the part
	 * from; from NULL means the expanded layer's input terminal `output`
	 * (whatever fed it then feeds the part). */
	int (*expand_link)(st_expansion *e, const char *part, int input, const char *from, int output);
	/* The part's output `output` gives the layer's next output (call once
	 * per output of the layer, in order). */
	int (*expand_output)(st_expansion *e, const char *part, int output);
	/* Why the layer cannot be expanded; the first reason counts. */
	void (*expand_fail)(st_expansion *e, const char *fmt, ...)
#if defined(__GNUC__)
		__attribute__((format(printf, 2, 3)))
#endif
		;

	/* ---- ABI 2.8: the algorithm-choice cache of device backends ----
	 * What an implementation on a device measured best for one of its
	 * configurations (a cuDNN convolution's algorithm for a shape), kept
	 * per device and library versions in the user's cache folder
	 * (docs/cuda.md), so that the search runs once. key is the
	 * implementation's own text for the configuration (at most 4096
	 * bytes); L runs on a device (L->ctx->device). algo_find returns 0
	 * with the choice in *out, or -1 when none is kept; algo_keep returns
	 * 0 once the choice is saved, or -1 (the cache stays as it was when
	 * its file could not be read: a damaged file is never overwritten). */
	int (*algo_find)(const st_exec_layer *L, const char *key, st_algo_choice *out);
	int (*algo_keep)(const st_exec_layer *L, const char *key, const st_algo_choice *choice);
};

/* The host's colour maps for api->colormap_rgb; the numbers never change. */
enum {
	ST_HOST_COLORMAP_GRAY,
	ST_HOST_COLORMAP_VIRIDIS,
	ST_HOST_COLORMAP_HEAT,
	ST_HOST_COLORMAP_DIVERGING /* blue below the middle, red above */
};

/* Whether the host filled member m of st_host_api (added by a later minor). */
#define ST_HOST_HAS(api, m) \
	((api)->size >= offsetof(st_host_api, m) + sizeof((api)->m) && (api)->m != NULL)

typedef int (*st_plugin_entry_fn)(const st_host_api *api, st_plugin_ctx *ctx);

#define ST_PLUGIN_ENTRY_SYMBOL "st_plugin_entry"
#define ST_PLUGIN_ABI_SYMBOL "st_plugin_abi"

#ifdef __cplusplus
}
#endif

#endif
