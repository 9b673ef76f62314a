/* The activations a layer may carry, each with its formula and coefficients. */
#include "config.h"

#include "std.h"

static const st_param_desc leaky_relu_params[] = {
	{ .name = "alpha", .kind = ST_PARAM_FLOAT, .default_value = "0.01",
	  .doc = "Slope applied to negative inputs; detectors often use 0.1." },
};

static const st_param_desc prelu_params[] = {
	{ .name = "alpha", .kind = ST_PARAM_FLOAT, .default_value = "0.25",
	  .doc = "Slope for negative inputs, used for every channel when the weights folder has no "
	         "layerName_prelu_slope.npy; that file, when present, gives one learned slope per channel." },
};

static const st_param_desc elu_params[] = {
	{ .name = "alpha", .kind = ST_PARAM_FLOAT, .default_value = "1.0",
	  .doc = "Scale of the exponential branch: negative inputs tend to −alpha." },
};

static const st_param_desc selu_params[] = {
	{ .name = "alpha", .kind = ST_PARAM_FLOAT, .default_value = "1.67326319217681884765625",
	  .doc = "Scale of the exponential branch; the default (ONNX's, as float32) makes the "
	         "activation self-normalising together with gamma." },
	{ .name = "gamma", .kind = ST_PARAM_FLOAT, .default_value = "1.05070102214813232421875",
	  .doc = "Scale of the whole output; the default is ONNX's, as float32." },
};

static const st_param_desc hard_sigmoid_params[] = {
	{ .name = "alpha", .kind = ST_PARAM_FLOAT, .default_value = "0.2",
	  .doc = "Slope of the linear part; 0.2 as in ONNX and Keras (PyTorch's Hardsigmoid uses 1/6)." },
	{ .name = "beta", .kind = ST_PARAM_FLOAT, .default_value = "0.5",
	  .doc = "Offset of the linear part: the output at x = 0." },
};

static const char *const gelu_approximations[] = { "none", "tanh", NULL };

static const st_param_desc gelu_params[] = {
	{ .name = "approximate", .kind = ST_PARAM_ENUM, .default_value = "none",
	  .enum_values = gelu_approximations,
	  .doc = "none: the exact form with erf. tanh: the faster tanh approximation (ONNX Gelu "
	         "approximate=\"tanh\")." },
};

static const st_param_desc clip_params[] = {
	{ .name = "min", .kind = ST_PARAM_FLOAT, .default_value = "0.0",
	  .doc = "Lower bound. With the default bounds clip is relu6; ONNX Clip's unbounded default "
	         "cannot be written here, so give very large bounds instead." },
	{ .name = "max", .kind = ST_PARAM_FLOAT, .default_value = "6.0",
	  .doc = "Upper bound; when it is below min, every output is max (as in ONNX)." },
};

const st_activation_desc std_activations[] = {
	{ .name = "relu", .display_name = "ReLU", .summary = "relu: max(0, x)" },
	{ .name = "leaky_relu", .display_name = "Leaky ReLU",
	  .summary = "leaky_relu: x if x ≥ 0, else alpha·x",
	  .params = leaky_relu_params, .n_params = STD_COUNT(leaky_relu_params) },
	{ .name = "prelu", .display_name = "PReLU",
	  .summary = "prelu: x if x ≥ 0, else slope·x, with one slope per channel from "
	             "layerName_prelu_slope.npy; alpha for every channel when that file does not exist",
	  .params = prelu_params, .n_params = STD_COUNT(prelu_params) },
	{ .name = "elu", .display_name = "ELU", .summary = "elu: x if x ≥ 0, else alpha·(exp(x) − 1)",
	  .params = elu_params, .n_params = STD_COUNT(elu_params) },
	{ .name = "selu", .display_name = "SELU",
	  .summary = "selu: gamma·x if x > 0, else gamma·alpha·(exp(x) − 1)",
	  .params = selu_params, .n_params = STD_COUNT(selu_params) },
	{ .name = "sigmoid", .display_name = "Sigmoid", .summary = "sigmoid: 1 / (1 + exp(−x))" },
	{ .name = "tanh", .display_name = "Tanh", .summary = "tanh: (exp(x) − exp(−x)) / (exp(x) + exp(−x))" },
	{ .name = "softplus", .display_name = "Softplus", .summary = "softplus: ln(1 + exp(x))" },
	{ .name = "hard_sigmoid", .display_name = "Hard sigmoid",
	  .summary = "hard_sigmoid: max(0, min(1, alpha·x + beta))",
	  .params = hard_sigmoid_params, .n_params = STD_COUNT(hard_sigmoid_params) },
	{ .name = "hard_swish", .display_name = "Hard swish",
	  .summary = "hard_swish: x·max(0, min(1, x/6 + 1/2))" },
	{ .name = "silu", .display_name = "SiLU (swish)", .summary = "silu: x·sigmoid(x) = x / (1 + exp(−x))" },
	{ .name = "gelu", .display_name = "GELU",
	  .summary = "gelu: 0.5·x·(1 + erf(x/√2)); with approximate tanh: "
	             "0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))",
	  .params = gelu_params, .n_params = STD_COUNT(gelu_params) },
	{ .name = "mish", .display_name = "Mish", .summary = "mish: x·tanh(ln(1 + exp(x)))" },
	{ .name = "clip", .display_name = "Clip",
	  .summary = "clip: min(max(x, min), max); the defaults 0 and 6 make it relu6 (ONNX's unbounded "
	             "default is not representable)",
	  .params = clip_params, .n_params = STD_COUNT(clip_params) },
};
const int std_activation_count = STD_COUNT(std_activations);
