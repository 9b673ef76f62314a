/* Key names ("<C-s>", "<S-Tab>", "A") in one canonical form, and the key
 * map: each action's keys from the defaults and the user's keys.conf. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "st-tui.h"

/* ---- key names ----
 *
 * The canonical form: a printable character stands for itself ("a", "A",
 * "?", "é"), except '<' which is "<lt>" and the space bar, "<Space>". Other
 * keys and keys with modifiers are bracketed: modifiers C (Ctrl), M (Alt or
 * Meta) and S (Shift) in that order, then the key: "<C-s>", "<M-x>",
 * "<C-S-Left>", "<S-Tab>", "<F10>". Shift with a letter is the upper-case
 * letter ("<S-a>" is "A", "<M-S-x>" is "<M-X>"); with Ctrl, letters are
 * lower-case since terminals send the same byte for both. Names are read
 * without regard to case, with aliases: <CR> and <Return> for <Enter>,
 * <Escape>, <Backspace>, <Delete>, <PgUp>, <PgDn>, <Ins>, <A-x> for <M-x>,
 * <gt>, <Bar> and <Bslash> for '>', '|' and '\'.
 */

typedef struct key_name {
	const char *name;     /* canonical */
	const char *aliases;  /* space separated, lower case */
} key_name;

static const key_name named_keys[] = {
	{ "Enter", "enter cr return" },
	{ "Esc", "esc escape" },
	{ "Tab", "tab" },
	{ "BS", "bs backspace" },
	{ "Del", "del delete" },
	{ "Insert", "insert ins" },
	{ "Home", "home" },
	{ "End", "end" },
	{ "PageUp", "pageup pgup" },
	{ "PageDown", "pagedown pgdn pgdown" },
	{ "Up", "up" },
	{ "Down", "down" },
	{ "Left", "left" },
	{ "Right", "right" },
	{ "Space", "space" },
};

/* Characters that have a bracketed name of their own. */
static const struct {
	const char *name;
	char ch;
} char_names[] = {
	{ "lt", '<' }, { "gt", '>' }, { "bar", '|' }, { "bslash", '\\' },
};

#define MOD_C 1
#define MOD_M 2
#define MOD_S 4

/* Whether [s, s+n) is exactly one printable character other than space. */
static bool
one_printable(const char *s, size_t n)
{
	int len;
	int32_t cp = st_utf8_decode((const unsigned char *)s, n, &len);
	return cp > 0x20 && cp != 0x7f && !(cp >= 0x80 && cp < 0xa0) && (size_t)len == n;
}

static bool
alias_matches(const char *aliases, const char *s, size_t n)
{
	for (const char *p = aliases; *p;) {
		const char *e = strchr(p, ' ');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && strncasecmp(p, s, n) == 0)
			return true;
		p += len;
		while (*p == ' ')
			p++;
	}
	return false;
}

/* Appends to out (size bytes); false when it does not fit. */
static bool
append(char *out, size_t size, size_t *at, const char *s, size_t n)
{
	if (*at + n + 1 > size)
		return false;
	memcpy(out + *at, s, n);
	*at += n;
	out[*at] = '\0';
	return true;
}

bool
st_key_normalise(const char *text, char *out, size_t size)
{
	if (text == NULL || out == NULL || size == 0)
		return false;
	size_t n = strlen(text), at = 0;
	out[0] = '\0';
	if (n == 0)
		return false;
	if (strcmp(text, " ") == 0)
		return append(out, size, &at, "<Space>", 7);
	if (strcmp(text, "<") == 0)
		return append(out, size, &at, "<lt>", 4);
	if (text[0] != '<' || text[n - 1] != '>' || n < 3)
		return one_printable(text, n) && append(out, size, &at, text, n);

	/* <MODS-KEY> */
	const char *p = text + 1, *end = text + n - 1;
	int mods = 0;
	while (end - p >= 3 && p[1] == '-') {
		int m = 0;
		switch (p[0]) {
		case 'C': case 'c': m = MOD_C; break;
		case 'M': case 'm': case 'A': case 'a': m = MOD_M; break;
		case 'S': case 's': m = MOD_S; break;
		default: break;
		}
		if (m == 0)
			break;
		if (mods & m)
			return false; /* "<C-C-x>" */
		mods |= m;
		p += 2;
	}
	size_t klen = (size_t)(end - p);
	char ch[8] = "";
	const char *named = NULL;
	if (klen == 0)
		return false;
	if (one_printable(p, klen)) {
		memcpy(ch, p, klen);
		ch[klen] = '\0';
	} else {
		for (size_t i = 0; i < sizeof char_names / sizeof char_names[0] && !ch[0]; i++) {
			if (strlen(char_names[i].name) == klen && strncasecmp(char_names[i].name, p, klen) == 0)
				ch[0] = char_names[i].ch;
		}
		for (size_t i = 0; i < sizeof named_keys / sizeof named_keys[0] && !ch[0] && !named; i++) {
			if (alias_matches(named_keys[i].aliases, p, klen))
				named = named_keys[i].name;
		}
		if (!ch[0] && !named && (p[0] == 'F' || p[0] == 'f') && klen >= 2 && klen <= 3) {
			int num = 0;
			for (size_t i = 1; i < klen; i++) {
				if (p[i] < '0' || p[i] > '9')
					return false;
				num = num * 10 + (p[i] - '0');
			}
			static const char *const fkeys[] = {
				"F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9", "F10", "F11", "F12",
				"F13", "F14", "F15", "F16", "F17", "F18", "F19", "F20", "F21", "F22", "F23", "F24",
			};
			if (num < 1 || num > 24 || p[1] == '0')
				return false;
			named = fkeys[num - 1];
		}
		if (!ch[0] && !named)
			return false;
	}
	if (ch[0] != '\0' && ch[1] == '\0') {
		char c = ch[0];
		bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
		if (letter && (mods & MOD_C)) {
			if (c >= 'A' && c <= 'Z')
				ch[0] = (char)(c - 'A' + 'a');
		} else if (letter && (mods & MOD_S)) {
			if (c >= 'a' && c <= 'z')
				ch[0] = (char)(c - 'a' + 'A');
			mods &= ~MOD_S;
		}
	}
	if (mods == 0 && named == NULL) {
		if (strcmp(ch, "<") == 0)
			return append(out, size, &at, "<lt>", 4);
		return append(out, size, &at, ch, strlen(ch));
	}
	bool ok = append(out, size, &at, "<", 1);
	if (mods & MOD_C)
		ok = ok && append(out, size, &at, "C-", 2);
	if (mods & MOD_M)
		ok = ok && append(out, size, &at, "M-", 2);
	if (mods & MOD_S)
		ok = ok && append(out, size, &at, "S-", 2);
	if (named != NULL)
		ok = ok && append(out, size, &at, named, strlen(named));
	else if (strcmp(ch, "<") == 0)
		ok = ok && append(out, size, &at, "lt", 2);
	else
		ok = ok && append(out, size, &at, ch, strlen(ch));
	ok = ok && append(out, size, &at, ">", 1);
	if (!ok)
		out[0] = '\0';
	return ok;
}

/* ---- the key map ---- */

static void
free_keys(char **keys)
{
	if (keys == NULL)
		return;
	for (char **k = keys; *k; k++)
		free(*k);
	free(keys);
}

static int
count_keys(char **keys)
{
	int n = 0;
	while (keys != NULL && keys[n] != NULL)
		n++;
	return n;
}

static bool
has_key(char **keys, const char *key)
{
	for (int i = 0; keys != NULL && keys[i] != NULL; i++)
		if (strcmp(keys[i], key) == 0)
			return true;
	return false;
}

/* Adds key (already canonical) to a NULL-terminated list unless present. */
static char **
add_key(char **keys, const char *key)
{
	if (has_key(keys, key))
		return keys;
	int n = count_keys(keys);
	keys = st_xreallocarray(keys, (size_t)n + 2, sizeof *keys);
	keys[n] = st_xstrdup(key);
	keys[n + 1] = NULL;
	return keys;
}

static void
remove_key(char **keys, const char *key)
{
	int n = count_keys(keys), out = 0;
	for (int i = 0; i < n; i++) {
		if (strcmp(keys[i], key) == 0)
			free(keys[i]);
		else
			keys[out++] = keys[i];
	}
	if (keys != NULL)
		keys[out] = NULL;
}

int
st_keymap_init(st_keymap *km, const st_action *actions, int n)
{
	int rc = 0;
	km->n_actions = n;
	km->actions = actions;
	km->keys = st_xcalloc((size_t)n + 1, sizeof *km->keys);
	for (int a = 0; a < n; a++) {
		char **keys = st_xcalloc(1, sizeof *keys);
		const char *p = actions[a].keys != NULL ? actions[a].keys : "";
		while (*p) {
			while (*p == ' ')
				p++;
			const char *e = p;
			while (*e && *e != ' ')
				e++;
			if (e > p) {
				char *word = st_xstrndup(p, (size_t)(e - p));
				char key[32];
				if (st_key_normalise(word, key, sizeof key))
					keys = add_key(keys, key);
				else
					rc = -1; /* a bad default: tests of the action table catch it */
				free(word);
			}
			p = e;
		}
		km->keys[a] = keys;
	}
	return rc;
}

void
st_keymap_clear(st_keymap *km)
{
	if (km->keys != NULL) {
		for (int a = 0; a < km->n_actions; a++)
			free_keys(km->keys[a]);
		free(km->keys);
	}
	km->keys = NULL;
	km->n_actions = 0;
	km->actions = NULL;
}

/* The part of an action name that says where it applies: "canvas." of
 * "canvas.add"; "" when it has no dot. */
static size_t
scope_length(const char *name)
{
	const char *dot = strrchr(name, '.');
	return dot != NULL ? (size_t)(dot - name) + 1 : 0;
}

static bool
same_scope(const char *a, const char *b)
{
	size_t n = scope_length(a);
	return n == scope_length(b) && strncmp(a, b, n) == 0;
}

typedef struct keys_line {
	int action;    /* -1 when the line was refused */
	int line, col;
	char **keys;
} keys_line;

/* Why word is not a key name, as a hint completing "bad key name 'x'". */
static const char *
key_hint(const char *word, bool after_hash)
{
	if (after_hash)
		return "; comments take whole lines (a lone '#' is the # key)";
	size_t n = strlen(word);
	if (n >= 3 && word[0] != '<' && word[1] == '-' && strchr("CcMmAaSs", word[0]) != NULL)
		return "; modifiers go in brackets: <C-x>";
	if (word[0] == '<' && word[n - 1] != '>')
		return "; a bracketed name ends with '>'";
	if (word[0] == '<')
		return "; known names: Enter Esc Tab BS Del Insert Home End PageUp PageDown Up Down Left "
		       "Right Space F1-F24 lt, with modifiers C- M- S-";
	return "; a key is one character or a <Name>, and key sequences are not supported";
}

int
st_keymap_parse(st_keymap *km, const char *text, size_t len, const char *file, st_diag *d)
{
	int errors = 0;
	keys_line *lines = NULL;
	int n_lines = 0;
	int line_no = 0;
	const char *p = text, *end = text + len;
	const char *nul = memchr(text, '\0', len);
	if (nul != NULL) {
		int line = 1, col = 1;
		for (const char *q = text; q < nul; q++) {
			col = *q == '\n' ? 1 : col + 1;
			line += *q == '\n';
		}
		st_diag_add(d, ST_SEVERITY_ERROR, file, line, col,
		            "binary data (a NUL byte): this is not a keys file");
		return -1;
	}
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (eol == NULL)
			eol = end;
		const char *line = p, *stop = eol;
		p = eol < end ? eol + 1 : end;
		line_no++;
		if (stop > line && stop[-1] == '\r')
			stop--;
		const char *b = line;
		while (b < stop && (*b == ' ' || *b == '\t'))
			b++;
		if (b == stop || *b == '#')
			continue;
		const char *eq = memchr(b, '=', (size_t)(stop - b));
		char q[64];
		if (eq == NULL) {
			st_quote_snippet(b, (size_t)(stop - b), q, sizeof q);
			st_diag_add(d, ST_SEVERITY_ERROR, file, line_no, (int)(b - line) + 1,
			            "expected 'action = key ...', got '%s'", q);
			errors++;
			continue;
		}
		const char *ke = eq;
		while (ke > b && (ke[-1] == ' ' || ke[-1] == '\t'))
			ke--;
		if (ke == b) {
			st_diag_add(d, ST_SEVERITY_ERROR, file, line_no, (int)(b - line) + 1,
			            "an action name is missing before '='");
			errors++;
			continue;
		}
		st_quote_snippet(b, (size_t)(ke - b), q, sizeof q);
		int action = -1;
		for (int a = 0; a < km->n_actions && action < 0; a++) {
			if (strlen(km->actions[a].name) == (size_t)(ke - b) &&
			    strncmp(km->actions[a].name, b, (size_t)(ke - b)) == 0)
				action = a;
		}
		if (action < 0) {
			const char *best = NULL;
			int best_d = (int)strlen(q) / 3 > 2 ? (int)strlen(q) / 3 + 1 : 3;
			for (int a = 0; a < km->n_actions; a++) {
				int dist = st_edit_distance(q, km->actions[a].name);
				if (dist < best_d) {
					best_d = dist;
					best = km->actions[a].name;
				}
			}
			if (best != NULL)
				st_diag_add(d, ST_SEVERITY_ERROR, file, line_no, (int)(b - line) + 1,
				            "unknown action '%s'; did you mean '%s'?", q, best);
			else
				st_diag_add(d, ST_SEVERITY_ERROR, file, line_no, (int)(b - line) + 1,
				            "unknown action '%s'", q);
			errors++;
			continue;
		}
		/* The keys; one bad name refuses the whole line. */
		char **keys = st_xcalloc(1, sizeof *keys);
		bool ok = true, after_hash = false;
		for (const char *w = eq + 1; w < stop && ok;) {
			while (w < stop && (*w == ' ' || *w == '\t'))
				w++;
			if (w >= stop)
				break;
			const char *we = w;
			while (we < stop && *we != ' ' && *we != '\t')
				we++;
			char *word = st_xstrndup(w, (size_t)(we - w));
			char key[32];
			if (st_key_normalise(word, key, sizeof key)) {
				keys = add_key(keys, key);
				after_hash = strcmp(word, "#") == 0;
			} else {
				st_quote_snippet(word, strlen(word), q, sizeof q);
				st_diag_add(d, ST_SEVERITY_ERROR, file, line_no, (int)(w - line) + 1,
				            "bad key name '%s'%s", q, key_hint(word, after_hash));
				errors++;
				ok = false;
			}
			free(word);
			w = we;
		}
		if (!ok) {
			free_keys(keys);
			continue;
		}
		for (int i = 0; i < n_lines; i++) {
			if (lines[i].action == action) {
				st_diag_add(d, ST_SEVERITY_WARNING, file, line_no, (int)(b - line) + 1,
				            "'%s' is bound again (first on line %d); the last one counts",
				            km->actions[action].name, lines[i].line);
				free_keys(lines[i].keys);
				lines[i].keys = NULL;
				lines[i].action = -1;
			}
		}
		lines = st_xreallocarray(lines, (size_t)n_lines + 1, sizeof *lines);
		lines[n_lines++] = (keys_line){ action, line_no, (int)(b - line) + 1, keys };
	}

	/* Two actions of one scope set to the same key in the file: an error.
	 * A key the file gives one action is taken from the defaults of the
	 * others of its scope, so that the user's choice wins. */
	for (int i = 0; i < n_lines; i++) {
		if (lines[i].action < 0)
			continue;
		const char *name = km->actions[lines[i].action].name;
		for (char **k = lines[i].keys; *k; k++) {
			for (int j = 0; j < i; j++) {
				if (lines[j].action < 0 || !has_key(lines[j].keys, *k) ||
				    !same_scope(name, km->actions[lines[j].action].name))
					continue;
				st_diag_add(d, ST_SEVERITY_ERROR, file, lines[i].line, lines[i].col,
				            "%s is bound to both '%s' (line %d) and '%s'", *k,
				            km->actions[lines[j].action].name, lines[j].line, name);
				errors++;
			}
		}
	}
	for (int i = 0; i < n_lines; i++) {
		if (lines[i].action < 0)
			continue;
		free_keys(km->keys[lines[i].action]);
		km->keys[lines[i].action] = lines[i].keys;
		lines[i].keys = NULL;
	}
	for (int i = 0; i < n_lines; i++) {
		if (lines[i].action < 0)
			continue;
		const char *name = km->actions[lines[i].action].name;
		for (int a = 0; a < km->n_actions; a++) {
			bool from_file = false;
			for (int j = 0; j < n_lines; j++)
				from_file = from_file || lines[j].action == a;
			if (from_file || !same_scope(name, km->actions[a].name))
				continue;
			for (char **k = km->keys[lines[i].action]; *k; k++)
				remove_key(km->keys[a], *k);
		}
	}
	free(lines);
	return errors > 0 ? -1 : 0;
}

int
st_keymap_load(st_keymap *km, st_diag *d)
{
	char *path;
	size_t len;
	int rc;
	char *text = st_config_read("keys.conf", "the key map", &path, &len, d, &rc);
	if (text != NULL) {
		rc = st_keymap_parse(km, text, len, path, d);
		free(text);
	}
	free(path);
	return rc;
}

int
st_keymap_lookup(const st_keymap *km, const char *key, const char *prefix)
{
	char canon[32];
	if (!st_key_normalise(key, canon, sizeof canon))
		return -1;
	size_t plen = prefix != NULL ? strlen(prefix) : 0;
	for (int a = 0; a < km->n_actions; a++) {
		if (plen > 0 && strncmp(km->actions[a].name, prefix, plen) != 0)
			continue;
		if (has_key(km->keys[a], canon))
			return a;
	}
	return -1;
}
