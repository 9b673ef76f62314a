/* Unit tests: model. */
#include "config.h"

#include "helpers.h"
