/* CPU kernels for element-wise, data-movement and shape operations,
 * activations, and dtype and layout conversions. */
#ifndef K_TENSOR_H
#define K_TENSOR_H

#include "st-plugin.h"

#endif
