"""Each op's derivative in words, for the debugger's inspector.

Backprop is the chain rule applied node by node: a backward node receives
``grad`` (the gradient of the loss with respect to its output) and sends
each input the gradient of the loss with respect to that input. The texts
below say what that means for each op, in the notation ``grad`` = incoming
gradient, ``y`` = the op's output.
"""

from __future__ import annotations

__all__ = ["derivative_rule", "RULES"]

_SHAPE = ("changes only how the values are arranged, not the values: backward arranges the "
          "incoming gradient back into the input's shape ({how})")
_REDUCE_TIE = "ties share the gradient as PyTorch does"

RULES: dict[str, str] = {
    # --- arithmetic -------------------------------------------------------------------------
    "add": "d(a+b)/da = 1, d(a+b)/db = 1: both inputs get the incoming gradient unchanged "
           "(summed over any broadcast dims; times alpha for b when alpha is given)",
    "sub": "d(a-b)/da = 1, d(a-b)/db = -1: a gets the incoming gradient, b gets it negated "
           "(summed over broadcast dims)",
    "mul": "d(a*b)/da = b, d(a*b)/db = a: each input's gradient is the incoming gradient times "
           "the other input (its conjugate for complex numbers; summed over broadcast dims)",
    "div": "d(a/b)/da = 1/b, d(a/b)/db = -a/b^2: a gets grad / b, b gets -grad * a / b^2",
    "neg": "d(-x)/dx = -1: the gradient is the incoming gradient negated",
    "pow": "d(x^n)/dx = n * x^(n-1); for a tensor exponent also d(a^b)/db = a^b * ln(a)",
    "sqrt": "d sqrt(x)/dx = 1 / (2 sqrt(x)): grad / (2y), large near 0",
    "rsqrt": "d x^(-1/2)/dx = -1/2 x^(-3/2): grad * -0.5 * y^3",
    "abs": "d|x|/dx = sign(x): the gradient passes with its sign flipped where x < 0 (0 at 0); "
           "for a complex z it is sent along z/|z|, the direction |z| grows fastest",
    "sign": "sign is flat almost everywhere: its gradient is 0",
    "exp": "d exp(x)/dx = exp(x): the gradient is grad * y (the output itself)",
    "exp2": "d 2^x/dx = 2^x ln 2: grad * y * ln 2",
    "expm1": "d (e^x - 1)/dx = e^x: grad * (y + 1)",
    "log": "d ln(x)/dx = 1/x: the gradient is grad / x (large for x near 0)",
    "log2": "d log2(x)/dx = 1 / (x ln 2)",
    "log10": "d log10(x)/dx = 1 / (x ln 10)",
    "log1p": "d ln(1+x)/dx = 1 / (1+x)",
    "sin": "d sin(x)/dx = cos(x): grad * cos(x)",
    "cos": "d cos(x)/dx = -sin(x): grad * -sin(x)",
    "tan": "d tan(x)/dx = 1 + tan(x)^2: grad * (1 + y^2)",
    "erf": "d erf(x)/dx = 2/sqrt(pi) * exp(-x^2)",
    "clamp": "d clamp(x)/dx = 1 inside [min, max], 0 where x was clipped: the gradient passes "
             "only through values that were not clamped",
    "maximum": "max(a, b) routes the gradient to whichever input was larger (split evenly on "
               "ties)",
    "minimum": "min(a, b) routes the gradient to whichever input was smaller (split evenly on "
               "ties)",
    "where": "where(cond, a, b): a gets the gradient where cond is True, b where it is False; "
             "cond gets none",
    "masked_fill": "the filled positions got a constant, so their gradient is 0; the others "
                   "pass the incoming gradient unchanged",
    "xlogy": "d(x*log y)/dx = log y, d/dy = x / y",
    "remainder": "d(a mod b)/da = 1, d/db = -floor(a/b)",
    "round": "rounding is flat almost everywhere: its gradient is 0",
    "floor": "floor is flat almost everywhere: its gradient is 0",
    "ceil": "ceil is flat almost everywhere: its gradient is 0",
    "trunc": "trunc is flat almost everywhere: its gradient is 0",
    # --- activations ------------------------------------------------------------------------
    "relu": "d relu(x)/dx = 1 where x > 0, else 0: the gradient passes through the positive "
            "inputs and is blocked at the others (a 'dead' unit gets no gradient)",
    "threshold": "like relu: the gradient passes where x > threshold, 0 elsewhere",
    "leaky_relu": "d/dx = 1 where x > 0, negative_slope elsewhere: a small gradient still "
                  "flows through negative inputs",
    "elu": "d/dx = 1 where x > 0, else alpha * exp(x) (= y + alpha)",
    "celu": "d/dx = 1 where x > 0, else exp(x / alpha)",
    "gelu": "d gelu(x)/dx = Phi(x) + x * phi(x): the normal CDF plus x times the normal density",
    "silu": "d (x * sigmoid(x))/dx = s + x * s * (1 - s) with s = sigmoid(x)",
    "mish": "d (x * tanh(softplus(x)))/dx = tanh(sp) + x * sigmoid(x) * (1 - tanh(sp)^2)",
    "sigmoid": "d sigmoid(x)/dx = y * (1 - y): at most 1/4, tiny when the unit saturates "
               "(y near 0 or 1), which makes gradients vanish in deep sigmoid nets",
    "logsigmoid": "d log sigmoid(x)/dx = 1 - sigmoid(x)",
    "tanh": "d tanh(x)/dx = 1 - y^2: 1 at 0, tiny when the unit saturates at +-1",
    "hardtanh": "d/dx = 1 inside [min_val, max_val], 0 outside",
    "hardsigmoid": "d/dx = 1/6 inside (-3, 3), 0 outside",
    "hardswish": "d/dx = (2x + 3) / 6 inside (-3, 3), 0 below, 1 above",
    "softplus": "d ln(1 + e^x)/dx = sigmoid(x)",
    "softmax": "d softmax/dx: grad_x = y * (grad - sum(grad * y)) along dim: each output "
               "depends on every input of its row, so the gradient is centred by the "
               "softmax-weighted average",
    "log_softmax": "d log_softmax/dx: grad_x = grad - softmax(x) * sum(grad) along dim",
    "logsumexp": "d logsumexp(x)/dx = softmax(x): each input gets grad times its softmax weight",
    "dropout": "the kept values were scaled by 1/(1-p), so the gradient is the incoming "
               "gradient times the same mask / (1-p); dropped positions get 0",
    # --- linear algebra ---------------------------------------------------------------------
    "matmul": "d(A@B)/dA = grad @ B^T, d(A@B)/dB = A^T @ grad: each factor's gradient is the "
              "incoming gradient multiplied by the other factor, transposed",
    "linear": "y = x @ W^T + b: grad_x = grad @ W, grad_W = grad^T @ x (summed over the batch), "
              "grad_b = grad summed over the batch",
    "addmm": "y = beta*C + alpha*(A @ B): grad_C = beta*grad, grad_A = alpha*grad @ B^T, "
             "grad_B = alpha*A^T @ grad",
    "addmv": "y = beta*c + alpha*(A @ v): grad_A = alpha * outer(grad, v), grad_v = alpha*A^T "
             "@ grad",
    "baddbmm": "batched addmm: the matmul rule for every matrix of the batch",
    "einsum": "each operand's gradient is the einsum of the incoming gradient with the other "
              "operands, indices arranged to give that operand's shape",
    "norm": "d ||x||/dx = x / ||x|| for the 2-norm (undefined at 0)",
    # --- reductions -------------------------------------------------------------------------
    "sum": "d sum(x)/dx_i = 1: every summed element gets the incoming gradient (it is "
           "broadcast back over the reduced dims)",
    "mean": "d mean(x)/dx_i = 1/n: every element gets the incoming gradient divided by the "
            "number of elements averaged",
    "prod": "d prod(x)/dx_i = prod of the other elements = y / x_i",
    "max": f"only the maximum gets the gradient; the others get 0 ({_REDUCE_TIE})",
    "min": f"only the minimum gets the gradient; the others get 0 ({_REDUCE_TIE})",
    "amax": "the gradient is split evenly between the elements equal to the maximum",
    "amin": "the gradient is split evenly between the elements equal to the minimum",
    "var": "d var(x)/dx_i = 2 (x_i - mean) / (n - correction)",
    "std": "d std(x)/dx_i = (x_i - mean) / ((n - correction) * std)",
    "cumsum": "d cumsum/dx_i = the sum of the incoming gradient over positions >= i (a "
              "reversed cumulative sum)",
    # --- losses -----------------------------------------------------------------------------
    "cross_entropy": "d CE/d logits = (softmax(logits) - onehot(target)) / batch: push the "
                     "correct class's score up and the others down by their probability",
    "nll_loss": "d NLL/d input = -1/batch at the target class of each row, 0 elsewhere",
    "mse_loss": "d mean((x - t)^2)/dx = 2 (x - t) / n: the gradient is the error, scaled",
    "huber_loss": "d/dx = (x - t) / n where |x - t| < delta, delta * sign(x - t) / n beyond",
    "smooth_l1_loss": "d/dx = (x - t) / (beta * n) where |x - t| < beta, sign(x - t) / n beyond",
    "binary_cross_entropy": "d BCE/dp = (p - t) / (p (1 - p)) / n",
    "binary_cross_entropy_with_logits": "d/d logits = (sigmoid(x) - t) / n: prediction minus "
                                        "target",
    # --- networks ---------------------------------------------------------------------------
    "convolution": "grad_input = the transposed convolution of grad with the kernels, "
                   "grad_weight = the correlation of the input with grad (summed over the "
                   "batch), grad_bias = grad summed over batch and positions",
    "conv_transpose": "the reverse of convolution: grad_input is the convolution of grad with "
                      "the kernels; grad_weight correlates grad with the input",
    "max_pool1d": "each window's maximum gets the gradient of its output; the other values "
                  "in the window get 0",
    "max_pool2d": "each window's maximum gets the gradient of its output; the other values "
                  "in the window get 0",
    "avg_pool1d": "each output's gradient is spread evenly, 1/window_size to every input of "
                  "its window",
    "avg_pool2d": "each output's gradient is spread evenly, 1/window_size to every input of "
                  "its window",
    "batch_norm": "y = gamma * x_hat + beta with x_hat = (x - mean) / std over the batch: "
                  "grad_beta = sum(grad), grad_gamma = sum(grad * x_hat), and grad_x = gamma/std "
                  "* (grad - mean(grad) - x_hat * mean(grad * x_hat)): the batch statistics "
                  "couple every sample",
    "layer_norm": "like batch_norm but over each sample's features: grad_x = gamma/std * "
                  "(grad - mean(grad) - x_hat * mean(grad * x_hat)) per sample",
    "group_norm": "layer_norm's rule within each group of channels",
    "embedding": "only the looked-up rows get a gradient: row i of grad_weight is the sum of "
                 "the incoming gradients at the positions whose index is i",
    "scaled_dot_product_attention": "out = softmax(Q K^T / sqrt(d)) V: grad_V = P^T grad, and "
                                    "the softmax rule carries grad @ V^T back to Q and K",
    # --- shape and indexing -----------------------------------------------------------------
    "reshape": _SHAPE.format(how="reshape back"),
    "view": _SHAPE.format(how="view back"),
    "flatten": _SHAPE.format(how="unflatten"),
    "squeeze": _SHAPE.format(how="unsqueeze the dim again"),
    "unsqueeze": _SHAPE.format(how="squeeze the dim again"),
    "transpose": _SHAPE.format(how="transpose it back"),
    "permute": _SHAPE.format(how="the inverse permutation"),
    "expand": "an expanded dim repeats one value, so backward sums the incoming gradient "
              "over the expanded dims",
    "repeat": "every copy passes its gradient back to the value it copied: the gradient is "
              "summed over the repeats",
    "flip": "backward flips the incoming gradient back",
    "roll": "backward rolls the incoming gradient back by the same shift",
    "clone": "a copy: the gradient passes unchanged",
    "to": "a change of dtype or device: the gradient passes unchanged, converted back",
    "copy": "a copy: the gradient passes unchanged",
    "index": "x[idx] picks elements: the picked positions get the incoming gradient (added "
             "up when picked twice), the others get 0",
    "getitem": "x[idx] picks elements: the picked positions get the incoming gradient, the "
               "others get 0",
    "narrow": "a slice: the gradient goes to the sliced positions, 0 elsewhere",
    "gather": "the gradient is scattered (added) back to the positions gathered from",
    "scatter": "the scattered positions came from src: they send it their gradient; the input "
               "gets the gradient everywhere else",
    "scatter_add": "input gets the incoming gradient; src gets it gathered from the positions "
                   "it was added to",
    "index_select": "the gradient is added back into the selected rows, 0 elsewhere",
    "index_add": "input gets the incoming gradient; source gets it read back from the rows "
                 "it was added to",
    "index_put": "the overwritten positions get 0; values gets the gradient of the positions "
                 "it was put into",
    "cat": "backward splits the incoming gradient into pieces of the inputs' sizes along dim",
    "stack": "backward unstacks the incoming gradient: each input gets its slice",
    "split_with_sizes": "each piece's gradient is copied back into its place in the input",
    "unbind": "each slice's gradient goes back to its place in the input",
    "tril": "the gradient passes on and below the diagonal, 0 above",
    # --- complex numbers and the Fourier transform -----------------------------------------------
    "conj": "conj(x+iy) = x-iy: the gradient comes back conjugated (y's partial flips sign)",
    "real": "Re z depends on the real part only: z gets grad as a complex number with 0 "
            "imaginary part",
    "imag": "Im z depends on the imaginary part only: z gets grad * i",
    "angle": "d angle(z) = (-y dx + x dy) / |z|^2: z gets grad * i*z/|z|^2 (0 for real input)",
    "complex": "complex(re, im): re gets the real part of grad, im its imaginary part",
    "view_as_real": "the (re, im) pairs of the gradient become complex numbers again",
    "view_as_complex": "the complex gradient is seen as (re, im) pairs again",
    "fft_c2c": "the DFT is linear: backward is the opposite transform (ifft for fft) with the "
               "dual normalisation, the DFT matrix's conjugate transpose",
    "fft_r2c": "rfft keeps half the bins: backward pads the gradient with zeros to n bins, "
               "inverts, and keeps the real part (the input is real)",
    "fft_c2r": "irfft: backward is an rfft of the gradient, with the bins that stand for a "
               "mirrored pair (0 < k < n/2) counted twice",
    "triu": "the gradient passes on and above the diagonal, 0 below",
    "constant_pad_nd": "backward crops the padding off the incoming gradient",
    "sort": "the sorted values send their gradient back to the positions they came from",
    "topk": "the k chosen values get their gradient back at their positions, the rest get 0",
    "kthvalue": "only the k-th value's position gets the gradient",
}

_ALIASES = {"conv1d": "convolution", "conv2d": "convolution", "conv3d": "convolution",
            "mm": "matmul", "bmm": "matmul", "truediv": "div", "true_divide": "div",
            "negative": "neg", "clip": "clamp", "subtract": "sub", "multiply": "mul",
            "divide": "div", "square": "pow", "max_pool_gather": "max_pool2d",
            "maxPool": "max_pool2d", "avgPool": "avg_pool2d", "dropout1d": "dropout",
            "dropout2d": "dropout", "alpha_dropout": "dropout", "view_as": "view",
            "expand_as": "expand", "reshape_as": "reshape", "t": "transpose"}


def derivative_rule(op: str) -> str | None:
    """The derivative rule of op ``op`` (its PyTorch name) in words, or None if unknown.

    In-place forms share the rule of their op (``add_`` -> ``add``).
    """
    rule = RULES.get(op)
    if rule is None:
        base = op[:-1] if op.endswith("_") and not op.endswith("__") else op
        rule = RULES.get(_ALIASES.get(base, base))
    return rule
