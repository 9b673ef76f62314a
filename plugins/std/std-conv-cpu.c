/* Placeholder: the CPU implementations arrive with issue 3's kernels. */
#include "config.h"

#include "std.h"

const st_impl_desc std_conv_impls[1];
const int std_conv_impl_count = 0;
