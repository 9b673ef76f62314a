/* A plugin with the ABI symbol but no entry point: the host must refuse it. */
#include "st-plugin.h"

const uint32_t st_plugin_abi = ST_PLUGIN_ABI_VERSION;
