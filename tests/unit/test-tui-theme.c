/* Unit tests: theme files, the themes shipped, finding themes, and bringing
 * colours down to what a terminal shows. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "helpers.h"
#include "st-tui.h"

static const char *const shipped[] = { "dark", "light", "high-contrast", "16-colour" };

static char *
theme_path(const char *name)
{
	const char *top = getenv("top_srcdir");
	return st_xasprintf("%s/themes/%s.theme", top ? top : ST_SOURCE_DIR, name);
}

/* Parses text; returns the theme (NULL on errors) with the messages in d. */
static st_theme *
parse(const char *text, st_diag *d)
{
	st_diag_init(d);
	return st_theme_parse(text, strlen(text), "t.theme", d);
}

/* Asserts that text fails with one error at line:col whose text holds part. */
static void
assert_error(const char *text, int line, int col, const char *part)
{
	st_diag d;
	st_theme *t = parse(text, &d);
	cr_assert_null(t, "'%s' parsed", text);
	cr_assert_eq(d.errors, 1, "'%s': %d errors", text, d.errors);
	cr_assert_str_eq(d.items[0].file, "t.theme");
	cr_assert_eq(d.items[0].line, line, "'%s': line %d, expected %d", text, d.items[0].line, line);
	cr_assert_eq(d.items[0].col, col, "'%s': column %d, expected %d", text, d.items[0].col, col);
	cr_assert(strstr(d.items[0].text, part) != NULL, "'%s': message '%s' lacks '%s'", text,
	          d.items[0].text, part);
	st_diag_free(&d);
}

Test(tui_theme, every_shipped_theme_parses_and_sets_every_role)
{
	for (size_t i = 0; i < sizeof shipped / sizeof shipped[0]; i++) {
		char *path = theme_path(shipped[i]);
		size_t len;
		char *text = st_read_file(path, &len);
		cr_assert_not_null(text, "cannot read %s", path);
		st_diag d;
		st_diag_init(&d);
		st_theme *t = st_theme_parse(text, len, path, &d);
		if (d.count > 0)
			st_diag_print(&d, stderr);
		cr_assert_not_null(t, "%s does not parse", path);
		cr_assert_eq(d.count, 0, "%s has %d messages", path, d.count);
		cr_assert_str_eq(t->name, shipped[i]);
		/* Every role is written out, not left to the default. */
		for (int r = 0; r <= ST_ROLE_COUNT; r++) {
			const char *role = r < ST_ROLE_COUNT ? st_role_names[r] : "background";
			char *needle = st_xasprintf("\n%s ", role);
			char *needle2 = st_xasprintf("\n%s=", role);
			cr_assert(strstr(text, needle) != NULL || strstr(text, needle2) != NULL,
			          "%s does not set '%s'", path, role);
			free(needle);
			free(needle2);
		}
		st_theme_free(t);
		st_diag_free(&d);
		free(text);
		free(path);
	}
}

Test(tui_theme, role_names_are_unique_and_complete)
{
	for (int r = 0; r < ST_ROLE_COUNT; r++) {
		cr_assert_not_null(st_role_names[r], "role %d has no name", r);
		for (int q = 0; q < r; q++)
			cr_assert_str_neq(st_role_names[r], st_role_names[q]);
	}
	cr_assert_str_eq(st_role_names[ST_ROLE_LINK_IN], "link_in");
}

Test(tui_theme, the_builtin_default_is_dark_theme)
{
	char *path = theme_path("dark");
	size_t len;
	char *text = st_read_file(path, &len);
	cr_assert_not_null(text);
	st_diag d;
	st_diag_init(&d);
	st_theme *file = st_theme_parse(text, len, path, &d);
	st_theme *builtin = st_theme_default();
	cr_assert_not_null(file);
	cr_assert_str_eq(builtin->name, "dark");
	cr_assert_eq(file->background, builtin->background);
	for (int r = 0; r < ST_ROLE_COUNT; r++)
		cr_assert(st_style_equal(&file->roles[r], &builtin->roles[r]),
		          "role %s differs between dark.theme and the built-in default", st_role_names[r]);
	/* The sketch's colours: yellow into the selected layer, blue out of it. */
	st_color in = st_color_downgrade(builtin->roles[ST_ROLE_LINK_IN].fg, ST_DEPTH_16);
	st_color out = st_color_downgrade(builtin->roles[ST_ROLE_LINK_OUT].fg, ST_DEPTH_16);
	cr_assert(in == ST_COLOR_INDEX(3) || in == ST_COLOR_INDEX(11), "link_in is not yellow");
	cr_assert(out == ST_COLOR_INDEX(4) || out == ST_COLOR_INDEX(12) || out == ST_COLOR_INDEX(6) ||
	          out == ST_COLOR_INDEX(14), "link_out is not blue");
	st_theme_free(file);
	st_theme_free(builtin);
	st_diag_free(&d);
	free(text);
	free(path);
}

Test(tui_theme, sixteen_colour_theme_uses_only_ansi_colours)
{
	char *path = theme_path("16-colour");
	size_t len;
	char *text = st_read_file(path, &len);
	st_diag d;
	st_diag_init(&d);
	st_theme *t = st_theme_parse(text, len, path, &d);
	cr_assert_not_null(t);
	cr_assert_eq(t->background, ST_COLOR_DEFAULT);
	for (int r = 0; r < ST_ROLE_COUNT; r++) {
		st_color c[2] = { t->roles[r].fg, t->roles[r].bg };
		for (int k = 0; k < 2; k++) {
			cr_assert(c[k] == ST_COLOR_DEFAULT ||
			          (ST_COLOR_KIND(c[k]) == 1 && (c[k] & 0xffu) < 16),
			          "role %s uses a colour outside the 16", st_role_names[r]);
			/* Backgrounds keep to the first eight (the Linux console). */
			if (k == 1 && c[k] != ST_COLOR_DEFAULT)
				cr_assert((c[k] & 0xffu) < 8, "role %s has a bright background", st_role_names[r]);
		}
	}
	st_theme_free(t);
	st_diag_free(&d);
	free(text);
	free(path);
}

Test(tui_theme, parses_colours_attributes_and_comments)
{
	st_diag d;
	st_theme *t = parse("# a comment\n"
	                    "  \n"
	                    "background = #102030\r\n"
	                    "text = #FFaa00 on 17 bold underline  # trailing comment\n"
	                    "dim=bright-black dim italic\n"
	                    "selected = on blue reverse\n"
	                    "error = Bright-Red\n"
	                    "\t# indented comment\n"
	                    "link_in = default on default\n"
	                    "title = bold",
	                    &d);
	cr_assert_not_null(t);
	cr_assert_eq(d.count, 0);
	cr_assert_str_eq(t->name, "t");
	cr_assert_eq(t->background, ST_COLOR_RGB(0x10, 0x20, 0x30));
	cr_assert_eq(t->roles[ST_ROLE_TEXT].fg, ST_COLOR_RGB(0xff, 0xaa, 0x00));
	cr_assert_eq(t->roles[ST_ROLE_TEXT].bg, ST_COLOR_INDEX(17));
	cr_assert_eq(t->roles[ST_ROLE_TEXT].attrs, ST_ATTR_BOLD | ST_ATTR_UNDERLINE);
	cr_assert_eq(t->roles[ST_ROLE_DIM].fg, ST_COLOR_INDEX(8));
	cr_assert_eq(t->roles[ST_ROLE_DIM].attrs, ST_ATTR_DIM | ST_ATTR_ITALIC);
	cr_assert_eq(t->roles[ST_ROLE_SELECTED].fg, ST_COLOR_DEFAULT);
	cr_assert_eq(t->roles[ST_ROLE_SELECTED].bg, ST_COLOR_INDEX(4));
	cr_assert_eq(t->roles[ST_ROLE_SELECTED].attrs, ST_ATTR_REVERSE);
	cr_assert_eq(t->roles[ST_ROLE_ERROR].fg, ST_COLOR_INDEX(9));
	cr_assert_eq(t->roles[ST_ROLE_LINK_IN].fg, ST_COLOR_DEFAULT);
	cr_assert_eq(t->roles[ST_ROLE_TITLE].fg, ST_COLOR_DEFAULT);
	cr_assert_eq(t->roles[ST_ROLE_TITLE].attrs, ST_ATTR_BOLD);
	/* Roles left out take the built-in default. */
	st_theme *def = st_theme_default();
	cr_assert(st_style_equal(&t->roles[ST_ROLE_GRID], &def->roles[ST_ROLE_GRID]));
	cr_assert(st_style_equal(&t->roles[ST_ROLE_INPUT], &def->roles[ST_ROLE_INPUT]));
	st_theme_free(def);
	st_theme_free(t);
	st_diag_free(&d);

	/* An empty theme is the default; no file name gives "custom". */
	st_diag_init(&d);
	t = st_theme_parse("", 0, NULL, &d);
	cr_assert_not_null(t);
	cr_assert_str_eq(t->name, "custom");
	st_theme_free(t);
	st_diag_free(&d);
}

Test(tui_theme, a_role_set_twice_warns_and_the_last_counts)
{
	st_diag d;
	st_theme *t = parse("text = red\ntext = green\n", &d);
	cr_assert_not_null(t);
	cr_assert_eq(d.errors, 0);
	cr_assert_eq(d.warnings, 1);
	cr_assert_eq(d.items[0].line, 2);
	cr_assert(strstr(d.items[0].text, "first on line 1") != NULL);
	cr_assert_eq(t->roles[ST_ROLE_TEXT].fg, ST_COLOR_INDEX(2));
	st_theme_free(t);
	st_diag_free(&d);
}

Test(tui_theme, every_error_names_file_line_and_column)
{
	assert_error("\ntxet = red\n", 2, 1, "unknown role 'txet'; did you mean 'text'?");
	assert_error("zzzzzzzzzz = red\n", 1, 1, "unknown role 'zzzzzzzzzz'");
	assert_error("text red\n", 1, 1, "expected 'role = colour ...'");
	assert_error("  = red\n", 1, 3, "a role name is missing");
	assert_error("text =\n", 1, 6, "'text' has no colour");
	assert_error("text = #12345\n", 1, 8, "six hex digits");
	assert_error("text = #1234567\n", 1, 8, "six hex digits");
	assert_error("text = #12345g\n", 1, 8, "six hex digits");
	assert_error("text = #comment\n", 1, 8, "six hex digits");
	assert_error("text = 256\n", 1, 8, "not between 0 and 255");
	assert_error("text = 99999999999999999999\n", 1, 8, "not between 0 and 255");
	assert_error("text = 12a\n", 1, 8, "neither a colour");
	assert_error("text = red bodl\n", 1, 12, "did you mean 'bold'?");
	assert_error("text = rde\n", 1, 8, "did you mean 'red'?");
	assert_error("text = red on\n", 1, 12, "'on' needs a background colour");
	assert_error("text = red on blu\n", 1, 15, "did you mean 'blue'?");
	assert_error("text = red on #12\n", 1, 15, "six hex digits");
	assert_error("text = red on blue on green\n", 1, 20, "two background colours");
	assert_error("text = red green\n", 1, 12, "out of place");
	assert_error("text = bold red\n", 1, 13, "out of place");
	assert_error("background = red blue\n", 1, 14, "'background' takes one colour");
	assert_error("background =\n", 1, 12, "'background' takes one colour");
	assert_error("background = on\n", 1, 14, "'background' takes one colour");
	assert_error("background = 300\n", 1, 14, "not between 0 and 255");
	assert_error("text = red\n\n\x01\x02 = red\n", 3, 1, "unknown role '?" "?'");
	assert_error("text = a b c d e f g h i j k l m n o p q\n", 1, 38, "too many words");

	/* A NUL byte: binary data, wherever it is. */
	st_diag d;
	st_diag_init(&d);
	cr_assert_null(st_theme_parse("text = red\nab\0c", 15, "t.theme", &d));
	cr_assert_eq(d.items[0].line, 2);
	cr_assert_eq(d.items[0].col, 3);
	cr_assert(strstr(d.items[0].text, "NUL") != NULL);
	st_diag_free(&d);

	/* Every bad line is reported, not only the first. */
	st_diag_init(&d);
	cr_assert_null(st_theme_parse("a = red\nb = red\ntext = nope\n", 28, "t.theme", &d));
	cr_assert_eq(d.errors, 3);
	st_diag_free(&d);
}

Test(tui_theme, load_finds_user_then_installed_then_source_themes)
{
	char *home = test_temp_dir("theme");
	setenv("XDG_CONFIG_HOME", home, 1);
	setenv("top_srcdir", ST_SOURCE_DIR, 0);
	st_diag d;
	st_diag_init(&d);

	/* From the source tree (an uninstalled build). */
	st_theme *t = st_theme_load("light", &d);
	cr_assert_not_null(t);
	cr_assert_str_eq(t->name, "light");
	cr_assert_eq(t->background, ST_COLOR_RGB(0xfa, 0xfa, 0xfa));
	st_theme_free(t);
	t = st_theme_load(NULL, &d);
	cr_assert_str_eq(t->name, "dark");
	st_theme_free(t);

	/* A user's theme of the same name comes first. */
	char *dir = st_xasprintf("%s/strata/themes", home);
	char *strata = st_xasprintf("%s/strata", home);
	cr_assert_eq(mkdir(strata, 0700), 0);
	cr_assert_eq(mkdir(dir, 0700), 0);
	char *path = st_xasprintf("%s/light.theme", dir);
	char err[256];
	cr_assert_eq(st_write_file_atomic(path, "background = #000001\n", 21, err, sizeof err), 0);
	char *mine = st_xasprintf("%s/mine.theme", dir);
	cr_assert_eq(st_write_file_atomic(mine, "text = red\n", 11, err, sizeof err), 0);
	t = st_theme_load("light", &d);
	cr_assert_not_null(t);
	cr_assert_eq(t->background, ST_COLOR_RGB(0, 0, 1));
	st_theme_free(t);
	cr_assert_eq(d.count, 0);

	/* A path loads that file. */
	t = st_theme_load(mine, &d);
	cr_assert_not_null(t);
	cr_assert_str_eq(t->name, "mine");
	cr_assert_eq(t->roles[ST_ROLE_TEXT].fg, ST_COLOR_INDEX(1));
	st_theme_free(t);

	/* The list has the shipped themes and the user's, once each, sorted. */
	int n;
	char **names = st_theme_list(&n);
	cr_assert_eq(n, 5, "%d themes", n);
	cr_assert_str_eq(names[0], "16-colour");
	cr_assert_str_eq(names[1], "dark");
	cr_assert_str_eq(names[2], "high-contrast");
	cr_assert_str_eq(names[3], "light");
	cr_assert_str_eq(names[4], "mine");
	cr_assert_null(names[5]);
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);

	/* Unknown names, bad names, unreadable and broken files. */
	cr_assert_null(st_theme_load("lihgt", &d));
	cr_assert(strstr(d.items[d.count - 1].text, "did you mean 'light'?") != NULL, "%s",
	          d.items[d.count - 1].text);
	cr_assert_null(st_theme_load("qqqqqqqqqqqqq", &d));
	cr_assert(strstr(d.items[d.count - 1].text, "no theme called 'qqqqqqqqqqqqq'") != NULL);
	cr_assert_null(st_theme_load(".hidden", &d));
	cr_assert(strstr(d.items[d.count - 1].text, "is not a theme name") != NULL);
	cr_assert_null(st_theme_load("/nonexistent/x.theme", &d));
	cr_assert(strstr(d.items[d.count - 1].text, "cannot read the theme") != NULL);
	cr_assert_eq(st_write_file_atomic(mine, "text = nope\n", 12, err, sizeof err), 0);
	cr_assert_null(st_theme_load("mine", &d));
	cr_assert_eq(d.items[d.count - 1].line, 1);
	st_diag_free(&d);

	free(mine);
	free(path);
	free(strata);
	free(dir);
	test_remove_dir(home);
}

Test(tui_theme, dark_is_built_in_when_no_file_is_found)
{
	setenv("XDG_CONFIG_HOME", "/nonexistent", 1);
	/* The search still finds the source tree's dark.theme; either way the
	 * result is the same theme. */
	st_diag d;
	st_diag_init(&d);
	st_theme *t = st_theme_load("dark", &d);
	st_theme *def = st_theme_default();
	cr_assert_not_null(t);
	cr_assert_eq(t->background, def->background);
	st_theme_free(t);
	st_theme_free(def);
	st_theme_free(NULL);
	st_diag_free(&d);
}

/* ---- bringing colours down ---- */

static unsigned
down(st_color c, st_color_depth depth)
{
	st_color d = st_color_downgrade(c, depth);
	cr_assert(ST_COLOR_KIND(d) == 1, "colour %#x at depth %d is not indexed", c, depth);
	return d & 0xffu;
}

Test(tui_theme, downgrade_known_colours)
{
	static const struct {
		unsigned rgb;
		unsigned c256, c16, c8;
	} known[] = {
		{ 0xff0000, 196, 9, 1 },   /* pure red */
		{ 0x000000, 16, 0, 0 },    /* black */
		{ 0xffffff, 231, 15, 7 },  /* white */
		{ 0x808080, 244, 8, 7 },   /* mid grey: grey, never a hue */
		{ 0x5f87af, 67, 4, 4 },    /* a cube colour exactly */
		{ 0x1d2027, 235, 0, 0 },   /* dark's background */
		{ 0xc8ccd4, 252, 7, 7 },   /* dark's text */
		{ 0xe5c07b, 180, 11, 3 },  /* dark's link_in: yellow */
		{ 0x61afef, 75, 14, 6 },   /* dark's link_out: sky blue */
		{ 0x82aaff, 111, 12, 4 },  /* dark's focus: blue */
		{ 0x323846, 237, 0, 0 },   /* dark's selection: goes reverse on 16 */
		{ 0x98c379, 108, 2, 2 },   /* green */
		{ 0xfafafa, 231, 15, 7 },  /* light's background */
		{ 0x383a42, 237, 0, 0 },   /* light's text */
		{ 0x4078f2, 69, 12, 4 },   /* light's blue */
		{ 0x986801, 94, 3, 3 },    /* light's dark gold */
		{ 0xff8800, 208, 11, 3 },  /* orange: yellow's side */
		{ 0x800080, 90, 5, 5 },    /* purple */
		{ 0x008080, 30, 6, 6 },    /* teal */
	};
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
		unsigned v = known[i].rgb;
		st_color c = ST_COLOR_RGB(v >> 16, (v >> 8) & 0xff, v & 0xff);
		cr_assert_eq(down(c, ST_DEPTH_256), known[i].c256, "#%06x at 256: %u, expected %u", v,
		             down(c, ST_DEPTH_256), known[i].c256);
		cr_assert_eq(down(c, ST_DEPTH_16), known[i].c16, "#%06x at 16: %u, expected %u", v,
		             down(c, ST_DEPTH_16), known[i].c16);
		cr_assert_eq(down(c, ST_DEPTH_8), known[i].c8, "#%06x at 8: %u, expected %u", v,
		             down(c, ST_DEPTH_8), known[i].c8);
		cr_assert_eq(st_color_downgrade(c, ST_DEPTH_TRUE), c);
		cr_assert_eq(st_color_downgrade(c, ST_DEPTH_MONO), ST_COLOR_DEFAULT);
	}
}

Test(tui_theme, downgrade_indexed_colours)
{
	/* xterm's 256 colours, rebuilt here: each index's RGB value comes back
	 * to that index at 256 colours. */
	static const unsigned ansi[16] = {
		0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd, 0x00cdcd, 0xe5e5e5,
		0x7f7f7f, 0xff0000, 0x00ff00, 0xffff00, 0x5c5cff, 0xff00ff, 0x00ffff, 0xffffff,
	};
	static const unsigned levels[6] = { 0, 95, 135, 175, 215, 255 };
	for (unsigned i = 0; i < 256; i++) {
		unsigned r, g, b;
		if (i < 16) {
			r = ansi[i] >> 16;
			g = (ansi[i] >> 8) & 0xff;
			b = ansi[i] & 0xff;
		} else if (i < 232) {
			r = levels[(i - 16) / 36];
			g = levels[((i - 16) / 6) % 6];
			b = levels[(i - 16) % 6];
		} else {
			r = g = b = 8 + 10 * (i - 232);
		}
		st_color rgb = ST_COLOR_RGB(r, g, b);
		if (i >= 16)
			cr_assert_eq(down(rgb, ST_DEPTH_256), i, "index %u's colour comes back as %u", i,
			             down(rgb, ST_DEPTH_256));
		else
			cr_assert_eq(down(rgb, ST_DEPTH_16), i, "ANSI %u's colour comes back as %u", i,
			             down(rgb, ST_DEPTH_16));
		/* Indexed colours stay while the depth has them. */
		cr_assert_eq(down(ST_COLOR_INDEX(i), ST_DEPTH_256), i);
		cr_assert_eq(st_color_downgrade(ST_COLOR_INDEX(i), ST_DEPTH_TRUE), ST_COLOR_INDEX(i));
		if (i < 16)
			cr_assert_eq(down(ST_COLOR_INDEX(i), ST_DEPTH_16), i);
		if (i < 8)
			cr_assert_eq(down(ST_COLOR_INDEX(i), ST_DEPTH_8), i);
		cr_assert(down(ST_COLOR_INDEX(i), ST_DEPTH_16) < 16);
		cr_assert(down(ST_COLOR_INDEX(i), ST_DEPTH_8) < 8);
		cr_assert_eq(st_color_downgrade(ST_COLOR_INDEX(i), ST_DEPTH_MONO), ST_COLOR_DEFAULT);
	}
	/* Bright colours become their normal ones with 8; bright black, a grey, white. */
	for (unsigned i = 9; i < 16; i++)
		cr_assert_eq(down(ST_COLOR_INDEX(i), ST_DEPTH_8), i - 8);
	cr_assert_eq(down(ST_COLOR_INDEX(8), ST_DEPTH_8), 7);
	cr_assert_eq(down(ST_COLOR_INDEX(196), ST_DEPTH_16), 9);
	cr_assert_eq(down(ST_COLOR_INDEX(196), ST_DEPTH_8), 1);
	cr_assert_eq(down(ST_COLOR_INDEX(244), ST_DEPTH_16), 8);
	cr_assert_eq(down(ST_COLOR_INDEX(21), ST_DEPTH_16), 12); /* 0000ff */
	/* The default stays the default; nonsense kinds become it. */
	for (int depth = ST_DEPTH_MONO; depth <= ST_DEPTH_TRUE; depth++) {
		cr_assert_eq(st_color_downgrade(ST_COLOR_DEFAULT, (st_color_depth)depth), ST_COLOR_DEFAULT);
		cr_assert_eq(st_color_downgrade(0x05000000u, (st_color_depth)depth), ST_COLOR_DEFAULT);
	}
}
