/* The analysis collection: layers for looking inside a network at run time,
 * steered by runtime options. Declarations shared by its two files. */
#ifndef ANALYSIS_H
#define ANALYSIS_H

#include "st-plugin.h"

extern const st_layer_desc analysis_layers[]; /* analysis.c */
extern const int analysis_layer_count;
extern const st_impl_desc analysis_impls[];   /* analysis-cpu.c */
extern const int analysis_impl_count;

/* Parameter positions (the descriptors define the tables in this order)
 * and enum values (the index of the text in enum_values). */
enum { SELECT_FIRST, SELECT_COUNT };
enum { NORMALIZE_MODE, NORMALIZE_OVER, NORMALIZE_SCALE, NORMALIZE_SHIFT };
enum { NORMALIZE_MIN_MAX, NORMALIZE_MEAN_STD, NORMALIZE_SCALE_SHIFT }; /* mode */
enum { OVER_TENSOR, OVER_CHANNEL };                                  /* over */
enum { THRESHOLD_LEVEL, THRESHOLD_MODE, THRESHOLD_INVERT };
enum { THRESHOLD_BINARY, THRESHOLD_TO_ZERO };                        /* mode */
enum { COLORMAP_MAP, COLORMAP_LOW, COLORMAP_HIGH, COLORMAP_AUTO_RANGE };
enum { DIFFERENCE_MODE };
enum { DIFFERENCE_ABS, DIFFERENCE_SIGNED, DIFFERENCE_SQUARED };      /* mode */
enum { STATISTICS_RESET, STATISTICS_NOTE };

/* The entry point. */
int st_plugin_entry(const st_host_api *api, st_plugin_ctx *ctx);

#define ANALYSIS_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

#endif
