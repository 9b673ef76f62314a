/* A plugin that registers a type name the std collection already has, one
 * with a bad default, and one good type: only the good one may load. */
#include <stddef.h>

#include "st-plugin.h"

const uint32_t st_plugin_abi = ST_PLUGIN_ABI_VERSION;

static int
reshape(st_reshape *r, const st_host_api *api)
{
	(void)api;
	r->outputs[0] = *r->inputs[0];
	return 0;
}

/* Breaks the ABI's rule that at most ST_MAX_WEIGHTS weights are declared. */
static int
reshape_too_many_weights(st_reshape *r, const st_host_api *api)
{
	(void)api;
	r->outputs[0] = *r->inputs[0];
	r->n_weights = 99;
	return 0;
}

static const st_port_desc port[] = { { "x", 0, "a tensor" } };
static const char *const shared_alias[] = { "dup_alias", NULL };
static const st_param_desc bad_param[] = {
	{ .name = "k", .kind = ST_PARAM_INT, .default_value = "-3", .flags = ST_PARAM_HAS_MIN, .min = 1,
	  .doc = "a parameter whose default is out of its own range" },
};
static const st_layer_desc types[] = {
	{ .name = "convolution", .summary = "clashes with std", .inputs = port, .n_inputs = 1,
	  .outputs = port, .n_outputs = 1, .reshape = reshape },
	{ .name = "bad_default", .summary = "bad default", .inputs = port, .n_inputs = 1,
	  .outputs = port, .n_outputs = 1, .params = bad_param, .n_params = 1, .reshape = reshape },
	{ .name = "dup_ok", .summary = "a fine type", .inputs = port, .n_inputs = 1, .outputs = port,
	  .n_outputs = 1, .aliases = shared_alias, .reshape = reshape },
	{ .name = "dup_ok2", .summary = "shares an alias with dup_ok", .inputs = port, .n_inputs = 1,
	  .outputs = port, .n_outputs = 1, .aliases = shared_alias, .reshape = reshape },
	{ .name = "too_many_weights", .summary = "declares 99 weights", .inputs = port, .n_inputs = 1,
	  .outputs = port, .n_outputs = 1, .reshape = reshape_too_many_weights },
};
static const st_plugin_info info = { "dup_std", "tests", "clashes with std", "1.0" };

int st_plugin_entry(const st_host_api *api, st_plugin_ctx *ctx);

int
st_plugin_entry(const st_host_api *api, st_plugin_ctx *ctx)
{
	api->declare(ctx, &info);
	for (int i = 0; i < (int)(sizeof types / sizeof types[0]); i++)
		api->register_layer(ctx, &types[i]);
	return 0;
}
