/* Placeholder: issue 4. */
#include "config.h"

#include "st-tui.h"
