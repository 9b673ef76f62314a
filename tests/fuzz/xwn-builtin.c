/* The XWN collection's descriptors built into the ONNX-import fuzz target
 * beside std, so that the XWN metadata path runs all the way: its entry
 * point and ABI symbol are renamed, as std's own are linked in too. */
#define st_plugin_entry xwn_plugin_entry
#define st_plugin_abi xwn_plugin_abi
#include "../../plugins/xwn/xwn.c"
