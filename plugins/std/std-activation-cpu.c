/* The activations' computations on the CPU, as the host applies them to a
 * layer's float32 output (or a channel of it, for prelu's slopes). */
#include "config.h"

#include "k-tensor.h"
#include "std.h"

static float
coef(const st_value *c, int i)
{
	return (float)c[i].f;
}

static void
relu(const st_value *c, float *x, int64_t n, const float *slope, int step)
{
	(void)c, (void)slope, (void)step;
	k_activation(K_ACT_RELU, 0, 0, x, n);
}

static void
leaky_relu(const st_value *c, float *x, int64_t n, const float *slope, int step)
{
	(void)slope, (void)step;
	k_activation(K_ACT_LEAKY_RELU, coef(c, LEAKY_RELU_ALPHA), 0, x, n);
}

/* The learned slopes when the host has them (one for the run, or one per
 * element), alpha for every element otherwise. */
static void
prelu(const st_value *c, float *x, int64_t n, const float *slope, int step)
{
	if (slope == NULL)
		k_activation(K_ACT_LEAKY_RELU, coef(c, PRELU_ALPHA), 0, x, n);
	else if (step == 0)
		k_activation(K_ACT_LEAKY_RELU, slope[0], 0, x, n);
	else
		k_prelu(x, n, slope);
}

static void
elu(const st_value *c, float *x, int64_t n, const float *slope, int step)
{
	(void)slope, (void)step;
	k_activation(K_ACT_ELU, coef(c, ELU_ALPHA), 0, x, n);
}

static void
selu(const st_value *c, float *x, int64_t n, const float *slope, int step)
{
	(void)slope, (void)step;
	k_activation(K_ACT_SELU, coef(c, SELU_ALPHA), coef(c, SELU_GAMMA), x, n);
}

static void
hard_sigmoid(const st_value *c, float *x, int64_t n, const float *slope, int step)
{
	(void)slope, (void)step;
	k_activation(K_ACT_HARD_SIGMOID, coef(c, HARD_SIGMOID_ALPHA), coef(c, HARD_SIGMOID_BETA), x, n);
}

static void
gelu(const st_value *c, float *x, int64_t n, const float *slope, int step)
{
	(void)slope, (void)step;
	k_act act = c[GELU_APPROXIMATE].i == GELU_TANH ? K_ACT_GELU_TANH : K_ACT_GELU;
	k_activation(act, 0, 0, x, n);
}

static void
clip(const st_value *c, float *x, int64_t n, const float *slope, int step)
{
	(void)slope, (void)step;
	k_activation(K_ACT_CLIP, coef(c, CLIP_MIN), coef(c, CLIP_MAX), x, n);
}

/* The activations without coefficients, one function each. */
#define PLAIN(name, act)                                                                      \
	static void name(const st_value *c, float *x, int64_t n, const float *slope, int step) \
	{                                                                                     \
		(void)c, (void)slope, (void)step;                                             \
		k_activation(act, 0, 0, x, n);                                                \
	}

PLAIN(sigmoid, K_ACT_SIGMOID)
PLAIN(tanh_, K_ACT_TANH)
PLAIN(softplus, K_ACT_SOFTPLUS)
PLAIN(hard_swish, K_ACT_HARD_SWISH)
PLAIN(silu, K_ACT_SILU)
PLAIN(mish, K_ACT_MISH)

const st_activation_impl std_activation_impls[] = {
	{ "relu", relu },
	{ "leaky_relu", leaky_relu },
	{ "prelu", prelu },
	{ "elu", elu },
	{ "selu", selu },
	{ "sigmoid", sigmoid },
	{ "tanh", tanh_ },
	{ "softplus", softplus },
	{ "hard_sigmoid", hard_sigmoid },
	{ "hard_swish", hard_swish },
	{ "silu", silu },
	{ "gelu", gelu },
	{ "mish", mish },
	{ "clip", clip },
};
const int std_activation_impl_count = STD_COUNT(std_activation_impls);
