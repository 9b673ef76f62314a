/* The core module: utilities, parameter values, the layer registry and plugin
 * loader, the graph, the type checker, model files and edit commands. */
#ifndef ST_CORE_H
#define ST_CORE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "st-plugin.h"

typedef struct cJSON cJSON;

/* ------------------------------------------------------------------------
 * Types
 * ------------------------------------------------------------------------ */

/* A growable string. st_buf_free releases it; st_buf_take hands the text over. */
typedef struct st_buf {
	char *data; /* always NUL-terminated once anything was written */
	size_t len, cap;
} st_buf;

/* A string -> pointer hash map. Keys are borrowed: they must outlive their entry. */
typedef struct st_map {
	const char **keys;
	void **values;
	size_t count, cap, tombstones;
} st_map;

/* One diagnostic: a load error, a script error, a refused command. */
typedef struct st_diag_item {
	st_severity severity;
	char *file;   /* NULL when there is no file */
	int line, col; /* 1-based; 0 when unknown */
	char *text;
} st_diag_item;

/* A list of diagnostics, filled by functions that read outside data. */
typedef struct st_diag {
	st_diag_item *items;
	int count, cap;
	int errors, warnings;
	int max_errors; /* stop recording errors after this many (0: 50) */
} st_diag;

typedef struct st_plugin {
	char *path;       /* file it came from, or "(built in)" */
	char *name, *author, *description, *version; /* NULL until declared */
	bool loaded;      /* false: refused as a whole */
	bool disabled;    /* refused because its name is in st_registry_disable's list */
	char *refusal;    /* why it was refused, or NULL */
	char **notes;     /* types refused one by one, with the reason */
	int n_notes;
	int n_layers, n_activations, n_impls;
	int n_blocks, n_expansions; /* ABI 2.3 */
	void *handle;     /* dlopen handle, or NULL */
} st_plugin;

/* A registered layer type: the plugin's descriptor plus parsed defaults. */
typedef struct st_layer_type {
	const st_layer_desc *desc;
	st_plugin *plugin;
	st_value *defaults; /* desc->n_params values */
} st_layer_type;

typedef struct st_activation_type {
	const st_activation_desc *desc;
	st_plugin *plugin;
	st_value *defaults; /* desc->n_params values */
} st_activation_type;

/* A registered implementation, from any plugin, for a type by name. */
typedef struct st_impl {
	const st_impl_desc *desc;
	st_plugin *plugin;
} st_impl;

typedef struct st_activation_impl_entry {
	const st_activation_impl *desc;
	st_plugin *plugin;
} st_activation_impl_entry;

/* Most parts a block may have. */
#define ST_BLOCK_MAX_PARTS 16

/* A registered block (ABI 2.3): the plugin's description, borrowed. */
typedef struct st_block_type {
	const st_block_desc *desc;
	st_plugin *plugin;
} st_block_type;

/* A registered expansion (ABI 2.3): how layers of a type become their parts. */
typedef struct st_expansion_type {
	char *layer;       /* the layer type's name, as registered */
	st_expand_fn expand;
	st_plugin *plugin;
} st_expansion_type;

typedef struct st_registry {
	st_plugin **plugins;
	int n_plugins;
	st_layer_type **types; /* in registration order */
	int n_types;
	st_activation_type **activations;
	int n_activations;
	st_map type_names;     /* names and aliases -> st_layer_type */
	st_map activation_names;
	st_impl *impls;        /* implementations, matched to types by name when used */
	int n_impls;
	st_activation_impl_entry *activation_impls;
	int n_activation_impls;
	char **disabled;       /* plugin names refused at load (the user's settings) */
	int n_disabled;
	st_block_type **blocks; /* in registration order */
	int n_blocks;
	st_expansion_type *expansions;
	int n_expansions;
	/* Plugin files for a device backend ("std-cuda.so": a name ending in
	 * -cuda), found on the search path but left unloaded until a plan
	 * runs there (st_registry_load_backend): they link the backend's
	 * libraries, which a machine without it lacks. */
	char **deferred;
	int n_deferred;
} st_registry;

/* A link's source: output `output` of `layer`. layer NULL = unconnected. */
typedef struct st_port {
	struct st_layer *layer;
	int output;
} st_port;

/* A link's destination, kept on the source layer: input `input` of `layer`. */
typedef struct st_consumer {
	struct st_layer *layer;
	int input;
} st_consumer;

typedef struct st_message {
	st_severity severity;
	char *text;
} st_message;

/* Parameter values of one layer or activation, by schema position. */
typedef struct st_params {
	int count;
	st_value *values; /* owned: strings and lists are the params' own copies */
	bool *set;        /* true when given explicitly (saved to the file) */
	cJSON *unknown;   /* object of parameters the schema does not know, or NULL */
} st_params;

typedef struct st_layer_act {
	char *type_name;                 /* NULL: no activation */
	const st_activation_type *type;  /* NULL when unknown */
	st_params coef;
	cJSON *extra;                    /* unknown fields of the activation object */
} st_layer_act;

/* Flags of st_layer.state. */
#define ST_LAYER_DIRTY 0x1u     /* needs a re-check */
#define ST_LAYER_QUEUED 0x2u    /* in the checker's queue */
#define ST_LAYER_DUPLICATE 0x4u /* another layer has this name */
#define ST_LAYER_MARK 0x8u      /* scratch bit for traversals */

typedef struct st_layer {
	char *name;
	char *type_name;              /* as written; kept when the type is unknown */
	const st_layer_type *type;    /* NULL: no loaded plugin provides type_name */
	st_params params;
	st_layer_act act;
	int n_inputs;                 /* input terminals present */
	st_port *inputs;
	int n_consumers, cap_consumers;
	st_consumer *consumers;       /* links leaving this layer's outputs */
	int x, y;                     /* canvas position */
	bool minimized;
	cJSON *extra;                 /* unknown fields of the layer object */
	int src_line, src_col;        /* where the file defined it, 0 if not from a file */

	/* Results of the last type check. */
	bool outputs_known;
	int n_outputs;
	st_shape *outputs;
	int n_weights;
	st_weight_desc *weights;
	double flops;
	int n_messages;
	st_message *messages;

	/* Bookkeeping. */
	int index;     /* position in graph->layers, -1 when not in the graph */
	int topo;      /* position in the last topological order */
	int refs;      /* the graph and undo records hold references */
	unsigned state;
	struct st_graph *graph;
} st_layer;

typedef enum st_tensor_format {
	ST_FORMAT_FP32_NCHW,
	ST_FORMAT_FP32_NHWC,
	ST_FORMAT_FP16_NCHW,
	ST_FORMAT_FP16_NHWC,
	/* A plan step's only, never a network's or a plan's: float32 with
	 * channels blocked by sixteen (ST_LAYOUT_NCHW16C). */
	ST_FORMAT_FP32_NCHW16C
} st_tensor_format;

/* Network parameters, by position in st_network_params. */
enum {
	ST_NET_NAME,
	ST_NET_VERSION,
	ST_NET_DESCRIPTION,
	ST_NET_TENSOR_FORMAT,
	ST_NET_WEIGHTS,
	ST_NET_PROFILING,
	ST_NET_COUNT
};

/* Statistics of the last type check. */
typedef struct st_check_stats {
	bool full;       /* a full check, not an incremental one */
	int visited;     /* layers whose reshape ran */
	int considered;  /* layers looked at */
} st_check_stats;

typedef struct st_graph {
	const st_registry *registry; /* borrowed */
	int file_major, file_minor;  /* model-file version it was read as */
	st_params network;           /* ST_NET_COUNT values */
	cJSON *network_extra;        /* unknown fields of "network" */
	cJSON *extra;                /* unknown top-level fields */

	st_layer **layers;           /* in file order; the graph holds one reference each */
	int n_layers, cap_layers;
	st_map names;                /* name -> first layer with that name */

	/* Type-check state. */
	bool checked;                /* a full check has run */
	bool order_dirty;            /* topo numbers no longer valid */
	bool names_dirty;            /* duplicate marks need a rescan */
	int n_cycle;                 /* layers left in cycles at the last check */
	int next_topo;               /* topo number for the next inserted layer */
	int errors, warnings, infos; /* over all layers */
	st_layer **dirty;            /* touched since the last check */
	int n_dirty, cap_dirty;
	st_check_stats stats;
} st_graph;

/* ------------------------------------------------------------------------
 * core-util.c
 * ------------------------------------------------------------------------ */

/* Allocation that aborts with a message when memory runs out. */
void *st_xmalloc(size_t size);
void *st_xcalloc(size_t n, size_t size);
void *st_xrealloc(void *p, size_t size);
void *st_xreallocarray(void *p, size_t n, size_t size);
char *st_xstrdup(const char *s);
char *st_xstrndup(const char *s, size_t n);
/* printf into a new string; caller frees. */
char *st_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *st_xvasprintf(const char *fmt, va_list ap);

void st_buf_init(st_buf *b);
void st_buf_free(st_buf *b);
void st_buf_reset(st_buf *b);
void st_buf_add(st_buf *b, const char *s, size_t n);
void st_buf_puts(st_buf *b, const char *s);
void st_buf_putc(st_buf *b, char c);
void st_buf_printf(st_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hands the text over (never NULL); caller frees. The buffer is empty after. */
char *st_buf_take(st_buf *b);

void st_map_init(st_map *m);
void st_map_free(st_map *m);
void *st_map_get(const st_map *m, const char *key);
/* Sets key; returns the value it replaced, or NULL. */
void *st_map_put(st_map *m, const char *key, void *value);
void *st_map_remove(st_map *m, const char *key);

void st_diag_init(st_diag *d);
void st_diag_free(st_diag *d);
void st_diag_add(st_diag *d, st_severity sev, const char *file, int line, int col,
                 const char *fmt, ...) __attribute__((format(printf, 6, 7)));
void st_diag_vadd(st_diag *d, st_severity sev, const char *file, int line, int col,
                  const char *fmt, va_list ap);
/* "error", "warning" or "info". */
const char *st_severity_name(st_severity s);
/* Writes "file:line:col: error: text" lines. */
void st_diag_print(const st_diag *d, FILE *out);

/* A valid C identifier that is not a C keyword. */
bool st_is_identifier(const char *s);
/* Why s is not a valid layer name, or NULL when it is one. */
const char *st_name_problem(const char *s);
/* A path written inside the model file at model_path (a weights folder, and
 * later templates and network layers), resolved against the model's folder.
 * Unless allow_outside, it may not leave that folder: not absolute, no ".."
 * part, and (where it exists) no symbolic link leading out. Returns the
 * path (caller frees), or NULL with the reason in err. */
char *st_model_path(const char *model_path, const char *written, bool allow_outside, char *err,
                    size_t err_size);
/* Edit distance, for "did you mean" suggestions. */
int st_edit_distance(const char *a, const char *b);
/* Reads a whole file; caller frees. Returns NULL with errno set on failure. */
char *st_read_file(const char *path, size_t *len);
/* Writes a file atomically: a temporary in the same folder, fsync, rename.
 * On failure the old file is untouched; returns -1 with a message in err. */
int st_write_file_atomic(const char *path, const char *data, size_t len,
                         char *err, size_t err_size);
/* Seconds on a monotonic clock. */
double st_now(void);
/* Bytes as people read them: "512 B", "1.50 KiB", "12.3 MiB", "640 GiB". */
void st_human_bytes(double v, char *buf, int size);

/* ------------------------------------------------------------------------
 * core-value.c: shapes, dtypes and parameter values
 * ------------------------------------------------------------------------ */

const char *st_dtype_name(st_dtype t);
/* Returns the dtype named s, or -1. */
int st_dtype_parse(const char *s);
int st_dtype_size(st_dtype t);
/* Elements of a shape, -1 on overflow. */
int64_t st_shape_elements(const st_shape *s);
/* Bytes of a shape, -1 on overflow. */
int64_t st_shape_bytes(const st_shape *s);
/* Elements and bytes a tensor of shape s takes in layout l: with
 * ST_LAYOUT_NCHW16C (rank 3 or more) the channels are rounded up to whole
 * blocks; as st_shape_elements and st_shape_bytes otherwise. -1 on
 * overflow. */
int64_t st_layout_elements(const st_shape *s, st_layout l);
int64_t st_layout_bytes(const st_shape *s, st_layout l);
bool st_shape_equal(const st_shape *a, const st_shape *b);
/* "1x3x224x224" ("scalar" for rank 0); returns the length it needed. */
int st_shape_format(const st_shape *s, char *buf, int size);
/* IEEE binary16 conversions; float_to_half rounds to nearest even. */
float st_half_to_float(uint16_t h);
uint16_t st_float_to_half(float f);

const char *st_param_kind_name(st_param_kind k);
/* Deep copy; the copy is freed with st_value_clear. */
void st_value_copy(st_value *dst, const st_value *src);
void st_value_clear(st_value *v);
bool st_value_equal(const st_value *a, const st_value *b);
/*
 * Parses a value for desc from JSON or from command text ("32", "0.5",
 * "true", "same", "[3, 3]", "3x3"). On failure returns -1 and writes a reason
 * that completes "parameter 'x' ..." into err (e.g. "must be a positive
 * integer, got -2"). The value is freed with st_value_clear.
 */
int st_value_from_json(const st_param_desc *desc, const cJSON *json, st_value *out,
                       char *err, size_t err_size);
int st_value_from_text(const st_param_desc *desc, const char *text, st_value *out,
                       char *err, size_t err_size);
/* Appends the canonical JSON form of v. */
void st_value_to_json(const st_param_desc *desc, const st_value *v, st_buf *out);
/* Appends a short human form ("3x3", "same", "0.5"). */
void st_value_to_text(const st_param_desc *desc, const st_value *v, st_buf *out);
/* Appends a double in the shortest form that reads back exactly. */
void st_format_double(double v, st_buf *out);

/* "option", "trigger" or "label" for a runtime option (ABI 2.1), NULL for
 * an ordinary parameter (static text). */
const char *st_param_runtime_name(const st_param_desc *d);
/* The step an editor changes a number by: 1 for INT; for FLOAT (max - min)
 * / 100 when both bounds are declared, else 0.1. */
double st_param_step(const st_param_desc *d);

/* Parameter sets by schema: all values start at the defaults, none set. */
void st_params_init(st_params *p, const st_param_desc *descs, int n, const st_value *defaults);
void st_params_clear(st_params *p);
void st_params_copy(st_params *dst, const st_params *src);
/* Index of the parameter called name, or -1. */
int st_params_find(const st_param_desc *descs, int n, const char *name);

/*
 * Block-style settings: the DDesigner API's transform=N|None and
 * pruning=F|None, taken by every parameter set that has the XWN set
 * (use_transform, bit, max_scale, use_pruning, prun_weight), whatever its
 * layer type. transform N sets use_transform true and bit N, null (or the
 * text none) sets use_transform false; pruning F sets use_pruning true and
 * prun_weight F, null sets use_pruning false.
 */
typedef struct st_block_setting {
	int count;          /* parameters it sets: 1 (off) or 2 (on, and the number) */
	int index[2];       /* positions in the schema */
	st_value values[2]; /* owned; st_block_setting_clear frees them */
} st_block_setting;

/* Whether a schema has the XWN parameter set, with the right kinds. */
bool st_params_have_xwn_set(const st_param_desc *descs, int n);
/* Which block-style setting name is (0 transform, 1 pruning), or -1. */
int st_block_style_index(const char *name);
/* Whether the block-style setting name sets param ("transform" sets
 * use_transform and bit). */
bool st_block_style_covers(const char *name, const char *param);
/* One line saying what a block-style setting means, or NULL for another name. */
const char *st_block_style_meaning(const char *name);
/*
 * Resolves block-style setting name for a schema from JSON (json not NULL)
 * or command text. Returns 0 with the parameters to set in out; -1 when the
 * value is wrong and -2 when the schema lacks the XWN set (or name is no
 * block-style setting), with a reason completing "parameter 'transform' ..."
 * in err.
 */
int st_block_style_resolve(const st_param_desc *descs, int n, const char *name, const cJSON *json,
                           const char *text, st_block_setting *out, char *err, size_t size);
void st_block_setting_clear(st_block_setting *s);

/* The network parameter schema (name, version, description, tensor_format, weights). */
extern const st_param_desc st_network_params[ST_NET_COUNT];
const st_value *st_network_defaults(void);
const char *st_tensor_format_name(st_tensor_format f);

/* ------------------------------------------------------------------------
 * core-registry.c and core-plugin.c
 * ------------------------------------------------------------------------ */

/* An empty registry; caller frees with st_registry_free (which unloads plugins). */
st_registry *st_registry_new(void);
void st_registry_free(st_registry *r);
/* Loads one plugin file. Refusals are recorded in the returned st_plugin
 * (owned by the registry), never fatal. */
st_plugin *st_registry_load_file(st_registry *r, const char *path);
/* Refuses plugins that declare this name, or load from this file, when
 * they are loaded later (config.json's disabled_plugins); they stay listed,
 * marked disabled. */
void st_registry_disable(st_registry *r, const char *name);
/* Loads every "*.so" plugin in dir, in name order, except those of a
 * device backend (st_registry_deferred_backend), which are only noted in
 * r->deferred. Returns how many files were tried or noted. */
int st_registry_load_dir(st_registry *r, const char *dir);
/* The device backend a plugin file belongs to, by its name ("cuda" for
 * .../std-cuda.so), or NULL for a plugin loaded at once. */
const char *st_registry_deferred_backend(const char *path);
/* Loads the deferred plugin files of backend name (once each). Returns how
 * many were loaded now. */
int st_registry_load_backend(st_registry *r, const char *backend);
/* Runs an entry point linked into the program (tests, fuzzers, static builds). */
st_plugin *st_registry_load_builtin(st_registry *r, const char *origin, st_plugin_entry_fn entry);
/* The plugin whose code this thread is running (its entry point, a reshape
 * or a layer's run), or NULL: what a crash report names. Readable from a
 * signal handler. st_plugin_enter marks p as running and returns what was;
 * st_plugin_leave puts that back. */
const st_plugin *st_plugin_current(void);
const st_plugin *st_plugin_enter(const st_plugin *p);
void st_plugin_leave(const st_plugin *previous);
/* Loads from the search path: $STRATA_PLUGIN_PATH (colon-separated),
 * ~/.local/lib/strata/plugins, then the install directory (or the build tree
 * when the program runs from it). */
void st_registry_load_default(st_registry *r);
/* The search path as a newly allocated, colon-separated string; caller frees. */
char *st_registry_search_path(void);
/* True when this program is the one built in the build tree (not installed):
 * it then finds plugins and backend modules there. */
bool st_running_from_build_tree(void);

/* Finds a layer type by name or alias; NULL when none. */
const st_layer_type *st_registry_find_layer(const st_registry *r, const char *name);
const st_activation_type *st_registry_find_activation(const st_registry *r, const char *name);
/* The implementation of a layer type on a backend ("cpu"), or NULL. */
const st_impl_desc *st_registry_find_impl(const st_registry *r, const char *layer, const char *backend);
/* The computation of an activation, or NULL. */
const st_activation_impl *st_registry_find_activation_impl(const st_registry *r, const char *name);
/* The closest known layer type name to name, or NULL ("did you mean"). */
const char *st_registry_suggest_layer(const st_registry *r, const char *name);
/* A block by name or alias, or by display name in any case ("Conv2DBlock");
 * NULL when none. */
const st_block_type *st_registry_find_block(const st_registry *r, const char *name);
/* A block described for people (parts, defaults, the default order, how to
 * add it), in the layer pages' markdown; caller frees. (core-block.c) */
char *st_block_describe(const st_registry *r, const st_block_type *b);
/* The expansion of a layer type (by its name, or an alias of it), or NULL. */
const st_expansion_type *st_registry_find_expansion(const st_registry *r, const char *layer_type);

/* The host API given to plugins. */
extern const st_host_api st_host;

/* What st_exec_layer.host_private points to while the engine prepares or
 * runs a layer: api->fail writes its message here. */
typedef struct st_exec_report {
	bool failed;
	char text[512];
	/* api->status's latest line in this run (ABI 2.1); the engine clears
	 * has_status when a run starts. */
	bool has_status;
	st_severity status_severity;
	char status[256];
} st_exec_report;

/*
 * Runs a type's reshape outside any graph, with the checks the type checker
 * makes around it: mandatory inputs linked, a sane result (rank, dims, size).
 * outputs has room for ST_MAX_OUTPUTS shapes; r is filled in (weights, flops,
 * n_outputs). Messages go to *messages (caller frees each text and the
 * array). Returns 0 when the outputs are valid.
 */
int st_reshape_run(const st_layer_type *type, const char *layer_name, const st_value *params,
                   int n_inputs, const st_shape *const *inputs, st_shape *outputs,
                   st_reshape *r, st_message **messages, int *n_messages);

/* ------------------------------------------------------------------------
 * core-graph.c
 * ------------------------------------------------------------------------ */

/* An empty graph over registry (borrowed). Caller frees with st_graph_free. */
st_graph *st_graph_new(const st_registry *registry);
void st_graph_free(st_graph *g);

/* A new layer, not yet in any graph (refs 0). type_name is kept even when
 * the registry does not know it. Freed by st_layer_unref when refs reach 0. */
st_layer *st_layer_new(const st_registry *registry, const char *type_name, const char *name);
void st_layer_ref(st_layer *l);
void st_layer_unref(st_layer *l);

/* Finds a layer by name (the first, when names are duplicated). */
st_layer *st_graph_find(const st_graph *g, const char *name);
/* A free name "<prefix>_<n>" for a new layer of type; caller frees. */
char *st_graph_generate_name(const st_graph *g, const st_layer_type *type, const char *type_name);

/* Low-level mutations; they keep names, consumers and dirty marks right but
 * record no undo. Edits go through st_session commands instead. */
void st_graph_insert(st_graph *g, st_layer *l, int index);
void st_graph_remove(st_graph *g, st_layer *l);
/* Sets input `input` of dst (growing its terminals as needed) to src; a NULL
 * src.layer disconnects. Returns the previous source. */
st_port st_graph_set_input(st_graph *g, st_layer *dst, int input, st_port src);
void st_graph_rename(st_graph *g, st_layer *l, const char *name);
/* Grows l's terminals with unlinked ones, or cuts unlinked ones off the end,
 * towards n (undo uses it to restore a layer's terminals exactly). */
void st_graph_set_terminal_count(st_graph *g, st_layer *l, int n);
/* Marks a layer for re-checking. */
void st_graph_touch(st_graph *g, st_layer *l);
/* Rebuilds the name index and the duplicate marks from scratch. */
void st_graph_index_names(st_graph *g);
/* True when linking src to dst would close a cycle. */
bool st_graph_would_cycle(const st_graph *g, const st_layer *src, const st_layer *dst);
/* Input terminals the type shows for a layer with its current links. */
int st_layer_terminal_count(const st_layer *l);
bool st_layer_input_mandatory(const st_layer *l, int input);
/* Sum of declared weight elements; 0 before a check. */
int64_t st_layer_param_count(const st_layer *l);

/* ------------------------------------------------------------------------
 * core-check.c: the type checker
 * ------------------------------------------------------------------------ */

/* Checks every layer. */
void st_graph_check(st_graph *g);
/* Re-checks only what changed since the last check and what lies downstream
 * of it, stopping where output shapes come out unchanged. Falls back to a
 * full check when none ran yet or the order changed. */
void st_graph_check_incremental(st_graph *g);
/* Messages of all layers, in layer order; caller frees the array only
 * (texts belong to the layers and live until the next check). */
typedef struct st_graph_message {
	const st_layer *layer;
	st_severity severity;
	const char *text;
} st_graph_message;
st_graph_message *st_graph_messages(const st_graph *g, int *count);

/* ------------------------------------------------------------------------
 * core-json.c: JSON text positions and canonical writing
 * ------------------------------------------------------------------------ */

/* Where each cJSON node of a parsed document starts in its text. */
typedef struct st_json_doc {
	cJSON *root;
	const char *text;
	size_t len;
	void *positions;    /* private: node -> offset */
} st_json_doc;

/* Parses text (len bytes, need not be NUL-terminated). On a syntax error
 * returns -1 with file:line:col in d. Caller frees with st_json_doc_free. */
int st_json_parse(st_json_doc *doc, const char *text, size_t len, const char *file, st_diag *d);
void st_json_doc_free(st_json_doc *doc);
/* Line and column (1-based) where node's value starts; 0 when unknown. */
void st_json_position(const st_json_doc *doc, const cJSON *node, int *line, int *col);
/* The same for its key when node is an object member (else its value). */
void st_json_key_position(const st_json_doc *doc, const cJSON *node, int *line, int *col);
/* A JSON path built on the stack as a reader descends; it becomes text
 * ("layers[3].params.stride") only when a message needs it. */
typedef struct st_json_path {
	const struct st_json_path *up;
	const char *key; /* NULL: an array element */
	int index;
} st_json_path;
/* Appends the path as text: keys joined by '.', elements as [i]. */
void st_json_path_text(const st_json_path *p, st_buf *out);
/* Appends a JSON string literal. */
void st_json_write_string(st_buf *out, const char *s);
/* Appends any cJSON value in the canonical style at the given indent level. */
void st_json_write_value(st_buf *out, const cJSON *v, int indent);
/* The canonical text of a whole document (st_json_write_value and a final
 * newline); deletes root. Caller frees the text. */
char *st_json_document_text(cJSON *root);

/* ------------------------------------------------------------------------
 * core-model.c: model files
 * ------------------------------------------------------------------------ */

#define ST_MODEL_FORMAT "strata-model"
#define ST_MODEL_MAJOR 1
#define ST_MODEL_MINOR 0

/* Loads a model file into a new graph. Errors and warnings (file:line:col,
 * JSON path, layer and field) go to d. Returns NULL when the file cannot be
 * used; caller frees the graph with st_graph_free. */
st_graph *st_model_load(const char *path, const st_registry *r, st_diag *d);
/* The same from memory; file names the text in messages. */
st_graph *st_model_parse(const char *text, size_t len, const char *file,
                         const st_registry *r, st_diag *d);
/* Canonical JSON of the graph; caller frees. */
char *st_model_serialize(const st_graph *g);
/* Saves atomically; on failure the old file is intact and err says why. */
int st_model_save(const st_graph *g, const char *path, char *err, size_t err_size);

/* ------------------------------------------------------------------------
 * core-journal.c: the edit journal and the one-editor lock
 * ------------------------------------------------------------------------ */

typedef struct st_journal st_journal;

/* Opens the journal of a model in $XDG_STATE_HOME/strata/journal and takes
 * its lock. NULL with a reason when another live Strata holds the lock (its
 * pid in *other_pid) or the folder cannot be written. What a previous session
 * left stays until st_journal_start. Caller ends with st_journal_close. */
st_journal *st_journal_open(const char *model_path, long *other_pid, char *err, size_t err_size);
/* Empties the journal for a model in the state it has on disk now (after
 * opening, restoring or saving). */
int st_journal_start(st_journal *j, char *err, size_t err_size);
/* Records one command, flushed to disk before returning. */
int st_journal_append(st_journal *j, int argc, char **argv, char *err, size_t err_size);
int st_journal_entries(const st_journal *j);
/* Releases the lock; remove deletes the journal (a clean end). */
void st_journal_close(st_journal *j, bool remove);
/* Commands a session that did not end cleanly left for this model, as a
 * script (caller frees), or NULL; *model_changed when the file changed on
 * disk since they were recorded. */
char *st_journal_pending(const char *model_path, int *n_commands, bool *model_changed);
void st_journal_discard(const char *model_path);
/* The pid of a live Strata holding the model's lock, or 0. */
long st_journal_owner(const char *model_path);

/* ------------------------------------------------------------------------
 * core-command.c: edit commands with undo and redo
 * ------------------------------------------------------------------------ */

typedef struct st_session st_session;

/* Where commands print (check results, help). */
typedef void (*st_print_fn)(void *user, const char *text);

typedef struct st_command {
	const char *name;
	const char *alias;    /* or NULL */
	const char *usage;    /* arguments, e.g. "TYPE [NAME] [X Y]" */
	const char *help;     /* one line */
	int min_args, max_args; /* -1: no maximum */
	/* Returns 0, or -1 with a reason in err. */
	int (*run)(st_session *s, int argc, char **argv, char *err, size_t err_size);
} st_command;

extern const st_command st_commands[];
extern const int st_n_commands;
const st_command *st_command_find(const char *name);

/* An editing session over a graph (taken over: freed with the session).
 * path may be NULL for a model never saved. Caller frees with st_session_free. */
st_session *st_session_new(st_graph *g, const char *path);
void st_session_free(st_session *s);
st_graph *st_session_graph(st_session *s);
const char *st_session_path(const st_session *s);
bool st_session_dirty(const st_session *s);
void st_session_set_print(st_session *s, st_print_fn fn, void *user);
/* Runs one command given as words. Returns 0 or -1 with err. */
int st_session_exec(st_session *s, int argc, char **argv, char *err, size_t err_size);
/* Splits one command line into words (quotes group, \" escapes inside
 * double quotes). Caller frees each word and the array. Returns 0 or -1. */
int st_split_words(const char *text, char ***words, int *n, char *err, size_t err_size);
/* Runs a script of commands separated by ';' or new lines ('#' starts a
 * comment, quotes group words). Stops at the first failure, which goes to d
 * as origin:line:col. Returns 0 or -1. */
int st_session_run_script(st_session *s, const char *script, const char *origin, st_diag *d);
/* Records every command that changes the model in j (not taken over), and
 * empties it on save. */
void st_session_set_journal(st_session *s, st_journal *j);
/* Undo/redo one step; return -1 when there is nothing to undo/redo. */
int st_session_undo(st_session *s);
int st_session_redo(st_session *s);
int st_session_undo_depth(const st_session *s);
int st_session_redo_depth(const st_session *s);

/* ------------------------------------------------------------------------
 * core-config.c: the user's settings and folders, for the editor and the
 * command line alike
 * ------------------------------------------------------------------------ */

/* The user's settings ($XDG_CONFIG_HOME/strata/config.json). */
typedef struct st_config {
	char *theme;              /* theme name, or NULL for the default */
	int ascii;                /* -1 automatic (from the locale), 0 no, 1 yes */
	int colors;               /* -1 detected, else 0 (mono), 8, 16, 256, 16777216 */
	bool show_shapes;         /* tensor shapes on links */
	bool show_grid;
	char **disabled_plugins;  /* plugin names not to load */
	int n_disabled_plugins;
	char **plugin_paths;      /* extra plugin folders */
	int n_plugin_paths;
	cJSON *unknown;           /* fields this version does not know, kept for saving */
} st_config;

/* Parses config.json text; unknown fields are kept. Returns 0 or -1 with
 * file:line:col messages in d (cfg then holds the defaults). */
int st_config_parse(const char *text, size_t len, const char *file, st_config *cfg, st_diag *d);
/* Reads $XDG_CONFIG_HOME/strata/config.json (defaults when absent). */
int st_config_load(st_config *cfg, st_diag *d);
/* Writes it back atomically, creating the folder. */
int st_config_save(const st_config *cfg, char *err, size_t err_size);
void st_config_defaults(st_config *cfg);
void st_config_clear(st_config *cfg);
/* $XDG_CONFIG_HOME/strata (or ~/.config/strata); caller frees. */
char *st_config_dir(void);
/* Reads the settings file $XDG_CONFIG_HOME/strata/NAME: its text (caller
 * frees) with its path in *path (caller frees, NULL without a home folder).
 * NULL when there is no such file (*rc 0: the defaults stand) or when it
 * cannot be read (*rc -1, the reason in d calling the file WHAT). */
char *st_config_read(const char *name, const char *what, char **path, size_t *len, st_diag *d, int *rc);
/* $XDG_STATE_HOME/strata (or ~/.local/state/strata); caller frees. */
char *st_state_dir(void);
/* The path of NAME in that folder, which is created if need be; NULL when
 * there is no home folder or it cannot be made. Caller frees. */
char *st_state_file(const char *name);
/* $XDG_CACHE_HOME/strata (or ~/.cache/strata), for what can be rebuilt
 * (such as the CUDA backend's algorithm choices); caller frees, NULL when no
 * home folder is known. */
char *st_cache_dir(void);
/* mkdir -p, with mode 0700 for the folders it creates (the XDG rule).
 * Returns 0, or -1 with the reason in err. */
int st_make_dirs(const char *path, char *err, size_t err_size);
/* Removes the plain files in dir, then dir itself (a folder the program
 * wrote, such as a temporary weights folder); what cannot go stays. */
void st_remove_dir(const char *dir);

#endif
