/* The standard layer collection's entry point: registers every table. */
#include "config.h"

#include "std.h"

const uint32_t st_plugin_abi = ST_PLUGIN_ABI_VERSION;

static const st_plugin_info info = {
	.name = "std",
	.author = "The Strata developers",
	.description = "Standard layers: convolution, pooling, normalisation, element-wise, "
	               "shape and data-movement layers, and the attachable activations.",
	.version = PACKAGE_VERSION,
};

int
st_plugin_entry(const st_host_api *api, st_plugin_ctx *ctx)
{
	if (api->abi_version != ST_PLUGIN_ABI_VERSION || api->size < sizeof *api) {
		return -1;
	}
	if (api->declare(ctx, &info) != 0)
		return -1;
	static const struct {
		const st_layer_desc *table;
		const int *count;
	} tables[] = {
		{ std_tensor_layers, &std_tensor_layer_count },
		{ std_conv_layers, &std_conv_layer_count },
		{ std_norm_layers, &std_norm_layer_count },
		{ std_shape_layers, &std_shape_layer_count },
	};
	/* A type the host refuses is recorded there; the others still load. */
	for (int t = 0; t < STD_COUNT(tables); t++) {
		for (int i = 0; i < *tables[t].count; i++)
			api->register_layer(ctx, &tables[t].table[i]);
	}
	for (int i = 0; i < std_activation_count; i++)
		api->register_activation(ctx, &std_activations[i]);
	static const struct {
		const st_impl_desc *table;
		const int *count;
	} impls[] = {
		{ std_tensor_impls, &std_tensor_impl_count },
		{ std_conv_impls, &std_conv_impl_count },
		{ std_norm_impls, &std_norm_impl_count },
		{ std_shape_impls, &std_shape_impl_count },
	};
	for (int t = 0; t < STD_COUNT(impls); t++) {
		for (int i = 0; i < *impls[t].count; i++)
			api->register_impl(ctx, &impls[t].table[i]);
	}
	for (int i = 0; i < std_activation_impl_count; i++)
		api->register_activation_impl(ctx, &std_activation_impls[i]);
	return 0;
}
