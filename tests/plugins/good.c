/* A small well-behaved plugin: a layer with an infinite input that sums its
 * inputs' channels, to test terminals that grow. */
#include <stddef.h>

#include "st-plugin.h"

const uint32_t st_plugin_abi = ST_PLUGIN_ABI_VERSION;

static int
reshape(st_reshape *r, const st_host_api *api)
{
	st_shape out = *r->inputs[0];
	for (int i = 1; i < r->n_inputs; i++) {
		const st_shape *s = r->inputs[i];
		if (s == NULL)
			continue;
		if (s->rank != out.rank || s->rank < 2) {
			api->message(r, ST_SEVERITY_ERROR, "input %d has rank %d, input 0 has %d", i, s->rank,
			             out.rank);
			return -1;
		}
		out.dims[1] += s->dims[1];
	}
	r->outputs[0] = out;
	return 0;
}

static const st_port_desc inputs[] = { { "x", ST_PORT_INFINITE, "tensors to stack by channel" } };
static const st_port_desc outputs[] = { { "y", 0, "the stacked tensor" } };
static const st_layer_desc types[] = {
	{ .name = "stack_test", .summary = "stacks channels", .category = "Tests", .inputs = inputs,
	  .n_inputs = 1, .outputs = outputs, .n_outputs = 1, .reshape = reshape },
};
static const st_plugin_info info = { "good", "tests", "a test plugin", "2.1.0" };

int st_plugin_entry(const st_host_api *api, st_plugin_ctx *ctx);

int
st_plugin_entry(const st_host_api *api, st_plugin_ctx *ctx)
{
	api->declare(ctx, &info);
	api->register_layer(ctx, &types[0]);
	return 0;
}
