/* Precision and layout conversions on the device (kc.h). */
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "kc-launch.h"
#include "kc.h"


__global__ void
float_to_half(const float *x, uint16_t *y, int64_t n)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
		y[i] = __half_as_ushort(__float2half_rn(x[i]));
}

__global__ void
half_to_float(const uint16_t *x, float *y, int64_t n)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
		y[i] = __half2float(__ushort_as_half(x[i]));
}

extern "C" int
kc_float_to_half(const float *x, uint16_t *y, int64_t n, cudaStream_t stream)
{
	if (n <= 0)
		return cudaSuccess;
	float_to_half<<<kc_blocks_for(n), KC_THREADS, 0, stream>>>(x, y, n);
	return (int)cudaGetLastError();
}

extern "C" int
kc_half_to_float(const uint16_t *x, float *y, int64_t n, cudaStream_t stream)
{
	if (n <= 0)
		return cudaSuccess;
	half_to_float<<<kc_blocks_for(n), KC_THREADS, 0, stream>>>(x, y, n);
	return (int)cudaGetLastError();
}

/* Transposes of rows x cols matrices, one per batch item, through 32 x 32
 * tiles in shared memory (a column of padding keeps the reads of a tile's
 * column free of bank conflicts). A block of 32 x 8 threads moves one tile;
 * blocks loop over the tile rows and the batch beyond the grid's limits. */
#define TILE 32
#define TILE_ROWS 8

template <typename T>
__global__ void
transpose(const T *x, T *y, int64_t batch, int64_t rows, int64_t cols)
{
	__shared__ T tile[TILE][TILE + 1];
	int64_t tile_rows = (rows + TILE - 1) / TILE;
	int64_t c0 = (int64_t)blockIdx.x * TILE;
	for (int64_t b = blockIdx.z; b < batch; b += gridDim.z) {
		const T *xb = x + b * rows * cols;
		T *yb = y + b * rows * cols;
		for (int64_t t = blockIdx.y; t < tile_rows; t += gridDim.y) {
			int64_t r0 = t * TILE;
			for (int k = threadIdx.y; k < TILE; k += TILE_ROWS) {
				int64_t r = r0 + k, c = c0 + threadIdx.x;
				if (r < rows && c < cols)
					tile[k][threadIdx.x] = xb[r * cols + c];
			}
			__syncthreads();
			/* y is cols x rows: row c of y takes column c of the tile. */
			for (int k = threadIdx.y; k < TILE; k += TILE_ROWS) {
				int64_t c = c0 + k, r = r0 + threadIdx.x;
				if (c < cols && r < rows)
					yb[c * rows + r] = tile[threadIdx.x][k];
			}
			__syncthreads();
		}
	}
}

static int
transpose_launch(const void *x, void *y, int64_t batch, int64_t rows, int64_t cols, int elem_size,
                 cudaStream_t stream)
{
	if (batch <= 0 || rows <= 0 || cols <= 0)
		return cudaSuccess;
	int64_t tx = (cols + TILE - 1) / TILE, ty = (rows + TILE - 1) / TILE;
	if (tx > 2147483647LL)
		return cudaErrorInvalidValue;
	dim3 grid((unsigned)tx, (unsigned)(ty < KC_MAX_BLOCKS ? ty : KC_MAX_BLOCKS),
	          (unsigned)(batch < KC_MAX_BLOCKS ? batch : KC_MAX_BLOCKS));
	dim3 block(TILE, TILE_ROWS);
	if (elem_size == 4)
		transpose<float><<<grid, block, 0, stream>>>((const float *)x, (float *)y, batch, rows, cols);
	else if (elem_size == 2)
		transpose<uint16_t><<<grid, block, 0, stream>>>((const uint16_t *)x, (uint16_t *)y, batch, rows, cols);
	else
		return cudaErrorInvalidValue;
	return (int)cudaGetLastError();
}

extern "C" int
kc_nchw_to_nhwc(const void *x, void *y, int64_t batch, int64_t channels, int64_t positions, int elem_size,
                cudaStream_t stream)
{
	return transpose_launch(x, y, batch, channels, positions, elem_size, stream);
}

extern "C" int
kc_nhwc_to_nchw(const void *x, void *y, int64_t batch, int64_t channels, int64_t positions, int elem_size,
                cudaStream_t stream)
{
	return transpose_launch(x, y, batch, positions, channels, elem_size, stream);
}
