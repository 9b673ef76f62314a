/* A plugin that tells when it is loaded at all: its constructor, which runs
 * at dlopen before any entry point, appends a line to $TATTLE_FILE. Opening
 * a model must never load it (tests/cli/security.sh). */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "st-plugin.h"

const uint32_t st_plugin_abi = ST_PLUGIN_ABI_VERSION;

__attribute__((constructor)) static void
tattle(void)
{
	const char *file = getenv("TATTLE_FILE");
	if (file == NULL)
		return;
	int fd = open(file, O_WRONLY | O_CREAT | O_APPEND, 0600);
	if (fd >= 0) {
		ssize_t n = write(fd, "loaded\n", 7);
		(void)n;
		close(fd);
	}
}

static const st_plugin_info info = { "tattle", "tests", "tells when it is loaded", "0.1" };

int st_plugin_entry(const st_host_api *api, st_plugin_ctx *ctx);

int
st_plugin_entry(const st_host_api *api, st_plugin_ctx *ctx)
{
	api->declare(ctx, &info);
	return 0;
}
