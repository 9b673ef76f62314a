/* Unit tests: registry. */
#include "config.h"

#include "helpers.h"
