/* The engine's private structures, shared by engine-plan.c and engine-run.c. */
#ifndef ENGINE_INTERNAL_H
#define ENGINE_INTERNAL_H

#include "st-backend.h"
#include "st-engine.h"
#include "st-io.h"

/* One tensor of the plan: a layer output in the plan's format, or a
 * converted copy. Its memory is a slice of the arena. */
typedef struct plan_tensor {
	st_tensor t;      /* data, logical shape (dtype = storage), layout */
	size_t bytes;
	size_t offset;    /* in the arena */
	int first, last;  /* steps that write it and read it last */
	bool pinned;      /* lives through the whole run: inputs and outputs */
	/* A part of another tensor (an input of a concatenation written in
	 * place): its bytes from parent_offset on; -1 for none. Such a tensor
	 * has no place of its own, and its parent lives as long as it does. */
	int parent;
	size_t parent_offset;
} plan_tensor;

/* Per graph layer, what survives a re-plan: shapes, weights, packed state. */
typedef struct layer_slot {
	const st_layer *layer;
	const st_impl_desc *impl;            /* NULL for inputs and outputs */
	const st_plugin *impl_plugin;        /* whose impl is, for crash reports */
	const st_activation_impl *act_impl;  /* NULL without an activation */
	int n_outputs;
	st_shape outputs[ST_MAX_OUTPUTS];    /* from the plan's own reshape */
	int n_weights;
	st_weight_desc weight_desc[ST_MAX_WEIGHTS];
	st_npy weight_files[ST_MAX_WEIGHTS]; /* mapped files, or converted copies */
	float *weight_random[ST_MAX_WEIGHTS];
	st_tensor weights[ST_MAX_WEIGHTS];
	st_npy slope_file;                   /* prelu's per-channel slope, when given */
	const float *slope;
	int64_t slope_count;
	void *state;                         /* the implementation's, kept across re-plans */
	/* The plan's own copy of the layer's parameters (desc->n_params, deep
	 * copies): what L->params points at, so runtime options change here
	 * (st_plan_set_runtime) and never in the graph. */
	st_value *params;
	bool prepared_once;
	int out_tensor[ST_MAX_OUTPUTS];      /* natural tensor of each output, this plan */
	/* Fusion (engine-fuse.c), decided again at every plan_build. A fused
	 * layer runs no step: the step of slot fused_into computes it, and its
	 * output is that step's output. On a convolution that absorbs others:
	 * fuse_bn is the batch normalisation folded into its weights, fuse_add
	 * the elementwise add applied to its output (input terminal
	 * fuse_add_other brings the other operand), fuse_act the slot whose
	 * attached activation its step applies last and fuse_pool the pooling
	 * its implementation computes after it (ST_IMPL_FUSES_POOL); each -1
	 * when absent. */
	int fused_into;
	int fuse_bn, fuse_add, fuse_add_other, fuse_act, fuse_pool;
	/* The layout its implementation chose made an island (plan_build): a
	 * step whose every input was converted to it and whose outputs every
	 * reader converts back. Set while a plan is built, the step then runs
	 * in the plan's layout. */
	bool layout_island;
	/* The folded weights (filter scaled per output channel, bias adjusted):
	 * the plan's own copies, never the user's files; fold_weights point at
	 * them and fold_params is the layer's parameters with its bias on.
	 * Folded from binding fold_generation of batch norm slot fold_from. */
	float *fold_filter, *fold_bias;
	int64_t fold_filter_count, fold_channels;
	uint64_t fold_generation;
	int fold_from;
	st_tensor fold_weights[2];
	st_value *fold_params;
	/* On a device backend (engine-device.c): the weights in device memory
	 * (one allocation, dev_weight_mem), uploaded from binding
	 * dev_generation; what the layer's steps see instead of weights. */
	st_tensor dev_weights[ST_MAX_WEIGHTS];
	void *dev_weight_mem;
	uint64_t dev_generation;
} layer_slot;

typedef struct plan_step {
	st_step_kind kind;
	layer_slot *slot;
	st_tensor_format format;   /* of its float tensors */
	/* ST_STEP_LAYER */
	int n_in, n_out;
	int *in;                   /* tensor ids; -1 for an unlinked input */
	int *out;
	st_tensor *in_view;
	st_tensor *out_view;
	st_exec_layer L;
	st_exec_report report;
	/* Fusion: the slot whose attached activation follows the run (NULL for
	 * none) and the tensor added to output 0 before it (-1 for none). */
	const layer_slot *act_slot;
	int epi_other;
	/* A fused pooling (slot->fuse_pool): the host's description of it,
	 * given to the implementation as L.pool, whose outputs are this
	 * step's; and L's own output 0, shape and layout only (both owned by
	 * the step, NULL without one). */
	st_exec_layer *pool_L;
	st_tensor *unpooled;
	/* A concatenation whose inputs were written in place into its output
	 * (plan_concat_in_place): nothing left to run. */
	bool elided;
	/* ST_STEP_CONVERT */
	int src, dst;
	char what[48];
} plan_step;

struct st_plan {
	const st_graph *graph;
	const st_registry *registry;
	st_plan_options opt;
	const char *backend;
	st_tensor_format format;
	st_dtype float_dtype;
	st_layout layout;
	/* Implementations choose each step's layout (st_plan_options.fixed_layouts). */
	bool layouts_chosen;

	layer_slot *slots;       /* in execution order */
	int n_slots;
	int *input_slots;        /* slots of the input layers, file order */
	int n_inputs;
	st_shape *input_shapes;  /* the shapes they take now */
	int *output_slots;       /* slots of the output layers */
	int n_outputs;
	st_shape *output_shapes; /* what reaches them, float as float32 */

	plan_tensor *tensors;
	int n_tensors;
	plan_step *steps;
	int n_steps;
	int *output_tensor;      /* tensor feeding each output layer */

	void *arena;
	size_t arena_bytes, arena_capacity, live_bound;
	size_t align;            /* of every tensor (not a concatenation's part) and the arena */
	void *scratch;
	size_t scratch_bytes, scratch_capacity;

	st_pool *pool;
	st_exec_ctx ctx;
	bool weights_bound;
	uint64_t weights_generation; /* counts binds: st_exec_layer.weights_generation */
	uint64_t build_generation;   /* counts plan_build: shapes, steps and places changed */
	uint64_t runtime_generation; /* counts changes of runtime options */
	bool inputs_set;
	bool ran;                /* a run finished since the plan was last built */
	/* Profiling (engine-profile.c): seconds of each step of the last run. */
	bool profiling;
	double *step_seconds;
	int n_step_seconds;
	/* Hardware counters while st_plan_profile runs: per step, the events
	 * (ST_N_COUNTERS each) counted in the last run, or NULL. */
	st_counters *counters;
	double *step_counters;
	/* A backend other than the CPU (engine-device.c), or all NULL: its
	 * module, the device opened for this plan (arena, scratch and
	 * weights lie in its memory), and what the host keeps beside it. */
	const st_backend_module *mod;
	st_device *dev;
	st_backend_device dev_info;
	void *host_scratch;      /* host conversions of inputs and outputs */
	size_t host_scratch_capacity;
	void *staging;           /* page-locked: each input's, then each output's bytes */
	size_t staging_capacity;
	size_t *stage_offset;    /* per input, then per output */
	st_capture_state capture;
};

/* engine-fuse.c */
/* Decides which layers fuse into the convolution before them (nothing
 * when fusion is off); fills the slots' fuse_* and fused_into. */
void plan_fuse(st_plan *p);
/* Whether the host's epilogue runs after slot's implementation (a fused
 * add, or an activation the implementation does not apply itself): in
 * float32 only. */
bool plan_host_applies_act(const st_plan *p, const layer_slot *slot);
/* Lets the inputs of channel concatenations be written straight into their
 * part of the output (once steps, lifetimes and pins are known, before the
 * memory is planned): their tensors become parts of the output's
 * (plan_tensor.parent) and the concatenation's step is elided. */
void plan_concat_in_place(st_plan *p);
/* Whether fusion is on for this plan: st_plan_options.no_fusion off, not
 * STRATA_FUSE=0, and layer outputs not kept for inspection. */
bool plan_fusion_enabled(const st_plan *p);
/* Folds each fused batch norm into its convolution's own weight copies
 * when the binding or the pairing changed; weights must be bound. */
void plan_fold_weights(st_plan *p);
/* Frees a slot's folded weights and parameters. */
void plan_fold_free(layer_slot *slot);
/* Runs the epilogue of step s after its implementation: the fused add,
 * then the activation (its own or a fused layer's). */
void plan_epilogue(st_plan *p, plan_step *s);
/* Slot index of layer l in p, or -1. */
int plan_slot_of(const st_plan *p, const st_layer *l);

/* engine-profile.c */
void plan_profile_reserve(st_plan *p);

/* engine-plan.c */
int plan_reshape(st_plan *p, st_diag *d);
int plan_build(st_plan *p, st_diag *d);
/* Runs every implementation's prepare and places the tensors (weights bound). */
int plan_prepare(st_plan *p, st_diag *d);
void plan_clear_steps(st_plan *p);
bool format_is_fp16(st_tensor_format f);
st_layout format_layout(st_tensor_format f);

/* engine-device.c: plans on a backend other than the CPU */
/* Opens device 0 of p->backend (the module must be ready); sets p->mod,
 * p->dev, p->ctx.device and at least 256-byte alignment. */
int plan_device_open(st_plan *p, st_diag *d);
/* Frees what the plan holds on the device, then closes it. */
void plan_device_close(st_plan *p);
/* Device memory for the arena or scratch: NULL with a reason in d. */
void *plan_device_alloc(st_plan *p, size_t bytes, const char *what, st_diag *d);
void plan_device_free(st_plan *p, void *ptr);
/* After the steps are built: every layer's activation must be applied by
 * its implementation (no host epilogue on the device). */
int plan_device_check(const st_plan *p, st_diag *d);
/* Before the implementations' prepare: the weights uploaded when bound
 * anew since the last upload. */
int plan_device_weights(st_plan *p, st_diag *d);
/* After it: the staging and the host's scratch sized for the plan. */
int plan_device_stage(st_plan *p, st_diag *d);
int plan_device_set_input(st_plan *p, int i, const st_tensor *t, st_diag *d);
int plan_device_run(st_plan *p, st_diag *d);
void plan_device_get_output(const st_plan *p, int i, void *out);
int plan_device_layer_output(const st_plan *p, const plan_tensor *src, const st_shape *shape, void *out);

/* engine-run.c */
/* Whether a trigger option (ST_PARAM_TRIGGER) is pressed; release puts
 * every pressed one back to false (a runtime change). */
bool plan_triggers(st_plan *p, bool release);
/* Runs layer step s's implementation (its plugin marked as running, for
 * crash reports): 0, or -1 with "layer 'name': why" in d. */
int plan_run_layer(st_plan *p, plan_step *s, st_diag *d);
/* Copies src into dst, converting dtype and layout; tmp holds the dtype
 * converted copy when both change (the plan's scratch, which covers it). */
void convert_tensor(const st_tensor *src, st_tensor *dst, void *tmp, const st_exec_ctx *ctx);

#endif
