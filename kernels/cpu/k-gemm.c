/* Placeholder. */
#include "config.h"

#include "k-nn.h"
