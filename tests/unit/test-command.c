/* Unit tests: command. */
#include "config.h"

#include "helpers.h"
