/* The SIMD level of the CPU kernels: what the CPU offers, what STRATA_ISA
 * asks for, and the choice between them, made once per process. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "k-cpu.h"

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define X86 1
#else
#define X86 0
#endif

static const char *const isa_names[K_ISA_COUNT] = { "portable", "avx2", "avx512" };

const char *
k_cpu_isa_name(k_isa isa)
{
	return (unsigned)isa < K_ISA_COUNT ? isa_names[isa] : "unknown";
}

int
k_cpu_isa_parse(const char *name, k_isa *isa)
{
	for (int i = 0; i < K_ISA_COUNT; i++) {
		if (strcmp(name, isa_names[i]) == 0) {
			*isa = (k_isa)i;
			return 0;
		}
	}
	return -1;
}

/* What the processor has, asked through the compiler's cpuid helpers, which
 * also check that the operating system saves the wider registers. */
static bool
cpu_has(k_isa isa)
{
#if X86
	__builtin_cpu_init();
	switch (isa) {
	case K_ISA_PORTABLE:
		return true;
	case K_ISA_AVX2:
		return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
	case K_ISA_AVX512:
		return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
		       __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
		       cpu_has(K_ISA_AVX2);
	default:
		return false;
	}
#else
	return isa == K_ISA_PORTABLE;
#endif
}

/* What this build carries (configure checks the compiler). */
static bool
built_with(k_isa isa)
{
	switch (isa) {
	case K_ISA_PORTABLE:
		return true;
#if X86 && defined(K_HAVE_AVX2)
	case K_ISA_AVX2:
		return true;
#endif
#if X86 && defined(K_HAVE_AVX512)
	case K_ISA_AVX512:
		return true;
#endif
	default:
		return false;
	}
}

bool
k_cpu_isa_supported(k_isa isa)
{
	return (unsigned)isa < K_ISA_COUNT && built_with(isa) && cpu_has(isa);
}

k_isa
k_cpu_isa_best(void)
{
	for (int i = K_ISA_COUNT - 1; i > 0; i--) {
		if (k_cpu_isa_supported((k_isa)i))
			return (k_isa)i;
	}
	return K_ISA_PORTABLE;
}

static const char *const lacks[K_ISA_COUNT] = {
	"", "AVX2 with FMA", "AVX-512 F/VL/BW/DQ",
};

static k_isa chosen = K_ISA_PORTABLE;
static char note[160];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void
choose(void)
{
	k_isa best = k_cpu_isa_best(), want;
	chosen = best;
	const char *env = getenv("STRATA_ISA");
	if (env == NULL || *env == '\0')
		return;
	if (k_cpu_isa_parse(env, &want) != 0) {
		snprintf(note, sizeof note, "STRATA_ISA=%.32s is not avx512, avx2 or portable; using %s", env,
		         k_cpu_isa_name(best));
	} else if (!k_cpu_isa_supported(want)) {
		snprintf(note, sizeof note, "STRATA_ISA=%s: %s lacks %s; using %s", env,
		         cpu_has(want) ? "this build" : "this CPU", lacks[want], k_cpu_isa_name(best));
	} else {
		chosen = want;
	}
}

k_isa
k_cpu_isa(void)
{
	pthread_once(&once, choose);
	return chosen;
}

const char *
k_cpu_isa_note(void)
{
	pthread_once(&once, choose);
	return note[0] ? note : NULL;
}

int
k_cpu_isa_force(k_isa isa)
{
	pthread_once(&once, choose);
	if (!k_cpu_isa_supported(isa))
		return -1;
	chosen = isa;
	return 0;
}
