/* The command line: one table of subcommands, each in its own file. */
#ifndef CLI_H
#define CLI_H

#include <signal.h>
#include <stdbool.h>

#include "st-core.h"
#include "st-engine.h"

/* Exit codes, the same for every subcommand. */
enum {
	EXIT_OK = 0,
	EXIT_PROBLEM = 1, /* the check, comparison or run found a problem */
	EXIT_USAGE = 2,   /* bad usage, or an input that cannot be read or parsed */
	EXIT_RUNTIME = 3  /* out of memory, backend unavailable, interrupted */
};

typedef struct cli_option {
	const char *name;  /* long name without dashes: "json" */
	char short_name;   /* or 0 */
	const char *arg;   /* name of its argument ("FILE"), or NULL for a flag */
	const char *help;
	bool repeat;       /* may be given several times */
} cli_option;

/* What a positional argument completes to in the shell. */
typedef enum cli_complete {
	CLI_COMPLETE_NONE,
	CLI_COMPLETE_MODEL,    /* *.json files */
	CLI_COMPLETE_FILE,
	CLI_COMPLETE_COMMAND   /* a subcommand name */
} cli_complete;

typedef struct cli_args cli_args;

typedef struct cli_command {
	const char *name;
	const char *usage;       /* arguments after the name */
	const char *summary;     /* one line */
	const char *description; /* a paragraph for --help and the man page */
	const cli_option *options;
	int min_args, max_args;  /* positional arguments; max -1: any */
	cli_complete complete;
	int (*run)(const cli_args *a);
} cli_command;

/* Most options one subcommand may have. */
#define CLI_MAX_OPTIONS 24

/* Parsed arguments of one subcommand. */
struct cli_args {
	const cli_command *cmd;
	int argc;         /* positional arguments */
	char **argv;
	/* Options by position in cmd->options: count given and last value. */
	int counts[CLI_MAX_OPTIONS];
	const char *values[CLI_MAX_OPTIONS];
	/* Every value of a repeatable option, in order. */
	const char **multi[CLI_MAX_OPTIONS];
	int n_multi[CLI_MAX_OPTIONS];
	/* Every option as given, in command-line order. */
	int n_given;
	int *given_option;
	const char **given_value;
};

extern const cli_command cli_commands[];
extern const int cli_n_commands;
const cli_command *cli_find(const char *name);

/* Option lookup by long name. */
bool cli_flag(const cli_args *a, const char *name);
const char *cli_value(const cli_args *a, const char *name);
int cli_values(const cli_args *a, const char *name, const char ***values);

/* cli-util.c: a registry from the plugin search path and the user's
 * settings (disabled_plugins, plugin_paths in config.json), with a note on
 * stderr when no plugin loads; caller frees with st_registry_free. */
st_registry *cli_registry(void);
/* The same without the note. */
st_registry *cli_registry_quiet(void);
/* Loads a model, printing load errors to stderr. Caller frees the graph. */
st_graph *cli_load_model(const st_registry *r, const char *path);
/* Formats counts as 1.23 k / M / G (flops, params) and bytes as KiB/MiB/GiB. */
void cli_human_count(double v, char *buf, int size);
/* The same as st_human_bytes, by the name the subcommands use. */
void cli_human_bytes(double v, char *buf, int size);
/* Prints a cJSON tree to stdout and frees it. */
void cli_print_json(cJSON *root);
/* Loads the n reports a->argv[1..n] names into reports, printing why one
 * cannot be read. Returns EXIT_OK or EXIT_USAGE; free each report with
 * st_report_free either way. */
typedef struct st_report st_report;
int cli_load_reports(const cli_args *a, int n, st_report *reports);
/* --top N of strata report, or fallback when not given; -1 after a message
 * when it is not a positive whole number. */
int cli_report_top(const cli_args *a, int fallback);

/* cli-plan.c: a model ready to run, from the options run and inspect share. */
typedef struct cli_plan {
	st_registry *registry;
	st_graph *graph;
	st_plan *plan;
	st_tensor *fed; /* the inputs as given, one per input layer */
	int n_fed;
} cli_plan;
/* Loads and checks a->argv[0], compiles it (with every layer's output
 * kept when keep_outputs; cancel stops a run between layers), binds its
 * weights and sets its inputs, printing each problem as "strata CMD: ...".
 * Returns EXIT_OK, or the exit status to end with. Free cp with
 * cli_plan_free either way. */
int cli_plan_prepare(const cli_args *a, const char *cmd, bool keep_outputs, volatile sig_atomic_t *cancel,
                     cli_plan *cp);
/* The same for the model file path (not necessarily a->argv[0]), with
 * seeded random data for every input given no file when random_inputs. */
int cli_plan_prepare_model(const cli_args *a, const char *cmd, const char *path, bool keep_outputs, bool random_inputs,
                           volatile sig_atomic_t *cancel, cli_plan *cp);
void cli_plan_free(cli_plan *cp);
/* The weights folder the model file model (its graph g) runs with:
 * --weights as given, else the model's own 'weights' setting kept inside
 * its folder (unless --allow-outside-paths), else none (*dir NULL).
 * Returns EXIT_OK, or EXIT_USAGE after a message. Caller frees *dir. */
int cli_weights_dir(const cli_args *a, const char *cmd, const char *model, const st_graph *g, char **dir);
/* Splits "name=path" (the name only when it is an identifier): *name is
 * NULL or the caller's to free, *path points into arg. */
void cli_split_binding(const char *arg, char **name, const char **path);
bool cli_has_suffix(const char *s, const char *suffix);
/* A whole number from lo to hi, or -1 after a message naming the option. */
int cli_parse_count(const char *cmd, const char *text, const char *what, long lo, long hi, long *out);

/* The subcommands (cmd-*.c). */
int cli_cmd_check(const cli_args *a);
int cli_cmd_info(const cli_args *a);
int cli_cmd_layers(const cli_args *a);
int cli_cmd_plugins(const cli_args *a);
int cli_cmd_devices(const cli_args *a);
int cli_cmd_new(const cli_args *a);
int cli_cmd_run(const cli_args *a);
int cli_cmd_inspect(const cli_args *a);
int cli_cmd_import(const cli_args *a);
int cli_cmd_export(const cli_args *a);
int cli_cmd_edit(const cli_args *a);
int cli_cmd_help(const cli_args *a);
int cli_cmd_version(const cli_args *a);
int cli_cmd_report(const cli_args *a);
int cli_cmd_xwn(const cli_args *a);

/* cmd-help.c */
void cli_print_usage(FILE *out);
void cli_print_command_help(const cli_command *c, FILE *out);

#endif
