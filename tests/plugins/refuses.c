/* A plugin whose entry point refuses to load after registering a type: none
 * of what it registered may stay in the registry. */
#include "st-plugin.h"

const uint32_t st_plugin_abi = ST_PLUGIN_ABI_VERSION;

static int
reshape(st_reshape *r, const st_host_api *api)
{
	(void)api;
	r->outputs[0] = *r->inputs[0];
	return 0;
}

static const st_port_desc port[] = { { "x", 0, "a tensor" } };
static const st_layer_desc half_registered = {
	.name = "refused_layer", .summary = "never seen", .inputs = port, .n_inputs = 1,
	.outputs = port, .n_outputs = 1, .reshape = reshape,
};
static const st_plugin_info info = { "refuses", "tests", "refuses to load", "1.0" };

int st_plugin_entry(const st_host_api *api, st_plugin_ctx *ctx);

int
st_plugin_entry(const st_host_api *api, st_plugin_ctx *ctx)
{
	api->declare(ctx, &info);
	api->register_layer(ctx, &half_registered);
	api->refuse(ctx, "needs a device this machine does not have");
	return -1;
}
