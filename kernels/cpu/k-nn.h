/* CPU kernels for convolution, pooling, normalisation and matrix products. */
#ifndef K_NN_H
#define K_NN_H

#include "st-plugin.h"

#endif
