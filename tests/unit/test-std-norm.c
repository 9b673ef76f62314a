/* Unit tests: std-norm. */
#include "config.h"

#include "helpers.h"
