/* strata: the command table, argument parsing and dispatch. */
#include "config.h"

#include <assert.h>
#include <cjson/cJSON.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const cli_option json_only[] = {
	{ "json", 0, NULL, "print the result as JSON", false },
	{ NULL, 0, NULL, NULL, false },
};

static const cli_option check_options[] = {
	{ "json", 0, NULL, "print the result as JSON", false },
	{ "quiet", 'q', NULL, "print nothing; only the exit code tells", false },
	{ NULL, 0, NULL, NULL, false },
};

static const cli_option layers_options[] = {
	{ "category", 0, "CATEGORY", "list only the layer types of one palette category", false },
	{ "json", 0, NULL, "print the palette as JSON", false },
	{ "markdown", 0, "DIR", "write one Markdown page per layer type into DIR", false },
	{ "prose", 0, "DIR", "with --markdown: take hand-written prose from DIR/<type>.md", false },
	{ NULL, 0, NULL, NULL, false },
};

static const cli_option new_options[] = {
	{ "name", 0, "NAME", "the network's name (default: from the file name)", false },
	{ "force", 0, NULL, "replace an existing file", false },
	{ NULL, 0, NULL, NULL, false },
};

static const cli_option edit_options[] = {
	{ "command", 'c', "SCRIPT", "run edit commands (separated by ';') without the TUI", true },
	{ "file", 'f', "FILE", "run edit commands from FILE without the TUI", true },
	{ "list-commands", 0, NULL, "list the edit commands with their one-line help", false },
	{ "theme", 0, "NAME", "the editor's colour theme (dark, light, high-contrast, 16-colour, or yours)", false },
	{ "ascii", 0, NULL, "draw with ASCII characters only", false },
	{ "colors", 0, "N", "assume 0 (monochrome), 8, 16, 256 or truecolor colours", false },
	{ NULL, 0, NULL, NULL, false },
};

static const cli_option help_options[] = {
	{ "man", 0, NULL, "print the strata(1) man page source", false },
	{ "bash-completion", 0, NULL, "print the bash completion script", false },
	{ NULL, 0, NULL, NULL, false },
};

static const cli_option run_options[] = {
	{ "weights", 'w', "DIR", "weights folder (default: the model's 'weights' setting)", false },
	{ "allow-outside-paths", 0, NULL, "let the model's own paths leave its folder (absolute, '..', links)",
	  false },
	{ "random-weights", 0, NULL, "use seeded random weights instead of files", false },
	{ "input", 'i', "[NAME=]FILE", "data for an input layer: .npy, .png, .jpg, or a video (one frame)", true },
	{ "frame", 0, "N", "the frame of a video input (default 0)", false },
	{ "random-input", 0, NULL, "feed seeded random data to inputs given no file", false },
	{ "seed", 0, "N", "seed for --random-weights and --random-input (default 0)", false },
	{ "output", 'o', "[NAME=]FILE", "write an output layer's tensor to FILE (.npy, or .png for images)", true },
	{ "backend", 0, "cpu|cuda", "where to run (default cpu; strata devices lists them)", false },
	{ "allow-tf32", 0, NULL, "on a GPU, let float32 layers compute in TF32 (faster, 10-bit mantissa)", false },
	{ "measure-algorithms", 0, NULL,
	  "on a GPU, time each convolution's algorithms once and keep the fastest (the algorithm cache)", false },
	{ "format", 0, "FORMAT", "fp32-nchw, fp32-nhwc, fp16-nchw or fp16-nhwc (default: the model's)", false },
	{ "threads", 't', "N", "worker threads (default: every core)", false },
	{ "iterations", 'n', "N", "timed runs (default 1)", false },
	{ "warmup", 0, "N", "untimed runs first (default 1 when timing several runs)", false },
	{ "show-plan", 0, NULL, "print the plan: steps, formats, conversions, memory", false },
	{ "profile", 0, NULL, "time every layer too, in separate runs, for the report's layer table", false },
	{ "no-profile", 0, NULL, "do not profile, even when the model's 'profiling' setting is on", false },
	{ "profile-iterations", 0, "N", "profiled runs with --profile (default 10)", false },
	{ "report-dir", 0, "DIR", "where the report goes (default $XDG_STATE_HOME/strata/reports/MODEL)", false },
	{ "no-report", 0, NULL, "write no report", false },
	{ "json", 0, NULL, "print timings and output summaries as JSON", false },
	{ NULL, 0, NULL, NULL, false },
};

static const cli_option inspect_options[] = {
	{ "layer", 'l', "NAME", "the layer to look at (required)", false },
	{ "layer-output", 0, "K", "which of its outputs (default 0)", false },
	{ "weight", 0, "NAME", "show this weight of the layer instead (weights: each output channel's kernels in a row)",
	  false },
	{ "input", 'i', "[NAME=]FILE", "data for an input layer: .npy, .png, .jpg, or a video (one frame)", true },
	{ "frame", 0, "N", "the frame of a video input (default 0)", false },
	{ "random-input", 0, NULL, "feed seeded random data to inputs given no file", false },
	{ "weights", 'w', "DIR", "weights folder (default: the model's 'weights' setting)", false },
	{ "allow-outside-paths", 0, NULL, "let the model's own paths leave its folder (absolute, '..', links)",
	  false },
	{ "random-weights", 0, NULL, "use seeded random weights instead of files", false },
	{ "seed", 0, "N", "seed for --random-weights and --random-input (default 0)", false },
	{ "format", 0, "FORMAT", "fp32-nchw, fp32-nhwc, fp16-nchw or fp16-nhwc (default: the model's)", false },
	{ "threads", 't', "N", "worker threads (default: every core)", false },
	{ "sample", 0, "N", "which sample of the batch (default 0)", false },
	{ "channels", 'c', "FIRST[:COUNT]", "the channels shown (default all)", false },
	{ "columns", 0, "N", "pictures per row of the grid (default: about square)", false },
	{ "zoom", 'z', "N", "pixels per value in the PNG (default: by size), cells per value with --term", false },
	{ "colormap", 0, "MAP", "gray, viridis (default), heat or diverging (blue below zero, red above)", false },
	{ "shared-range", 0, NULL, "one value range for every channel shown (default: each its own)", false },
	{ "output", 'o', "FILE.png", "write the grid as a PNG picture", false },
	{ "term", 0, NULL, "draw the grid in the terminal with coloured symbols", false },
	{ "width", 0, "COLUMNS", "with --term: the width to draw in (default: the terminal's)", false },
	{ "ascii", 0, NULL, "with --term: ASCII symbols only", false },
	{ "graphics", 0, "MODE", "with --term: auto (default), symbols, sixel or kitty", false },
	{ NULL, 0, NULL, NULL, false },
};

static const cli_option import_options[] = {
	{ "output", 'o', "MODEL", "the model file to write (default: the ONNX file's name, .strata.json, here)",
	  false },
	{ "weights-out", 'w', "DIR", "folder for the weights (default: MODEL's name with -weights, beside it)", false },
	{ "shape", 's', "INPUT=DIMS", "an input's whole shape, batch first, such as x=1x3x640x640", true },
	{ "dim", 'd', "NAME=SIZE", "the size of a named dimension of the inputs, such as N=1 or height=640", true },
	{ "default-dim", 0, "N", "size given to the other symbolic dimensions (default 1)", false },
	{ "force", 0, NULL, "replace an existing model file and weights folder", false },
	{ "verbose", 'v', NULL, "also list what was folded, attached or kept as a placeholder", false },
	{ NULL, 0, NULL, NULL, false },
};

static const cli_option export_options[] = {
	{ "output", 'o', "FILE", "the file to write (required; never the model itself)", false },
	{ "weights", 'w', "DIR", "weights folder (default: the model's 'weights' setting)", false },
	{ "allow-outside-paths", 0, NULL, "let the model's own paths leave its folder (absolute, '..', links)",
	  false },
	{ "random-weights", 0, NULL, "write seeded random weights (as strata run --random-weights)", false },
	{ "seed", 0, "N", "seed for --random-weights (default 0)", false },
	{ "opset", 0, "N", "ONNX opset of the default domain, 13 to 21 (default 17)", false },
	{ "fp16", 0, NULL, "write inputs, outputs, weights and computation as float16", false },
	{ "no-tensor-sizes", 0, NULL, "give graph inputs and outputs dimension variables, not sizes", false },
	{ "allow-placeholders", 0, NULL,
	  "write layers without an ONNX operator as ai.strata nodes, and keep placeholder operators of "
	  "other domains",
	  false },
	{ "xwn-source-weights", 0, NULL,
	  "also store XWN layers' full-precision weights (unused initializers), so that an import restores "
	  "them exactly",
	  false },
	{ NULL, 0, NULL, NULL, false },
};

static const cli_option report_options[] = {
	{ "top", 0, "N", "show only the first N layers after sorting; with html: how many of the slowest layers "
	  "the time chart shows (default 20)", false },
	{ "sort", 0, "COLUMN", "order layers by time, share, name, type, flops, gflops, gbs, memory, output, "
	  "distance (ascending), stddev, bytes, cycles, instructions or cache_misses (default: execution order)",
	  false },
	{ "ascii", 0, NULL, "draw the share bars with '#' (also when the locale is not UTF-8)", false },
	{ "output", 'o', "FILE", "with csv or trace: write to FILE instead of standard output; with html: "
	  "write the page to FILE ('-': standard output)", false },
	{ "base", 0, "REPORT", "with compare or html: the report the others are measured against (its path or "
	  "letter; default the first)", false },
	{ "metric", 0, "NAME", "with compare: the per-layer figure compared: time, gflops, gbs, memory, cycles, "
	  "instructions or cache_misses (default time)", false },
	{ "force", 0, NULL, "with html: replace an existing file that is not an earlier page of strata report html",
	  false },
	{ NULL, 0, NULL, NULL, false },
};

static const cli_option xwn_options[] = {
	{ "weights", 'w', "DIR", "weights folder (default: the model's 'weights' setting)", false },
	{ "allow-outside-paths", 0, NULL, "let the model's own paths leave its folder (absolute, '..', links)",
	  false },
	{ "random-weights", 0, NULL, "use seeded random weights instead of files", false },
	{ "seed", 0, "N", "seed for --random-weights and the random inputs (default 0)", false },
	{ "input", 'i', "[NAME=]FILE", "with compare: data for an input layer (.npy, .png, .jpg, or a video's first "
	  "frame); inputs given no file get seeded random data", true },
	{ "threads", 't', "N", "with compare: worker threads (default: every core)", false },
	{ "ascii", 0, NULL, "with compare: draw the level histogram with ASCII symbols", false },
	{ "output", 'o', "DIR", "with export-weights: the folder to write (created; never the weights folder read)",
	  false },
	{ "force", 0, NULL, "with export-weights: replace a folder that already holds files", false },
	{ "json", 0, NULL, "print the result as JSON", false },
	{ NULL, 0, NULL, NULL, false },
};

static const cli_option no_options[] = { { NULL, 0, NULL, NULL, false } };

const cli_command cli_commands[] = {
	{ "check", "MODEL", "type-check a model",
	  "Loads MODEL, runs the type checker over every layer and prints each message as "
	  "file:line:column: severity: layer: text. Exits 1 when there are errors.",
	  check_options, 1, 1, CLI_COMPLETE_MODEL, cli_cmd_check },
	{ "info", "MODEL", "show layers, shapes, parameters, FLOPs and memory",
	  "Prints a table of every layer with its type, output shape, parameter count, "
	  "floating-point operations for one inference and activation memory, with totals.",
	  json_only, 1, 1, CLI_COMPLETE_MODEL, cli_cmd_info },
	{ "layers", "", "list the layer types of the palette",
	  "Lists the layer types the loaded plugins provide, by palette category, and the "
	  "activations that can be attached to layers.",
	  layers_options, 0, 0, CLI_COMPLETE_NONE, cli_cmd_layers },
	{ "plugins", "", "list the plugins, loaded and refused",
	  "Lists every plugin found on the search path with its version, author and what it "
	  "provides, and every plugin or layer type that was refused, with the reason.",
	  json_only, 0, 0, CLI_COMPLETE_NONE, cli_cmd_plugins },
	{ "devices", "", "list where plans can run: the CPU and GPU backends",
	  "Lists the CPU, and each GPU backend with its devices, or why it cannot run here: no "
	  "module in this build, a library missing, no driver, a driver too old, no device, or "
	  "a device this build has no code for. Also what the backend module was built with and "
	  "the library versions found.",
	  json_only, 0, 0, CLI_COMPLETE_NONE, cli_cmd_devices },
	{ "run", "MODEL", "run inference on the CPU",
	  "Compiles MODEL into a plan, binds its weights (a folder of layerName_weightType.npy files, "
	  "or random ones), feeds its inputs from .npy or image files, runs it and prints the timing "
	  "and a summary of every output, or writes outputs to files. Ctrl-C stops between layers.",
	  run_options, 1, 1, CLI_COMPLETE_MODEL, cli_cmd_run },
	{ "inspect", "MODEL", "look at one layer's channels",
	  "Runs MODEL once on its inputs, as strata run does, keeping every layer's output, and shows "
	  "the layer given by --layer: each channel's minimum, maximum, mean, standard deviation and "
	  "NaN and infinity counts; with -o, the channels as a grid of pictures in a PNG file; with "
	  "--term, the grid drawn in the terminal with coloured symbols. --weight shows one of the "
	  "layer's weights instead, each output channel's kernels in a row.",
	  inspect_options, 1, 1, CLI_COMPLETE_MODEL, cli_cmd_inspect },
	{ "export", "onnx MODEL", "export a model to ONNX",
	  "Checks MODEL and writes it as an ONNX model to the file given by -o, with its weights "
	  "(from the weights folder, or seeded random ones) as initializers. Every standard layer "
	  "becomes ONNX operators; placeholder layers are written back as the operators they came "
	  "from. Exits 1 when the model cannot be exported (type errors, refused placeholders) and 2 "
	  "on bad usage or unreadable weights.",
	  export_options, 2, 2, CLI_COMPLETE_MODEL, cli_cmd_export },
	{ "report", "show|csv|trace REPORT, compare A B..., or html REPORT...",
	  "show, export or compare inference reports",
	  "Reads REPORT (a .strata-report.json file written by a profiled run, docs/report-format.md). "
	  "'show' prints the network summary with latency percentiles and throughput, the layer table "
	  "with each layer's time, spread, share of the total (as a bar), GFLOP/s and GB/s, the time by "
	  "layer type and the memory of every layer. 'csv' prints the layer table as CSV. 'trace' "
	  "writes Chrome trace-event JSON of one average inference (Perfetto, chrome://tracing). "
	  "'compare A B...' sets reports side by side against a base: latency, and every layer matched "
	  "by name and type with its time and the difference. 'html REPORT...' writes one self-contained "
	  "HTML page (tables and SVG charts, no scripts, nothing fetched; with several reports a comparison "
	  "against the base) beside the first report, its .strata-report.json replaced by .html, or to -o "
	  "FILE; an existing file is replaced only when it is such a page or with --force. Exits 2 when a "
	  "report cannot be read.",
	  report_options, 2, -1, CLI_COMPLETE_FILE, cli_cmd_report },
	{ "xwn", "compare|export-weights MODEL", "the XWN collection's tools: compare, export weights",
	  "Tools for models with XWN layers (xwn_convolution, xwn_deconvolution, xwn_cascade_convolution; "
	  "docs/xwn.md). 'compare MODEL' runs the model twice on the same weights and inputs, once as it is "
	  "and once with use_transform and use_pruning off on every XWN layer, and prints for each XWN layer "
	  "its settings, how far its output moved (largest absolute difference and relative L2, "
	  "||as set - off|| / ||off||; a layer's difference includes what the XWN layers before it changed), "
	  "the kernel slices pruned and a histogram of the level indices the transform chose, then the "
	  "difference of every network output. 'export-weights MODEL -o DIR' writes a complete weights "
	  "folder in which every XWN layer's weights are transformed and pruned as the layer runs with "
	  "them and every other weight is copied, with xwn-settings.json describing it, for the same model "
	  "with use_transform and use_pruning off (the transform is not idempotent: do not apply it "
	  "twice). DIR is created whole or not at all; one that holds files is replaced only with --force. "
	  "Exits 1 when the model has no XWN layers, 2 on bad usage or unreadable weights or inputs.",
	  xwn_options, 2, 2, CLI_COMPLETE_MODEL, cli_cmd_xwn },
	{ "new", "FILE", "create an empty model",
	  "Writes an empty model to FILE. An existing file is kept unless --force is given.",
	  new_options, 1, 1, CLI_COMPLETE_FILE, cli_cmd_new },
	{ "import", "FILE.onnx", "import an ONNX model",
	  "Reads an ONNX model and writes a Strata model and its weights folder "
	  "(layerName_weightType.npy, FP32). Operators map to standard layers, constants and "
	  "shape arithmetic are evaluated, activations are attached to the layer before them, and "
	  "an operator Strata has no layer for is kept as an onnx_operator layer, so that the model "
	  "still opens and exports back unchanged. Existing files are kept unless --force is given.",
	  import_options, 1, 1, CLI_COMPLETE_FILE, cli_cmd_import },
	{ "edit", "MODEL", "edit a model, in the TUI or headless",
	  "Opens the editor on MODEL (created on the first save when it does not exist); "
	  "'strata MODEL' does the same. With -c or -f, runs edit commands on MODEL without the "
	  "TUI instead, stopping at the first error with its position in the script; 'save' "
	  "writes the model atomically. Every command is listed by --list-commands.",
	  edit_options, 0, 1, CLI_COMPLETE_MODEL, cli_cmd_edit },
	{ "help", "[COMMAND]", "describe strata or one of its commands",
	  "Without a command, lists every command; with one, describes its arguments and options.",
	  help_options, 0, 1, CLI_COMPLETE_COMMAND, cli_cmd_help },
	{ "version", "", "print the version and the build options",
	  "Prints the version, the plugin ABI and model format versions, and what was built.",
	  no_options, 0, 0, CLI_COMPLETE_NONE, cli_cmd_version },
};
const int cli_n_commands = (int)(sizeof cli_commands / sizeof cli_commands[0]);

const cli_command *
cli_find(const char *name)
{
	for (int i = 0; i < cli_n_commands; i++) {
		if (strcmp(cli_commands[i].name, name) == 0)
			return &cli_commands[i];
	}
	return NULL;
}

static int
option_index(const cli_command *c, const char *name)
{
	for (int i = 0; c->options[i].name; i++) {
		if (strcmp(c->options[i].name, name) == 0)
			return i;
	}
	return -1;
}

bool
cli_flag(const cli_args *a, const char *name)
{
	int i = option_index(a->cmd, name);
	return i >= 0 && a->counts[i] > 0;
}

const char *
cli_value(const cli_args *a, const char *name)
{
	int i = option_index(a->cmd, name);
	return i >= 0 ? a->values[i] : NULL;
}

int
cli_values(const cli_args *a, const char *name, const char ***values)
{
	int i = option_index(a->cmd, name);
	*values = i >= 0 ? a->multi[i] : NULL;
	return i >= 0 ? a->n_multi[i] : 0;
}

static void
add_value(cli_args *a, int i, const char *v)
{
	/* A command table with more options than cli_args holds is a bug. */
	assert(i < CLI_MAX_OPTIONS);
	a->counts[i]++;
	a->values[i] = v;
	a->multi[i] = st_xreallocarray(a->multi[i], (size_t)a->n_multi[i] + 1, sizeof *a->multi[i]);
	a->multi[i][a->n_multi[i]++] = v;
	a->given_option = st_xreallocarray(a->given_option, (size_t)a->n_given + 1, sizeof *a->given_option);
	a->given_value = st_xreallocarray(a->given_value, (size_t)a->n_given + 1, sizeof *a->given_value);
	a->given_option[a->n_given] = i;
	a->given_value[a->n_given] = v;
	a->n_given++;
}

/* Parses argv (after the subcommand name). Returns 0, 1 for --help, -1 on error. */
static int
parse_args(const cli_command *c, int argc, char **argv, cli_args *a)
{
	memset(a, 0, sizeof *a);
	a->cmd = c;
	a->argv = st_xcalloc((size_t)argc + 1, sizeof *a->argv);
	bool only_positional = false;
	for (int i = 0; i < argc; i++) {
		char *arg = argv[i];
		if (only_positional || arg[0] != '-' || arg[1] == '\0') {
			a->argv[a->argc++] = arg;
			continue;
		}
		if (strcmp(arg, "--") == 0) {
			only_positional = true;
			continue;
		}
		if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
			return 1;
		int k = -1;
		const char *inline_value = NULL;
		if (arg[1] == '-') {
			char *name = st_xstrdup(arg + 2);
			char *eq = strchr(name, '=');
			if (eq) {
				*eq = '\0';
				inline_value = arg + 2 + (eq - name) + 1;
			}
			k = option_index(c, name);
			free(name);
		} else if (arg[2] == '\0') {
			for (int j = 0; c->options[j].name; j++) {
				if (c->options[j].short_name == arg[1])
					k = j;
			}
		}
		if (k < 0) {
			fprintf(stderr, "strata %s: unknown option '%s' (see strata %s --help)\n", c->name, arg,
			        c->name);
			return -1;
		}
		const cli_option *o = &c->options[k];
		if (o->arg == NULL) {
			if (inline_value) {
				fprintf(stderr, "strata %s: --%s takes no value\n", c->name, o->name);
				return -1;
			}
			add_value(a, k, "");
		} else if (inline_value) {
			add_value(a, k, inline_value);
		} else if (i + 1 < argc) {
			add_value(a, k, argv[++i]);
		} else {
			fprintf(stderr, "strata %s: --%s needs a value (%s)\n", c->name, o->name, o->arg);
			return -1;
		}
		if (a->counts[k] > 1 && !o->repeat) {
			fprintf(stderr, "strata %s: --%s is given more than once\n", c->name, o->name);
			return -1;
		}
	}
	if (a->argc < c->min_args || (c->max_args >= 0 && a->argc > c->max_args)) {
		fprintf(stderr, "usage: strata %s %s\n", c->name, c->usage);
		return -1;
	}
	return 0;
}

static void
free_args(cli_args *a)
{
	for (int i = 0; i < CLI_MAX_OPTIONS; i++)
		free(a->multi[i]);
	free(a->given_option);
	free(a->given_value);
	free(a->argv);
}

/* Whether ARG is one of edit's own options (--theme NAME, --ascii, ...), so
 * that "strata --ascii MODEL" opens the editor as "strata edit --ascii MODEL". */
static bool
is_edit_option(const char *arg)
{
	if (strncmp(arg, "--", 2) != 0)
		return false;
	size_t n = strcspn(arg + 2, "=");
	for (const cli_option *o = edit_options; o->name != NULL; o++) {
		if (strlen(o->name) == n && strncmp(o->name, arg + 2, n) == 0)
			return true;
	}
	return false;
}

/* write(2) of a string, from a signal handler. */
static void
say(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	ssize_t w = write(STDERR_FILENO, s, n);
	(void)w;
}

/* A crash inside a plugin's code names the plugin, then ends as it would
 * have (the editor installs its own handler, which also restores the
 * terminal and remembers the plugin for the next start). */
static void
on_crash(int sig)
{
	const st_plugin *p = st_plugin_current();
	if (p != NULL) {
		say("strata: the plugin ");
		say(p->name ? p->name : p->path);
		say(" (");
		say(p->path);
		say(") crashed; disabled_plugins in ~/.config/strata/config.json leaves it out\n");
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

int
main(int argc, char **argv)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_crash;
	sa.sa_flags = SA_RESETHAND;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	st_cpu_quiet();
	if (argc < 2) {
		cli_print_usage(stderr);
		return EXIT_USAGE;
	}
	const char *name = argv[1];
	char **edit_argv = NULL;
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
		cli_print_usage(stdout);
		return EXIT_OK;
	}
	if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0)
		name = "version";
	const cli_command *c = cli_find(name);
	if (c == NULL) {
		if (name[0] == '-' && !is_edit_option(name)) {
			fprintf(stderr, "strata: unknown option '%s' (see strata --help)\n", name);
			return EXIT_USAGE;
		}
		/* strata MODEL opens the editor: read it as strata edit MODEL. */
		edit_argv = st_xcalloc((size_t)argc + 2, sizeof *edit_argv);
		edit_argv[0] = argv[0];
		edit_argv[1] = (char *)"edit";
		memcpy(edit_argv + 2, argv + 1, sizeof *argv * (size_t)(argc - 1));
		argv = edit_argv;
		argc++;
		c = cli_find("edit");
	}
	cli_args a;
	int rc = parse_args(c, argc - 2, argv + 2, &a);
	if (rc == 1) {
		cli_print_command_help(c, stdout);
		rc = EXIT_OK;
	} else if (rc != 0) {
		rc = EXIT_USAGE;
	} else {
		rc = c->run(&a);
	}
	free_args(&a);
	free(edit_argv);
	return rc;
}
