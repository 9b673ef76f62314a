/* Unit tests: util. */
#include "config.h"

#include "helpers.h"
