/* Placeholder table; the layer types arrive with the std collection. */
#include "config.h"

#include "std.h"

const st_layer_desc std_norm_layers[1];
const int std_norm_layer_count = 0;
