/* A plugin whose reshape functions misbehave, each its own way: the host
 * must report each and mark the layer invalid, in process; and one that
 * crashes outright, for the editor's crash handling (tests/tui/crash.sh). */
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "st-plugin.h"

const uint32_t st_plugin_abi = ST_PLUGIN_ABI_VERSION;

static int
negative_dims(st_reshape *r, const st_host_api *api)
{
	(void)api;
	r->outputs[0] = *r->inputs[0];
	r->outputs[0].dims[1] = -5;
	return 0;
}

static int
huge_rank(st_reshape *r, const st_host_api *api)
{
	(void)api;
	r->outputs[0] = *r->inputs[0];
	r->outputs[0].rank = 99;
	return 0;
}

static int
absurd_dims(st_reshape *r, const st_host_api *api)
{
	(void)api;
	r->outputs[0] = *r->inputs[0];
	for (int i = 0; i < r->outputs[0].rank; i++)
		r->outputs[0].dims[i] = INT64_C(1) << 40;
	return 0;
}

static int
many_outputs(st_reshape *r, const st_host_api *api)
{
	(void)api;
	r->outputs[0] = *r->inputs[0];
	r->n_outputs = 1000;
	return 0;
}

static int
many_weights(st_reshape *r, const st_host_api *api)
{
	(void)api;
	r->outputs[0] = *r->inputs[0];
	r->n_weights = -3;
	return 0;
}

static int
silent_failure(st_reshape *r, const st_host_api *api)
{
	(void)r;
	(void)api;
	return -1; /* fails without saying why */
}

static int
crash(st_reshape *r, const st_host_api *api)
{
	(void)r;
	(void)api;
	raise(SIGSEGV);
	return 0;
}

static const st_port_desc inputs[] = { { "x", 0, "any tensor" } };
static const st_port_desc outputs[] = { { "y", 0, "what the plugin claims" } };
#define HOSTILE(type, fn)                                                                                   \
	{ .name = type, .summary = "misbehaves", .category = "Tests", .inputs = inputs, .n_inputs = 1,      \
	  .outputs = outputs, .n_outputs = 1, .reshape = fn }
static const st_layer_desc types[] = {
	HOSTILE("negative_dims", negative_dims), HOSTILE("huge_rank", huge_rank),
	HOSTILE("absurd_dims", absurd_dims),     HOSTILE("many_outputs", many_outputs),
	HOSTILE("many_weights", many_weights),   HOSTILE("silent_failure", silent_failure),
	HOSTILE("crash_test", crash),
};
static const st_plugin_info info = { "hostile", "tests", "layers whose reshape misbehaves", "0.1" };

int st_plugin_entry(const st_host_api *api, st_plugin_ctx *ctx);

int
st_plugin_entry(const st_host_api *api, st_plugin_ctx *ctx)
{
	api->declare(ctx, &info);
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		api->register_layer(ctx, &types[i]);
	return 0;
}
