/* Unit tests: fusion inside the CPU plan (engine-fuse.c). Every fused plan
 * is checked against the same model compiled without fusion, which runs
 * each layer's own step, within ARCHITECTURE.md's bounds. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "st-engine.h"
#include "st-io.h"
#include "st-report.h"

/* A checked graph of std layers built by an edit script. */
static st_session *
model(const char *script)
{
	st_session *s = test_session(script);
	st_graph_check(st_session_graph(s));
	cr_assert_eq(st_session_graph(s)->errors, 0);
	return s;
}

static st_plan *
compile_with(st_session *s, const st_plan_options *opt)
{
	st_diag d;
	st_diag_init(&d);
	st_plan *p = st_plan_compile(st_session_graph(s), opt, &d);
	cr_assert_not_null(p, "%s", d.count ? d.items[0].text : "");
	st_diag_free(&d);
	return p;
}

static st_plan *
compile(st_session *s, int format, int threads, bool fuse)
{
	st_plan_options opt = { .format = format, .threads = threads, .no_fusion = !fuse };
	return compile_with(s, &opt);
}

static void
bind_random(st_plan *p, uint64_t seed)
{
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_plan_bind_random_weights(p, seed, &d), 0, "%s", d.count ? d.items[0].text : "");
	st_diag_free(&d);
}

/* Feeds seeded random data of this shape to input 0. */
static void
feed(st_plan *p, const st_shape *shape, uint64_t seed)
{
	st_tensor t;
	st_tensor_random(shape, seed, &t);
	/* Centre it so that activations see both signs. */
	float *x = t.data;
	for (int64_t i = 0; i < st_shape_elements(shape); i++)
		x[i] = 2 * x[i] - 1;
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_plan_set_input(p, 0, &t, &d), 0, "%s", d.count ? d.items[0].text : "");
	st_diag_free(&d);
	free(t.data);
}

/* Runs p and returns output `which` as float32 NCHW; caller frees. */
static float *
run_output(st_plan *p, int which, int64_t *n)
{
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_plan_run(p, &d), 0, "%s", d.count ? d.items[0].text : "");
	st_diag_free(&d);
	*n = st_shape_elements(st_plan_output_shape(p, which));
	float *y = malloc(sizeof *y * (size_t)(*n ? *n : 1));
	st_plan_get_output(p, which, y);
	return y;
}

/* |a - b| <= rtol * (max|b| + |b|) element by element. */
static void
assert_agree(const float *a, const float *b, int64_t n, double rtol, const char *what)
{
	double max = 0;
	for (int64_t i = 0; i < n; i++)
		max = fmax(max, fabs((double)b[i]));
	cr_assert_gt(max, 0, "%s: the reference is all zeros, which proves nothing", what);
	for (int64_t i = 0; i < n; i++) {
		double diff = fabs((double)a[i] - (double)b[i]);
		cr_assert_leq(diff, rtol * (max + fabs((double)b[i])), "%s: element %ld: %.9g vs %.9g", what,
		              (long)i, a[i], b[i]);
	}
}

/* The plan's listing; caller frees. */
static char *
describe(const st_plan *p)
{
	st_buf b;
	st_buf_init(&b);
	st_plan_describe(p, &b);
	return st_buf_take(&b);
}

/* Whether a step of p runs layer `name` itself. */
static bool
has_step(const st_plan *p, const st_graph *g, const char *name)
{
	const st_layer *l = st_graph_find(g, name);
	for (int i = 0; i < st_plan_step_count(p); i++) {
		st_step_info info;
		st_plan_step(p, i, &info);
		if (info.kind == ST_STEP_LAYER && info.layer == l)
			return true;
	}
	return false;
}

/* A residual block: conv, bn + relu, conv with bias, bn, add of the
 * block's input + relu; then a conv with a standalone activation (an
 * identity layer carrying a sigmoid). */
static const char *const block =
	"add input data; set data dims 8x9x11;"
	"add convolution a; set a num_output 8; set a kernel 3x3; set a padding same; set a bias false;"
	"connect data a;"
	"add batch_normalization a_bn; activation a_bn relu; connect a a_bn;"
	"add convolution b; set b num_output 8; set b kernel 3x3; set b padding same; connect a_bn b;"
	"add batch_normalization b_bn; connect b b_bn;"
	"add elementwise sum; set sum operation add; activation sum relu; connect b_bn sum; connect data sum;"
	"add convolution c; set c num_output 5; set c kernel 1x1; connect sum c;"
	"add identity act; activation act sigmoid; connect c act;"
	"add output out; connect act out";

/* Compiles script with and without fusion, runs both on the same weights
 * and an input of `shape` (NULL: the model's), checks that every output
 * agrees (and, with fewer_steps, that something fused) and returns the
 * fused plan's listing (caller frees). */
static char *
compare_with(const char *script, const st_plan_options *test_opt, const st_plan_options *ref_opt, double rtol,
             const char *shape, bool fewer_steps)
{
	st_session *s = model(script);
	st_plan *fused = compile_with(s, test_opt), *plain = compile_with(s, ref_opt);
	if (fewer_steps)
		cr_assert_lt(st_plan_step_count(fused), st_plan_step_count(plain), "something fused");
	bind_random(fused, 11);
	bind_random(plain, 11);
	st_shape in = shape ? test_shape(shape) : *st_plan_input_shape(plain, 0);
	feed(fused, &in, 5);
	feed(plain, &in, 5);
	for (int o = 0; o < st_plan_output_count(plain); o++) {
		int64_t n, m;
		float *y = run_output(fused, o, &n), *want = run_output(plain, o, &m);
		cr_assert_eq(n, m);
		assert_agree(y, want, n, rtol, st_plan_output_name(plain, o));
		free(y);
		free(want);
	}
	char *text = describe(fused);
	st_plan_free(fused);
	st_plan_free(plain);
	st_session_free(s);
	return text;
}

static char *
compare_plans(const char *script, int format, int threads, double rtol, const char *shape, bool fewer_steps)
{
	st_plan_options fused = { .format = format, .threads = threads };
	st_plan_options plain = { .format = format, .threads = threads, .no_fusion = true };
	return compare_with(script, &fused, &plain, rtol, shape, fewer_steps);
}

static char *
check_agreement(const char *script, int format, int threads, double rtol)
{
	return compare_plans(script, format, threads, rtol, NULL, true);
}

Test(fusion, residual_block_agrees_with_unfused)
{
	for (int threads = 1; threads <= 2; threads++) {
		char *text = check_agreement(block, ST_FORMAT_FP32_NCHW, threads, 1e-5);
		cr_assert(strstr(text, "a_bn folded + relu") != NULL, "%s", text);
		cr_assert(strstr(text, "b_bn folded + sum + relu") != NULL, "%s", text);
		cr_assert(strstr(text, "c                        convolution, fp32-nchw + sigmoid") != NULL, "%s",
		          text);
		free(text);
	}
}

Test(fusion, batch_norm_fold_is_exact_to_the_bound)
{
	/* With and without a bias of its own; odd sizes, a stride and groups. */
	static const char *const scripts[] = {
		"add input data; set data dims 6x7x13; add convolution c; set c num_output 9; set c kernel 3x3;"
		"set c stride 2x2; set c bias false; connect data c;"
		"add batch_normalization n; connect c n; add output out; connect n out",
		"add input data; set data dims 6x7x5; add convolution c; set c num_output 4; set c kernel 1x3;"
		"set c groups 2; set c padding same; connect data c;"
		"add batch_normalization n; set n epsilon 0.001; activation n leaky_relu; connect c n;"
		"add output out; connect n out",
	};
	for (size_t i = 0; i < sizeof scripts / sizeof scripts[0]; i++) {
		char *text = check_agreement(scripts[i], ST_FORMAT_FP32_NCHW, 1, 1e-5);
		cr_assert(strstr(text, "n folded") != NULL, "%s", text);
		free(text);
	}
}

Test(fusion, output_read_twice_is_not_fused)
{
	/* c feeds the batch norm and an output: folding would change what the
	 * output sees. The add's operand b_bn also feeds a second output. */
	st_session *s = model(
		"add input data; set data dims 4x6x6;"
		"add convolution c; set c num_output 4; set c kernel 3x3; set c padding same; connect data c;"
		"add batch_normalization n; connect c n; add output raw; connect c raw;"
		"add convolution b; set b num_output 4; set b kernel 3x3; set b padding same; connect n b;"
		"add elementwise sum; set sum operation add; connect b sum; connect n sum;"
		"add output out; connect sum out");
	const st_graph *g = st_session_graph(s);
	st_plan *fused = compile(s, ST_FORMAT_FP32_NCHW, 1, true), *plain = compile(s, ST_FORMAT_FP32_NCHW, 1, false);
	cr_assert(has_step(fused, g, "n"), "c's output is read twice");
	cr_assert(!has_step(fused, g, "sum"), "b's output is read once: the add fuses");
	bind_random(fused, 3);
	bind_random(plain, 3);
	const st_shape *shape = st_plan_input_shape(plain, 0);
	feed(fused, shape, 9);
	feed(plain, shape, 9);
	for (int o = 0; o < 2; o++) {
		int64_t n, m;
		float *y = run_output(fused, o, &n), *want = run_output(plain, o, &m);
		cr_assert_eq(n, m);
		assert_agree(y, want, n, 1e-5, st_plan_output_name(plain, o));
		free(y);
		free(want);
	}
	st_plan_free(fused);
	st_plan_free(plain);
	st_session_free(s);
}

Test(fusion, rebinding_weights_refolds)
{
	st_session *s = model(block);
	const st_graph *g = st_session_graph(s);
	st_plan *fused = compile(s, ST_FORMAT_FP32_NCHW, 1, true), *plain = compile(s, ST_FORMAT_FP32_NCHW, 1, false);
	const st_shape *shape = st_plan_input_shape(plain, 0);
	for (uint64_t seed = 1; seed <= 3; seed++) {
		bind_random(fused, seed);
		bind_random(plain, seed);
		/* The user's weights stay as bound: the fold works on a copy. */
		st_shape ws, wp;
		const float *wf = st_plan_layer_weight(fused, st_graph_find(g, "a"), "weights", &ws);
		const float *wu = st_plan_layer_weight(plain, st_graph_find(g, "a"), "weights", &wp);
		cr_assert(wf != NULL && wu != NULL && st_shape_equal(&ws, &wp));
		cr_assert_eq(memcmp(wf, wu, sizeof(float) * (size_t)st_shape_elements(&ws)), 0);
		feed(fused, shape, seed);
		feed(plain, shape, seed);
		int64_t n, m;
		float *y = run_output(fused, 0, &n), *want = run_output(plain, 0, &m);
		assert_agree(y, want, n, 1e-5, "after a new binding");
		free(y);
		free(want);
	}
	/* A new input size re-plans; the folded weights carry over. */
	st_shape big = test_shape("2x8x6x17");
	feed(fused, &big, 4);
	feed(plain, &big, 4);
	int64_t n, m;
	float *y = run_output(fused, 0, &n), *want = run_output(plain, 0, &m);
	cr_assert_eq(n, m);
	assert_agree(y, want, n, 1e-5, "after a new input size");
	free(y);
	free(want);
	st_plan_free(fused);
	st_plan_free(plain);
	st_session_free(s);
}

Test(fusion, fp16_plans_still_work)
{
	char *text = check_agreement(block, ST_FORMAT_FP16_NCHW, 2, 1e-2);
	cr_assert(strstr(text, "folded") != NULL, "%s", text);
	free(text);
	text = check_agreement(block, ST_FORMAT_FP16_NHWC, 1, 1e-2);
	free(text);
	text = check_agreement(block, ST_FORMAT_FP32_NHWC, 1, 1e-5);
	free(text);
}

Test(fusion, environment_turns_it_off)
{
	st_session *s = model(block);
	const st_graph *g = st_session_graph(s);
	st_plan *p = compile(s, ST_FORMAT_FP32_NCHW, 1, true);
	cr_assert(!has_step(p, g, "a_bn") && !has_step(p, g, "sum") && !has_step(p, g, "act"));
	st_plan_free(p);
	setenv("STRATA_FUSE", "0", 1);
	p = compile(s, ST_FORMAT_FP32_NCHW, 1, true);
	unsetenv("STRATA_FUSE");
	cr_assert(has_step(p, g, "a_bn") && has_step(p, g, "sum") && has_step(p, g, "act"));
	st_plan_free(p);
	/* Kept outputs are every layer's own: no fusion either. */
	st_plan_options opt = { .format = ST_FORMAT_FP32_NCHW, .threads = 1, .keep_outputs = true };
	st_diag d;
	st_diag_init(&d);
	p = st_plan_compile(g, &opt, &d);
	cr_assert_not_null(p);
	cr_assert(has_step(p, g, "b_bn"));
	st_plan_free(p);
	st_diag_free(&d);
	st_session_free(s);
}

/* The fused plan of s, profiled over 2 iterations on random weights and
 * input, hardware counters off; caller frees the plan and the report. */
static st_plan *
profiled(st_session *s, st_report *r)
{
	st_plan *p = compile(s, ST_FORMAT_FP32_NCHW, 1, true);
	bind_random(p, 2);
	feed(p, st_plan_input_shape(p, 0), 2);
	memset(r, 0, sizeof *r);
	st_diag d;
	st_diag_init(&d);
	setenv("STRATA_COUNTERS", "off", 1);
	cr_assert_eq(st_plan_profile(p, 2, r, &d), 0, "%s", d.count ? d.items[0].text : "");
	unsetenv("STRATA_COUNTERS");
	st_diag_free(&d);
	return p;
}

Test(fusion, report_lists_fused_layers_as_skipped)
{
	st_session *s = model(block);
	const st_graph *g = st_session_graph(s);
	st_report r;
	st_plan *p = profiled(s, &r);
	static const char *const fused[] = { "a_bn", "b_bn", "sum", "act" };
	for (size_t i = 0; i < sizeof fused / sizeof fused[0]; i++) {
		bool found = false;
		for (int k = 0; k < r.n_skipped; k++)
			found = found || strcmp(r.skipped[k], fused[i]) == 0;
		cr_assert(found, "%s is among the skipped layers", fused[i]);
	}
	/* The step that computes them counts their work. */
	const st_report_layer *b = st_report_find_layer(&r, "b", "convolution");
	cr_assert_not_null(b);
	double want = st_graph_find(g, "b")->flops + st_graph_find(g, "b_bn")->flops + st_graph_find(g, "sum")->flops;
	cr_assert_float_eq(b->flops, want, 1e-6 * want);
	st_report_free(&r);
	st_plan_free(p);
	st_session_free(s);
}

Test(fusion, add_operand_computed_later_is_not_fused_early)
{
	/* The projection p is added last, so it runs after b: b's epilogue
	 * cannot read it; the add fuses into p instead, or runs alone. */
	char *text = check_agreement(
		"add input data; set data dims 4x7x7;"
		"add convolution b; set b num_output 6; set b kernel 3x3; set b padding same; connect data b;"
		"add elementwise sum; set sum operation add; activation sum relu; connect b sum;"
		"add convolution p; set p num_output 6; set p kernel 1x1; connect data p; connect p sum;"
		"add output out; connect sum out",
		ST_FORMAT_FP32_NCHW, 1, 1e-5);
	free(text);
}

/* ---- concatenations written in place ---- */

/* Concatenations are elided in place, not removed: as many steps. */
static char *
check_outputs(const char *script, const char *shape, int threads)
{
	return compare_plans(script, ST_FORMAT_FP32_NCHW, threads, 1e-6, shape, false);
}

/* Two convolutions (one with a relu) into a channel concatenation, then a
 * convolution of it; optionally the second part read again afterwards. */
#define CONCAT_HEAD                                                                                  \
	"add input data; set data dims 6x8x8;"                                                           \
	"add convolution a; set a num_output 4; set a kernel 1x1; connect data a;"                       \
	"add convolution b; set b num_output 3; set b kernel 3x3; set b padding same; activation b relu;" \
	"connect data b;"                                                                                \
	"add concatenation cat; connect a cat; connect b cat;"                                           \
	"add convolution c; set c num_output 3; set c kernel 1x1; connect cat c;"

Test(fusion, concatenation_written_in_place)
{
	static const char *const scripts[] = {
		CONCAT_HEAD "add output out; connect c out",
		/* b's part is read again after the concatenation. */
		CONCAT_HEAD "add elementwise sum; set sum operation add; connect c sum; connect b sum;"
		            "add output out; connect sum out",
		/* The concatenation is a network output itself. */
		CONCAT_HEAD "add output out; connect c out; add output whole; connect cat whole",
	};
	for (size_t i = 0; i < sizeof scripts / sizeof scripts[0]; i++) {
		for (int threads = 1; threads <= 2; threads++) {
			char *text = check_outputs(scripts[i], NULL, threads);
			cr_assert(strstr(text, "cat                      concatenation, fp32-nchw, in place") != NULL,
			          "script %zu: %s", i, text);
			free(text);
		}
	}
}

Test(fusion, concatenation_copied_where_parts_cannot_be_written_in_place)
{
	static const struct {
		const char *script, *shape, *why;
	} cases[] = {
		{ CONCAT_HEAD "add output out; connect c out", "2x6x8x8", "two samples: a part is not one run" },
		{ "add input data; set data dims 4x8x8;"
		  "add convolution a; set a num_output 4; set a kernel 1x1; connect data a;"
		  "add concatenation cat; connect data cat; connect a cat; add output out; connect cat out",
		  NULL, "a network input is a part" },
		{ "add input data; set data dims 4x8x8;"
		  "add convolution a; set a num_output 4; set a kernel 1x1; connect data a;"
		  "add concatenation cat; connect a cat; connect a cat; add output out; connect cat out",
		  NULL, "the same tensor twice" },
		{ "add input data; set data dims 4x8x8;"
		  "add convolution a; set a num_output 4; set a kernel 1x1; connect data a;"
		  "add convolution b; set b num_output 4; set b kernel 1x1; connect data b;"
		  "add concatenation cat; set cat axis 2; connect a cat; connect b cat; add output out; connect cat out",
		  NULL, "along rows: a part is not one run" },
		{ "add input data; set data dims 4x3x3;"
		  "add convolution a; set a num_output 5; set a kernel 1x1; connect data a;"
		  "add convolution b; set b num_output 4; set b kernel 1x1; connect data b;"
		  "add concatenation cat; connect a cat; connect b cat; add output out; connect cat out",
		  NULL, "the second part would start off the alignment" },
		{ CONCAT_HEAD "add output out; connect c out; add output braw; connect b braw", NULL,
		  "a part is a network output" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *text = check_outputs(cases[i].script, cases[i].shape, 1);
		cr_assert(strstr(text, "in place") == NULL, "%s: %s", cases[i].why, text);
		free(text);
	}
}

/* The profile's memory table: the first part written allocates the whole
 * output, the other parts and the concatenation nothing. */
Test(fusion, concatenation_in_place_memory_rows)
{
	st_session *s = model(CONCAT_HEAD "add output out; connect c out");
	st_report r;
	st_plan *p = profiled(s, &r);
	static const struct {
		const char *name;
		int64_t allocated;
	} want[] = { { "a", 7 * 8 * 8 * 4 }, { "b", 0 }, { "cat", 0 }, { "c", 3 * 8 * 8 * 4 } };
	for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
		const st_report_layer *l = NULL;
		for (int i = 0; i < r.n_layers; i++) {
			if (strcmp(r.layers[i].name, want[w].name) == 0)
				l = &r.layers[i];
		}
		cr_assert_not_null(l, "no row for %s", want[w].name);
		cr_assert_eq(l->mem_allocated, want[w].allocated, "%s allocates %lld", want[w].name,
		             (long long)l->mem_allocated);
	}
	st_report_free(&r);
	st_plan_free(p);
	st_session_free(s);
}

/* ---- layouts chosen by the plan ---- */

/* MobileNetV2's inverted residual: a 1x1 expansion with relu6, a 3x3
 * depthwise with relu6, a 1x1 projection with the block's input added,
 * then global average pooling; the depthwise output is an output too. */
#define MOBILE_BLOCK(dims, stride)                                                                     \
	"add input data; set data dims " dims ";"                                                          \
	"add convolution e; set e num_output 48; set e kernel 1x1; activation e clip; connect data e;"      \
	"add convolution d; set d num_output 48; set d kernel 3x3; set d padding same; set d groups 48;"    \
	"set d stride " stride "; activation d clip; connect e d;"                                         \
	"add convolution p; set p num_output 16; set p kernel 1x1; connect d p;"                           \
	"add global_pooling gap; connect p gap; add output out; connect gap out;"                          \
	"add output mid; connect d mid"

/* Compiles script with the layouts chosen and kept NCHW, runs both on the
 * same weights and input and checks every output; returns the listing of
 * the chosen plan (caller frees). */
static char *
compare_layouts(const char *script, int threads)
{
	st_plan_options chosen = { .format = ST_FORMAT_FP32_NCHW, .threads = threads };
	st_plan_options fixed = { .format = ST_FORMAT_FP32_NCHW, .threads = threads, .fixed_layouts = true };
	return compare_with(script, &chosen, &fixed, 1e-5, NULL, false);
}

Test(fusion, small_depthwise_blocks_run_channels_last)
{
	static const char *const residual =
		"add input data; set data dims 16x14x14;"
		"add convolution e; set e num_output 48; set e kernel 1x1; activation e clip; connect data e;"
		"add convolution d; set d num_output 48; set d kernel 3x3; set d padding same; set d groups 48;"
		"activation d clip; connect e d;"
		"add convolution p; set p num_output 16; set p kernel 1x1; connect d p;"
		"add elementwise sum; set sum operation add; connect p sum; connect data sum;"
		"add convolution q; set q num_output 40; set q kernel 1x1; activation q relu; connect sum q;"
		"add global_pooling gap; connect q gap; add output out; connect gap out;"
		"add output mid; connect d mid";
	const char *const scripts[] = { residual, MOBILE_BLOCK("16x14x14", "2"), MOBILE_BLOCK("24x7x9", "1") };
	for (size_t i = 0; i < sizeof scripts / sizeof scripts[0]; i++) {
		for (int threads = 1; threads <= 2; threads++) {
			char *text = compare_layouts(scripts[i], threads);
			/* The expansion's input comes NCHW and it stays so; from the
			 * depthwise layer on, channels last, the add included. */
			cr_assert(strstr(text, "e                        convolution, fp32-nchw") != NULL, "%s", text);
			cr_assert(strstr(text, "d                        convolution, fp32-nhwc") != NULL, "%s", text);
			cr_assert(strstr(text, "p                        convolution, fp32-nhwc") != NULL, "%s", text);
			cr_assert(strstr(text, "global_pooling, fp32-nhwc") != NULL, "%s", text);
			free(text);
		}
	}
}

/* Depthwise layers on large planes run channels last as well (since issue
 * 10's session 12); STRATA_LAYOUTS=fixed keeps every layer NCHW. */
Test(fusion, large_planes_go_channels_last_and_fixed_plans_stay_nchw)
{
	char *text = compare_layouts(MOBILE_BLOCK("16x40x40", "1"), 1);
	cr_assert(strstr(text, "d                        convolution, fp32-nhwc") != NULL, "%s", text);
	free(text);
	setenv("STRATA_LAYOUTS", "fixed", 1);
	text = compare_layouts(MOBILE_BLOCK("16x14x14", "1"), 1);
	cr_assert(strstr(text, "nhwc") == NULL, "%s", text);
	free(text);
	unsetenv("STRATA_LAYOUTS");
}

/* In an fp32-nhwc plan the depthwise and 1x1 layers run channels last and
 * a 3x3 convolution NCHW between conversions; all agree with fp32-nchw. */
Test(fusion, channels_last_plans_run_what_the_kernels_take)
{
	static const char *const script =
		MOBILE_BLOCK("16x14x14", "1") ";"
		"add convolution full; set full num_output 8; set full kernel 3x3; set full padding same;"
		"connect p full; add output full_out; connect full full_out";
	st_plan_options nhwc = { .format = ST_FORMAT_FP32_NHWC, .threads = 2 };
	st_plan_options nchw = { .format = ST_FORMAT_FP32_NCHW, .threads = 2, .fixed_layouts = true };
	char *text = compare_with(script, &nhwc, &nchw, 1e-5, NULL, false);
	cr_assert(strstr(text, "d                        convolution, fp32-nhwc") != NULL, "%s", text);
	cr_assert(strstr(text, "full                     convolution, fp32-nchw") != NULL, "%s", text);
	free(text);
}

/* In an fp16-nhwc plan the 1x1 and depthwise layers (their relu6 applied
 * as they store) and the add of operands of one shape compute on float16
 * tensors, with no conversion between them; a sigmoid the host applies,
 * and the 3x3 convolution, compute in float32 between conversions. Every
 * output agrees with fp32-nchw within FP16's bound, and the activations
 * take less memory than in float32. */
Test(fusion, fp16_channels_last_plans_compute_in_half)
{
	static const char *const script =
		"add input data; set data dims 16x14x13;"
		"add convolution e; set e num_output 48; set e kernel 1x1; activation e clip; connect data e;"
		"add convolution d; set d num_output 48; set d kernel 3x3; set d padding same; set d groups 48;"
		"activation d clip; connect e d;"
		"add convolution p; set p num_output 16; set p kernel 1x1; connect d p;"
		"add elementwise sum; set sum operation add; connect p sum; connect data sum;"
		"add convolution s; set s num_output 16; set s kernel 1x1; activation s sigmoid; connect sum s;"
		"add convolution full; set full num_output 8; set full kernel 3x3; set full padding same;"
		"connect s full; add output out; connect full out; add output mid; connect d mid";
	for (int threads = 1; threads <= 2; threads++) {
		st_plan_options half = { .format = ST_FORMAT_FP16_NHWC, .threads = threads };
		st_plan_options nchw = { .format = ST_FORMAT_FP32_NCHW, .threads = threads, .fixed_layouts = true };
		char *text = compare_with(script, &half, &nchw, 1e-2, NULL, false);
		cr_assert(strstr(text, "e                        convolution, fp16-nhwc + clip") != NULL, "%s", text);
		cr_assert(strstr(text, "d                        convolution, fp16-nhwc + clip") != NULL, "%s", text);
		cr_assert(strstr(text, "p                        convolution, fp16-nhwc") != NULL, "%s", text);
		cr_assert(strstr(text, "sum                      elementwise, fp16-nhwc") != NULL, "%s", text);
		cr_assert(strstr(text, "s                        convolution, fp32-nhwc") != NULL, "%s", text);
		cr_assert(strstr(text, "full                     convolution, fp32-nchw") != NULL, "%s", text);
		cr_assert(strstr(text, "convert fp16-nhwc -> fp32-nhwc") != NULL, "%s", text);
		/* No conversion before d, p or sum: their inputs come as they take them. */
		cr_assert(strstr(text, "d                        convert") == NULL, "%s", text);
		cr_assert(strstr(text, "p                        convert") == NULL, "%s", text);
		cr_assert(strstr(text, "sum                      convert") == NULL, "%s", text);
		free(text);
	}
	st_session *s = model(script);
	st_plan_options half = { .format = ST_FORMAT_FP16_NHWC, .threads = 1 };
	st_plan_options single = { .format = ST_FORMAT_FP32_NHWC, .threads = 1 };
	st_plan *h = compile_with(s, &half), *f = compile_with(s, &single);
	cr_assert_lt(st_plan_arena_bytes(h), st_plan_arena_bytes(f), "float16 %zu bytes, float32 %zu",
	             st_plan_arena_bytes(h), st_plan_arena_bytes(f));
	st_plan_free(h);
	st_plan_free(f);
	st_session_free(s);
}

/* A concatenation of a channels-last input with an NCHW one runs channels
 * last (the NCHW one converted), along the channels and along the samples,
 * in fp32-nhwc and fp16-nhwc plans; every output agrees with fp32-nchw. */
Test(fusion, concatenations_run_channels_last)
{
	static const char *const scripts[] = {
		"add input data; set data dims 16x7x9;"
		"add convolution a; set a num_output 24; set a kernel 1x1; activation a relu; connect data a;"
		"add convolution b; set b num_output 8; set b kernel 3x3; set b padding same; connect data b;"
		"add concatenation cat; connect a cat; connect b cat;"
		"add convolution c; set c num_output 5; set c kernel 1x1; connect cat c; add output out; connect c out",
		"add input data; set data dims 16x7x9;"
		"add convolution a; set a num_output 8; set a kernel 1x1; connect data a;"
		"add convolution b; set b num_output 8; set b kernel 3x3; set b padding same; connect data b;"
		"add concatenation cat; set cat axis 0; connect a cat; connect b cat;"
		"add convolution c; set c num_output 5; set c kernel 1x1; connect cat c; add output out; connect c out",
	};
	const int formats[] = { ST_FORMAT_FP32_NHWC, ST_FORMAT_FP16_NHWC };
	for (size_t i = 0; i < 2; i++) {
		for (size_t f = 0; f < 2; f++) {
			st_plan_options test = { .format = formats[f], .threads = 2 };
			st_plan_options nchw = { .format = ST_FORMAT_FP32_NCHW, .threads = 2, .fixed_layouts = true };
			char *text = compare_with(scripts[i], &test, &nchw, f ? 1e-2 : 1e-5, NULL, false);
			const char *want = f ? "cat                      concatenation, fp16-nhwc"
			                     : "cat                      concatenation, fp32-nhwc";
			cr_assert(strstr(text, want) != NULL, "script %zu: %s", i, text);
			free(text);
		}
	}
}

/* A layer whose chosen layout no neighbour shares (every input converted
 * to it, every reader converting back) runs in the plan's layout: a
 * depthwise convolution alone, or between two 3x3 convolutions, stays
 * NCHW with no conversion; one that a 1x1 layer reads channels last keeps
 * it. All agree with the plan kept NCHW. */
Test(fusion, layout_islands_run_in_the_plans_layout)
{
	static const char *const alone =
		"add input data; set data dims 24x30x30;"
		"add convolution d; set d num_output 24; set d kernel 3x3; set d padding same; set d groups 24;"
		"activation d clip; connect data d; add output out; connect d out";
	static const char *const between =
		"add input data; set data dims 8x30x30;"
		"add convolution a; set a num_output 24; set a kernel 3x3; set a padding same; connect data a;"
		"add convolution d; set d num_output 24; set d kernel 3x3; set d padding same; set d groups 24;"
		"connect a d;"
		"add convolution b; set b num_output 8; set b kernel 3x3; set b padding same; connect d b;"
		"add output out; connect b out";
	const char *const scripts[] = { alone, between };
	for (size_t i = 0; i < 2; i++) {
		char *text = compare_layouts(scripts[i], 1);
		cr_assert(strstr(text, "d                        convolution, fp32-nchw") != NULL, "%s", text);
		cr_assert(strstr(text, "(0 conversions)") != NULL, "%s", text);
		free(text);
	}
	char *text = compare_layouts(MOBILE_BLOCK("16x30x30", "1"), 2);
	cr_assert(strstr(text, "d                        convolution, fp32-nhwc") != NULL, "%s", text);
	free(text);
}

/* A plan fed another input size is built again, its layouts chosen again
 * (the depthwise layer runs channels last at every size) and its filters
 * packed anew for each form, never taken for the other's: every run agrees
 * with a plan kept NCHW. */
Test(fusion, layouts_follow_new_input_sizes)
{
	st_session *s = model(MOBILE_BLOCK("16x14x14", "1"));
	st_plan_options chosen = { .format = ST_FORMAT_FP32_NCHW, .threads = 2 };
	st_plan_options fixed = { .format = ST_FORMAT_FP32_NCHW, .threads = 2, .fixed_layouts = true };
	st_plan *p = compile_with(s, &chosen), *q = compile_with(s, &fixed);
	bind_random(p, 3);
	bind_random(q, 3);
	const char *const sizes[] = { "1x16x14x14", "1x16x40x40", "1x16x14x14", "2x16x9x11" };
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		st_shape in = test_shape(sizes[i]);
		feed(p, &in, 9 + i);
		feed(q, &in, 9 + i);
		for (int o = 0; o < st_plan_output_count(q); o++) {
			int64_t n, m;
			float *y = run_output(p, o, &n), *want = run_output(q, o, &m);
			cr_assert_eq(n, m);
			assert_agree(y, want, n, 1e-5, sizes[i]);
			free(y);
			free(want);
		}
		char *text = describe(p);
		cr_assert(strstr(text, "d                        convolution, fp32-nhwc") != NULL, "%s: %s", sizes[i],
		          text);
		free(text);
	}
	st_plan_free(p);
	st_plan_free(q);
	st_session_free(s);
}

/* ---- a pooling computed by the convolution before it (ABI 2.5) ---- */

/* A first layer (3 input channels, a relu) and its max pooling, as
 * ResNet and SqueezeNet begin, then a 1x1 layer. */
static const char *const stem =
	"add input data; set data dims 3x45x51;"
	"add convolution c; set c num_output 16; set c kernel 7x7; set c stride 2x2; set c pads 3;"
	"activation c relu; connect data c;"
	"add pooling p; set p kernel 3x3; set p stride 2x2; set p pads 1; connect c p;"
	"add convolution d; set d num_output 8; set d kernel 1x1; connect p d;"
	"add output out; connect d out";

Test(fusion, first_layer_and_max_pooling_run_as_one_step)
{
	for (int threads = 1; threads <= 2; threads++) {
		char *text = check_agreement(stem, ST_FORMAT_FP32_NCHW, threads, 1e-6);
		cr_assert(strstr(text, "c                        convolution, fp32-nchw + relu + p,") != NULL, "%s", text);
		free(text);
	}
	/* SqueezeNet's: no padding, ceil mode; on other input sizes too. */
	const char *squeeze =
		"add input data; set data dims 3x40x37;"
		"add convolution c; set c num_output 24; set c kernel 3x3; set c stride 2x2;"
		"activation c clip min=-0.1 max=0.2; connect data c;"
		"add pooling p; set p kernel 3x3; set p stride 2x2; set p ceil_mode true; connect c p;"
		"add output out; connect p out";
	char *text = compare_plans(squeeze, ST_FORMAT_FP32_NCHW, 2, 1e-6, "2x3x61x58", true);
	cr_assert(strstr(text, "+ clip + p") != NULL, "%s", text);
	free(text);
}

Test(fusion, any_pooling_after_any_convolution_is_computed_with_it)
{
	/* A deep convolution (not the first-layer kernel) with a max pooling,
	 * and a first layer with an average one: the plain loops, then the
	 * pooling from the scratch. A folded batch norm before the pooling. */
	static const char *const scripts[] = {
		"add input data; set data dims 12x20x22;"
		"add convolution c; set c num_output 20; set c kernel 3x3; set c padding same; set c bias false;"
		"connect data c; add batch_normalization n; activation n relu; connect c n;"
		"add pooling p; set p kernel 2x2; set p stride 2x2; connect n p; add output out; connect p out",
		"add input data; set data dims 3x33x30;"
		"add convolution c; set c num_output 8; set c kernel 3x3; set c stride 2x2; connect data c;"
		"add pooling p; set p mode avg; set p kernel 3x3; set p stride 2x2; set p pads 1;"
		"set p count_include_pad true; connect c p; add output out; connect p out",
	};
	for (size_t i = 0; i < sizeof scripts / sizeof scripts[0]; i++) {
		for (int threads = 1; threads <= 2; threads++) {
			char *text = check_agreement(scripts[i], ST_FORMAT_FP32_NCHW, threads, 1e-6);
			cr_assert(strstr(text, " + p,") != NULL, "%s", text);
			free(text);
		}
	}
}

Test(fusion, pooling_stays_a_step_where_it_cannot_follow)
{
	/* After an activation the host applies (leaky relu), after an add,
	 * of an output read twice, and in channels-last plans. */
	static const char *const scripts[] = {
		"add input data; set data dims 3x20x20; add convolution c; set c num_output 8; set c kernel 3x3;"
		"activation c leaky_relu; connect data c; add pooling p; connect c p; add output out; connect p out",
		"add input data; set data dims 8x20x20; add convolution c; set c num_output 8; set c kernel 3x3;"
		"set c padding same; connect data c; add elementwise sum; set sum operation add; connect c sum;"
		"connect data sum; add pooling p; connect sum p; add output out; connect p out",
		"add input data; set data dims 3x20x20; add convolution c; set c num_output 8; set c kernel 3x3;"
		"connect data c; add pooling p; connect c p; add output out; connect p out;"
		"add output raw; connect c raw",
	};
	for (size_t i = 0; i < sizeof scripts / sizeof scripts[0]; i++) {
		st_session *s = model(scripts[i]);
		st_plan *p = compile(s, ST_FORMAT_FP32_NCHW, 1, true);
		cr_assert(has_step(p, st_session_graph(s), "p"), "script %zu: the pooling keeps its step", i);
		st_plan_free(p);
		st_session_free(s);
	}
	/* A channels-last plan keeps the pooling a step; an fp16-nchw plan,
	 * whose stem convolution computes in float32, takes it into the
	 * convolution as a float32 plan does. */
	const int formats[] = { ST_FORMAT_FP32_NHWC, ST_FORMAT_FP16_NCHW };
	for (size_t f = 0; f < 2; f++) {
		st_session *s = model(stem);
		st_plan *p = compile(s, formats[f], 1, true);
		cr_assert_eq(has_step(p, st_session_graph(s), "p"), formats[f] == ST_FORMAT_FP32_NHWC,
		             "format %d: the pooling %s its step", formats[f],
		             formats[f] == ST_FORMAT_FP32_NHWC ? "keeps" : "loses");
		st_plan_free(p);
		st_session_free(s);
		char *text = compare_plans(stem, formats[f], 1, 1e-2, NULL, false);
		free(text);
	}
}

/* ---- blocked tensors (NCHW16C, ABI 2.6) ---- */

/* Channels off the blocks (24, 40) and on them (32 + 16): a 3x3 layer with
 * a relu, a strided one with a folded batch norm and a leaky relu the host
 * applies, a max pooling, a 1x1 layer with the pooling added and a sigmoid
 * after (host-applied: the lanes past the channels must be zero again), a
 * concatenation of whole blocks, an average pooling and a global one; the
 * add's result is an output too. And a division of two blocked tensors of
 * 24 channels, whose lanes past them would hold 0 / 0 = NaN, and which a
 * 3x3 layer reads: NaN times a zero filter is NaN. */
static const char *const blocked_net =
	"add input data; set data dims 20x13x15;"
	"add convolution a; set a num_output 24; set a kernel 3x3; set a padding same; activation a relu;"
	"connect data a;"
	"add convolution b; set b num_output 24; set b kernel 3x3; set b stride 2x2; set b bias false; connect a b;"
	"add batch_normalization b_bn; activation b_bn leaky_relu; connect b b_bn;"
	"add pooling p; set p kernel 2x2; set p stride 1x1; set p padding same; connect b_bn p;"
	"add convolution c; set c num_output 24; set c kernel 1x1; connect p c;"
	"add elementwise sum; set sum operation add; activation sum sigmoid; connect c sum; connect p sum;"
	"add convolution e1; set e1 num_output 32; set e1 kernel 1x1; activation e1 relu; connect sum e1;"
	"add convolution e3; set e3 num_output 16; set e3 kernel 3x3; set e3 padding same; connect sum e3;"
	"add concatenation cat; connect e1 cat; connect e3 cat;"
	"add pooling avg; set avg mode avg; set avg kernel 3x3; set avg pads 1; set avg count_include_pad true;"
	"connect cat avg;"
	"add convolution f; set f num_output 40; set f kernel 3x3; connect avg f;"
	"add global_pooling gap; connect f gap; add output out; connect gap out;"
	"add output mid; connect sum mid;"
	"add convolution g1; set g1 num_output 24; set g1 kernel 1x1; connect sum g1;"
	"add convolution g2; set g2 num_output 24; set g2 kernel 1x1; activation g2 sigmoid; connect sum g2;"
	"add elementwise q; set q operation div; connect g1 q; connect g2 q;"
	"add convolution h; set h num_output 16; set h kernel 3x3; set h padding same; connect q h;"
	"add output hout; connect h hout";

/* With STRATA_BLOCKED=on every dense layer runs blocked, and the layers
 * between them stay so: the plan agrees with one kept NCHW, at every
 * level the machine has, on 1 and 2 threads, and on another input size. */
Test(fusion, blocked_chains_agree_with_nchw_plans)
{
	cr_assert_eq(setenv("STRATA_BLOCKED", "on", 1), 0);
	for (int threads = 1; threads <= 2; threads++) {
		char *text = compare_layouts(blocked_net, threads);
		static const char *const want[] = {
			"a                        convolution, fp32-nchw16c + relu",
			"b                        convolution, fp32-nchw16c + b_bn folded + leaky_relu",
			"p                        pooling, fp32-nchw16c",
			"c                        convolution, fp32-nchw16c + sum + sigmoid",
			"cat                      concatenation, fp32-nchw16c, in place",
			"avg                      pooling, fp32-nchw16c",
			"gap                      global_pooling, fp32-nchw16c",
			"q                        elementwise, fp32-nchw16c",
			"h                        convolution, fp32-nchw16c",
		};
		for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
			cr_assert(strstr(text, want[i]) != NULL, "%s in:\n%s", want[i], text);
		/* Into the first layer, no more (the outputs leave blocked,
		 * converted as they are read). */
		cr_assert(strstr(text, "(1 conversions)") != NULL, "%s", text);
		free(text);
	}
	st_plan_options chosen = { .format = ST_FORMAT_FP32_NCHW, .threads = 2 };
	st_plan_options fixed = { .format = ST_FORMAT_FP32_NCHW, .threads = 2, .fixed_layouts = true };
	free(compare_with(blocked_net, &chosen, &fixed, 1e-5, "2x20x13x30", false));
	cr_assert_eq(unsetenv("STRATA_BLOCKED"), 0);
}

/* Blocked layers between channels-last tensors (an fp32-nhwc plan): the
 * conversions go straight between the two layouts. */
Test(fusion, blocked_layers_in_channels_last_plans)
{
	cr_assert_eq(setenv("STRATA_BLOCKED", "on", 1), 0);
	st_plan_options nhwc = { .format = ST_FORMAT_FP32_NHWC, .threads = 2 };
	st_plan_options nchw = { .format = ST_FORMAT_FP32_NCHW, .threads = 2, .fixed_layouts = true };
	char *text = compare_with(blocked_net, &nhwc, &nchw, 1e-5, NULL, false);
	cr_assert(strstr(text, "convert fp32-nhwc -> fp32-nchw16c") != NULL, "%s", text);
	cr_assert(strstr(text, "convert fp32-nchw16c -> fp32-nhwc") != NULL, "%s", text);
	free(text);
	/* In FP16 plans a layer computed in float32 may be blocked, but no
	 * float16 tensor is (blocked tensors are float32). */
	st_plan_options half = { .format = ST_FORMAT_FP16_NHWC, .threads = 2 };
	text = compare_with(blocked_net, &half, &nchw, 1e-2, NULL, false);
	cr_assert(strstr(text, "fp32-nchw16c") != NULL, "%s", text);
	cr_assert(strstr(text, "fp16-nchw16c") == NULL, "%s", text);
	free(text);
	cr_assert_eq(unsetenv("STRATA_BLOCKED"), 0);
}

/* prelu with learned per-channel slopes (from a weights folder) after a
 * blocked convolution of 20 channels: the host applies each block's
 * sixteen slopes, four in the last block. */
Test(fusion, blocked_prelu_takes_each_channels_slope)
{
	cr_assert_eq(setenv("STRATA_BLOCKED", "on", 1), 0);
	/* A second convolution reads c as it is: alone, c would be an island
	 * (layout_islands_run_in_the_plans_layout) and run NCHW. */
	st_session *s = model("add input data; set data dims 6x9x10;"
	                      "add convolution c; set c num_output 20; set c kernel 3x3; activation c prelu;"
	                      "connect data c; add output out; connect c out;"
	                      "add convolution c2; set c2 num_output 4; set c2 kernel 1x1; connect c c2;"
	                      "add output out2; connect c2 out2");
	char *dir = test_temp_dir("blocked-prelu");
	test_rng r = { 29 };
	struct {
		const char *file;
		st_shape shape;
	} files[] = { { "c_weights.npy", test_shape("20x6x3x3") }, { "c_bias.npy", test_shape("20") },
		      { "c_prelu_slope.npy", test_shape("20") },  { "c2_weights.npy", test_shape("4x20x1x1") },
		      { "c2_bias.npy", test_shape("4") } };
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		float *v = test_random_floats(&r, st_shape_elements(&files[i].shape));
		char path[1024], err[256];
		snprintf(path, sizeof path, "%s/%s", dir, files[i].file);
		cr_assert_eq(st_npy_write(path, &files[i].shape, v, err, sizeof err), 0, "%s", err);
		free(v);
	}
	st_plan_options chosen = { .format = ST_FORMAT_FP32_NCHW, .threads = 2 };
	st_plan_options fixed = { .format = ST_FORMAT_FP32_NCHW, .threads = 2, .fixed_layouts = true };
	st_plan *p = compile_with(s, &chosen), *q = compile_with(s, &fixed);
	st_diag d;
	st_diag_init(&d);
	cr_assert_eq(st_plan_bind_weights(p, dir, &d), 0, "%s", d.count ? d.items[0].text : "");
	cr_assert_eq(st_plan_bind_weights(q, dir, &d), 0, "%s", d.count ? d.items[0].text : "");
	st_diag_free(&d);
	st_shape in = *st_plan_input_shape(q, 0);
	feed(p, &in, 4);
	feed(q, &in, 4);
	int64_t n, m;
	float *y = run_output(p, 0, &n), *want = run_output(q, 0, &m);
	cr_assert_eq(n, m);
	assert_agree(y, want, n, 1e-5, "prelu");
	/* The slopes did something: some output is negative and not -0. */
	bool negative = false;
	for (int64_t i = 0; i < n; i++)
		negative = negative || want[i] < 0;
	cr_assert(negative);
	char *text = describe(p);
	cr_assert(strstr(text, "c                        convolution, fp32-nchw16c + prelu") != NULL, "%s", text);
	free(text);
	free(y);
	free(want);
	st_plan_free(p);
	st_plan_free(q);
	st_session_free(s);
	test_remove_dir(dir);
	cr_assert_eq(unsetenv("STRATA_BLOCKED"), 0);
}
