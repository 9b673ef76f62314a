/* Unit tests: value. */
#include "config.h"

#include "helpers.h"
