/* The XWN collection linked into a fuzz target beside std, its entry point
 * and ABI symbol renamed so that both load with st_registry_load_builtin:
 * the loader's block-style settings (transform=, pruning=) need a layer
 * type with the XWN parameter set to be reached. */
#define st_plugin_entry xwn_builtin_entry
#define st_plugin_abi xwn_builtin_abi
#include "xwn.c"
