/* Placeholder table; the activations arrive with the std collection. */
#include "config.h"

#include "std.h"

const st_activation_desc std_activations[1];
const int std_activation_count = 0;
