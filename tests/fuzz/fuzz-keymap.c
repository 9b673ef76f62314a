/* libFuzzer target for keys files and key names: parsing never crashes,
 * every key bound is canonical and found by lookup, and every line that
 * normalises as a key name normalises to itself again. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st-tui.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const st_action actions[] = {
	{ "global.save", "<C-s>", "save", ":w" },
	{ "global.quit", "q <C-q>", "quit", ":q" },
	{ "global.help", "? <F1>", "help", NULL },
	{ "canvas.add", "a", "add a layer", NULL },
	{ "canvas.delete", "d <Del>", "delete", NULL },
	{ "canvas.left", "h <Left>", "move left", NULL },
	{ "palette.add", "a <Enter>", "add the type", NULL },
	{ "palette.filter", "/", "filter", NULL },
};
#define N_ACTIONS ((int)(sizeof actions / sizeof actions[0]))

static void
check_name(const char *text)
{
	char once[32], twice[32];
	if (!st_key_normalise(text, once, sizeof once))
		return;
	if (!st_key_normalise(once, twice, sizeof twice) || strcmp(once, twice) != 0) {
		fprintf(stderr, "'%s' normalises to '%s', which does not normalise to itself\n", text, once);
		abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	st_keymap km;
	st_diag d;
	st_diag_init(&d);
	st_keymap_init(&km, actions, N_ACTIONS);
	int rc = st_keymap_parse(&km, (const char *)data, size, "fuzz.conf", &d);
	if ((rc != 0) != (d.errors != 0))
		abort();
	for (int a = 0; a < km.n_actions; a++) {
		for (char **k = km.keys[a]; *k; k++) {
			check_name(*k);
			char canon[32];
			if (!st_key_normalise(*k, canon, sizeof canon) || strcmp(canon, *k) != 0) {
				fprintf(stderr, "action %s holds the key '%s'\n", actions[a].name, *k);
				abort();
			}
			/* Lookup in the action's own scope finds it, or another action
			 * of that scope bound to the same key earlier in the table. */
			size_t scope = (size_t)(strrchr(actions[a].name, '.') - actions[a].name) + 1;
			char prefix[32];
			snprintf(prefix, sizeof prefix, "%.*s", (int)scope, actions[a].name);
			int found = st_keymap_lookup(&km, *k, prefix);
			if (found < 0 || found > a) {
				fprintf(stderr, "'%s' of %s is not found (%d)\n", *k, actions[a].name, found);
				abort();
			}
		}
	}
	st_keymap_clear(&km);
	st_diag_free(&d);

	/* Each line, and each word, as a key name. */
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	for (char *line = text; line != NULL;) {
		char *next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		check_name(line);
		for (char *w = strtok(line, " \t"); w != NULL; w = strtok(NULL, " \t"))
			check_name(w);
		line = next;
	}
	free(text);
	return 0;
}
