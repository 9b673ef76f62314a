/* Unit tests: std-conv. */
#include "config.h"

#include "helpers.h"
