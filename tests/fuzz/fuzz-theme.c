/* libFuzzer target for theme files, and for the screen model drawing their
 * lines: parsing never crashes, a parsed theme holds only valid colours
 * that come down to every depth within range, and drawing any bytes keeps
 * the cells sound and inside the grid. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st-tui.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_colour(st_color c)
{
	unsigned kind = ST_COLOR_KIND(c);
	if (kind > 2 || (kind == 0 && c != ST_COLOR_DEFAULT) || (kind == 1 && (c & 0x00ffff00u))) {
		fprintf(stderr, "a theme holds the colour %#x\n", c);
		abort();
	}
	static const int limits[] = { 0, 8, 16, 256 };
	for (int depth = ST_DEPTH_MONO; depth <= ST_DEPTH_TRUE; depth++) {
		st_color d = st_color_downgrade(c, (st_color_depth)depth);
		bool ok = depth == ST_DEPTH_TRUE ? d == c
		          : depth == ST_DEPTH_MONO ? d == ST_COLOR_DEFAULT
		          : d == ST_COLOR_DEFAULT ? c == ST_COLOR_DEFAULT
		                                  : ST_COLOR_KIND(d) == 1 && (int)(d & 0xffu) < limits[depth];
		if (!ok) {
			fprintf(stderr, "colour %#x comes down to %#x at depth %d\n", c, d, depth);
			abort();
		}
	}
}

/* Every wide cell is followed by its continuation and nothing else is. */
static void
check_cells(const st_screen *s)
{
	for (int y = 0; y < s->h; y++) {
		for (int x = 0; x < s->w; x++) {
			const st_cell *c = &s->cells[y * s->w + x];
			bool bad = memchr(c->ch, '\0', sizeof c->ch) == NULL || c->width > 2 ||
			           (c->width == 2 && (x + 1 >= s->w || c[1].width != 0)) ||
			           (c->width == 0 && (x == 0 || c[-1].width != 2));
			if (bad) {
				fprintf(stderr, "cell %d,%d is broken\n", x, y);
				abort();
			}
		}
	}
}

static void
draw_lines(const uint8_t *data, size_t size)
{
	st_screen *s = st_screen_new(17, 6);
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	int y = -1, x = (int)(size % 7) - 3;
	for (char *line = text; line != NULL && y < 8; y++) {
		char *next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		s->ascii = (y & 1) != 0;
		int n = st_screen_text(s, x, y, line, NULL, -1);
		if (n < 0 || n > 17 - x + 3) {
			fprintf(stderr, "text took %d columns\n", n);
			abort();
		}
		st_screen_text_fit(s, 2, y + 1, line, NULL, 9);
		st_screen_fill(s, (st_rect){ x, y, 5, 2 }, line, NULL);
		st_screen_box(s, (st_rect){ x - 1, y - 1, 12, 4 }, NULL, line, NULL);
		st_screen_set_clip(s, (st_rect){ y, x, 9, 4 });
		(void)st_text_width(line);
		check_cells(s);
		line = next;
	}
	free(st_screen_dump(s));
	free(st_screen_row_text(s, x, 1, 20));
	st_screen_free(s);
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	st_diag d;
	st_diag_init(&d);
	st_theme *t = st_theme_parse((const char *)data, size, "fuzz.theme", &d);
	if (t != NULL) {
		check_colour(t->background);
		for (int r = 0; r < ST_ROLE_COUNT; r++) {
			check_colour(t->roles[r].fg);
			check_colour(t->roles[r].bg);
			if (t->roles[r].attrs & ~0x1fu)
				abort();
		}
		if (d.errors != 0)
			abort();
		st_theme_free(t);
	} else if (d.errors == 0) {
		fprintf(stderr, "a theme was refused without an error\n");
		abort();
	}
	st_diag_free(&d);
	draw_lines(data, size);
	return 0;
}
