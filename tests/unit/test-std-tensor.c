/* Unit tests: std-tensor. */
#include "config.h"

#include "helpers.h"
