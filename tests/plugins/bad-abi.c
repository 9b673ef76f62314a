/* A plugin built for another ABI version: the host must refuse it. */
#include "st-plugin.h"

const uint32_t st_plugin_abi = 999;

int st_plugin_entry(const st_host_api *api, st_plugin_ctx *ctx);

int
st_plugin_entry(const st_host_api *api, st_plugin_ctx *ctx)
{
	(void)api;
	(void)ctx;
	return 0;
}
