/* Unit tests: std-shape. */
#include "config.h"

#include "helpers.h"
