/* Which SIMD instruction set the CPU kernels' own micro-kernels use: found
 * once per process from the CPU, or chosen with STRATA_ISA. */
#ifndef K_CPU_H
#define K_CPU_H

#include <stdbool.h>

/* Levels, from the plainest; a higher one needs everything below it. */
typedef enum k_isa {
	K_ISA_PORTABLE, /* plain C (GCC vector extensions), the compiler's baseline */
	K_ISA_AVX2,     /* AVX2 with FMA */
	K_ISA_AVX512,   /* AVX-512 F, VL, BW and DQ */
	K_ISA_COUNT
} k_isa;

/*
 * The level the kernels use. The first call settles it: STRATA_ISA
 * (avx512, avx2 or portable) when this CPU and build have that level, the
 * best they have otherwise. Thread-safe; cheap after the first call.
 */
k_isa k_cpu_isa(void);

/* Whether this CPU (and the operating system, and this build) can run isa. */
bool k_cpu_isa_supported(k_isa isa);

/* The best level this CPU and build support. */
k_isa k_cpu_isa_best(void);

/* "avx512", "avx2" or "portable"; STRATA_ISA takes the same names. */
const char *k_cpu_isa_name(k_isa isa);

/* Sets *isa from a name as k_cpu_isa_name gives it; returns 0, or -1 for an
 * unknown name. */
int k_cpu_isa_parse(const char *name, k_isa *isa);

/*
 * Why STRATA_ISA was not followed ("STRATA_ISA=avx512: this CPU lacks
 * AVX-512 F/VL/BW/DQ; using avx2"), or NULL when it was or is unset. The
 * kernels never print; front ends show this once.
 */
const char *k_cpu_isa_note(void);

/*
 * Makes the kernels use isa from now on, as STRATA_ISA would, for tests and
 * benchmarks that compare the levels in one process. Returns 0, or -1 (and
 * changes nothing) when isa is not supported. Not while kernels run.
 */
int k_cpu_isa_force(k_isa isa);

#endif
