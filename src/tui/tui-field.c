/* One-line text fields: the command line, prompts and parameter editing. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tui-app.h"

void
st_field_set(st_field *f, const char *text)
{
	snprintf(f->text, sizeof f->text, "%s", text ? text : "");
	f->cursor = (int)strlen(f->text);
	f->history_at = f->n_history;
}

void
st_field_free(st_field *f)
{
	for (int i = 0; i < f->n_history; i++)
		free(f->history[i]);
	free(f->history);
	memset(f, 0, sizeof *f);
}

void
st_field_remember(st_field *f)
{
	if (f->text[0] == '\0')
		return;
	if (f->n_history > 0 && strcmp(f->history[f->n_history - 1], f->text) == 0) {
		f->history_at = f->n_history;
		return;
	}
	/* A bounded history: the oldest entries go first. */
	if (f->n_history == 200) {
		free(f->history[0]);
		memmove(&f->history[0], &f->history[1], sizeof *f->history * 199);
		f->n_history--;
	}
	f->history = st_xreallocarray(f->history, (size_t)f->n_history + 1, sizeof *f->history);
	f->history[f->n_history++] = st_xstrdup(f->text);
	f->history_at = f->n_history;
}

/* Start of the UTF-8 character before byte offset i. */
static int
prev_char(const char *s, int i)
{
	if (i <= 0)
		return 0;
	i--;
	while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80)
		i--;
	return i;
}

static int
next_char(const char *s, int i)
{
	int n = (int)strlen(s);
	if (i >= n)
		return n;
	i++;
	while (i < n && ((unsigned char)s[i] & 0xC0) == 0x80)
		i++;
	return i;
}

static void
insert(st_field *f, const char *text)
{
	size_t len = strlen(f->text), add = strlen(text);
	if (len + add + 1 > sizeof f->text)
		add = sizeof f->text - len - 1;
	/* Never cut a UTF-8 sequence in half. */
	while (add > 0 && ((unsigned char)text[add] & 0xC0) == 0x80)
		add--;
	memmove(f->text + f->cursor + add, f->text + f->cursor, len - (size_t)f->cursor + 1);
	memcpy(f->text + f->cursor, text, add);
	f->cursor += (int)add;
}

static void
erase(st_field *f, int from, int to)
{
	if (from >= to)
		return;
	memmove(f->text + from, f->text + to, strlen(f->text) - (size_t)to + 1);
	f->cursor = from;
}

bool
st_field_key(st_field *f, const st_key *k)
{
	if (k->kind == ST_KEY_PASTE && k->text) {
		/* A pasted line break would run the command: keep one line. */
		char *one = st_xstrdup(k->text);
		for (char *p = one; *p; p++) {
			if (*p == '\n' || *p == '\r' || *p == '\t')
				*p = ' ';
		}
		insert(f, one);
		free(one);
		return true;
	}
	if (k->kind != ST_KEY_KEY)
		return false;
	const char *n = k->name;
	if (strcmp(n, "<Space>") == 0) {
		insert(f, " ");
	} else if (n[0] != '<' || strcmp(n, "<lt>") == 0) {
		insert(f, n[0] == '<' ? "<" : n);
	} else if (strcmp(n, "<BS>") == 0 || strcmp(n, "<C-h>") == 0) {
		erase(f, prev_char(f->text, f->cursor), f->cursor);
	} else if (strcmp(n, "<Del>") == 0 || strcmp(n, "<C-d>") == 0) {
		int end = next_char(f->text, f->cursor);
		int at = f->cursor;
		erase(f, at, end);
		f->cursor = at;
	} else if (strcmp(n, "<Left>") == 0 || strcmp(n, "<C-b>") == 0) {
		f->cursor = prev_char(f->text, f->cursor);
	} else if (strcmp(n, "<Right>") == 0 || strcmp(n, "<C-f>") == 0) {
		f->cursor = next_char(f->text, f->cursor);
	} else if (strcmp(n, "<Home>") == 0 || strcmp(n, "<C-a>") == 0) {
		f->cursor = 0;
	} else if (strcmp(n, "<End>") == 0 || strcmp(n, "<C-e>") == 0) {
		f->cursor = (int)strlen(f->text);
	} else if (strcmp(n, "<C-u>") == 0) {
		erase(f, 0, f->cursor);
	} else if (strcmp(n, "<C-k>") == 0) {
		f->text[f->cursor] = '\0';
	} else if (strcmp(n, "<C-w>") == 0) {
		/* The word before the cursor, and the spaces after it. */
		int i = f->cursor;
		while (i > 0 && f->text[i - 1] == ' ')
			i--;
		while (i > 0 && f->text[i - 1] != ' ')
			i--;
		erase(f, i, f->cursor);
	} else if (strcmp(n, "<Up>") == 0 || strcmp(n, "<Down>") == 0) {
		if (f->n_history == 0)
			return true;
		bool up = n[1] == 'U';
		if (up && f->history_at > 0)
			f->history_at--;
		else if (!up && f->history_at < f->n_history)
			f->history_at++;
		const char *t = f->history_at < f->n_history ? f->history[f->history_at] : "";
		snprintf(f->text, sizeof f->text, "%s", t);
		f->cursor = (int)strlen(f->text);
	} else {
		return false;
	}
	return true;
}

void
st_field_draw(const st_field *f, st_screen *s, int x, int y, int w, const st_style *style,
              const st_style *cursor, bool focused)
{
	if (w <= 0)
		return;
	st_screen_fill(s, (st_rect){ x, y, w, 1 }, " ", style);
	/* Scroll so that the cursor stays in view: drop characters from the left
	 * until the text before the cursor fits. */
	char before_text[sizeof f->text];
	memcpy(before_text, f->text, (size_t)f->cursor);
	before_text[f->cursor] = '\0';
	int skip = 0, before = st_text_width(before_text);
	while (before > w - 1 && before_text[skip]) {
		skip = next_char(before_text, skip);
		before = st_text_width(before_text + skip);
	}
	const char *start = f->text + skip;
	st_screen_text(s, x, y, start, style, w);
	if (focused) {
		char under[8] = " ";
		if (f->text[f->cursor]) {
			int len = next_char(f->text, f->cursor) - f->cursor;
			memcpy(under, f->text + f->cursor, (size_t)len);
			under[len] = '\0';
		}
		st_screen_text(s, x + before, y, under, cursor, 1);
	}
}
