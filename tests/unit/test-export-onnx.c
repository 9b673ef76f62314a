/* ONNX export: graphs from JSON text exported, decoded with st_onnx_parse
 * and checked operator by operator. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "st-export.h"
#include "st-io.h"
#include "st-onnx.h"

typedef struct exported {
	st_graph *g;
	st_buf bytes;
	st_onnx_model m;
	st_diag d;
	int rc;
} exported;

/* Exports graph g (taken over) and decodes the result into e->m. */
static void
export_graph(exported *e, st_graph *g, const char *weights, const st_export_onnx_options *opt)
{
	memset(e, 0, sizeof *e);
	e->g = g;
	st_buf_init(&e->bytes);
	st_diag_init(&e->d);
	e->rc = st_export_onnx(g, weights, opt, &e->bytes, &e->d);
	if (e->rc == ST_EXPORT_OK) {
		char err[256];
		cr_assert_eq(st_onnx_parse(e->bytes.data, e->bytes.len, &e->m, err, sizeof err), 0, "%s", err);
		cr_assert_not_null(e->m.graph);
	} else {
		cr_assert_eq(e->bytes.len, 0, "a refused export appended bytes");
	}
}

static void
export_json(exported *e, const char *layers, const char *weights, const st_export_onnx_options *opt)
{
	char *text = st_xasprintf("{\"format\": \"strata-model\", \"version\": 1, \"network\": {\"name\": \"t\", "
	                          "\"description\": \"a test\"}, \"layers\": [%s]}",
	                          layers);
	st_diag d;
	st_diag_init(&d);
	st_graph *g = st_model_parse(text, strlen(text), "t.strata.json", test_registry(), &d);
	cr_assert_not_null(g);
	st_diag_free(&d);
	free(text);
	export_graph(e, g, weights, opt);
}

static void
exported_free(exported *e)
{
	st_onnx_free(&e->m);
	st_buf_free(&e->bytes);
	st_diag_free(&e->d);
	st_graph_free(e->g);
}

static const st_onnx_node *
find_node(const exported *e, const char *op, int which)
{
	for (size_t i = 0; i < e->m.graph->n_nodes; i++) {
		if (st_onnx_str_eq(e->m.graph->nodes[i].op_type, op) && which-- == 0)
			return &e->m.graph->nodes[i];
	}
	return NULL;
}

static int
count_nodes(const exported *e, const char *op)
{
	int n = 0;
	while (find_node(e, op, n) != NULL)
		n++;
	return n;
}

static const st_onnx_attribute *
find_attr(const st_onnx_node *n, const char *name)
{
	for (size_t i = 0; i < n->n_attributes; i++) {
		if (st_onnx_str_eq(n->attributes[i].name, name))
			return &n->attributes[i];
	}
	return NULL;
}

/* The attribute, or the test stops. */
static const st_onnx_attribute *
must_attr(const st_onnx_node *n, const char *name)
{
	const st_onnx_attribute *a = n ? find_attr(n, name) : NULL;
	if (a == NULL) {
		cr_log_error("no attribute %s", name);
		abort();
	}
	return a;
}

static const st_onnx_node *
must_node(const st_onnx_node *n, const char *what)
{
	if (n == NULL) {
		cr_log_error("no %s node", what);
		abort();
	}
	return n;
}

static void
assert_ints(const st_onnx_node *n, const char *name, const int64_t *want, size_t count)
{
	const st_onnx_attribute *a = must_attr(n, name);
	cr_assert_eq(a->n_ints, count, "%s has %zu values", name, a->n_ints);
	for (size_t i = 0; i < count; i++)
		cr_assert_eq(a->ints[i], want[i], "%s[%zu] = %lld, not %lld", name, i, (long long)a->ints[i],
		             (long long)want[i]);
}

static const st_onnx_tensor *
find_init(const exported *e, const char *name)
{
	for (size_t i = 0; i < e->m.graph->n_initializers; i++) {
		if (st_onnx_str_eq(e->m.graph->initializers[i].name, name))
			return &e->m.graph->initializers[i];
	}
	return NULL;
}

static const st_export_onnx_options random_opt = { .random_weights = true, .seed = 1, .file = "t.strata.json" };

#define IN(dims) "{\"name\": \"in\", \"type\": \"input\", \"params\": {\"dims\": " dims "}}"
#define OUT(from) "{\"name\": \"out\", \"type\": \"output\", \"inputs\": [\"" from ".0\"]}"

Test(export_onnx, convolution_attributes)
{
	exported e;
	export_json(&e,
	            IN("[3, 9, 9]") ", {\"name\": \"c\", \"type\": \"convolution\", \"params\": {\"num_output\": 4, "
	                            "\"kernel\": [3], \"stride\": [2], \"padding\": \"same\", \"bias\": false}, "
	                            "\"inputs\": [\"in.0\"]}, " OUT("c"),
	            NULL, &random_opt);
	cr_assert_eq(e.rc, ST_EXPORT_OK);
	const st_onnx_node *n = must_node(find_node(&e, "Conv", 0), "Conv");
	cr_assert_not_null(n);
	cr_assert_eq(n->n_inputs, 2, "no bias input when bias is false");
	assert_ints(n, "kernel_shape", (int64_t[]){ 3, 3 }, 2);
	assert_ints(n, "strides", (int64_t[]){ 2, 2 }, 2);
	/* same on 9 with stride 2: 5 outputs need (5-1)*2+3-9 = 2 pads, 1 and 1. */
	assert_ints(n, "pads", (int64_t[]){ 1, 1, 1, 1 }, 4);
	cr_assert_eq(must_attr(n, "group")->i, 1);
	const st_onnx_tensor *w = find_init(&e, "c_weights");
	cr_assert_not_null(w);
	cr_assert_eq(w->n_dims, 4);
	cr_assert_eq(w->dims[0], 4);
	cr_assert_eq(w->raw_data.len, 4 * 3 * 3 * 3 * 4);
	cr_assert(st_onnx_str_eq(e.m.graph->name, "t"));
	cr_assert(st_onnx_str_eq(e.m.doc_string, "a test"));
	cr_assert(st_onnx_str_eq(e.m.producer_name, "strata"));
	exported_free(&e);
}

/* Writes a weights folder with one file and returns its path (caller frees). */
static char *
weights_folder(const char *file, const st_shape *s, const float *values)
{
	char *dir = st_xstrdup("/tmp/strata-export-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	char *path = st_xasprintf("%s/%s", dir, file);
	char err[256];
	cr_assert_eq(st_npy_write(path, s, values, err, sizeof err), 0, "%s", err);
	free(path);
	return dir;
}

static void
remove_folder(char *dir, const char *file)
{
	char *path = st_xasprintf("%s/%s", dir, file);
	unlink(path);
	free(path);
	rmdir(dir);
	free(dir);
}

Test(export_onnx, initializer_bytes_fp32_and_fp16)
{
	const float values[6] = { 1.0f, -2.5f, 0.1f, 65504.0f, 3.0e-5f, -0.0f };
	st_shape s = { .dtype = ST_DTYPE_FLOAT32, .rank = 2, .dims = { 3, 2 } };
	char *dir = weights_folder("fc_weights.npy", &s, values);
	const char *layers = IN("[2]") ", {\"name\": \"fc\", \"type\": \"fully_connected\", \"params\": "
	                                "{\"num_output\": 3, \"bias\": false}, \"inputs\": [\"in.0\"]}, " OUT("fc");
	for (int fp16 = 0; fp16 < 2; fp16++) {
		st_export_onnx_options opt = { .fp16 = fp16 };
		exported e;
		export_json(&e, layers, dir, &opt);
		cr_assert_eq(e.rc, ST_EXPORT_OK);
		const st_onnx_tensor *w = find_init(&e, "fc_weights");
		cr_assert_not_null(w);
		cr_assert_eq(w->data_type, fp16 ? ST_ONNX_FLOAT16 : ST_ONNX_FLOAT);
		const uint8_t *raw = (const uint8_t *)w->raw_data.data;
		cr_assert_eq(w->raw_data.len, fp16 ? 12 : 24);
		for (int i = 0; i < 6; i++) {
			if (fp16) {
				uint16_t h = (uint16_t)(raw[2 * i] | raw[2 * i + 1] << 8);
				cr_assert_eq(h, st_float_to_half(values[i]), "element %d", i);
			} else {
				uint32_t bits = (uint32_t)raw[4 * i] | (uint32_t)raw[4 * i + 1] << 8 |
				                (uint32_t)raw[4 * i + 2] << 16 | (uint32_t)raw[4 * i + 3] << 24;
				uint32_t want;
				memcpy(&want, &values[i], 4);
				cr_assert_eq(bits, want, "element %d", i);
			}
		}
		cr_assert_eq(e.m.graph->inputs[0].type.elem_type, fp16 ? ST_ONNX_FLOAT16 : ST_ONNX_FLOAT);
		cr_assert_eq(e.m.graph->outputs[0].type.elem_type, fp16 ? ST_ONNX_FLOAT16 : ST_ONNX_FLOAT);
		const st_onnx_node *g = must_node(find_node(&e, "Gemm", 0), "Gemm");
		cr_assert_not_null(g);
		cr_assert_eq(must_attr(g, "transB")->i, 1);
		cr_assert_eq(count_nodes(&e, "Flatten"), 1);
		exported_free(&e);
	}
	remove_folder(dir, "fc_weights.npy");
}

Test(export_onnx, missing_weights_named)
{
	st_shape s = { .dtype = ST_DTYPE_FLOAT32, .rank = 1, .dims = { 1 } };
	float one = 1;
	char *dir = weights_folder("other.npy", &s, &one);
	exported e;
	export_json(&e, IN("[2]") ", {\"name\": \"fc\", \"type\": \"fully_connected\", \"inputs\": [\"in.0\"]}, " OUT("fc"),
	            dir, &(st_export_onnx_options){ 0 });
	cr_assert_eq(e.rc, ST_EXPORT_UNREADABLE);
	char *path = st_xasprintf("%s/fc_weights.npy", dir);
	bool named = false;
	for (int i = 0; i < e.d.count; i++)
		named |= strstr(e.d.items[i].text, path) != NULL;
	cr_assert(named, "no message names %s", path);
	free(path);
	exported_free(&e);
	remove_folder(dir, "other.npy");
}

Test(export_onnx, tensor_sizes_or_variables)
{
	for (int vars = 0; vars < 2; vars++) {
		exported e;
		st_export_onnx_options opt = { .random_weights = true, .no_tensor_sizes = vars };
		export_json(&e, IN("[3, 4, 5]") ", " OUT("in"), NULL, &opt);
		cr_assert_eq(e.rc, ST_EXPORT_OK);
		const st_onnx_type *t = &e.m.graph->inputs[0].type;
		cr_assert_eq(t->n_dims, 4);
		static const int64_t sizes[] = { 1, 3, 4, 5 };
		for (size_t k = 0; k < 4; k++) {
			cr_assert_eq(t->dims[k].has_value, !vars);
			if (vars)
				cr_assert_gt(t->dims[k].param.len, 0);
			else
				cr_assert_eq(t->dims[k].value, sizes[k]);
		}
		cr_assert_eq(e.m.graph->outputs[0].type.dims[0].has_value, !vars);
		exported_free(&e);
	}
}

Test(export_onnx, opset_and_ir_version)
{
	static const int pairs[][2] = { { 13, 7 }, { 14, 7 }, { 15, 8 }, { 17, 8 }, { 18, 8 }, { 19, 9 }, { 20, 9 }, { 21, 10 } };
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
		exported e;
		st_export_onnx_options opt = { .random_weights = true, .opset = pairs[i][0] };
		export_json(&e, IN("[3]") ", " OUT("in"), NULL, &opt);
		cr_assert_eq(e.rc, ST_EXPORT_OK);
		cr_assert_eq(e.m.ir_version, pairs[i][1], "opset %d: ir %lld", pairs[i][0], (long long)e.m.ir_version);
		cr_assert_eq(e.m.n_opsets, 1);
		cr_assert_eq(e.m.opsets[0].version, pairs[i][0]);
		exported_free(&e);
	}
	exported e;
	export_json(&e, IN("[3]") ", " OUT("in"), NULL, &(st_export_onnx_options){ .random_weights = true });
	cr_assert_eq(e.m.opsets[0].version, 17, "the default opset is 17");
	cr_assert_eq(e.m.ir_version, 8);
	exported_free(&e);
	for (int bad = 0; bad < 2; bad++) {
		export_json(&e, IN("[3]") ", " OUT("in"), NULL,
		            &(st_export_onnx_options){ .random_weights = true, .opset = bad ? 22 : 12 });
		cr_assert_eq(e.rc, ST_EXPORT_REFUSED);
		cr_assert_gt(e.d.errors, 0);
		exported_free(&e);
	}
}

Test(export_onnx, elementwise_chain_and_channel_broadcast)
{
	exported e;
	export_json(&e,
	            IN("[2, 3, 3]") ", {\"name\": \"v\", \"type\": \"constant\", \"params\": {\"dims\": [2], \"value\": 2}}, "
	                            "{\"name\": \"s\", \"type\": \"elementwise\", \"params\": {\"operation\": \"sub\", "
	                            "\"broadcast\": \"channel\"}, \"inputs\": [\"in.0\", \"v.0\", \"v.0\"]}, " OUT("s"),
	            NULL, &(st_export_onnx_options){ 0 });
	cr_assert_eq(e.rc, ST_EXPORT_OK);
	cr_assert_eq(count_nodes(&e, "Sub"), 2, "three inputs of a binary operator are a chain of two");
	cr_assert_eq(count_nodes(&e, "Reshape"), 2);
	const st_onnx_node *r = must_node(find_node(&e, "Reshape", 0), "Reshape");
	char *shape_name = st_onnx_str_dup(r->inputs[1]);
	const st_onnx_tensor *shape = find_init(&e, shape_name);
	free(shape_name);
	cr_assert_not_null(shape);
	cr_assert_eq(shape->data_type, ST_ONNX_INT64);
	int64_t dims[4];
	memcpy(dims, shape->raw_data.data, sizeof dims);
	cr_assert(dims[0] == 1 && dims[1] == 2 && dims[2] == 1 && dims[3] == 1);
	/* The constant is filled with its value (no weights folder). */
	const st_onnx_tensor *v = find_init(&e, "v");
	cr_assert_not_null(v);
	float two[2];
	memcpy(two, v->raw_data.data, sizeof two);
	cr_assert(two[0] == 2.0f && two[1] == 2.0f);
	exported_free(&e);
}

Test(export_onnx, activations_by_opset)
{
	const char *layers = IN("[4]") ", {\"name\": \"f\", \"type\": \"fully_connected\", \"params\": {\"num_output\": 2}, "
	                               "\"activation\": {\"type\": \"gelu\"}, \"inputs\": [\"in.0\"]}, "
	                               "{\"name\": \"g\", \"type\": \"identity\", \"activation\": {\"type\": \"clip\", "
	                               "\"min\": -1, \"max\": 2}, \"inputs\": [\"f.0\"]}, "
	                               "{\"name\": \"h\", \"type\": \"identity\", \"activation\": {\"type\": \"leaky_relu\", "
	                               "\"alpha\": 0.25}, \"inputs\": [\"g.0\"]}, " OUT("h");
	exported e;
	export_json(&e, layers, NULL, &random_opt);
	cr_assert_eq(e.rc, ST_EXPORT_OK, "%s", e.d.count ? e.d.items[0].text : "");
	cr_assert_eq(count_nodes(&e, "Gelu"), 0);
	cr_assert_eq(count_nodes(&e, "Erf"), 1, "gelu before opset 20 is the erf formula");
	const st_onnx_node *c = must_node(find_node(&e, "Clip", 0), "Clip");
	cr_assert_not_null(c);
	cr_assert_eq(c->n_inputs, 3);
	cr_assert_float_eq(must_attr(find_node(&e, "LeakyRelu", 0), "alpha")->f, 0.25f, 1e-7);
	exported_free(&e);
	export_json(&e, layers, NULL, &(st_export_onnx_options){ .random_weights = true, .opset = 20 });
	cr_assert_eq(count_nodes(&e, "Gelu"), 1);
	cr_assert_eq(count_nodes(&e, "Erf"), 0);
	exported_free(&e);
}

Test(export_onnx, type_errors_refused)
{
	exported e;
	export_json(&e,
	            IN("[3, 4, 4]") ", {\"name\": \"c\", \"type\": \"convolution\", \"params\": {\"kernel\": [9]}, "
	                            "\"inputs\": [\"in.0\"]}, " OUT("c"),
	            NULL, &random_opt);
	cr_assert_eq(e.rc, ST_EXPORT_REFUSED);
	cr_assert_not_null(strstr(e.d.items[0].text, "layer 'c'"));
	cr_assert_str_eq(e.d.items[0].file, "t.strata.json");
	exported_free(&e);
}

/* A placeholder keeps its node: type, domain, attributes byte for byte. */
Test(export_onnx, placeholder_round_trip)
{
	st_onnx_attribute attrs[2];
	memset(attrs, 0, sizeof attrs);
	attrs[0].name = (st_onnx_str){ "center_point_box", 16 };
	attrs[0].has_i = true;
	attrs[0].i = 1;
	attrs[0].has_type = true;
	attrs[0].type = ST_ONNX_ATTR_INT;
	int64_t ints[3] = { 4, -5, 6 };
	attrs[1].name = (st_onnx_str){ "list", 4 };
	attrs[1].ints = ints;
	attrs[1].n_ints = 3;
	attrs[1].has_type = true;
	attrs[1].type = ST_ONNX_ATTR_INTS;
	st_onnx_node src;
	memset(&src, 0, sizeof src);
	src.attributes = attrs;
	src.n_attributes = 2;
	st_buf wire;
	st_buf_init(&wire);
	st_onnx_encode_attributes(&src, &wire);
	char *b64 = st_base64_encode(wire.data, wire.len);
	for (int custom = 0; custom < 2; custom++) {
		char *layers = st_xasprintf(IN("[3, 4]") ", {\"name\": \"p\", \"type\": \"onnx_operator\", \"params\": "
		                            "{\"op_type\": \"Frob\", \"domain\": \"%s\", \"opset\": 3, "
		                            "\"attributes\": \"%s\", \"num_outputs\": 2}, \"inputs\": [\"in.0\"]}, "
		                            "{\"name\": \"out\", \"type\": \"output\", \"inputs\": [\"p.1\"]}",
		                            custom ? "com.example" : "", b64);
		for (int allow = 0; allow < 2; allow++) {
			exported e;
			export_json(&e, layers, NULL, &(st_export_onnx_options){ .allow_placeholders = allow });
			if (custom && !allow) {
				cr_assert_eq(e.rc, ST_EXPORT_REFUSED);
				cr_assert_not_null(strstr(e.d.items[0].text, "layer 'p'"));
				cr_assert_not_null(strstr(e.d.items[0].text, "--allow-placeholders"));
				exported_free(&e);
				continue;
			}
			cr_assert_eq(e.rc, ST_EXPORT_OK, "%s", e.d.count ? e.d.items[0].text : "");
			const st_onnx_node *n = must_node(find_node(&e, "Frob", 0), "Frob");
			cr_assert_not_null(n);
			cr_assert(custom ? st_onnx_str_eq(n->domain, "com.example") : n->domain.len == 0);
			cr_assert_eq(n->n_outputs, 2);
			cr_assert(st_onnx_str_eq(n->outputs[1], "p:1"));
			st_buf back;
			st_buf_init(&back);
			st_onnx_encode_attributes(n, &back);
			cr_assert_eq(back.len, wire.len);
			cr_assert(memcmp(back.data, wire.data, wire.len) == 0, "the attributes changed");
			st_buf_free(&back);
			cr_assert_eq(e.m.n_opsets, custom ? 2u : 1u);
			if (custom) {
				cr_assert(st_onnx_str_eq(e.m.opsets[1].domain, "com.example"));
				cr_assert_eq(e.m.opsets[1].version, 3);
			}
			exported_free(&e);
		}
		free(layers);
	}
	free(b64);
	st_buf_free(&wire);
}

/* Names that collide with derived ones stay unique; names that are not
 * identifiers (a graph built in C) are refused by the check, not written. */
Test(export_onnx, hostile_names_unique)
{
	exported e;
	export_json(&e,
	            IN("[4, 2]") ", {\"name\": \"x\", \"type\": \"split\", \"params\": {\"axis\": 1}, \"inputs\": [\"in.0\"]}, "
	                         "{\"name\": \"fc\", \"type\": \"fully_connected\", \"inputs\": [\"x.1\"]}, "
	                         "{\"name\": \"fc_weights\", \"type\": \"elementwise\", \"inputs\": [\"x.0\", \"fc.0\"]}, "
	                         "{\"name\": \"x_1\", \"type\": \"identity\", \"inputs\": [\"x.1\"]}, "
	                         "{\"name\": \"out\", \"type\": \"output\", \"inputs\": [\"fc_weights.0\"]}, "
	                         "{\"name\": \"out2\", \"type\": \"output\", \"inputs\": [\"x_1.0\"]}",
	            NULL, &random_opt);
	cr_assert_eq(e.rc, ST_EXPORT_OK, "%s", e.d.count ? e.d.items[0].text : "");
	/* Every tensor is produced once: outputs of nodes, initializers and inputs. */
	const st_onnx_graph *og = e.m.graph;
	st_map seen;
	st_map_init(&seen);
	char **all = st_xcalloc(256, sizeof *all);
	int n_all = 0;
	for (size_t i = 0; i < og->n_nodes; i++) {
		for (size_t k = 0; k < og->nodes[i].n_outputs; k++)
			all[n_all++] = st_onnx_str_dup(og->nodes[i].outputs[k]);
	}
	for (size_t i = 0; i < og->n_initializers; i++)
		all[n_all++] = st_onnx_str_dup(og->initializers[i].name);
	for (size_t i = 0; i < og->n_inputs; i++)
		all[n_all++] = st_onnx_str_dup(og->inputs[i].name);
	for (int i = 0; i < n_all; i++) {
		cr_assert_null(st_map_get(&seen, all[i]), "tensor '%s' is produced twice", all[i]);
		st_map_put(&seen, all[i], all[i]);
	}
	/* The layer keeps its name; the weight named like it moves aside. */
	const st_onnx_node *gemm = must_node(find_node(&e, "Gemm", 0), "Gemm");
	cr_assert(!st_onnx_str_eq(gemm->inputs[1], "fc_weights"));
	cr_assert_not_null(find_init(&e, "fc_weights~2"));
	const st_onnx_node *split = must_node(find_node(&e, "Split", 0), "Split");
	cr_assert(st_onnx_str_eq(split->outputs[0], "x"));
	cr_assert(st_onnx_str_eq(split->outputs[1], "x:1"));
	for (int i = 0; i < n_all; i++)
		free(all[i]);
	free(all);
	st_map_free(&seen);
	exported_free(&e);

	st_graph *g = st_graph_new(test_registry());
	static const char *const names[] = { "in", "a b", "out" };
	static const char *const types[] = { "input", "identity", "output" };
	st_layer *l[3];
	for (int i = 0; i < 3; i++) {
		l[i] = st_layer_new(test_registry(), types[i], names[i]);
		st_graph_insert(g, l[i], i);
	}
	st_graph_set_input(g, l[1], 0, (st_port){ l[0], 0 });
	st_graph_set_input(g, l[2], 0, (st_port){ l[1], 0 });
	export_graph(&e, g, NULL, &random_opt);
	cr_assert_eq(e.rc, ST_EXPORT_REFUSED);
	cr_assert_not_null(strstr(e.d.items[0].text, "layer 'a b'"));
	exported_free(&e);
}
