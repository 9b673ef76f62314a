/* Unit tests: shapes, dtypes and parameter values. */
#include "config.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

static const char *const modes[] = { "max", "avg", NULL };
static const st_param_desc p_int = { .name = "stride", .kind = ST_PARAM_INT, .default_value = "1",
	                             .flags = ST_PARAM_HAS_MIN, .min = 1, .doc = "d" };
static const st_param_desc p_range = { .name = "bit", .kind = ST_PARAM_INT, .default_value = "4",
	                               .flags = ST_PARAM_HAS_MIN | ST_PARAM_HAS_MAX, .min = 2, .max = 8,
	                               .doc = "d" };
static const st_param_desc p_float = { .name = "eps", .kind = ST_PARAM_FLOAT, .default_value = "1e-5",
	                               .flags = ST_PARAM_HAS_MIN, .min = 0, .doc = "d" };
static const st_param_desc p_enum = { .name = "mode", .kind = ST_PARAM_ENUM, .default_value = "max",
	                              .enum_values = modes, .doc = "d" };
static const st_param_desc p_dims = { .name = "kernel", .kind = ST_PARAM_DIMS, .default_value = "[3]",
	                              .flags = ST_PARAM_HAS_MIN, .min = 1, .min_count = 1,
	                              .max_count = 3, .doc = "d" };
static const st_param_desc p_floats = { .name = "scales", .kind = ST_PARAM_FLOATS,
	                                .default_value = "[2.0]", .doc = "d" };
static const st_param_desc p_bool = { .name = "bias", .kind = ST_PARAM_BOOL, .default_value = "true",
	                              .doc = "d" };
static const st_param_desc p_str = { .name = "label", .kind = ST_PARAM_STRING, .default_value = "",
	                             .doc = "d" };

static int
parse_json(const st_param_desc *d, const char *json, st_value *v, char *err)
{
	cJSON *j = cJSON_Parse(json);
	cr_assert_not_null(j, "bad test json %s", json);
	int rc = st_value_from_json(d, j, v, err, 256);
	cJSON_Delete(j);
	return rc;
}

Test(value, integers_and_their_ranges)
{
	st_value v;
	char err[256];
	cr_assert_eq(parse_json(&p_int, "2", &v, err), 0);
	cr_assert_eq(v.i, 2);
	cr_assert_eq(parse_json(&p_int, "-2", &v, err), -1);
	cr_assert_str_eq(err, "must be a positive integer, got -2");
	cr_assert_eq(parse_json(&p_int, "2.5", &v, err), -1);
	cr_assert_str_eq(err, "must be a positive integer, got 2.5");
	cr_assert_eq(parse_json(&p_int, "\"2\"", &v, err), -1);
	cr_assert_str_eq(err, "must be a positive integer, got \"2\"");
	cr_assert_eq(parse_json(&p_int, "1e300", &v, err), -1);
	cr_assert_eq(parse_json(&p_range, "9", &v, err), -1);
	cr_assert_str_eq(err, "must be an integer from 2 to 8, got 9");
}

Test(value, floats_enums_bools_strings)
{
	st_value v;
	char err[256];
	cr_assert_eq(parse_json(&p_float, "0.001", &v, err), 0);
	cr_assert_float_eq(v.f, 0.001, 1e-12);
	cr_assert_eq(parse_json(&p_float, "-1", &v, err), -1);
	cr_assert_str_eq(err, "must be a non-negative number, got -1");
	cr_assert_eq(parse_json(&p_enum, "\"avg\"", &v, err), 0);
	cr_assert_eq(v.i, 1);
	cr_assert_eq(parse_json(&p_enum, "\"mean\"", &v, err), -1);
	cr_assert_str_eq(err, "must be \"max\" or \"avg\", got \"mean\"");
	cr_assert_eq(parse_json(&p_bool, "1", &v, err), -1);
	cr_assert_str_eq(err, "must be true or false, got 1");
	cr_assert_eq(parse_json(&p_str, "\"hello\"", &v, err), 0);
	cr_assert_str_eq(v.s, "hello");
	st_value_clear(&v);
}

Test(value, lists)
{
	st_value v;
	char err[256];
	cr_assert_eq(parse_json(&p_dims, "[3, 5]", &v, err), 0);
	cr_assert_eq(v.count, 2);
	cr_assert_eq(v.ints[1], 5);
	st_value_clear(&v);
	cr_assert_eq(parse_json(&p_dims, "7", &v, err), 0, "a single number is a list of one");
	cr_assert_eq(v.count, 1);
	st_value_clear(&v);
	cr_assert_eq(parse_json(&p_dims, "[]", &v, err), -1);
	cr_assert_str_eq(err, "must have 1 to 3 values, got 0");
	cr_assert_eq(parse_json(&p_dims, "[3, 0]", &v, err), -1);
	cr_assert_str_eq(err, "must be a list of integers; item 1 must be a positive integer, got 0");
	cr_assert_eq(parse_json(&p_dims, "[3, \"x\"]", &v, err), -1);
	cr_assert_eq(parse_json(&p_floats, "[1.5, 2]", &v, err), 0);
	cr_assert_float_eq(v.floats[0], 1.5, 0);
	st_value_clear(&v);
}

Test(value, command_text)
{
	st_value v;
	char err[256];
	const char *forms[] = { "3x5", "[3, 5]", "3,5", "3 5", "[3,5]" };
	for (int i = 0; i < 5; i++) {
		cr_assert_eq(st_value_from_text(&p_dims, forms[i], &v, err, sizeof err), 0, "%s: %s",
		             forms[i], err);
		cr_assert_eq(v.count, 2);
		cr_assert_eq(v.ints[0], 3);
		cr_assert_eq(v.ints[1], 5);
		st_value_clear(&v);
	}
	cr_assert_eq(st_value_from_text(&p_bool, "off", &v, err, sizeof err), 0);
	cr_assert_not(v.b);
	cr_assert_eq(st_value_from_text(&p_enum, "avg", &v, err, sizeof err), 0);
	cr_assert_eq(v.i, 1);
	cr_assert_eq(st_value_from_text(&p_int, "abc", &v, err, sizeof err), -1);
	cr_assert_str_eq(err, "must be a positive integer, got \"abc\"");
	cr_assert_eq(st_value_from_text(&p_int, "16 junk", &v, err, sizeof err), -1, "trailing text");
	cr_assert_eq(st_value_from_text(&p_int, "2]]", &v, err, sizeof err), -1);
	cr_assert_eq(st_value_from_text(&p_dims, "[3,3] x", &v, err, sizeof err), -1);
	cr_assert_eq(st_value_from_text(&p_str, "two words", &v, err, sizeof err), 0);
	cr_assert_str_eq(v.s, "two words");
	st_value_clear(&v);
}

Test(value, canonical_json_and_text)
{
	st_value v;
	char err[256];
	st_buf b;
	st_buf_init(&b);
	st_value_from_text(&p_dims, "3x3", &v, err, sizeof err);
	st_value_to_json(&p_dims, &v, &b);
	cr_assert_str_eq(b.data, "[3, 3]");
	st_buf_reset(&b);
	st_value_to_text(&p_dims, &v, &b);
	cr_assert_str_eq(b.data, "3x3");
	st_value_clear(&v);
	st_buf_reset(&b);
	st_value_from_text(&p_float, "1", &v, err, sizeof err);
	st_value_to_json(&p_float, &v, &b);
	cr_assert_str_eq(b.data, "1.0");
	st_buf_reset(&b);
	st_value_from_text(&p_enum, "avg", &v, err, sizeof err);
	st_value_to_json(&p_enum, &v, &b);
	cr_assert_str_eq(b.data, "\"avg\"");
	st_buf_free(&b);
}

Test(value, shortest_doubles_read_back_exactly)
{
	double samples[] = { 0.1, 1e-5, 1.0507009873554805, 3.0, -2.5e-300, 123456789.125, 1.0 / 3 };
	for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
		st_buf b;
		st_buf_init(&b);
		st_format_double(samples[i], &b);
		cr_assert_eq(strtod(b.data, NULL), samples[i], "%s", b.data);
		cr_assert(strpbrk(b.data, ".e") != NULL, "%s reads as a float", b.data);
		st_buf_free(&b);
	}
	st_buf b;
	st_buf_init(&b);
	st_format_double(0.1, &b);
	cr_assert_str_eq(b.data, "0.1");
	st_buf_free(&b);
}

Test(value, copy_and_equality)
{
	st_value a, c;
	char err[256];
	st_value_from_text(&p_dims, "1x2x3", &a, err, sizeof err);
	st_value_copy(&c, &a);
	cr_assert(st_value_equal(&a, &c));
	cr_assert_neq(a.ints, c.ints);
	((int64_t *)c.ints)[2] = 4;
	cr_assert_not(st_value_equal(&a, &c));
	st_value_clear(&a);
	st_value_clear(&c);
}

Test(value, shapes)
{
	st_shape s = test_shape("2x3x4");
	cr_assert_eq(st_shape_elements(&s), 24);
	cr_assert_eq(st_shape_bytes(&s), 96);
	s = test_shape("float16:2x3");
	cr_assert_eq(st_shape_bytes(&s), 12);
	s = test_shape("4294967296x4294967296x4");
	cr_assert_eq(st_shape_elements(&s), -1, "overflow is reported, not wrapped");
	s = test_shape("scalar");
	cr_assert_eq(st_shape_elements(&s), 1);
	char buf[64];
	st_shape_format(&s, buf, sizeof buf);
	cr_assert_str_eq(buf, "scalar");
	cr_assert_eq(st_dtype_parse("int64"), ST_DTYPE_INT64);
	cr_assert_eq(st_dtype_parse("double"), -1);
}
