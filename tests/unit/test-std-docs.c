/* Unit tests: every layer type and activation of the std collection is
 * documented: descriptor texts, every parameter, and a prose page. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

static bool
has_text(const char *s, size_t min)
{
	return s != NULL && strlen(s) >= min;
}

static void
check_params(const char *owner, const st_param_desc *p, int n)
{
	for (int i = 0; i < n; i++) {
		cr_expect(has_text(p[i].doc, 12), "%s: parameter '%s' is undocumented", owner, p[i].name);
	}
}

Test(std_docs, every_type_and_parameter_is_documented)
{
	const st_registry *r = test_registry();
	int std_types = 0;
	for (int i = 0; i < r->n_types; i++) {
		const st_layer_desc *d = r->types[i]->desc;
		if (strcmp(r->types[i]->plugin->name, "std") != 0)
			continue;
		std_types++;
		cr_expect(has_text(d->display_name, 2), "%s has no display name", d->name);
		cr_expect(has_text(d->category, 2), "%s has no category", d->name);
		cr_expect(has_text(d->summary, 12), "%s has no summary", d->name);
		for (int k = 0; k < d->n_inputs; k++)
			cr_expect(has_text(d->inputs[k].doc, 4), "%s: input %d is undocumented", d->name, k);
		for (int k = 0; k < d->n_outputs; k++)
			cr_expect(has_text(d->outputs[k].doc, 4), "%s: output %d is undocumented", d->name, k);
		check_params(d->name, d->params, d->n_params);
	}
	cr_assert_geq(std_types, 3);
	for (int i = 0; i < r->n_activations; i++) {
		const st_activation_desc *a = r->activations[i]->desc;
		cr_expect(has_text(a->summary, 8), "activation %s has no summary", a->name);
		check_params(a->name, a->params, a->n_params);
	}
}

Test(std_docs, every_type_has_a_prose_page)
{
	const char *top = getenv("top_srcdir");
	cr_assert_not_null(top, "top_srcdir is not set (run through make check)");
	const st_registry *r = test_registry();
	for (int i = 0; i < r->n_types; i++) {
		const st_layer_desc *d = r->types[i]->desc;
		if (strcmp(r->types[i]->plugin->name, "std") != 0)
			continue;
		char *prose = st_xasprintf("%s/docs/layers/prose/%s.md", top, d->name);
		char *text = st_read_file(prose, NULL);
		cr_expect_not_null(text, "%s has no hand-written prose (%s)", d->name, prose);
		if (text != NULL) {
			cr_expect(strlen(text) > 200, "%s: the prose page is too short to say much", d->name);
			/* Every parameter should be explained, not only listed in the table. */
			for (int k = 0; k < d->n_params; k++)
				cr_expect(strstr(text, d->params[k].name) != NULL,
				          "%s: the prose never mentions parameter '%s'", d->name, d->params[k].name);
		}
		free(text);
		free(prose);
	}
}
