/* Unit tests: the screen model (cells, widths, clipping, glyphs, boxes). */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "st-tui.h"

/* Row y of the dump (without its newline); caller frees. */
static char *
row(const st_screen *s, int y)
{
	char *dump = st_screen_dump(s);
	char *p = dump;
	for (int i = 0; i < y && p != NULL; i++) {
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	char *out = st_xstrndup(p ? p : "", p ? strcspn(p, "\n") : 0);
	free(dump);
	return out;
}

#define assert_row(s, y, text)                                                                 \
	do {                                                                                   \
		char *got_ = row((s), (y));                                                    \
		cr_assert_str_eq(got_, (text), "row %d is '%s', expected '%s'", (y), got_, (text)); \
		free(got_);                                                                    \
	} while (0)

/* Every wide character is followed by its continuation, and every
 * continuation follows a wide character; every cell holds a NUL. */
static void
assert_cells_sound(const st_screen *s)
{
	for (int y = 0; y < s->h; y++) {
		for (int x = 0; x < s->w; x++) {
			const st_cell *c = &s->cells[y * s->w + x];
			cr_assert(memchr(c->ch, '\0', sizeof c->ch) != NULL, "cell %d,%d unterminated", x, y);
			cr_assert(c->width <= 2, "cell %d,%d has width %d", x, y, c->width);
			if (c->width == 2) {
				cr_assert(x + 1 < s->w, "a wide character in the last column at row %d", y);
				cr_assert_eq(c[1].width, 0, "wide character at %d,%d without continuation", x, y);
			}
			if (c->width == 0) {
				cr_assert(x > 0 && c[-1].width == 2, "orphan continuation at %d,%d", x, y);
				cr_assert_str_eq(c->ch, "");
			}
			if (c->width == 1)
				cr_assert(c->ch[0] != '\0', "empty narrow cell at %d,%d", x, y);
		}
	}
}

static const st_style red = { ST_COLOR_INDEX(1), ST_COLOR_DEFAULT, ST_ATTR_BOLD };

Test(tui_screen, new_screen_is_blank)
{
	st_screen *s = st_screen_new(4, 2);
	char *dump = st_screen_dump(s);
	cr_assert_str_eq(dump, "\n\n");
	free(dump);
	cr_assert_eq(s->clip.w, 4);
	cr_assert_eq(s->clip.h, 2);
	cr_assert_str_eq(st_screen_at(s, 3, 1)->ch, " ");
	cr_assert_null(st_screen_at(s, 4, 1));
	cr_assert_null(st_screen_at(s, -1, 0));
	cr_assert_null(st_screen_at(s, 0, 2));
	assert_cells_sound(s);
	st_screen_free(s);
	st_screen_free(NULL);
}

Test(tui_screen, text_writes_cells_with_style)
{
	st_screen *s = st_screen_new(10, 2);
	cr_assert_eq(st_screen_text(s, 1, 0, "abc", &red, -1), 3);
	assert_row(s, 0, " abc");
	cr_assert(st_style_equal(&st_screen_at(s, 2, 0)->style, &red));
	cr_assert_eq(st_screen_at(s, 0, 0)->style.fg, ST_COLOR_DEFAULT);
	/* max_cols limits; -1 runs to the clip's edge. */
	cr_assert_eq(st_screen_text(s, 0, 1, "abcdefghijkl", NULL, 4), 4);
	assert_row(s, 1, "abcd");
	cr_assert_eq(st_screen_text(s, 6, 1, "abcdefghijkl", NULL, -1), 4);
	assert_row(s, 1, "abcd  abcd");
	cr_assert_eq(st_screen_text(s, 0, 0, "", NULL, -1), 0);
	cr_assert_eq(st_screen_text(s, 0, 0, NULL, NULL, -1), 0);
	cr_assert_eq(st_screen_text(s, 0, 0, "x", NULL, 0), 0);
	st_screen_free(s);
}

Test(tui_screen, wide_characters_take_two_cells)
{
	cr_assert_eq(st_text_width("形状"), 4);
	cr_assert_eq(st_text_width("a×b"), 3);
	cr_assert_eq(st_text_width("🙂"), 2);
	cr_assert_eq(st_text_width("e\xcc\x81"), 1); /* e + combining acute */
	cr_assert_eq(st_text_width("\xe2\x80\x8b"), 0); /* zero-width space */
	cr_assert_eq(st_text_width(NULL), 0);

	st_screen *s = st_screen_new(8, 1);
	cr_assert_eq(st_screen_text(s, 0, 0, "a形b", NULL, -1), 4);
	cr_assert_str_eq(st_screen_at(s, 1, 0)->ch, "形");
	cr_assert_eq(st_screen_at(s, 1, 0)->width, 2);
	cr_assert_eq(st_screen_at(s, 2, 0)->width, 0);
	cr_assert_str_eq(st_screen_at(s, 3, 0)->ch, "b");
	assert_row(s, 0, "a形b");
	assert_cells_sound(s);

	/* A wide character that would pass the edge ends the text. */
	cr_assert_eq(st_screen_text(s, 5, 0, "x形", NULL, -1), 3);
	cr_assert_eq(st_screen_text(s, 6, 0, "形形", NULL, -1), 2);
	cr_assert_eq(st_screen_text(s, 7, 0, "形", NULL, -1), 0);
	cr_assert_eq(st_screen_text(s, 0, 0, "形形", NULL, 3), 2);
	assert_cells_sound(s);
	st_screen_free(s);
}

Test(tui_screen, overwriting_half_a_wide_character_blanks_the_other_half)
{
	st_screen *s = st_screen_new(6, 1);
	st_screen_text(s, 0, 0, "形状形", NULL, -1);
	st_screen_text(s, 1, 0, "x", &red, -1); /* the second half of 形 */
	assert_row(s, 0, " x状形");
	assert_cells_sound(s);
	st_screen_text(s, 2, 0, "y", &red, -1); /* the first half of 状 */
	assert_row(s, 0, " xy 形");
	assert_cells_sound(s);
	st_screen_text(s, 3, 0, "状", NULL, -1); /* wide over blank and half of 形 */
	assert_row(s, 0, " xy状");
	assert_cells_sound(s);
	st_screen_free(s);
}

Test(tui_screen, combining_characters_join_their_base)
{
	st_screen *s = st_screen_new(6, 1);
	cr_assert_eq(st_screen_text(s, 0, 0, "e\xcc\x81x", NULL, -1), 2);
	cr_assert_str_eq(st_screen_at(s, 0, 0)->ch, "e\xcc\x81");
	cr_assert_str_eq(st_screen_at(s, 1, 0)->ch, "x");
	/* With nothing before it in this text, a combining mark is dropped. */
	cr_assert_eq(st_screen_text(s, 3, 0, "\xcc\x81z", NULL, -1), 1);
	cr_assert_str_eq(st_screen_at(s, 3, 0)->ch, "z");
	/* Marks that do not fit the cell are dropped, never overflow it. */
	st_screen_text(s, 4, 0, "a\xcc\x81\xcc\x82\xcc\x83\xcc\x84\xcc\x85", NULL, -1);
	cr_assert_str_eq(st_screen_at(s, 4, 0)->ch, "a\xcc\x81\xcc\x82\xcc\x83");
	assert_cells_sound(s);
	st_screen_free(s);
}

Test(tui_screen, invalid_utf8_shows_as_replacement)
{
	static const char *const bad[] = {
		"\xff", "\xc0\xaf", "\xed\xa0\x80", "\xe2\x82", "\xf4\x90\x80\x80", "\x80", "\x1b", "\t", "\x7f",
		"\xc2\x9b",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		st_screen *s = st_screen_new(8, 1);
		int n = st_screen_text(s, 0, 0, bad[i], NULL, -1);
		cr_assert_eq(n, st_text_width(bad[i]), "case %zu: %d columns, width %d", i, n,
		             st_text_width(bad[i]));
		cr_assert_str_eq(st_screen_at(s, 0, 0)->ch, "\xef\xbf\xbd", "case %zu", i);
		s->ascii = true;
		st_screen_text(s, 0, 0, bad[i], NULL, -1);
		cr_assert_str_eq(st_screen_at(s, 0, 0)->ch, "?", "case %zu", i);
		assert_cells_sound(s);
		st_screen_free(s);
	}
	/* A truncated sequence does not swallow the text after it. */
	st_screen *s = st_screen_new(8, 1);
	cr_assert_eq(st_screen_text(s, 0, 0, "a\xe2\x82z", NULL, -1), 4);
	s->ascii = true;
	st_screen_text(s, 0, 0, "a\xe2\x82z", NULL, -1);
	assert_row(s, 0, "a??z");
	st_screen_free(s);
}

Test(tui_screen, clipping_at_every_edge)
{
	st_screen *s = st_screen_new(6, 4);
	/* The screen's own edges. */
	cr_assert_eq(st_screen_text(s, -2, 0, "abcd", NULL, 10), 4);
	cr_assert_eq(st_screen_text(s, 4, 1, "abcd", NULL, 10), 4);
	st_screen_text(s, 0, -1, "zzz", NULL, -1);
	st_screen_text(s, 0, 4, "zzz", NULL, -1);
	assert_row(s, 0, "cd");
	assert_row(s, 1, "    ab");
	assert_cells_sound(s);

	/* A clip rectangle inside: nothing leaks past any of its edges. */
	st_screen_clear(s, NULL);
	st_rect old = st_screen_set_clip(s, (st_rect){ 1, 1, 3, 2 });
	cr_assert_eq(old.w, 6);
	st_screen_fill(s, (st_rect){ -5, -5, 20, 20 }, "#", NULL);
	assert_row(s, 0, "");
	assert_row(s, 1, " ###");
	assert_row(s, 2, " ###");
	assert_row(s, 3, "");
	st_screen_text(s, 0, 1, "LEFT", NULL, 4);
	assert_row(s, 1, " EFT");
	st_screen_text(s, 3, 2, "RIGHT", NULL, 5);
	assert_row(s, 2, " ##R");
	st_screen_text(s, 1, 0, "TOP", NULL, -1);
	st_screen_text(s, 1, 3, "BOTTOM", NULL, -1);
	assert_row(s, 0, "");
	assert_row(s, 3, "");
	/* -1 columns runs to the clip's right edge. */
	cr_assert_eq(st_screen_text(s, 2, 1, "abcdef", NULL, -1), 2);
	cr_assert_eq(st_screen_text(s, 9, 1, "abcdef", NULL, -1), 0);

	/* Clips are cut to the screen; an empty one draws nothing. */
	st_screen_set_clip(s, (st_rect){ 4, 3, 100, 100 });
	cr_assert_eq(s->clip.x, 4);
	cr_assert_eq(s->clip.w, 2);
	cr_assert_eq(s->clip.h, 1);
	st_screen_set_clip(s, (st_rect){ 10, 10, 5, 5 });
	cr_assert_eq(s->clip.w, 0);
	char *before = st_screen_dump(s);
	st_screen_fill(s, (st_rect){ 0, 0, 6, 4 }, "x", NULL);
	st_screen_text(s, 0, 0, "text", NULL, -1);
	st_screen_box(s, (st_rect){ 0, 0, 6, 4 }, NULL, "title", NULL);
	char *after = st_screen_dump(s);
	cr_assert_str_eq(before, after);
	free(before);
	free(after);
	st_screen_free(s);
}

Test(tui_screen, wide_characters_cut_by_the_clip_leave_blanks)
{
	st_screen *s = st_screen_new(6, 1);
	st_screen_fill(s, (st_rect){ 0, 0, 6, 1 }, "#", NULL);
	st_screen_set_clip(s, (st_rect){ 1, 0, 4, 1 });
	/* 形 at column 0 shows only its second half, at column 1: a blank. */
	cr_assert_eq(st_screen_text(s, 0, 0, "形ab形", NULL, 6), 6);
	assert_row(s, 0, "# ab #");
	assert_cells_sound(s);
	st_screen_free(s);
}

Test(tui_screen, far_away_coordinates_are_harmless)
{
	st_screen *s = st_screen_new(5, 3);
	st_screen_text(s, INT_MIN, INT_MIN, "abc", NULL, -1);
	st_screen_text(s, INT_MAX, 1, "abc", NULL, -1);
	st_screen_text(s, INT_MAX - 1, 1, "形", NULL, INT_MAX);
	st_screen_text_fit(s, INT_MIN, 0, "abc", NULL, INT_MAX);
	st_screen_fill(s, (st_rect){ INT_MIN, INT_MIN, INT_MAX, INT_MAX }, "x", NULL);
	st_screen_fill(s, (st_rect){ INT_MAX - 2, 0, INT_MAX, 3 }, "x", NULL);
	st_screen_box(s, (st_rect){ INT_MAX - 3, INT_MAX - 3, INT_MAX, INT_MAX }, NULL, "t", NULL);
	st_screen_box(s, (st_rect){ INT_MIN, INT_MIN, 10, 10 }, NULL, "t", NULL);
	st_screen_set_clip(s, (st_rect){ INT_MIN, INT_MIN, INT_MAX, INT_MAX });
	st_screen_set_clip(s, (st_rect){ INT_MAX, INT_MAX, INT_MAX, INT_MAX });
	free(st_screen_row_text(s, INT_MAX - 2, 0, 5));
	free(st_screen_row_text(s, INT_MIN, 0, 5));
	assert_cells_sound(s);
	st_screen_free(s);
}

Test(tui_screen, text_fit_ends_with_an_ellipsis)
{
	st_screen *s = st_screen_new(12, 4);
	cr_assert_eq(st_screen_text_fit(s, 0, 0, "convolution", NULL, 11), 11);
	assert_row(s, 0, "convolution");
	cr_assert_eq(st_screen_text_fit(s, 0, 1, "convolution", NULL, 6), 6);
	assert_row(s, 1, "convo…");
	cr_assert_eq(st_screen_text_fit(s, 0, 2, "形状形状", NULL, 6), 5);
	assert_row(s, 2, "形状…");
	/* A wide character that does not fit before the ellipsis is left out. */
	cr_assert_eq(st_screen_text_fit(s, 0, 3, "a形状", NULL, 4), 4);
	assert_row(s, 3, "a形…");
	cr_assert_eq(st_screen_text_fit(s, 0, 3, "a形状", NULL, 3), 2);
	cr_assert_eq(st_screen_text_fit(s, 0, 3, "abc", NULL, 1), 1);
	cr_assert_eq(st_screen_text_fit(s, 0, 3, "abc", NULL, 0), 0);
	st_screen_clear(s, NULL);
	s->ascii = true;
	cr_assert_eq(st_screen_text_fit(s, 0, 0, "convolution", NULL, 6), 6);
	assert_row(s, 0, "con...");
	cr_assert_eq(st_screen_text_fit(s, 0, 1, "convolution", NULL, 2), 2);
	assert_row(s, 1, "..");
	/* -1: to the clip's edge. */
	cr_assert_eq(st_screen_text_fit(s, 4, 2, "convolution", NULL, -1), 8);
	assert_row(s, 2, "    convo...");
	assert_cells_sound(s);
	st_screen_free(s);
}

Test(tui_screen, every_glyph_has_both_tiers)
{
	st_screen *s = st_screen_new(4, 1);
	for (int g = 0; g < ST_G_COUNT; g++) {
		s->ascii = false;
		const char *u = st_glyph_text(s, (st_glyph)g);
		cr_assert_not_null(u, "glyph %d", g);
		cr_assert_eq(st_text_width(u), 1, "glyph %d (%s) is not one column", g, u);
		cr_assert((unsigned char)u[0] >= 0x80, "glyph %d has no UTF-8 form", g);
		s->ascii = true;
		const char *a = st_glyph_text(s, (st_glyph)g);
		cr_assert_not_null(a, "glyph %d", g);
		cr_assert(strlen(a) >= 1 && strlen(a) <= 3, "glyph %d", g);
		for (const char *p = a; *p; p++)
			cr_assert((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f, "glyph %d is not ASCII", g);
	}
	cr_assert_str_eq(st_glyph_text(NULL, ST_G_TL), "┌");
	cr_assert_str_eq(st_glyph_text(s, ST_G_COUNT), "?");
	cr_assert_str_eq(st_glyph_text(s, (st_glyph)-1), "?");
	s->ascii = false;
	cr_assert_str_eq(st_glyph_text(s, ST_G_ARROW_DOWN), "▽");
	cr_assert_str_eq(st_glyph_text(s, ST_G_OUTPUT), "●");
	cr_assert_str_eq(st_glyph_text(s, ST_G_ERROR), "✖");
	cr_assert_str_eq(st_glyph_text(s, ST_G_WARNING), "⚠");
	cr_assert_eq(st_screen_glyph(s, 0, 0, ST_G_CHECK_ON, NULL), 1);
	assert_row(s, 0, "☑");
	s->ascii = true;
	cr_assert_str_eq(st_glyph_text(s, ST_G_ARROW_DOWN), "v");
	cr_assert_str_eq(st_glyph_text(s, ST_G_OUTPUT), "o");
	cr_assert_str_eq(st_glyph_text(s, ST_G_WARNING), "!");
	cr_assert_eq(st_screen_glyph(s, 0, 0, ST_G_CHECK_ON, NULL), 3);
	assert_row(s, 0, "[x]");
	cr_assert_eq(st_screen_glyph(s, 2, 0, ST_G_CHECK_OFF, NULL), 3); /* clipped by the screen */
	assert_row(s, 0, "[x[");
	st_screen_free(s);
}

Test(tui_screen, boxes_with_titles)
{
	st_screen *s = st_screen_new(14, 4);
	st_screen_box(s, (st_rect){ 0, 0, 14, 4 }, NULL, "1 Palette", &red);
	assert_row(s, 0, "┌1 Palette ──┐");
	assert_row(s, 1, "│            │");
	assert_row(s, 3, "└────────────┘");
	cr_assert(st_style_equal(&st_screen_at(s, 1, 0)->style, &red));
	/* A long title is cut with an ellipsis and keeps one line after it. */
	st_screen_box(s, (st_rect){ 0, 0, 10, 3 }, NULL, "1 Palette", NULL);
	assert_row(s, 0, "┌1 Pale… ┐ ──┐");
	st_screen_clear(s, NULL);
	s->ascii = true;
	st_screen_box(s, (st_rect){ 1, 1, 6, 3 }, NULL, "Canvas", NULL);
	assert_row(s, 1, " +... +");
	assert_row(s, 2, " |    |");
	assert_row(s, 3, " +----+");
	/* Degenerate sizes draw lines, or nothing. */
	st_screen_clear(s, NULL);
	st_screen_box(s, (st_rect){ 0, 0, 5, 1 }, NULL, "x", NULL);
	st_screen_box(s, (st_rect){ 6, 0, 1, 3 }, NULL, NULL, NULL);
	st_screen_box(s, (st_rect){ 8, 0, 2, 2 }, NULL, "x", NULL);
	st_screen_box(s, (st_rect){ 0, 2, 0, 5 }, NULL, "x", NULL);
	assert_row(s, 0, "----- | ++");
	assert_row(s, 1, "      | ++");
	assert_row(s, 2, "      |");
	/* A box bigger than the screen is clipped. */
	st_screen_clear(s, NULL);
	st_screen_box(s, (st_rect){ -1, -1, 20, 20 }, NULL, "t", NULL);
	assert_row(s, 0, "");
	assert_cells_sound(s);
	st_screen_free(s);
}

Test(tui_screen, fill_keeps_wide_characters_on_their_grid)
{
	st_screen *s = st_screen_new(7, 2);
	st_screen_fill(s, (st_rect){ 0, 0, 7, 1 }, "形", &red);
	assert_row(s, 0, "形形形");
	assert_cells_sound(s);
	st_screen_set_clip(s, (st_rect){ 1, 1, 6, 1 });
	st_screen_fill(s, (st_rect){ 0, 1, 7, 1 }, "形", NULL);
	assert_row(s, 1, "  形形");
	assert_cells_sound(s);
	st_screen_set_clip(s, (st_rect){ 0, 0, 7, 2 });
	st_screen_fill(s, (st_rect){ 0, 0, 7, 2 }, NULL, NULL);
	assert_row(s, 0, "");
	st_screen_fill(s, (st_rect){ 0, 0, 2, 1 }, "\xcc\x81", NULL); /* zero-width: a blank */
	st_screen_fill(s, (st_rect){ 2, 0, 2, 1 }, "\xff", NULL);
	st_screen_fill(s, (st_rect){ 4, 0, 1, 1 }, "ab", NULL); /* the first character */
	assert_row(s, 0, "  \xef\xbf\xbd\xef\xbf\xbd" "a");
	st_screen_free(s);
}

Test(tui_screen, resize_keeps_what_fits)
{
	st_screen *s = st_screen_new(6, 2);
	st_screen_text(s, 0, 0, "ab形cd", &red, -1);
	st_screen_text(s, 0, 1, "second", NULL, -1);
	st_screen_set_clip(s, (st_rect){ 1, 1, 1, 1 });
	st_screen_resize(s, 3, 3);
	cr_assert_eq(s->clip.w, 3);
	cr_assert_eq(s->clip.h, 3);
	assert_row(s, 0, "ab"); /* 形 lost its second half */
	assert_row(s, 1, "sec");
	assert_row(s, 2, "");
	assert_cells_sound(s);
	st_screen_resize(s, 8, 1);
	assert_row(s, 0, "ab");
	st_screen_resize(s, 0, 0);
	char *dump = st_screen_dump(s);
	cr_assert_str_eq(dump, "");
	free(dump);
	st_screen_text(s, 0, 0, "x", NULL, -1);
	st_screen_fill(s, (st_rect){ 0, 0, 1, 1 }, "x", NULL);
	st_screen_resize(s, -3, 2);
	cr_assert_eq(s->w, 0);
	st_screen_free(s);
}

Test(tui_screen, row_text_dump_and_printf)
{
	st_screen *s = st_screen_new(8, 2);
	cr_assert_eq(st_screen_printf(s, 1, 0, NULL, "%d×%d", 3, 3), 3);
	st_screen_text(s, 5, 0, "形", NULL, -1);
	char *t = st_screen_row_text(s, 0, 0, 8);
	cr_assert_str_eq(t, " 3×3 形 ");
	free(t);
	t = st_screen_row_text(s, 6, 0, 2); /* starts on the second half */
	cr_assert_str_eq(t, "  ");
	free(t);
	t = st_screen_row_text(s, 4, 0, 2); /* ends on the first half */
	cr_assert_str_eq(t, "  ");
	free(t);
	t = st_screen_row_text(s, -2, 0, 4);
	cr_assert_str_eq(t, "   3");
	free(t);
	t = st_screen_row_text(s, 0, 5, 4);
	cr_assert_str_eq(t, "");
	free(t);
	char *dump = st_screen_dump(s);
	cr_assert_str_eq(dump, " 3×3 形\n\n");
	free(dump);
	st_screen_free(s);
}

Test(tui_screen, clear_styles_every_cell)
{
	st_screen *s = st_screen_new(3, 2);
	st_screen_set_clip(s, (st_rect){ 0, 0, 1, 1 });
	st_screen_clear(s, &red);
	for (int i = 0; i < 6; i++)
		cr_assert(st_style_equal(&s->cells[i].style, &red));
	st_style other = red;
	other.attrs = 0;
	cr_assert_not(st_style_equal(&red, &other));
	st_screen_free(s);
}

/* Random drawing with random text (valid, invalid, wide, combining) and
 * random clips never breaks the cells. */
Test(tui_screen, random_drawing_keeps_cells_sound)
{
	static const char *const pieces[] = {
		"a", "形", "\xcc\x81", "\xff", "\xe2\x82", "🙂", " ", "\t", "×", "\xf0\x9f", "é", "\xe2\x80\x8b",
	};
	unsigned seed = 12345;
	st_screen *s = st_screen_new(13, 5);
	for (int round = 0; round < 3000; round++) {
		seed = seed * 1103515245u + 12345u;
		char text[64] = "";
		int n = (int)(seed >> 16) % 8;
		for (int i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			strcat(text, pieces[(seed >> 16) % (sizeof pieces / sizeof pieces[0])]);
		}
		seed = seed * 1103515245u + 12345u;
		int x = (int)((seed >> 8) % 19) - 3, y = (int)((seed >> 16) % 9) - 2;
		int what = (int)((seed >> 24) % 6);
		s->ascii = (seed & 1) != 0;
		switch (what) {
		case 0: st_screen_text(s, x, y, text, NULL, (int)(seed % 9) - 1); break;
		case 1: st_screen_text_fit(s, x, y, text, NULL, (int)(seed % 9) - 1); break;
		case 2: st_screen_fill(s, (st_rect){ x, y, (int)(seed % 7), 2 }, text, NULL); break;
		case 3: st_screen_box(s, (st_rect){ x, y, (int)(seed % 9), (int)(seed % 5) }, NULL, text, NULL); break;
		case 4: st_screen_set_clip(s, (st_rect){ x, y, (int)(seed % 11), (int)(seed % 4) + 1 }); break;
		default: st_screen_glyph(s, x, y, (st_glyph)(seed % ST_G_COUNT), NULL); break;
		}
		assert_cells_sound(s);
	}
	st_screen_free(s);
}

Test(tui_screen, quoted_snippets_are_printable_and_cut_between_characters)
{
	char q[64];
	st_quote_snippet("a\x01" "b\xff" "c", 5, q, sizeof q);
	cr_assert_str_eq(q, "a?b?c");
	st_quote_snippet("3×3 形", strlen("3×3 形"), q, sizeof q);
	cr_assert_str_eq(q, "3×3 形");
	/* 39 ASCII bytes and a 2-byte character: the character would end past
	 * byte 40, so the cut comes before it. */
	char long_text[64];
	memset(long_text, 'x', 39);
	memcpy(long_text + 39, "×yz", 4);
	st_quote_snippet(long_text, 43, q, sizeof q);
	cr_assert_eq(strlen(q), 42);
	cr_assert_str_eq(q + 39, "...");
	/* A small buffer is never overrun. */
	char tiny[8];
	st_quote_snippet("abcdefghijkl", 12, tiny, sizeof tiny);
	cr_assert_str_eq(tiny, "abcd...");
	int len;
	cr_assert_eq(st_utf8_decode((const unsigned char *)"\xe5\xbd\xa2", 2, &len), -1, "cut short");
	cr_assert_eq(st_utf8_decode((const unsigned char *)"\xe5\xbd\xa2", 3, &len), 0x5f62);
	cr_assert_eq(len, 3);
	cr_assert_eq(st_utf8_decode((const unsigned char *)"\xc0\x80", 2, &len), -1, "overlong");
}
