/* Unit tests: check. */
#include "config.h"

#include "helpers.h"
