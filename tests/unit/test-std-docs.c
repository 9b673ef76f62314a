/* Unit tests: std-docs. */
#include "config.h"

#include "helpers.h"
