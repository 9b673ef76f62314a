/* Unit tests: graph. */
#include "config.h"

#include "helpers.h"
