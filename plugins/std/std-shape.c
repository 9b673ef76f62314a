/* Placeholder table; the layer types arrive with the std collection. */
#include "config.h"

#include "std.h"

const st_layer_desc std_shape_layers[1];
const int std_shape_layer_count = 0;
