/* The CUDA backend module's parts (cuda-module.c: probing; cuda-device.c:
 * devices that run plans, backend ABI 1.1). */
#ifndef CUDA_MODULE_H
#define CUDA_MODULE_H

#include <stdbool.h>
#include <stddef.h>

#include "st-backend.h"
#include "st-plugin-cuda.h"

/* Opens CUDA device index: a stream, cuDNN and cuBLAS handles on it. NULL
 * with the failing call in why. The caller checked that the device exists. */
st_device *cuda_device_open(int index, unsigned flags, char *why, size_t why_size);
void cuda_dev_close(st_device *d);
void *cuda_host_alloc(st_device *d, size_t bytes);
void cuda_host_free(st_device *d, void *ptr);
int cuda_convert(st_device *d, const st_tensor *src, st_tensor *dst, void *tmp);
int cuda_timers(st_device *d, int n);
int cuda_mark(st_device *d, int i);
int cuda_elapsed(st_device *d, int a, int b, double *seconds);
int cuda_record_begin(st_device *d);
int cuda_record_end(st_device *d);
int cuda_replay(st_device *d);

#endif
