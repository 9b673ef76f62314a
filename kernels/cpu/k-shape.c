/* Placeholder. */
#include "config.h"

#include "k-tensor.h"
