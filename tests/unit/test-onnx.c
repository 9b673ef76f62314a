/* Unit tests: the ONNX protobuf reader and writer on byte strings built by
 * hand (each wire type, packed and unpacked fields, every refusal) and on
 * external data in a temporary folder. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "st-onnx.h"

/* ---- building messages ---- */

static void
pb_varint(st_buf *b, uint64_t v)
{
	do {
		st_buf_putc(b, (char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0)));
		v >>= 7;
	} while (v != 0);
}

static void
pb_int(st_buf *b, uint32_t field, int64_t v)
{
	pb_varint(b, (uint64_t)field << 3);
	pb_varint(b, (uint64_t)v);
}

static void
pb_bytes(st_buf *b, uint32_t field, const void *data, size_t len)
{
	pb_varint(b, (uint64_t)field << 3 | 2);
	pb_varint(b, len);
	st_buf_add(b, data, len);
}

static void
pb_str(st_buf *b, uint32_t field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

/* Appends sub as field and empties it. */
static void
pb_msg(st_buf *b, uint32_t field, st_buf *sub)
{
	pb_bytes(b, field, sub->data != NULL ? sub->data : "", sub->len);
	st_buf_reset(sub);
}

static void
pb_fixed32(st_buf *b, uint32_t field, float f)
{
	uint32_t w;
	memcpy(&w, &f, 4);
	pb_varint(b, (uint64_t)field << 3 | 5);
	for (int i = 0; i < 4; i++)
		st_buf_putc(b, (char)(w >> (8 * i)));
}

/* A model whose graph holds one tensor (the initializer) built in t. */
static void
model_with_tensor(st_buf *out, st_buf *t)
{
	st_buf g;
	st_buf_init(&g);
	pb_str(&g, 2, "g");
	pb_msg(&g, 5, t);
	pb_int(out, 1, 8);
	pb_msg(out, 7, &g);
	st_buf_free(&g);
}

static int
parse(const st_buf *b, st_onnx_model *m, char *err)
{
	return st_onnx_parse(b->data, b->len, m, err, 1024);
}

/* The model re-encodes to exactly the bytes it came from. */
static void
assert_roundtrip(const st_onnx_model *m, const st_buf *b)
{
	st_buf e;
	st_buf_init(&e);
	st_onnx_encode(m, &e);
	cr_assert_eq(e.len, b->len, "re-encoded %zu bytes, not %zu", e.len, b->len);
	cr_assert(memcmp(e.data, b->data, b->len) == 0, "the re-encoded bytes differ");
	st_buf_free(&e);
}

static void
expect_error(const st_buf *b, const char *text)
{
	st_onnx_model m;
	char err[1024] = "";
	cr_assert_neq(parse(b, &m, err), 0, "accepted; expected: %s", text);
	cr_assert_not_null(strstr(err, text), "message '%s' lacks '%s'", err, text);
	st_onnx_free(&m);
}

/* ---- reading ---- */

Test(onnx, model_fields_and_opsets)
{
	st_buf b, o;
	st_buf_init(&b);
	st_buf_init(&o);
	pb_int(&b, 1, 7);
	pb_str(&b, 2, "backend-test");
	pb_int(&b, 5, -1); /* negative: ten bytes */
	st_buf g;
	st_buf_init(&g);
	pb_msg(&b, 7, &g);
	pb_str(&o, 1, "");
	pb_int(&o, 2, 13);
	pb_msg(&b, 8, &o);
	pb_str(&o, 1, "com.microsoft");
	pb_int(&o, 2, 1);
	pb_msg(&b, 8, &o);
	st_onnx_model m;
	char err[1024];
	cr_assert_eq(parse(&b, &m, err), 0, "%s", err);
	cr_assert(m.has_ir_version);
	cr_assert_eq(m.ir_version, 7);
	cr_assert(st_onnx_str_eq(m.producer_name, "backend-test"));
	cr_assert_eq(m.model_version, -1);
	cr_assert_null(m.producer_version.data, "an absent string is NULL");
	cr_assert_not_null(m.graph);
	cr_assert_eq(m.n_opsets, 2);
	cr_assert(st_onnx_str_eq(m.opsets[0].domain, ""), "a present empty string is kept");
	cr_assert_eq(m.opsets[1].version, 1);
	assert_roundtrip(&m, &b);
	st_onnx_free(&m);
	st_buf_free(&b);
	st_buf_free(&o);
	st_buf_free(&g);
}

Test(onnx, node_attributes_each_wire_type)
{
	st_buf b, g, n, a;
	st_buf_init(&b);
	st_buf_init(&g);
	st_buf_init(&n);
	st_buf_init(&a);
	pb_str(&n, 1, "x");
	pb_str(&n, 1, "");
	pb_str(&n, 2, "y");
	pb_str(&n, 4, "Conv");
	pb_str(&a, 1, "alpha");
	pb_fixed32(&a, 2, 0.5f);
	pb_int(&a, 20, ST_ONNX_ATTR_FLOAT);
	pb_msg(&n, 5, &a);
	pb_str(&a, 1, "pads");
	pb_int(&a, 8, 1);
	pb_int(&a, 8, -2);
	pb_int(&a, 20, ST_ONNX_ATTR_INTS);
	pb_msg(&n, 5, &a);
	pb_str(&a, 1, "scales");
	pb_fixed32(&a, 7, 1.5f);
	pb_fixed32(&a, 7, 2.0f);
	pb_int(&a, 20, ST_ONNX_ATTR_FLOATS);
	pb_msg(&n, 5, &a);
	pb_msg(&g, 1, &n);
	pb_msg(&b, 7, &g);
	st_onnx_model m;
	char err[1024];
	cr_assert_eq(parse(&b, &m, err), 0, "%s", err);
	const st_onnx_node *node = &m.graph->nodes[0];
	cr_assert_eq(node->n_inputs, 2);
	cr_assert_eq(node->inputs[1].len, 0, "an omitted optional input");
	cr_assert_not_null(node->inputs[1].data);
	cr_assert(st_onnx_str_eq(node->op_type, "Conv"));
	cr_assert_eq(node->n_attributes, 3);
	cr_assert(node->attributes[0].has_f);
	cr_assert_float_eq(node->attributes[0].f, 0.5f, 0);
	cr_assert_eq(node->attributes[1].n_ints, 2);
	cr_assert_eq(node->attributes[1].ints[1], -2);
	cr_assert_eq(node->attributes[2].n_floats, 2);
	cr_assert_float_eq(node->attributes[2].floats[1], 2.0f, 0);
	assert_roundtrip(&m, &b);
	st_onnx_free(&m);
	st_buf_free(&b);
	st_buf_free(&g);
	st_buf_free(&n);
	st_buf_free(&a);
}

Test(onnx, packed_and_unpacked_repeated_fields)
{
	st_buf t, b, p;
	st_buf_init(&t);
	st_buf_init(&b);
	st_buf_init(&p);
	/* dims packed (writers emit them unpacked), int64_data unpacked then packed. */
	pb_varint(&p, 2);
	pb_varint(&p, 3);
	pb_msg(&t, 1, &p);
	pb_int(&t, 2, ST_ONNX_INT64);
	pb_int(&t, 7, 5);
	pb_varint(&p, 300);
	pb_varint(&p, (uint64_t)-7);
	pb_varint(&p, 1);
	pb_varint(&p, 2);
	pb_varint(&p, 3);
	pb_msg(&t, 7, &p);
	/* float_data unpacked, double_data packed, int32_data packed negative. */
	pb_fixed32(&t, 4, 1.25f);
	double dv = -3.5;
	pb_bytes(&t, 10, &dv, 8);
	pb_varint(&p, (uint64_t)(int64_t)-4);
	pb_msg(&t, 5, &p);
	model_with_tensor(&b, &t);
	st_onnx_model m;
	char err[1024];
	cr_assert_eq(parse(&b, &m, err), 0, "%s", err);
	const st_onnx_tensor *x = &m.graph->initializers[0];
	cr_assert_eq(x->n_dims, 2);
	cr_assert_eq(x->dims[1], 3);
	cr_assert_eq(x->count, 6);
	cr_assert_eq(x->n_int64_data, 6);
	cr_assert_eq(x->int64_data[0], 5);
	cr_assert_eq(x->int64_data[1], 300);
	cr_assert_eq(x->int64_data[2], -7);
	cr_assert_eq(x->n_float_data, 1);
	cr_assert_float_eq(x->float_data[0], 1.25f, 0);
	cr_assert_eq(x->n_double_data, 1);
	cr_assert_float_eq(x->double_data[0], -3.5, 0);
	cr_assert_eq(x->n_int32_data, 1);
	cr_assert_eq(x->int32_data[0], -4);
	/* The writer's form: dims unpacked, *_data packed; it reads back the same. */
	st_buf e;
	st_buf_init(&e);
	st_onnx_encode(&m, &e);
	st_onnx_model m2;
	cr_assert_eq(st_onnx_parse(e.data, e.len, &m2, err, sizeof err), 0, "%s", err);
	const st_onnx_tensor *y = &m2.graph->initializers[0];
	cr_assert_eq(y->n_int64_data, 6);
	cr_assert_eq(y->int64_data[5], 3);
	cr_assert_eq(y->int32_data[0], -4);
	st_buf e2;
	st_buf_init(&e2);
	st_onnx_encode(&m2, &e2);
	cr_assert_eq(e2.len, e.len);
	cr_assert(memcmp(e.data, e2.data, e.len) == 0);
	/* dims are written unpacked: 08 02 08 03 right after the tensor's length. */
	cr_assert_not_null(memmem(e.data, e.len, "\x08\x02\x08\x03\x10\x07", 6));
	st_onnx_free(&m);
	st_onnx_free(&m2);
	st_buf_free(&e);
	st_buf_free(&e2);
	st_buf_free(&t);
	st_buf_free(&b);
	st_buf_free(&p);
}

Test(onnx, scalar_given_twice_last_wins)
{
	st_buf b;
	st_buf_init(&b);
	pb_int(&b, 1, 3);
	pb_str(&b, 2, "first");
	pb_int(&b, 1, 8);
	pb_str(&b, 2, "second");
	st_onnx_model m;
	char err[1024];
	cr_assert_eq(parse(&b, &m, err), 0, "%s", err);
	cr_assert_eq(m.ir_version, 8);
	cr_assert(st_onnx_str_eq(m.producer_name, "second"));
	st_onnx_free(&m);
	st_buf_free(&b);
}

Test(onnx, unknown_fields_kept_in_place)
{
	st_buf b, o;
	st_buf_init(&b);
	st_buf_init(&o);
	pb_int(&b, 1, 8);
	pb_fixed32(&b, 9, 1.0f);        /* unknown fixed32 */
	pb_int(&b, 10, 5);              /* unknown varint */
	pb_varint(&b, 11 << 3 | 1);     /* unknown fixed64 */
	st_buf_add(&b, "12345678", 8);
	pb_str(&b, 14 - 1, "unknown");  /* 13: unknown bytes */
	pb_str(&o, 1, "k");
	pb_str(&o, 2, "v");
	pb_msg(&b, 14, &o);
	pb_str(&b, 25, "function bytes");
	st_onnx_model m;
	char err[1024];
	cr_assert_eq(parse(&b, &m, err), 0, "%s", err);
	cr_assert_eq(m.extras.count, 5);
	cr_assert_eq(m.n_metadata_props, 1);
	assert_roundtrip(&m, &b);
	st_onnx_free(&m);
	st_buf_free(&b);
	st_buf_free(&o);
}

Test(onnx, value_info_types)
{
	st_buf b, g, v, t, tt, s, d;
	st_buf *all[] = { &b, &g, &v, &t, &tt, &s, &d };
	for (size_t i = 0; i < 7; i++)
		st_buf_init(all[i]);
	pb_int(&d, 1, 1);
	pb_msg(&s, 1, &d);
	pb_str(&d, 2, "N");
	pb_msg(&s, 1, &d);
	pb_msg(&s, 1, &d); /* neither value nor param */
	pb_int(&tt, 1, ST_ONNX_FLOAT);
	pb_msg(&tt, 2, &s);
	pb_msg(&t, 1, &tt);
	pb_str(&v, 1, "x");
	pb_msg(&v, 2, &t);
	pb_msg(&g, 11, &v);
	/* A sequence type: recorded as not a tensor, kept. */
	pb_msg(&tt, 1, &t); /* elem_type: an empty TypeProto */
	pb_msg(&t, 4, &tt);
	pb_str(&v, 1, "seq");
	pb_msg(&v, 2, &t);
	pb_msg(&g, 12, &v);
	pb_msg(&b, 7, &g);
	st_onnx_model m;
	char err[1024];
	cr_assert_eq(parse(&b, &m, err), 0, "%s", err);
	const st_onnx_type *x = &m.graph->inputs[0].type;
	cr_assert_eq(x->kind, ST_ONNX_TYPE_TENSOR);
	cr_assert_eq(x->elem_type, ST_ONNX_FLOAT);
	cr_assert(x->has_shape);
	cr_assert_eq(x->n_dims, 3);
	cr_assert(x->dims[0].has_value && x->dims[0].value == 1);
	cr_assert(st_onnx_str_eq(x->dims[1].param, "N"));
	cr_assert(!x->dims[2].has_value && x->dims[2].param.data == NULL);
	cr_assert_eq(m.graph->outputs[0].type.kind, ST_ONNX_TYPE_OTHER);
	assert_roundtrip(&m, &b);
	st_onnx_free(&m);
	for (size_t i = 0; i < 7; i++)
		st_buf_free(all[i]);
}

Test(onnx, raw_data_points_into_the_buffer)
{
	st_buf t, b;
	st_buf_init(&t);
	st_buf_init(&b);
	float w[3] = { 1, 2, 3 };
	pb_int(&t, 1, 3);
	pb_int(&t, 2, ST_ONNX_FLOAT);
	pb_str(&t, 8, "W");
	pb_bytes(&t, 9, w, sizeof w);
	model_with_tensor(&b, &t);
	st_onnx_model m;
	char err[1024];
	cr_assert_eq(parse(&b, &m, err), 0, "%s", err);
	const st_onnx_tensor *x = &m.graph->initializers[0];
	cr_assert(x->raw_data.data >= b.data && x->raw_data.data + x->raw_data.len <= b.data + b.len,
	          "raw_data is not a copy");
	const void *p;
	size_t len;
	cr_assert_eq(st_onnx_tensor_bytes(x, &p, &len, err, sizeof err), 0, "%s", err);
	cr_assert_eq(p, (const void *)x->raw_data.data);
	cr_assert_eq(len, 12);
	cr_assert(memcmp(p, w, 12) == 0);
	assert_roundtrip(&m, &b);
	st_onnx_free(&m);
	st_buf_free(&t);
	st_buf_free(&b);
}

Test(onnx, raw_data_length_must_match_dims)
{
	st_buf t, b;
	st_buf_init(&t);
	st_buf_init(&b);
	pb_int(&t, 1, 4);
	pb_int(&t, 2, ST_ONNX_FLOAT);
	pb_bytes(&t, 9, "12345678", 8);
	model_with_tensor(&b, &t);
	st_onnx_model m;
	char err[1024];
	cr_assert_eq(parse(&b, &m, err), 0, "%s", err);
	const void *p;
	size_t len;
	cr_assert_neq(st_onnx_tensor_bytes(&m.graph->initializers[0], &p, &len, err, sizeof err), 0);
	cr_assert_not_null(strstr(err, "holds 8 bytes, but 4 FLOAT values need 16"), "%s", err);
	st_onnx_free(&m);
	st_buf_free(&t);
	st_buf_free(&b);
}

/* ---- refusals ---- */

Test(onnx, truncated_varint)
{
	st_buf b;
	st_buf_init(&b);
	st_buf_add(&b, "\x08\x80\x80", 3);
	expect_error(&b, "model: varint cut short by the end of the file at byte 1");
	st_buf_free(&b);
}

Test(onnx, varint_over_ten_bytes)
{
	st_buf b;
	st_buf_init(&b);
	st_buf_add(&b, "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12);
	expect_error(&b, "varint");
	st_buf_free(&b);
}

Test(onnx, length_past_the_end)
{
	st_buf b, g, n, a;
	st_buf_init(&b);
	st_buf_init(&g);
	st_buf_init(&n);
	st_buf_init(&a);
	pb_str(&n, 4, "Relu");
	pb_str(&n, 5, "");            /* attribute[0], empty */
	pb_varint(&n, 5 << 3 | 2);    /* attribute[1] claims 4096 bytes */
	pb_varint(&n, 4096);
	st_buf_add(&n, "\x0a\x01", 2);
	pb_str(&g, 2, "g");
	pb_str(&g, 2, "g");
	pb_str(&g, 2, "g");
	pb_str(&g, 1, "");
	pb_str(&g, 1, "");
	pb_str(&g, 1, "");
	pb_msg(&g, 1, &n);
	pb_msg(&b, 7, &g);
	pb_str(&b, 2, "after the graph");
	expect_error(&b, "graph.node[3]: field 5: length 4096 past the end of its message at byte");
	/* The same at the end of the file. */
	st_buf_reset(&b);
	pb_varint(&b, 6 << 3 | 2);
	pb_varint(&b, 4096);
	expect_error(&b, "model: field 6: length 4096 past the end of the file at byte 1");
	st_buf_free(&b);
	st_buf_free(&g);
	st_buf_free(&n);
	st_buf_free(&a);
}

Test(onnx, error_path_names_the_attribute)
{
	st_buf b, g, n, a;
	st_buf_init(&b);
	st_buf_init(&g);
	st_buf_init(&n);
	st_buf_init(&a);
	pb_str(&a, 1, "ok");
	pb_msg(&n, 5, &a);
	st_buf_add(&a, "\x0b", 1); /* a start-group key */
	pb_msg(&n, 5, &a);
	pb_msg(&g, 1, &n);
	pb_msg(&b, 7, &g);
	expect_error(&b, "graph.node[0].attribute[1]: field 1 uses the group wire type 3");
	st_buf_free(&b);
	st_buf_free(&g);
	st_buf_free(&n);
	st_buf_free(&a);
}

Test(onnx, group_wire_types)
{
	st_buf b;
	st_buf_init(&b);
	st_buf_add(&b, "\x0b", 1);
	expect_error(&b, "group wire type 3");
	st_buf_reset(&b);
	st_buf_add(&b, "\x0c", 1);
	expect_error(&b, "group wire type 4");
	st_buf_reset(&b);
	st_buf_add(&b, "\x0e", 1);
	expect_error(&b, "invalid wire type 6");
	st_buf_free(&b);
}

Test(onnx, wrong_wire_type_for_a_known_field)
{
	st_buf b;
	st_buf_init(&b);
	pb_str(&b, 1, "8");
	expect_error(&b, "field 1 (ir_version) has wire type 2, expected 0");
	st_buf_free(&b);
}

Test(onnx, fixed_value_cut_short)
{
	st_buf b;
	st_buf_init(&b);
	st_buf_add(&b, "\x4d\x01\x02", 3); /* field 9, fixed32, two bytes left */
	expect_error(&b, "4-byte value past the end of the file");
	st_buf_free(&b);
}

Test(onnx, negative_dim)
{
	st_buf t, b;
	st_buf_init(&t);
	st_buf_init(&b);
	pb_int(&t, 1, 2);
	pb_int(&t, 1, -5);
	model_with_tensor(&b, &t);
	expect_error(&b, "graph.initializer[0]: dims[1] is -5, below 0");
	st_buf_free(&t);
	st_buf_free(&b);
}

Test(onnx, dims_product_overflows)
{
	st_buf t, b;
	st_buf_init(&t);
	st_buf_init(&b);
	pb_int(&t, 1, INT64_C(1) << 40);
	pb_int(&t, 1, INT64_C(1) << 40);
	model_with_tensor(&b, &t);
	expect_error(&b, "the dims' product overflows 64 bits at dims[1]");
	st_buf_free(&t);
	st_buf_free(&b);
}

Test(onnx, huge_count_claimed)
{
	/* A packed field claiming 2^40 bytes, and one that is not a whole
	 * number of floats. */
	st_buf t, b;
	st_buf_init(&t);
	st_buf_init(&b);
	pb_varint(&t, 4 << 3 | 2);
	pb_varint(&t, UINT64_C(1) << 40);
	model_with_tensor(&b, &t);
	expect_error(&b, "length 1099511627776 past the end");
	st_buf_reset(&t);
	st_buf_reset(&b);
	pb_bytes(&t, 4, "abcdefg", 7);
	model_with_tensor(&b, &t);
	expect_error(&b, "packed float_data: 7 bytes is not a whole number of 4-byte values");
	st_buf_free(&t);
	st_buf_free(&b);
}

Test(onnx, subgraphs_nested_too_deep)
{
	st_buf cur, a, n, next;
	st_buf_init(&cur);
	st_buf_init(&a);
	st_buf_init(&n);
	st_buf_init(&next);
	for (int i = 0; i < 40; i++) {
		pb_msg(&a, 6, &cur);
		pb_msg(&n, 5, &a);
		pb_msg(&next, 1, &n);
		st_buf tmp = cur;
		cur = next;
		next = tmp;
	}
	st_buf b;
	st_buf_init(&b);
	pb_msg(&b, 7, &cur);
	expect_error(&b, "subgraphs nested deeper than 32 levels");
	st_buf_free(&b);
	st_buf_free(&cur);
	st_buf_free(&a);
	st_buf_free(&n);
	st_buf_free(&next);
}

Test(onnx, empty_input_is_an_empty_model)
{
	st_onnx_model m;
	char err[1024];
	cr_assert_eq(st_onnx_parse("", 0, &m, err, sizeof err), 0, "%s", err);
	cr_assert_null(m.graph);
	st_onnx_free(&m);
}

/* ---- files and external data ---- */

/* A model file in a new temporary folder whose initializer "W" (4 floats)
 * lives in external data at location; returns the folder (caller frees). */
static char *
external_model(const char *location, const char *offset, const char *length)
{
	char tmpl[] = "/tmp/strata-onnx-XXXXXX";
	cr_assert_not_null(mkdtemp(tmpl));
	char *dir = st_xstrdup(tmpl);
	float w[6] = { 9, 1, 2, 3, 4, 9 };
	char *data_path = st_xasprintf("%s/weights.bin", dir), err[512];
	cr_assert_eq(st_write_file_atomic(data_path, (const char *)w, sizeof w, err, sizeof err), 0, "%s", err);
	free(data_path);
	st_buf t, e, b;
	st_buf_init(&t);
	st_buf_init(&e);
	st_buf_init(&b);
	pb_int(&t, 1, 4);
	pb_int(&t, 2, ST_ONNX_FLOAT);
	pb_str(&t, 8, "W");
	pb_str(&e, 1, "location");
	pb_str(&e, 2, location);
	pb_msg(&t, 13, &e);
	if (offset != NULL) {
		pb_str(&e, 1, "offset");
		pb_str(&e, 2, offset);
		pb_msg(&t, 13, &e);
	}
	if (length != NULL) {
		pb_str(&e, 1, "length");
		pb_str(&e, 2, length);
		pb_msg(&t, 13, &e);
	}
	pb_int(&t, 14, 1);
	model_with_tensor(&b, &t);
	char *model_path = st_xasprintf("%s/model.onnx", dir);
	cr_assert_eq(st_write_file_atomic(model_path, b.data, b.len, err, sizeof err), 0, "%s", err);
	free(model_path);
	st_buf_free(&t);
	st_buf_free(&e);
	st_buf_free(&b);
	return dir;
}

static void
remove_folder(char *dir)
{
	char *cmd = st_xasprintf("rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	free(dir);
}

Test(onnx, external_data_is_mapped)
{
	char *dir = external_model("weights.bin", "4", "16");
	char *path = st_xasprintf("%s/model.onnx", dir), err[1024];
	st_onnx_model m;
	cr_assert_eq(st_onnx_open(path, &m, err, sizeof err), 0, "%s", err);
	const st_onnx_tensor *t = &m.graph->initializers[0];
	const void *p;
	size_t len;
	cr_assert_eq(st_onnx_tensor_bytes(t, &p, &len, err, sizeof err), 0, "%s", err);
	cr_assert_eq(len, 16);
	float w[4];
	memcpy(w, p, 16);
	cr_assert(w[0] == 1 && w[3] == 4);
	/* Writing keeps the tensor external. */
	char *out = st_xasprintf("%s/copy.onnx", dir);
	cr_assert_eq(st_onnx_write(out, &m, err, sizeof err), 0, "%s", err);
	size_t a_len, b_len;
	char *a = st_read_file(path, &a_len), *b = st_read_file(out, &b_len);
	cr_assert(a_len == b_len && memcmp(a, b, a_len) == 0);
	free(a);
	free(b);
	free(out);
	st_onnx_free(&m);
	free(path);
	remove_folder(dir);
}

Test(onnx, external_data_outside_the_folder_refused)
{
	char *dir = external_model("../x", NULL, NULL);
	char *path = st_xasprintf("%s/model.onnx", dir), err[1024];
	st_onnx_model m;
	cr_assert_neq(st_onnx_open(path, &m, err, sizeof err), 0);
	cr_assert_not_null(strstr(err, "graph.initializer[0]: external data: '../x' climbs out"), "%s", err);
	st_onnx_free(&m);
	free(path);
	remove_folder(dir);
	dir = external_model("/etc/passwd", NULL, NULL);
	path = st_xasprintf("%s/model.onnx", dir);
	cr_assert_neq(st_onnx_open(path, &m, err, sizeof err), 0);
	cr_assert_not_null(strstr(err, "absolute path"), "%s", err);
	st_onnx_free(&m);
	free(path);
	remove_folder(dir);
}

Test(onnx, external_data_missing_or_short)
{
	char *dir = external_model("nothere.bin", NULL, NULL);
	char *path = st_xasprintf("%s/model.onnx", dir), err[1024];
	st_onnx_model m;
	cr_assert_neq(st_onnx_open(path, &m, err, sizeof err), 0);
	cr_assert_not_null(strstr(err, "external data 'nothere.bin':"), "%s", err);
	cr_assert_not_null(strstr(err, "No such file"), "%s", err);
	st_onnx_free(&m);
	free(path);
	remove_folder(dir);
	dir = external_model("weights.bin", "16", "16");
	path = st_xasprintf("%s/model.onnx", dir);
	cr_assert_neq(st_onnx_open(path, &m, err, sizeof err), 0);
	cr_assert_not_null(strstr(err, "offset 16 and length 16 reach past its end (24 bytes)"), "%s", err);
	st_onnx_free(&m);
	free(path);
	remove_folder(dir);
	dir = external_model("weights.bin", "-1", NULL);
	path = st_xasprintf("%s/model.onnx", dir);
	cr_assert_neq(st_onnx_open(path, &m, err, sizeof err), 0);
	cr_assert_not_null(strstr(err, "offset '-1' is not a number"), "%s", err);
	st_onnx_free(&m);
	free(path);
	remove_folder(dir);
}

Test(onnx, missing_file)
{
	st_onnx_model m;
	char err[1024];
	cr_assert_neq(st_onnx_open("/nonexistent/model.onnx", &m, err, sizeof err), 0);
	cr_assert_not_null(strstr(err, "/nonexistent/model.onnx: No such file"), "%s", err);
	st_onnx_free(&m);
}

Test(onnx, type_kind_does_not_depend_on_field_order)
{
	/* An opaque type (7) before a tensor_type (1): found by fuzz-onnx, the
	 * writer put tensor_type first and the kind changed on reading back. */
	st_buf b, g, v, t, tt;
	st_buf *all[] = { &b, &g, &v, &t, &tt };
	for (size_t i = 0; i < 5; i++)
		st_buf_init(all[i]);
	pb_str(&t, 7, "");
	pb_int(&tt, 1, ST_ONNX_FLOAT);
	pb_msg(&t, 1, &tt);
	pb_msg(&v, 2, &t);
	pb_msg(&g, 11, &v);
	pb_msg(&b, 7, &g);
	st_onnx_model m, m2;
	char err[1024];
	cr_assert_eq(parse(&b, &m, err), 0, "%s", err);
	cr_assert_eq(m.graph->inputs[0].type.kind, ST_ONNX_TYPE_TENSOR);
	st_buf e;
	st_buf_init(&e);
	st_onnx_encode(&m, &e);
	cr_assert_eq(st_onnx_parse(e.data, e.len, &m2, err, sizeof err), 0, "%s", err);
	cr_assert_eq(m2.graph->inputs[0].type.kind, ST_ONNX_TYPE_TENSOR);
	assert_roundtrip(&m2, &e);
	st_onnx_free(&m);
	st_onnx_free(&m2);
	st_buf_free(&e);
	for (size_t i = 0; i < 5; i++)
		st_buf_free(all[i]);
}
