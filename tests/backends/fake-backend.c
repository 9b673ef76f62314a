/* Backend modules for the loader's tests (tests/unit/test-backend.c), one
 * source built several ways: FAKE_NAME names it; FAKE_DEVICES devices (0:
 * it says why there are none); FAKE_ABI another ABI version; FAKE_NO_ENTRY
 * leaves out the entry point. */
#include <stdio.h>
#include <string.h>

#include "st-backend.h"

#ifndef FAKE_ABI
#define FAKE_ABI ST_BACKEND_ABI_VERSION
#endif

const st_backend_module *st_backend_module_get(void);
int fake_backend_marker(void);

static int
device_count(char *why, size_t why_size)
{
	if (FAKE_DEVICES == 0) {
		snprintf(why, why_size, "no fake device is plugged in");
		return -1;
	}
	return FAKE_DEVICES;
}

static int
device_info(int index, st_backend_device *out, char *why, size_t why_size)
{
	if (index < 0 || index >= FAKE_DEVICES) {
		snprintf(why, why_size, "no fake device %d", index);
		return -1;
	}
	memset(out, 0, sizeof *out);
	snprintf(out->name, sizeof out->name, "Fake GPU %d", index);
	out->arch_major = 9;
	out->arch_minor = index;
	out->memory_bytes = (uint64_t)(index + 1) << 30;
	out->multiprocessors = 132;
	return 0;
}

static void
versions(char *out, size_t size)
{
	snprintf(out, size, "fake 1.0");
}

static const st_backend_module module = {
	.abi = FAKE_ABI,
	.abi_minor = ST_BACKEND_ABI_MINOR,
	.name = FAKE_NAME,
	.build = "fake build",
	.device_count = device_count,
	.device_info = device_info,
	.versions = versions,
};

#ifndef FAKE_NO_ENTRY
const st_backend_module *
st_backend_module_get(void)
{
	return &module;
}
#endif

/* Something to export when the entry point is left out. */
int
fake_backend_marker(void)
{
	return (int)module.abi;
}
