/* The edit commands' private toolkit, shared by core-command.c (the table
 * and the basic commands), core-expand.c (expand) and core-block.c
 * (add-block): operations recorded into the command being run, so that
 * whatever a command does undoes as one step, and a failure undoes it all. */
#ifndef CORE_EDIT_H
#define CORE_EDIT_H

#include "st-core.h"

/* ---- core-command.c ---- */

/* A layer by name, or NULL with "'x' is not a layer of this model (did you
 * mean 'y'?)" in err. */
st_layer *edit_find_layer(st_session *s, const char *name, char *err, size_t size);
/* 0 when name may name a new layer, else -1 with the reason in err. */
int edit_check_name(st_session *s, const char *name, char *err, size_t size);
/* Prints through the session's print function, if any. */
void edit_say(st_session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Operations; each applies at once and is undone with the command. */
void edit_insert(st_session *s, st_layer *l, int index);
void edit_delete(st_session *s, st_layer *l);
void edit_link(st_session *s, st_layer *dst, int input, st_port src);
void edit_move(st_session *s, st_layer *l, int x, int y);
/* The activation attached to l becomes a copy of act. */
void edit_set_activation(st_session *s, st_layer *l, const st_layer_act *act);
/* Sets parameter name of l (or a block-style setting) from command text.
 * Returns 0, or -1 with "layer 'c1': parameter 'x' ..." in err. */
int edit_set_text(st_session *s, st_layer *l, const char *name, const char *text, char *err, size_t size);
/* Attaches activation type (a name; "none" detaches) with its default
 * coefficients. Returns 0, or -1 with the reason in err. */
int edit_attach(st_session *s, st_layer *l, const char *type, char *err, size_t size);

/* ---- core-expand.c and core-block.c: the commands ---- */

int cmd_expand(st_session *s, int argc, char **argv, char *err, size_t size);
int cmd_add_block(st_session *s, int argc, char **argv, char *err, size_t size);

/* The host's side of expansions (api->expand_*), for st_host. */
int expand_host_part(st_expansion *e, const char *suffix, const char *layer_type, int column, int row);
int expand_host_set(st_expansion *e, const char *part, const char *param, const char *value);
int expand_host_activation(st_expansion *e, const char *part, const char *activation);
int expand_host_link(st_expansion *e, const char *part, int input, const char *from, int output);
int expand_host_output(st_expansion *e, const char *part, int output);
void expand_host_fail(st_expansion *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Canvas geometry the core assumes when it places layers: a glyph with
 * room around it (the editor's glyphs are 5 rows tall and up to 28 wide). */
#define EDIT_ROW_STEP 8
#define EDIT_COLUMN_STEP 26

#endif
