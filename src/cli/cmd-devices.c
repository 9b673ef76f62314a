/* strata devices: where plans can run (the CPU, and each backend module
 * with its devices, or why it cannot run here). */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "st-backend.h"

/* The backends besides the CPU that a build may carry. */
static const char *const gpu_backends[] = { "cuda" };

/* The CPU's model name from /proc/cpuinfo, or "unknown CPU", into out. */
static void
cpu_name(char *out, size_t size)
{
	snprintf(out, size, "unknown CPU");
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (f == NULL)
		return;
	char line[512];
	while (fgets(line, sizeof line, f) != NULL) {
		if (strncmp(line, "model name", 10) != 0)
			continue;
		const char *v = strchr(line, ':');
		if (v == NULL)
			break;
		v++;
		while (*v == ' ' || *v == '\t')
			v++;
		snprintf(out, size, "%s", v);
		out[strcspn(out, "\n")] = '\0';
		break;
	}
	fclose(f);
}

/* What one GPU backend says of itself here. */
typedef struct backend_state {
	const char *name;
	const st_backend_module *module;
	char why[1024];
	char versions[256];
	int n_devices;
} backend_state;

static void
look_at(backend_state *b, const char *name)
{
	memset(b, 0, sizeof *b);
	b->name = name;
	b->module = st_backend_load(name, b->why, sizeof b->why);
	if (b->module == NULL)
		return;
	b->module->versions(b->versions, sizeof b->versions);
	b->n_devices = b->module->device_count(b->why, sizeof b->why);
}

int
cli_cmd_devices(const cli_args *a)
{
	char cpu[256];
	cpu_name(cpu, sizeof cpu);
	int n = (int)(sizeof gpu_backends / sizeof gpu_backends[0]);
	backend_state states[sizeof gpu_backends / sizeof gpu_backends[0]];
	for (int i = 0; i < n; i++)
		look_at(&states[i], gpu_backends[i]);
	char *search = st_backend_search_path();

	if (cli_flag(a, "json")) {
		cJSON *root = cJSON_CreateObject();
		cJSON_AddStringToObject(root, "backend_search_path", search);
		cJSON *list = cJSON_AddArrayToObject(root, "backends");
		cJSON *c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "name", "cpu");
		cJSON_AddBoolToObject(c, "ready", true);
		cJSON *devs = cJSON_AddArrayToObject(c, "devices");
		cJSON *d = cJSON_CreateObject();
		cJSON_AddStringToObject(d, "name", cpu);
		cJSON_AddNumberToObject(d, "cores", st_cpu_count());
		cJSON_AddStringToObject(d, "simd", st_cpu_simd());
		cJSON_AddItemToArray(devs, d);
		cJSON_AddItemToArray(list, c);
		for (int i = 0; i < n; i++) {
			const backend_state *b = &states[i];
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "name", b->name);
			cJSON_AddBoolToObject(o, "ready", b->module != NULL && b->n_devices > 0);
			if (b->module != NULL) {
				cJSON_AddStringToObject(o, "build", b->module->build);
				cJSON_AddStringToObject(o, "libraries", b->versions);
			}
			if (b->module == NULL || b->n_devices < 1)
				cJSON_AddStringToObject(o, "reason", b->why);
			cJSON *dl = cJSON_AddArrayToObject(o, "devices");
			for (int k = 0; b->module != NULL && k < b->n_devices; k++) {
				st_backend_device dev;
				char why[256];
				if (b->module->device_info(k, &dev, why, sizeof why) != 0)
					continue;
				cJSON *e = cJSON_CreateObject();
				cJSON_AddNumberToObject(e, "index", k);
				cJSON_AddStringToObject(e, "name", dev.name);
				char arch[16];
				snprintf(arch, sizeof arch, "sm_%d%d", dev.arch_major, dev.arch_minor);
				cJSON_AddStringToObject(e, "arch", arch);
				cJSON_AddNumberToObject(e, "memory_bytes", (double)dev.memory_bytes);
				cJSON_AddNumberToObject(e, "multiprocessors", dev.multiprocessors);
				cJSON_AddItemToArray(dl, e);
			}
			cJSON_AddItemToArray(list, o);
		}
		cli_print_json(root);
	} else {
		printf("cpu   ready: %s, %d core%s, %s kernels\n", cpu, st_cpu_count(), st_cpu_count() == 1 ? "" : "s",
		       st_cpu_simd());
		for (int i = 0; i < n; i++) {
			const backend_state *b = &states[i];
			if (b->module == NULL || b->n_devices < 1)
				printf("%-5s unavailable: %s\n", b->name, b->why);
			else
				printf("%-5s ready: %d device%s\n", b->name, b->n_devices, b->n_devices == 1 ? "" : "s");
			if (b->module == NULL)
				continue;
			printf("      module built with %s\n      libraries found: %s\n", b->module->build, b->versions);
			for (int k = 0; k < b->n_devices; k++) {
				st_backend_device dev;
				char why[256];
				if (b->module->device_info(k, &dev, why, sizeof why) != 0) {
					printf("      %d: %s\n", k, why);
					continue;
				}
				printf("      %d: %s, sm_%d%d, %.1f GiB, %d multiprocessors\n", k, dev.name, dev.arch_major,
				       dev.arch_minor, (double)dev.memory_bytes / (1024.0 * 1024.0 * 1024.0),
				       dev.multiprocessors);
			}
		}
		printf("backend modules are searched in %s\n", search);
	}
	free(search);
	return EXIT_OK;
}
