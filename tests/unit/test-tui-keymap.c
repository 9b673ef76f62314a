/* Unit tests: key names, and the key map from defaults and keys files. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "st-tui.h"

/* A small action table of our own (the application's is tui-actions.c). */
static const st_action actions[] = {
	{ "global.save", "<C-s>", "save", ":w" },
	{ "global.quit", "q <C-q>", "quit", ":q" },
	{ "global.help", "? <F1>", "help", NULL },
	{ "canvas.add", "a", "add a layer", NULL },
	{ "canvas.delete", "d <Del>", "delete", NULL },
	{ "canvas.left", "h <Left>", "move left", NULL },
	{ "canvas.move_left", "H <S-Left>", "move the glyph left", NULL },
	{ "palette.add", "a <Enter>", "add the type", NULL },
	{ "palette.filter", "/", "filter", NULL },
};
#define N_ACTIONS ((int)(sizeof actions / sizeof actions[0]))

static const char *
norm(const char *text)
{
	static char out[32];
	if (!st_key_normalise(text, out, sizeof out))
		return NULL;
	return out;
}

Test(tui_keymap, key_names_normalise)
{
	static const char *const cases[][2] = {
		{ "a", "a" }, { "A", "A" }, { "?", "?" }, { ":", ":" }, { "#", "#" }, { ">", ">" },
		{ "é", "é" }, { "形", "形" }, { " ", "<Space>" }, { "<", "<lt>" },
		{ "<lt>", "<lt>" }, { "<LT>", "<lt>" }, { "<gt>", ">" }, { "<Bar>", "|" },
		{ "<bslash>", "\\" }, { "<Space>", "<Space>" }, { "<space>", "<Space>" },
		{ "<C-s>", "<C-s>" }, { "<c-s>", "<C-s>" }, { "<C-S>", "<C-s>" }, { "<c-S>", "<C-s>" },
		{ "<M-x>", "<M-x>" }, { "<A-x>", "<M-x>" }, { "<m-X>", "<M-X>" },
		{ "<S-a>", "A" }, { "<s-A>", "A" }, { "<M-S-x>", "<M-X>" }, { "<S-M-x>", "<M-X>" },
		{ "<C-S-s>", "<C-S-s>" }, { "<S-C-S>", "<C-S-s>" },
		{ "<S-Up>", "<S-Up>" }, { "<s-up>", "<S-Up>" }, { "<C-S-Left>", "<C-S-Left>" },
		{ "<S-C-left>", "<C-S-Left>" }, { "<M-C-S-Right>", "<C-M-S-Right>" },
		{ "<Enter>", "<Enter>" }, { "<CR>", "<Enter>" }, { "<cr>", "<Enter>" },
		{ "<Return>", "<Enter>" }, { "<Esc>", "<Esc>" }, { "<Escape>", "<Esc>" },
		{ "<Tab>", "<Tab>" }, { "<S-Tab>", "<S-Tab>" }, { "<BS>", "<BS>" },
		{ "<Backspace>", "<BS>" }, { "<Del>", "<Del>" }, { "<Delete>", "<Del>" },
		{ "<Home>", "<Home>" }, { "<End>", "<End>" }, { "<PageUp>", "<PageUp>" },
		{ "<PgUp>", "<PageUp>" }, { "<pagedown>", "<PageDown>" }, { "<PgDn>", "<PageDown>" },
		{ "<Insert>", "<Insert>" }, { "<Ins>", "<Insert>" },
		{ "<F1>", "<F1>" }, { "<f10>", "<F10>" }, { "<F12>", "<F12>" }, { "<S-F5>", "<S-F5>" },
		{ "<C-->", "<C-->" }, { "<M->>", "<M->>" }, { "<M-lt>", "<M-lt>" }, { "<M-<>", "<M-lt>" },
		{ "<a>", "a" }, { "<C-1>", "<C-1>" }, { "<S-1>", "<S-1>" }, { "<C-Space>", "<C-Space>" },
		{ "<C-é>", "<C-é>" }, { "<F>", "F" }, { "<C-[>", "<C-[>" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *got = norm(cases[i][0]);
		cr_assert_not_null(got, "'%s' was refused", cases[i][0]);
		cr_assert_str_eq(got, cases[i][1], "'%s' gives '%s', expected '%s'", cases[i][0], got,
		                 cases[i][1]);
		/* The canonical form is its own canonical form. */
		char twice[32];
		cr_assert(st_key_normalise(cases[i][1], twice, sizeof twice), "'%s'", cases[i][1]);
		cr_assert_str_eq(twice, cases[i][1]);
	}
	static const char *const bad[] = {
		"", "ab", "<>", "<C-s", "C-s", "<X-s>", "<C-C-s>", "<F0>", "<F25>", "<F01>", "<Fx>",
		"<Nope>", "<C->", "<C-ab>", "\t", "\x7f", "\xff", "\xc3", "<\xff>", "<C-\x01>",
		"<C-S-M-C-x>", "\xc2\x9b", "aé",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		cr_assert_null(norm(bad[i]), "'%s' was accepted as '%s'", bad[i], norm(bad[i]));
	char small[5];
	cr_assert_not(st_key_normalise("<C-Left>", small, sizeof small));
	cr_assert_str_eq(small, "");
	cr_assert(st_key_normalise("<lt>", small, sizeof small));
	cr_assert_not(st_key_normalise(NULL, small, sizeof small));
	cr_assert_not(st_key_normalise("a", NULL, 3));
	cr_assert_not(st_key_normalise("a", small, 0));
}

Test(tui_keymap, defaults_and_lookup_by_scope)
{
	st_keymap km;
	cr_assert_eq(st_keymap_init(&km, actions, N_ACTIONS), 0);
	cr_assert_eq(km.n_actions, N_ACTIONS);
	cr_assert_str_eq(km.keys[1][0], "q");
	cr_assert_str_eq(km.keys[1][1], "<C-q>");
	cr_assert_null(km.keys[1][2]);
	cr_assert_eq(st_keymap_lookup(&km, "<C-s>", "global."), 0);
	cr_assert_eq(st_keymap_lookup(&km, "<c-S>", NULL), 0); /* looked up normalised */
	cr_assert_eq(st_keymap_lookup(&km, "a", "canvas."), 3);
	cr_assert_eq(st_keymap_lookup(&km, "a", "palette."), 7);
	cr_assert_eq(st_keymap_lookup(&km, "a", ""), 3);
	cr_assert_eq(st_keymap_lookup(&km, "<CR>", "palette."), 7);
	cr_assert_eq(st_keymap_lookup(&km, "<Enter>", "canvas."), -1);
	cr_assert_eq(st_keymap_lookup(&km, "<S-Left>", "canvas."), 6);
	cr_assert_eq(st_keymap_lookup(&km, "z", NULL), -1);
	cr_assert_eq(st_keymap_lookup(&km, "not a key", NULL), -1);
	st_keymap_clear(&km);
	cr_assert_eq(km.n_actions, 0);
	cr_assert_null(km.keys);
	st_keymap_clear(&km);

	/* A default that is no key name is left out and reported. */
	static const st_action broken[] = { { "x.y", "a <Nope> b", "", NULL }, { "x.z", NULL, "", NULL } };
	cr_assert_eq(st_keymap_init(&km, broken, 2), -1);
	cr_assert_str_eq(km.keys[0][0], "a");
	cr_assert_str_eq(km.keys[0][1], "b");
	cr_assert_null(km.keys[1][0]);
	st_keymap_clear(&km);
}

static int
parse(st_keymap *km, const char *text, st_diag *d)
{
	st_diag_init(d);
	st_keymap_init(km, actions, N_ACTIONS);
	return st_keymap_parse(km, text, strlen(text), "keys.conf", d);
}

Test(tui_keymap, a_keys_file_replaces_defaults)
{
	st_keymap km;
	st_diag d;
	cr_assert_eq(parse(&km, "# my keys\n"
	                        "\n"
	                        "global.save = <C-s> <F2>  s\r\n"
	                        "  canvas.delete=x\n"
	                        "global.help =\n"
	                        "canvas.add = # a\n",
	                   &d), 0);
	cr_assert_eq(d.count, 0);
	cr_assert_eq(st_keymap_lookup(&km, "<F2>", "global."), 0);
	cr_assert_eq(st_keymap_lookup(&km, "s", "global."), 0);
	cr_assert_eq(st_keymap_lookup(&km, "x", "canvas."), 4);
	cr_assert_eq(st_keymap_lookup(&km, "d", "canvas."), -1); /* replaced, not added to */
	cr_assert_eq(st_keymap_lookup(&km, "?", "global."), -1); /* unbound */
	cr_assert_null(km.keys[2][0]);
	cr_assert_eq(st_keymap_lookup(&km, "#", "canvas."), 3);
	cr_assert_eq(st_keymap_lookup(&km, "a", "canvas."), 3);
	st_keymap_clear(&km);
	st_diag_free(&d);
}

Test(tui_keymap, a_key_the_file_gives_is_taken_from_defaults_of_its_scope)
{
	st_keymap km;
	st_diag d;
	/* "h" goes to canvas.add: canvas.left loses it, but keeps <Left>;
	 * "/" in canvas does not touch palette.filter. */
	cr_assert_eq(parse(&km, "canvas.add = h /\n", &d), 0);
	cr_assert_eq(st_keymap_lookup(&km, "h", "canvas."), 3);
	cr_assert_str_eq(km.keys[5][0], "<Left>");
	cr_assert_null(km.keys[5][1]);
	cr_assert_eq(st_keymap_lookup(&km, "/", "palette."), 8);
	/* global.quit's q is another scope's. */
	st_keymap_clear(&km);
	st_diag_free(&d);
	cr_assert_eq(parse(&km, "canvas.add = q\n", &d), 0);
	cr_assert_eq(st_keymap_lookup(&km, "q", "global."), 1);
	cr_assert_eq(st_keymap_lookup(&km, "q", "canvas."), 3);
	st_keymap_clear(&km);
	st_diag_free(&d);
}

Test(tui_keymap, an_action_bound_twice_warns_and_the_last_counts)
{
	st_keymap km;
	st_diag d;
	cr_assert_eq(parse(&km, "global.quit = Q\nglobal.quit = <C-c>\n", &d), 0);
	cr_assert_eq(d.warnings, 1);
	cr_assert_eq(d.items[0].line, 2);
	cr_assert(strstr(d.items[0].text, "first on line 1") != NULL);
	cr_assert_eq(st_keymap_lookup(&km, "<C-c>", NULL), 1);
	cr_assert_eq(st_keymap_lookup(&km, "Q", NULL), -1);
	st_keymap_clear(&km);
	st_diag_free(&d);
}

/* Asserts that text fails with its first error at line:col holding part. */
static void
assert_error(const char *text, int line, int col, const char *part)
{
	st_keymap km;
	st_diag d;
	cr_assert_eq(parse(&km, text, &d), -1, "'%s' was accepted", text);
	cr_assert(d.errors >= 1);
	cr_assert_str_eq(d.items[0].file, "keys.conf");
	cr_assert_eq(d.items[0].line, line, "'%s': line %d, expected %d", text, d.items[0].line, line);
	cr_assert_eq(d.items[0].col, col, "'%s': column %d, expected %d", text, d.items[0].col, col);
	cr_assert(strstr(d.items[0].text, part) != NULL, "'%s': message '%s' lacks '%s'", text,
	          d.items[0].text, part);
	st_keymap_clear(&km);
	st_diag_free(&d);
}

Test(tui_keymap, every_error_names_file_and_line)
{
	assert_error("\nglobal.save <C-s>\n", 2, 1, "expected 'action = key ...'");
	assert_error("  = a\n", 1, 3, "an action name is missing");
	assert_error("global.sace = s\n", 1, 1, "unknown action 'global.sace'; did you mean 'global.save'?");
	assert_error("canvas.delte = x\n", 1, 1, "did you mean 'canvas.delete'?");
	assert_error("something.else = x\n", 1, 1, "unknown action 'something.else'");
	assert_error("global.save = C-s\n", 1, 15, "modifiers go in brackets");
	assert_error("global.save = <C-s\n", 1, 15, "ends with '>'");
	assert_error("global.save = <Ctrl-s>\n", 1, 15, "known names:");
	assert_error("global.save = ss\n", 1, 15, "key sequences are not supported");
	assert_error("global.save = s # save\n", 1, 19, "comments take whole lines");
	assert_error("global.save = <C-C-s>\n", 1, 15, "bad key name '<C-C-s>'");
	assert_error("global.save = \x01\n", 1, 15, "bad key name '?'");
	assert_error("canvas.add = z\ncanvas.delete = z\n", 2, 1,
	             "z is bound to both 'canvas.add' (line 1) and 'canvas.delete'");

	/* A refused line changes nothing, even its good keys. */
	st_keymap km;
	st_diag d;
	cr_assert_eq(parse(&km, "global.save = <F2> <Nope>\ncanvas.add = A\n", &d), -1);
	cr_assert_eq(st_keymap_lookup(&km, "<F2>", NULL), -1);
	cr_assert_eq(st_keymap_lookup(&km, "<C-s>", NULL), 0);
	cr_assert_eq(st_keymap_lookup(&km, "A", NULL), 3); /* good lines still count */
	st_keymap_clear(&km);
	st_diag_free(&d);

	/* A NUL byte: binary data. */
	st_diag_init(&d);
	st_keymap_init(&km, actions, N_ACTIONS);
	cr_assert_eq(st_keymap_parse(&km, "global.save = s\nx\0y", 19, "keys.conf", &d), -1);
	cr_assert_eq(d.items[0].line, 2);
	cr_assert_eq(d.items[0].col, 2);
	cr_assert(strstr(d.items[0].text, "NUL") != NULL);
	st_keymap_clear(&km);
	st_diag_free(&d);

	/* Every bad line is reported. */
	cr_assert_eq(parse(&km, "a = b\nc = d\nglobal.save = nope\n", &d), -1);
	cr_assert_eq(d.errors, 3);
	st_keymap_clear(&km);
	st_diag_free(&d);
}

Test(tui_keymap, load_reads_keys_conf_from_the_config_folder)
{
	char *home = test_temp_dir("keys");
	setenv("XDG_CONFIG_HOME", home, 1);
	st_keymap km;
	st_diag d;
	st_diag_init(&d);
	st_keymap_init(&km, actions, N_ACTIONS);
	cr_assert_eq(st_keymap_load(&km, &d), 0); /* no file: the defaults */
	cr_assert_eq(st_keymap_lookup(&km, "<C-s>", NULL), 0);
	char *dir = st_xasprintf("%s/strata", home);
	cr_assert_eq(mkdir(dir, 0700), 0);
	char *path = st_xasprintf("%s/keys.conf", dir);
	char err[256];
	cr_assert_eq(st_write_file_atomic(path, "global.save = <F2>\n", 19, err, sizeof err), 0);
	cr_assert_eq(st_keymap_load(&km, &d), 0);
	cr_assert_eq(st_keymap_lookup(&km, "<F2>", NULL), 0);
	cr_assert_eq(st_write_file_atomic(path, "global.sav = <F2>\n", 18, err, sizeof err), 0);
	cr_assert_eq(st_keymap_load(&km, &d), -1);
	cr_assert_str_eq(d.items[0].file, path);
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(mkdir(path, 0700), 0);
	cr_assert_eq(st_keymap_load(&km, &d), -1);
	cr_assert(strstr(d.items[d.count - 1].text, "cannot read the key map") != NULL);
	cr_assert_eq(rmdir(path), 0);
	st_keymap_clear(&km);
	st_diag_free(&d);
	free(path);
	free(dir);
	test_remove_dir(home);
}
