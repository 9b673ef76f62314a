/* strata inspect: one layer's output (or one of its weights) as a grid of
 * channel pictures: per-channel statistics on the terminal, the grid as a
 * PNG file (-o), or drawn in the terminal with coloured symbols (--term). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"
#include "st-io.h"
#ifdef ST_HAVE_TUI
#include "st-tui.h"
#endif

/* A whole number from text within [lo, hi], or -1 after a message. */
static int
parse_int(const char *text, const char *what, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(text, &end, 10);
	if (*text == '\0' || *end != '\0' || errno || v < lo || v > hi) {
		fprintf(stderr, "strata inspect: %s takes a whole number from %ld to %ld, not '%s'\n", what, lo, hi, text);
		return -1;
	}
	*out = v;
	return 0;
}

/* --channels FIRST or FIRST:COUNT. */
static int
parse_channels(const char *text, st_grid_options *o)
{
	char *end;
	errno = 0;
	long first = strtol(text, &end, 10), count = 0;
	if (end == text || first < 0 || errno)
		goto bad;
	if (*end == ':') {
		char *rest = end + 1;
		count = strtol(rest, &end, 10);
		if (end == rest || count < 1 || errno)
			goto bad;
	}
	if (*end != '\0')
		goto bad;
	o->first = first;
	o->count = count;
	return 0;
bad:
	fprintf(stderr, "strata inspect: --channels takes FIRST or FIRST:COUNT (from 0), such as 0:16, not '%s'\n",
	        text);
	return -1;
}

#ifdef ST_HAVE_TUI
/* The colours the terminal shows, from COLORTERM and TERM. */
static st_color_depth
terminal_depth(void)
{
	const char *ct = getenv("COLORTERM"), *term = getenv("TERM");
	if (ct != NULL && (strcmp(ct, "truecolor") == 0 || strcmp(ct, "24bit") == 0))
		return ST_DEPTH_TRUE;
	if (term != NULL && strstr(term, "256color") != NULL)
		return ST_DEPTH_256;
	if (term == NULL || strcmp(term, "dumb") == 0)
		return ST_DEPTH_MONO;
	return ST_DEPTH_16;
}
#endif

/* Prints one line of statistics per channel shown. */
static void
print_stats(const float *data, int64_t channels, int64_t per_channel, const st_grid_options *o, const char *what)
{
	int64_t first = o->first, count = o->count > 0 ? o->count : channels - first;
	if (first + count > channels)
		count = channels - first;
	st_channel_stats all;
	st_channel_stats_of(data + first * per_channel, count * per_channel, &all);
	printf("%s: channels %lld to %lld of %lld; all of them: min %.6g, max %.6g, mean %.6g, std %.6g", what,
	       (long long)first, (long long)(first + count - 1), (long long)channels, all.min, all.max, all.mean,
	       all.std);
	if (all.nan || all.inf)
		printf(", %lld NaN, %lld infinite", (long long)all.nan, (long long)all.inf);
	printf("\n  %7s %12s %12s %12s %12s %6s %6s\n", "channel", "min", "max", "mean", "std", "NaN", "inf");
	for (int64_t c = first; c < first + count; c++) {
		st_channel_stats s;
		st_channel_stats_of(data + c * per_channel, per_channel, &s);
		printf("  %7lld %12.6g %12.6g %12.6g %12.6g %6lld %6lld\n", (long long)c, s.min, s.max, s.mean, s.std,
		       (long long)s.nan, (long long)s.inf);
	}
}

static int
show(const cli_args *a, const st_graph *g, st_plan *plan)
{
	const char *name = cli_value(a, "layer");
	const st_layer *l = st_graph_find(g, name);
	if (l == NULL) {
		fprintf(stderr, "strata inspect: %s has no layer '%s'\n", a->argv[0], name);
		return EXIT_USAGE;
	}
	st_grid_options o = { .gap = 1, .scale = 0, .colormap = ST_COLORMAP_VIRIDIS };
	long v;
	if (cli_value(a, "colormap") != NULL) {
		int m = st_colormap_find(cli_value(a, "colormap"));
		if (m < 0) {
			fprintf(stderr, "strata inspect: --colormap takes gray, viridis, heat or diverging, not '%s'\n",
			        cli_value(a, "colormap"));
			return EXIT_USAGE;
		}
		o.colormap = (st_colormap)m;
	}
	if (cli_value(a, "channels") && parse_channels(cli_value(a, "channels"), &o) != 0)
		return EXIT_USAGE;
	if (cli_value(a, "columns")) {
		if (parse_int(cli_value(a, "columns"), "--columns", 1, 4096, &v) != 0)
			return EXIT_USAGE;
		o.columns = (int)v;
	}
	if (cli_value(a, "zoom")) {
		if (parse_int(cli_value(a, "zoom"), "--zoom", 1, 64, &v) != 0)
			return EXIT_USAGE;
		o.scale = (int)v;
	}
	long sample = 0, output = 0;
	if (cli_value(a, "sample") && parse_int(cli_value(a, "sample"), "--sample", 0, 1 << 30, &sample) != 0)
		return EXIT_USAGE;
	if (cli_value(a, "layer-output") &&
	    parse_int(cli_value(a, "layer-output"), "--layer-output", 0, ST_MAX_OUTPUTS - 1, &output) != 0)
		return EXIT_USAGE;
	o.shared_range = cli_flag(a, "shared-range");

	/* What to draw: the layer's output after the run, or one of its weights
	 * (each output channel's kernels in a row). */
	st_shape shape;
	float *owned = NULL;
	const float *data;
	char what[256];
	const char *weight = cli_value(a, "weight");
	if (weight != NULL) {
		const float *w = st_plan_layer_weight(plan, l, weight, &shape);
		if (w == NULL) {
			fprintf(stderr, "strata inspect: layer '%s' has no weight '%s' bound\n", name, weight);
			return EXIT_USAGE;
		}
		data = w;
		/* O x I x K... reads as O*I pictures of the kernel, I to a row. */
		if (shape.rank >= 3) {
			int64_t per = 1;
			for (int i = 2; i < shape.rank; i++)
				per *= shape.dims[i];
			st_shape pictures = { .rank = 4, .dtype = ST_DTYPE_FLOAT32 };
			pictures.dims[0] = 1;
			pictures.dims[1] = shape.dims[0] * shape.dims[1];
			pictures.dims[2] = shape.rank >= 4 ? shape.dims[2] : 1;
			pictures.dims[3] = per / pictures.dims[2];
			if (o.columns == 0)
				o.columns = (int)(shape.dims[1] < 64 ? shape.dims[1] : 64);
			shape = pictures;
		}
		char dims[128];
		st_shape_format(&shape, dims, sizeof dims);
		snprintf(what, sizeof what, "%s %s (%s)", name, weight, dims);
	} else {
		const st_shape *out = st_plan_layer_shape(plan, l, (int)output);
		if (out == NULL) {
			fprintf(stderr, "strata inspect: layer '%s' has no output %ld of its own to show\n", name, output);
			return EXIT_USAGE;
		}
		if (out->dtype != ST_DTYPE_FLOAT32 && out->dtype != ST_DTYPE_FLOAT16) {
			fprintf(stderr, "strata inspect: layer '%s' puts out %s, not numbers to draw\n", name,
			        st_dtype_name(out->dtype));
			return EXIT_USAGE;
		}
		shape = *out;
		shape.dtype = ST_DTYPE_FLOAT32;
		owned = st_xmalloc(sizeof *owned * (size_t)(st_shape_elements(&shape) + 1));
		if (st_plan_get_layer_output(plan, l, (int)output, owned) != 0) {
			fprintf(stderr, "strata inspect: layer '%s' kept no output\n", name);
			free(owned);
			return EXIT_RUNTIME;
		}
		data = owned;
		char dims[128];
		st_shape_format(&shape, dims, sizeof dims);
		snprintf(what, sizeof what, "%s output %ld (%s)", name, output, dims);
	}

	int64_t channels, h, w;
	st_grid_geometry(&shape, &channels, &h, &w);
	int64_t batch = shape.rank >= 2 ? shape.dims[0] : 1;
	int rc = EXIT_OK;
	if (sample >= batch) {
		fprintf(stderr, "strata inspect: --sample %ld is outside the batch of %lld\n", sample, (long long)batch);
		rc = EXIT_USAGE;
	} else if (o.first >= channels) {
		fprintf(stderr, "strata inspect: --channels starts at %lld, but %s has %lld channel%s\n",
		        (long long)o.first, what, (long long)channels, channels == 1 ? "" : "s");
		rc = EXIT_USAGE;
	}
	if (rc != EXIT_OK) {
		free(owned);
		return rc;
	}
	const float *one = data + sample * channels * h * w;
	bool to_file = cli_value(a, "output") != NULL, to_term = cli_flag(a, "term");
	if (!to_file && !to_term)
		print_stats(one, channels, h * w, &o, what);
	if (to_file || to_term) {
		if (o.scale == 0)
			o.scale = to_term ? 1 : (int)(h * w <= 64 ? 8 : h <= 32 ? 4 : 1);
		st_grid grid;
		char err[512];
		if (st_grid_render(data, &shape, sample, &o, &grid, err, sizeof err) != 0) {
			fprintf(stderr, "strata inspect: %s\n", err);
			free(owned);
			return EXIT_USAGE;
		}
		if (to_file) {
			const char *path = cli_value(a, "output");
			if (st_image_write_png(path, grid.planes, 3, grid.height, grid.width, err, sizeof err) != 0) {
				fprintf(stderr, "strata inspect: %s\n", err);
				rc = EXIT_RUNTIME;
			} else {
				printf("%s: channels %lld to %lld, %dx%d pictures of %lldx%lld, %s, %dx%d pixels: %s\n", what,
				       (long long)grid.first, (long long)(grid.first + grid.count - 1), grid.columns, grid.rows,
				       (long long)h, (long long)w, st_colormap_name(o.colormap), grid.width, grid.height, path);
			}
		}
		if (to_term && rc == EXIT_OK) {
#ifdef ST_HAVE_TUI
			struct winsize ws = { 0 };
			int cols = 80, rows = 24;
			if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
				cols = ws.ws_col;
				rows = ws.ws_row;
			} else if (getenv("COLUMNS") != NULL) {
				cols = atoi(getenv("COLUMNS")) > 0 ? atoi(getenv("COLUMNS")) : 80;
			}
			if (cli_value(a, "width") && parse_int(cli_value(a, "width"), "--width", 1, 1000, &v) == 0)
				cols = (int)v;
			else if (cli_value(a, "width"))
				rc = EXIT_USAGE;
			/* Pixels where the terminal has them (and was not told
			 * otherwise), else symbols. */
			char why[256] = "";
			const char *want = cli_value(a, "graphics") ? cli_value(a, "graphics") : "auto";
			int mode = strcmp(want, "auto") == 0 ? (int)st_graphics_detect(why, sizeof why) : st_graphics_find(want);
			if (mode < 0) {
				fprintf(stderr, "strata inspect: --graphics takes auto, symbols, sixel or kitty, not '%s'\n", want);
				rc = EXIT_USAGE;
			} else if (why[0] == '\0') {
				snprintf(why, sizeof why, "as --graphics says");
			}
			if (rc == EXIT_OK) {
				int pc, pr;
				st_picture_fit(grid.height, grid.width, cols, rows > 4 ? rows * 2 : 48, &pc, &pr);
				int cell_w = ws.ws_col > 0 && ws.ws_xpixel > 0 ? ws.ws_xpixel / ws.ws_col : 0;
				int cell_h = ws.ws_row > 0 && ws.ws_ypixel > 0 ? ws.ws_ypixel / ws.ws_row : 0;
				char *text = mode == ST_GRAPHICS_SYMBOLS
				                 ? st_picture_text(grid.planes, grid.height, grid.width, pc, pr, terminal_depth(),
				                                   cli_flag(a, "ascii"))
				                 : st_picture_pixels(grid.planes, grid.height, grid.width, pc, pr, cell_w, cell_h,
				                                     (st_graphics)mode);
				printf("%s: channels %lld to %lld, %s, %s graphics (%s)\n", what, (long long)grid.first,
				       (long long)(grid.first + grid.count - 1), st_colormap_name(o.colormap),
				       st_graphics_name((st_graphics)mode), why);
				fputs(text, stdout);
				if (mode != ST_GRAPHICS_SYMBOLS)
					fputc('\n', stdout);
				free(text);
			}
#else
			fprintf(stderr, "strata inspect: --term draws with the TUI's chafa, and this Strata was built "
			                "without the TUI; use -o FILE.png\n");
			rc = EXIT_USAGE;
#endif
		}
		st_grid_free(&grid);
	}
	free(owned);
	return rc;
}

int
cli_cmd_inspect(const cli_args *a)
{
	if (cli_value(a, "layer") == NULL) {
		fprintf(stderr, "strata inspect: name the layer to look at: --layer NAME (strata info %s lists them)\n",
		        a->argv[0]);
		return EXIT_USAGE;
	}
	if (cli_value(a, "output") != NULL && !cli_has_suffix(cli_value(a, "output"), ".png")) {
		fprintf(stderr, "strata inspect: -o writes a PNG picture: give a name ending in .png, not '%s'\n",
		        cli_value(a, "output"));
		return EXIT_USAGE;
	}
	cli_plan cp;
	int rc = cli_plan_prepare(a, "inspect", true, NULL, &cp);
	if (rc == EXIT_OK) {
		st_diag d;
		st_diag_init(&d);
		if (st_plan_run(cp.plan, &d) != 0) {
			st_diag_print(&d, stderr);
			rc = EXIT_RUNTIME;
		}
		st_diag_free(&d);
	}
	if (rc == EXIT_OK)
		rc = show(a, cp.graph, cp.plan);
	cli_plan_free(&cp);
	return rc;
}
