/* Unit tests: the ONNX importer on models built in memory: what each
 * operator becomes, what folds, what stays a placeholder, and every refusal
 * (dangling inputs, cycles, missing weights) with its message. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "st-io.h"
#include "st-onnx.h"

/* ---- a small model builder (everything static, reset per model) ---- */

#define MAXN 32

typedef struct builder {
	st_onnx_model m;
	st_onnx_graph g;
	st_onnx_opset opset;
	st_onnx_node nodes[MAXN];
	st_onnx_str node_in[MAXN][4], node_out[MAXN][2];
	st_onnx_attribute attrs[MAXN][4];
	st_onnx_value_info inputs[4], outputs[4];
	st_onnx_dim dims[8][8];
	st_onnx_tensor inits[8];
	int64_t init_dims[8][4];
	float init_data[8][64];
	int64_t ints[MAXN][8];
} builder;

static builder B;

static st_onnx_str
S(const char *s)
{
	return (st_onnx_str){ s, s ? strlen(s) : 0 };
}

static void
begin(int opset)
{
	memset(&B, 0, sizeof B);
	B.opset = (st_onnx_opset){ .domain = S(""), .has_version = true, .version = opset };
	B.m.has_ir_version = true;
	B.m.ir_version = 8;
	B.m.opsets = &B.opset;
	B.m.n_opsets = 1;
	B.m.graph = &B.g;
	B.g.name = S("test");
	B.g.nodes = B.nodes;
	B.g.inputs = B.inputs;
	B.g.outputs = B.outputs;
	B.g.initializers = B.inits;
}

/* A float input; dims < 0 are symbolic ("N"). */
static void
input(const char *name, int rank, const int64_t *dims)
{
	size_t i = B.g.n_inputs++;
	st_onnx_value_info *v = &B.inputs[i];
	v->name = S(name);
	v->has_type = true;
	v->type.kind = ST_ONNX_TYPE_TENSOR;
	v->type.has_elem_type = true;
	v->type.elem_type = ST_ONNX_FLOAT;
	v->type.has_shape = true;
	v->type.dims = B.dims[i];
	v->type.n_dims = (size_t)rank;
	for (int k = 0; k < rank; k++) {
		if (dims[k] >= 0)
			B.dims[i][k] = (st_onnx_dim){ .has_value = true, .value = dims[k] };
		else
			B.dims[i][k] = (st_onnx_dim){ .param = S("N") };
	}
}

static void
output(const char *name)
{
	B.outputs[B.g.n_outputs++].name = S(name);
}

/* A float initializer from values (raw little-endian, like most files). */
static void
init_f(const char *name, int rank, const int64_t *dims, const float *v)
{
	size_t i = B.g.n_initializers++;
	st_onnx_tensor *t = &B.inits[i];
	t->name = S(name);
	t->has_data_type = true;
	t->data_type = ST_ONNX_FLOAT;
	t->dims = B.init_dims[i];
	t->n_dims = (size_t)rank;
	t->count = 1;
	for (int k = 0; k < rank; k++) {
		B.init_dims[i][k] = dims[k];
		t->count *= dims[k];
	}
	memcpy(B.init_data[i], v, (size_t)t->count * sizeof *v);
	t->raw_data = (st_onnx_str){ (const char *)B.init_data[i], (size_t)t->count * 4 };
}

static st_onnx_node *
node(const char *op, const char *name, const char *in0, const char *in1, const char *in2, const char *out)
{
	size_t i = B.g.n_nodes++;
	st_onnx_node *n = &B.nodes[i];
	const char *ins[3] = { in0, in1, in2 };
	n->inputs = B.node_in[i];
	for (int k = 0; k < 3 && ins[k]; k++)
		B.node_in[i][n->n_inputs++] = S(ins[k]);
	n->outputs = B.node_out[i];
	B.node_out[i][n->n_outputs++] = S(out);
	n->name = S(name);
	n->op_type = S(op);
	n->attributes = B.attrs[i];
	return n;
}

static void
attr_i(st_onnx_node *n, const char *name, int64_t v)
{
	st_onnx_attribute *a = &n->attributes[n->n_attributes++];
	*a = (st_onnx_attribute){ .name = S(name), .has_i = true, .i = v, .has_type = true, .type = ST_ONNX_ATTR_INT };
}

static void
attr_f(st_onnx_node *n, const char *name, float v)
{
	st_onnx_attribute *a = &n->attributes[n->n_attributes++];
	*a = (st_onnx_attribute){ .name = S(name), .has_f = true, .f = v, .has_type = true, .type = ST_ONNX_ATTR_FLOAT };
}

static void
attr_ints(st_onnx_node *n, const char *name, int count, const int64_t *v)
{
	size_t i = (size_t)(n - B.nodes);
	memcpy(B.ints[i], v, (size_t)count * sizeof *v);
	st_onnx_attribute *a = &n->attributes[n->n_attributes++];
	*a = (st_onnx_attribute){ .name = S(name), .ints = B.ints[i], .n_ints = (size_t)count, .has_type = true,
		                  .type = ST_ONNX_ATTR_INTS };
}

/* ---- running the importer ---- */

static char wdir[256];
static st_onnx_import R;
static st_diag D;
static char messages[8192];

static int
import(void)
{
	snprintf(wdir, sizeof wdir, "/tmp/strata-import-test-%ld", (long)getpid());
	st_diag_init(&D);
	st_onnx_import_options opt = { .weights_dir = wdir, .default_dim = 3 };
	int rc = st_onnx_import_model(&B.m, test_registry(), &opt, &R, &D);
	messages[0] = '\0';
	for (int k = 0; k < D.count; k++) {
		strncat(messages, D.items[k].text, sizeof messages - strlen(messages) - 2);
		strcat(messages, "\n");
	}
	return rc;
}

static void
done(void)
{
	st_onnx_import_free(&R);
	st_diag_free(&D);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", wdir);
	cr_assert_eq(system(cmd), 0);
}

static const st_layer *
layer(const char *name)
{
	const st_layer *l = st_graph_find(R.graph, name);
	cr_assert_not_null(l, "no layer '%s'", name);
	return l;
}

static const st_value *
param(const st_layer *l, const char *name)
{
	int i = st_params_find(l->type->desc->params, l->type->desc->n_params, name);
	cr_assert_geq(i, 0, "no parameter %s", name);
	return &l->params.values[i];
}

static int
count_type(const char *type)
{
	int n = 0;
	for (int k = 0; k < R.graph->n_layers; k++)
		n += strcmp(R.graph->layers[k]->type_name, type) == 0;
	return n;
}

static void
load_weight(const char *layer_name, const char *weight, st_npy *a)
{
	char path[512], err[256];
	snprintf(path, sizeof path, "%s/%s_%s.npy", wdir, layer_name, weight);
	cr_assert_eq(st_npy_read(path, a, err, sizeof err), 0, "%s", err);
}

/* ---- tests ---- */

Test(onnx_import, conv_relu_becomes_one_layer_with_weights)
{
	begin(13);
	input("x", 4, (int64_t[]){ 1, 2, 5, 5 });
	float w[2 * 2 * 3 * 3], b[2] = { 0.5f, -1 };
	for (int k = 0; k < 36; k++)
		w[k] = (float)k / 10;
	init_f("W", 4, (int64_t[]){ 2, 2, 3, 3 }, w);
	init_f("B", 1, (int64_t[]){ 2 }, b);
	st_onnx_node *c = node("Conv", "conv1", "x", "W", "B", "c");
	attr_ints(c, "pads", 4, (int64_t[]){ 1, 1, 1, 1 });
	attr_ints(c, "strides", 2, (int64_t[]){ 2, 2 });
	node("Relu", "relu1", "c", NULL, NULL, "y");
	output("y");
	cr_assert_eq(import(), 0, "%s", messages);
	cr_assert_eq(R.graph->n_layers, 3); /* input, conv with relu, output */
	const st_layer *l = layer("conv1");
	cr_assert_str_eq(l->act.type_name, "relu");
	cr_assert_eq(param(l, "num_output")->i, 2);
	cr_assert_eq(param(l, "stride")->ints[1], 2);
	cr_assert_eq(param(l, "pads")->ints[3], 1);
	cr_assert(param(l, "bias")->b);
	cr_assert_eq(R.graph->errors, 0, "%s", messages);
	cr_assert_eq(R.n_inputs, 1);
	cr_assert_str_eq(R.input_layers[0], "x");
	cr_assert_str_eq(R.output_layers[0], "y");
	st_npy a;
	load_weight("conv1", "weights", &a);
	cr_assert_eq(a.count, 36);
	cr_assert_float_eq(((const float *)a.data)[35], 3.5f, 1e-7);
	st_npy_free(&a);
	load_weight("conv1", "bias", &a);
	cr_assert_float_eq(((const float *)a.data)[1], -1.0f, 1e-7);
	st_npy_free(&a);
	done();
}

Test(onnx_import, activation_not_attached_when_the_value_is_shared)
{
	begin(13);
	input("x", 4, (int64_t[]){ 1, 1, 4, 4 });
	float w[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
	init_f("W", 4, (int64_t[]){ 1, 1, 3, 3 }, w);
	node("Conv", "conv", "x", "W", NULL, "c");
	node("Relu", "r", "c", NULL, NULL, "y");
	output("y");
	output("c");
	cr_assert_eq(import(), 0, "%s", messages);
	cr_assert_null(layer("conv")->act.type_name);
	cr_assert_str_eq(layer("r")->type_name, "identity");
	cr_assert_str_eq(layer("r")->act.type_name, "relu");
	done();
}

Test(onnx_import, dangling_input_is_named)
{
	begin(13);
	input("x", 2, (int64_t[]){ 1, 4 });
	node("Add", "add", "x", "nowhere", NULL, "y");
	output("y");
	cr_assert_neq(import(), 0);
	cr_assert(strstr(messages, "graph.node[0] \"add\" (Add): input 1 'nowhere' is not produced") != NULL, "%s",
	          messages);
	done();
}

Test(onnx_import, cycle_is_refused)
{
	begin(13);
	input("x", 2, (int64_t[]){ 1, 4 });
	node("Add", "a", "x", "q", NULL, "p");
	node("Relu", "b", "p", NULL, NULL, "q");
	output("q");
	cr_assert_neq(import(), 0);
	cr_assert(strstr(messages, "is part of a cycle") != NULL, "%s", messages);
	done();
}

Test(onnx_import, missing_weights_keep_the_node_as_a_placeholder)
{
	begin(13);
	input("x", 4, (int64_t[]){ 1, 1, 4, 4 });
	input("W", 4, (int64_t[]){ 1, 1, 3, 3 }); /* weights fed at run time: no layer for that */
	node("Conv", "conv", "x", "W", NULL, "y");
	output("y");
	cr_assert_eq(import(), 0, "%s", messages);
	cr_assert_eq(R.n_placeholders, 1);
	cr_assert(strstr(messages, "its weights (input 1) are not constant") != NULL, "%s", messages);
	cr_assert_str_eq(layer("conv")->type_name, "onnx_operator");
	cr_assert_gt(R.graph->errors, 0);
	done();
}

Test(onnx_import, unknown_operator_keeps_its_attributes)
{
	begin(13);
	input("x", 2, (int64_t[]){ 2, 3 });
	st_onnx_node *n = node("TopK", "top", "x", NULL, NULL, "v");
	attr_i(n, "axis", -1);
	attr_f(n, "weird", 0.25f);
	output("v");
	cr_assert_eq(import(), 0, "%s", messages);
	const st_layer *l = layer("top");
	cr_assert_str_eq(param(l, "op_type")->s, "TopK");
	cr_assert_eq(param(l, "opset")->i, 13);
	uint8_t *bytes;
	size_t len;
	cr_assert_eq(st_base64_decode(param(l, "attributes")->s, &bytes, &len), 0);
	st_onnx_model holder;
	memset(&holder, 0, sizeof holder);
	st_onnx_node back;
	char err[256];
	cr_assert_eq(st_onnx_parse_attributes(bytes, len, &holder, &back, err, sizeof err), 0, "%s", err);
	cr_assert_eq(back.n_attributes, 2);
	cr_assert(st_onnx_str_eq(back.attributes[0].name, "axis") && back.attributes[0].i == -1);
	cr_assert(st_onnx_str_eq(back.attributes[1].name, "weird") && back.attributes[1].f == 0.25f);
	st_onnx_free(&holder);
	free(bytes);
	/* The type check says what it is. */
	int n_msgs;
	st_graph_message *msgs = st_graph_messages(R.graph, &n_msgs);
	cr_assert_geq(n_msgs, 1);
	cr_assert(strstr(msgs[0].text, "ONNX operator TopK has no Strata layer") != NULL, "%s", msgs[0].text);
	free(msgs);
	done();
}

Test(onnx_import, fp16_in_typed_fields_and_ir3_initializer_inputs)
{
	begin(13);
	input("x", 2, (int64_t[]){ 1, 2 });
	input("W", 2, (int64_t[]){ 3, 2 }); /* IR 3: initializers listed as inputs too */
	size_t i = B.g.n_initializers++;
	static int32_t halves[6];
	for (int k = 0; k < 6; k++)
		halves[k] = st_float_to_half((float)k - 2.5f);
	B.inits[i] = (st_onnx_tensor){ .name = S("W"), .has_data_type = true, .data_type = ST_ONNX_FLOAT16,
		                       .dims = B.init_dims[i], .n_dims = 2, .count = 6, .int32_data = halves,
		                       .n_int32_data = 6 };
	B.init_dims[i][0] = 3;
	B.init_dims[i][1] = 2;
	st_onnx_node *g = node("Gemm", "fc", "x", "W", NULL, "y");
	attr_i(g, "transB", 1);
	attr_f(g, "alpha", 2);
	output("y");
	cr_assert_eq(import(), 0, "%s", messages);
	cr_assert_eq(R.n_inputs, 1, "the initializer W is not an input");
	const st_layer *l = layer("fc");
	cr_assert_str_eq(l->type_name, "fully_connected");
	cr_assert_eq(param(l, "num_output")->i, 3);
	st_npy a;
	load_weight("fc", "weights", &a);
	for (int k = 0; k < 6; k++)
		cr_assert_float_eq(((const float *)a.data)[k], 2 * ((float)k - 2.5f), 1e-6);
	st_npy_free(&a);
	done();
}

Test(onnx_import, gemm_without_transpose_is_transposed_into_the_weights)
{
	begin(13);
	input("x", 2, (int64_t[]){ 1, 2 });
	float w[6] = { 1, 2, 3, 4, 5, 6 }, c[3] = { 1, 1, 1 };
	init_f("W", 2, (int64_t[]){ 2, 3 }, w); /* K x N */
	init_f("C", 1, (int64_t[]){ 3 }, c);
	st_onnx_node *g = node("Gemm", "fc", "x", "W", "C", "y");
	attr_f(g, "beta", 0.5f);
	output("y");
	cr_assert_eq(import(), 0, "%s", messages);
	st_npy a;
	load_weight("fc", "weights", &a);
	const float *v = a.data; /* N x K */
	cr_assert(v[0] == 1 && v[1] == 4 && v[2] == 2 && v[3] == 5 && v[4] == 3 && v[5] == 6);
	st_npy_free(&a);
	load_weight("fc", "bias", &a);
	cr_assert_float_eq(((const float *)a.data)[2], 0.5f, 1e-7);
	st_npy_free(&a);
	done();
}

Test(onnx_import, softmax_opset_decides_the_axis_semantics)
{
	for (int opset = 11; opset <= 13; opset += 2) {
		begin(opset);
		input("x", 3, (int64_t[]){ 2, 3, 4 });
		st_onnx_node *n = node("Softmax", "sm", "x", NULL, NULL, "y");
		attr_i(n, "axis", 1);
		output("y");
		cr_assert_eq(import(), 0, "%s", messages);
		if (opset == 13) {
			cr_assert_eq(R.graph->n_layers, 3);
			cr_assert_eq(param(layer("sm"), "axis")->i, 1);
		} else {
			/* Opsets up to 12 normalise over every axis from 1: flatten, softmax, reshape. */
			cr_assert_eq(count_type("flatten"), 1);
			cr_assert_eq(count_type("reshape"), 1);
		}
		cr_assert_eq(R.graph->errors, 0);
		cr_assert_eq(R.graph->layers[R.graph->n_layers - 1]->inputs[0].layer->outputs[0].dims[2], 4);
		done();
	}
}

Test(onnx_import, shape_arithmetic_folds_into_a_reshape)
{
	begin(13);
	input("x", 4, (int64_t[]){ 2, 3, 4, 5 });
	static int64_t zero = 0, minus1 = -1;
	node("Shape", "s", "x", NULL, NULL, "shape");
	size_t i = B.g.n_initializers++;
	B.inits[i] = (st_onnx_tensor){ .name = S("idx"), .has_data_type = true, .data_type = ST_ONNX_INT64,
		                       .count = 1, .int64_data = &zero, .n_int64_data = 1 };
	node("Gather", "g", "shape", "idx", NULL, "n");
	st_onnx_node *u = node("Unsqueeze", "u", "n", "axes", NULL, "n1");
	(void)u;
	i = B.g.n_initializers++;
	B.inits[i] = (st_onnx_tensor){ .name = S("axes"), .has_data_type = true, .data_type = ST_ONNX_INT64,
		                       .dims = B.init_dims[i], .n_dims = 1, .count = 1, .int64_data = &zero,
		                       .n_int64_data = 1 };
	B.init_dims[i][0] = 1;
	i = B.g.n_initializers++;
	B.inits[i] = (st_onnx_tensor){ .name = S("m1"), .has_data_type = true, .data_type = ST_ONNX_INT64,
		                       .dims = B.init_dims[i], .n_dims = 1, .count = 1, .int64_data = &minus1,
		                       .n_int64_data = 1 };
	B.init_dims[i][0] = 1;
	st_onnx_node *c = node("Concat", "c", "n1", "m1", NULL, "newshape");
	attr_i(c, "axis", 0);
	node("Reshape", "r", "x", "newshape", NULL, "y");
	output("y");
	cr_assert_eq(import(), 0, "%s", messages);
	cr_assert_eq(R.graph->n_layers, 3, "only input, reshape and output remain");
	const st_value *shape = param(layer("r"), "shape");
	cr_assert_eq(shape->count, 2);
	cr_assert(shape->ints[0] == 2 && shape->ints[1] == -1);
	cr_assert_eq(R.n_folded, 4);
	cr_assert_eq(layer("y")->inputs[0].layer->outputs[0].dims[1], 60);
	done();
}

Test(onnx_import, sigmoid_times_x_is_silu)
{
	begin(13);
	input("x", 4, (int64_t[]){ 1, 1, 4, 4 });
	float w[1] = { 2 };
	init_f("W", 4, (int64_t[]){ 1, 1, 1, 1 }, w);
	node("Conv", "conv", "x", "W", NULL, "c");
	node("Sigmoid", "sg", "c", NULL, NULL, "s");
	node("Mul", "mul", "c", "s", NULL, "y");
	output("y");
	cr_assert_eq(import(), 0, "%s", messages);
	cr_assert_eq(R.graph->n_layers, 3);
	cr_assert_str_eq(layer("conv")->act.type_name, "silu");
	done();
}

Test(onnx_import, symbolic_dims_take_the_default)
{
	begin(13);
	input("x", 2, (int64_t[]){ -1, 7 });
	node("Relu", "r", "x", NULL, NULL, "y");
	output("y");
	cr_assert_eq(import(), 0, "%s", messages);
	cr_assert_eq(param(layer("x"), "batch")->i, 3);
	cr_assert(strstr(messages, "dimension 0 ('N') is set to 3") != NULL, "%s", messages);
	done();
}

Test(onnx_import, hostile_names_become_valid_unique_layer_names)
{
	begin(13);
	input("0", 2, (int64_t[]){ 1, 4 });
	node("Relu", "my layer", "0", NULL, NULL, "y:0");
	node("Relu", "my layer", "y:0", NULL, NULL, "int");
	output("int");
	cr_assert_eq(import(), 0, "%s", messages);
	for (int k = 0; k < R.graph->n_layers; k++) {
		const char *name = R.graph->layers[k]->name;
		cr_assert_null(st_name_problem(name), "'%s'", name);
		for (int j = 0; j < k; j++)
			cr_assert_str_neq(name, R.graph->layers[j]->name);
	}
	cr_assert_eq(R.graph->errors, 0);
	done();
}

Test(onnx_import, no_graph_and_bad_tensors_are_errors)
{
	begin(13);
	B.m.graph = NULL;
	cr_assert_neq(import(), 0);
	cr_assert(strstr(messages, "the model has no graph") != NULL);
	done();
	begin(13);
	input("x", 2, (int64_t[]){ 1, 4 });
	float w[16] = { 1 };
	init_f("W", 2, (int64_t[]){ 4, 4 }, w);
	B.inits[0].raw_data.len = 4; /* 16 elements declared, one stored */
	node("MatMul", "mm", "x", "W", NULL, "y");
	output("y");
	cr_assert_neq(import(), 0);
	cr_assert(strstr(messages, "mm") != NULL, "%s", messages);
	done();
}

Test(onnx_import, layer_normalization_op_and_written_out_form)
{
	/* The operator (opset 17). */
	begin(17);
	input("x", 3, (int64_t[]){ 2, 3, 4 });
	float g[4] = { 1, 2, 3, 4 }, b[4] = { 0, 0.5f, 0, -1 };
	init_f("g", 1, (int64_t[]){ 4 }, g);
	init_f("b", 1, (int64_t[]){ 4 }, b);
	st_onnx_node *n = node("LayerNormalization", "ln", "x", "g", "b", "y");
	attr_f(n, "epsilon", 1e-3f);
	output("y");
	cr_assert_eq(import(), 0, "%s", messages);
	cr_assert_str_eq(layer("ln")->type_name, "layer_normalization");
	cr_assert_eq(param(layer("ln"), "axis")->i, -1);
	cr_assert_float_eq(param(layer("ln"), "epsilon")->f, 1e-3, 1e-9);
	cr_assert(param(layer("ln"), "bias")->b);
	done();

	/* As PyTorch writes it out: ReduceMean, Sub, Pow 2, ReduceMean, Add ε,
	 * Sqrt, Div, Mul γ, Add β, named /block/norm/... */
	begin(13);
	input("x", 3, (int64_t[]){ 2, 3, 4 });
	float two = 2, eps = 1e-5f;
	init_f("g", 1, (int64_t[]){ 4 }, g);
	init_f("b", 1, (int64_t[]){ 4 }, b);
	init_f("two", 0, NULL, &two);
	init_f("eps", 0, NULL, &eps);
	attr_ints(node("ReduceMean", "/block/norm/ReduceMean", "x", NULL, NULL, "m"), "axes", 1, (int64_t[]){ -1 });
	node("Sub", "/block/norm/Sub", "x", "m", NULL, "d");
	node("Pow", "/block/norm/Pow", "d", "two", NULL, "d2");
	attr_ints(node("ReduceMean", "/block/norm/ReduceMean_1", "d2", NULL, NULL, "v"), "axes", 1, (int64_t[]){ -1 });
	node("Add", "/block/norm/Add", "v", "eps", NULL, "ve");
	node("Sqrt", "/block/norm/Sqrt", "ve", NULL, NULL, "s");
	node("Div", "/block/norm/Div", "d", "s", NULL, "nrm");
	node("Mul", "/block/norm/Mul", "nrm", "g", NULL, "gm");
	node("Add", "/block/norm/Add_1", "gm", "b", NULL, "y");
	output("y");
	cr_assert_eq(import(), 0, "%s", messages);
	cr_assert_eq(R.graph->n_layers, 3, "%d layers", R.graph->n_layers);
	const st_layer *l = layer("_block_norm");
	cr_assert_str_eq(l->type_name, "layer_normalization");
	cr_assert_float_eq(param(l, "epsilon")->f, 1e-5, 1e-9);
	st_npy a;
	load_weight("_block_norm", "scale", &a);
	cr_assert_float_eq(((const float *)a.data)[3], 4.0f, 1e-7);
	st_npy_free(&a);
	load_weight("_block_norm", "bias", &a);
	cr_assert_float_eq(((const float *)a.data)[3], -1.0f, 1e-7);
	st_npy_free(&a);
	done();
}
