"""The converters of ``gradlab.onnx.export``: one small function per gradlab op.

Each takes the builder (:class:`~gradlab.jit.onnx_export._Builder`: names
for Values, constants, ``emit`` for an ONNX node), the node's arguments
(Values in place of tensors) and its result Values, writes the ONNX nodes
that compute the op and returns the names of its results. An op's arguments
are its Function's forward arguments (``linear(x, weight, bias)``,
``convolution(x, w, b, geometry)``); the result Values carry the shapes,
so every shape is a constant here.
"""

from __future__ import annotations

import math

import numpy as np

from .graph import Value

__all__ = ["CONVERTERS", "ExportError"]


class ExportError(RuntimeError):
    """An op or an argument that ONNX export cannot write."""


def _operand(b, x, like: Value) -> str:
    return b.name(x) if isinstance(x, Value) else b.scalar_like(x, like)


def _binary(op_type: str):
    def convert(b, args, out):
        a, c = args[0], args[1]
        other = _operand(b, c, out[0])
        if len(args) == 3:  # add/sub with alpha=: a ± alpha·c
            (other,) = b.emit("Mul", [other, b.scalar_like(args[2], out[0])])
        return b.emit(op_type, [_operand(b, a, out[0]), other])
    return convert


def _unary(op_type: str, **attrs):
    def convert(b, args, out):
        return b.emit(op_type, [b.name(args[0])], **attrs)
    return convert


def _reshape(b, args, out):
    return b.emit("Reshape", [b.name(args[0]), b.shape_of(out[0], infer=True)])


def _identity(b, args, out):
    return [b.name(args[0])]


def _linear(b, args, out):
    x, w, bias = args
    if len(x.shape) == 2:
        inputs = [b.name(x), b.name(w)] + ([b.name(bias)] if bias is not None else [])
        return b.emit("Gemm", inputs, transB=1)
    (wt,) = b.emit("Transpose", [b.name(w)], perm=[1, 0])
    (y,) = b.emit("MatMul", [b.name(x), wt])
    return b.emit("Add", [y, b.name(bias)]) if bias is not None else [y]


def _window_attrs(geo, spatial_rank: int) -> dict:
    """kernel, strides, dilations, pads of a gradlab geometry, for 1 or 2 spatial dims."""
    keep = slice(2 - spatial_rank, None)  # a 1-D op is a 2-D one with H = 1
    pads = geo.pads[keep]
    return {"kernel_shape": list(geo.kernel[keep]), "strides": list(geo.stride[keep]),
            "dilations": list(geo.dilation[keep]),
            "pads": [p[0] for p in pads] + [p[1] for p in pads]}


def _convolution(b, args, out):
    x, w, bias, geo = args
    attrs = _window_attrs(geo, len(x.shape) - 2)
    inputs = [b.name(x), b.name(w)] + ([b.name(bias)] if bias is not None else [])
    return b.emit("Conv", inputs, group=geo.groups, **attrs)


def _conv_transpose(b, args, out):
    """gradlab's geometry describes the convolution this one transposes: its input is our
    output, so ONNX's output_padding is what the kernels alone don't reach."""
    x, w, bias, geo = args
    rank = len(x.shape) - 2
    b.require_static(x, range(-rank, 0), "a transposed convolution's output padding")
    attrs = _window_attrs(geo, rank)
    keep = slice(2 - rank, None)
    reach = [(o - 1) * s + (k - 1) * d + 1 - pb - pe for o, s, k, d, (pb, pe) in zip(
        geo.out_size[keep], geo.stride[keep], geo.kernel[keep], geo.dilation[keep],
        geo.pads[keep])]
    extra = [size - r for size, r in zip(geo.in_size[keep], reach)]
    inputs = [b.name(x), b.name(w)] + ([b.name(bias)] if bias is not None else [])
    return b.emit("ConvTranspose", inputs, group=geo.groups, output_padding=extra, **attrs)


def _group_norm(b, args, out):
    """(x - mean) / sqrt(var + eps) over each group of channels, then weight and bias."""
    x, groups, weight, bias, eps = args
    channels = x.shape[1]
    (flat,) = b.emit("Reshape", [b.name(x), b.shape_tensor([b.dim(x, 0), groups, -1])])
    (mean,) = _reduced(b, "ReduceMean", flat, [2], True)
    (centered,) = b.emit("Sub", [flat, mean])
    (square,) = b.emit("Mul", [centered, centered])
    (var,) = _reduced(b, "ReduceMean", square, [2], True)
    (std,) = b.emit("Sqrt", [b.emit("Add", [var, b.scalar_like(eps, x)])[0]])
    (normed,) = b.emit("Reshape", [b.emit("Div", [centered, std])[0], b.shape_of(x)])
    per_channel = [channels] + [1] * (len(x.shape) - 2)
    if weight is not None:
        (normed,) = b.emit("Mul", [normed, b.emit("Reshape", [b.name(weight),
                                                             b.ints(per_channel)])[0]])
    if bias is not None:
        (normed,) = b.emit("Add", [normed, b.emit("Reshape", [b.name(bias),
                                                             b.ints(per_channel)])[0]])
    return [normed]


def _pool_input(b, x: Value, attrs: dict) -> str:
    """Negative end pads (gradlab crops what no window reaches) become a Slice first. Along
    axes whose size follows a dynamic axis, how much is left over depends on the size; no
    window reaches it either way, so those simply get no end pad."""
    rank = len(attrs["kernel_shape"])
    ends = attrs["pads"][rank:]
    name = b.name(x)
    if any(p < 0 for p in ends):
        axes = list(range(len(x.shape) - rank, len(x.shape)))
        moving = set(b.dynamic(x))
        crop = [(a, x.shape[a] + p) for a, p in zip(axes, ends) if p < 0 and a not in moving]
        if crop:
            (name,) = b.emit("Slice", [name, b.ints([0] * len(crop)),
                                       b.ints([stop for _, stop in crop]),
                                       b.ints([a for a, _ in crop])])
        attrs["pads"] = attrs["pads"][:rank] + [max(p, 0) for p in ends]
    return name


def _max_pool(b, args, out):
    x, geo = args[0], args[1]
    if len(args) > 2 and args[2]:
        raise ExportError("onnx.export: max pooling with return_indices=True is not exported")
    attrs = _window_attrs(geo, len(x.shape) - 2)
    return b.emit("MaxPool", [_pool_input(b, x, attrs)], **attrs)


def _avg_pool(b, args, out):
    x, geo, divisor = args
    rank = len(x.shape) - 2
    attrs = _window_attrs(geo, rank)
    name = _pool_input(b, x, attrs)
    attrs.pop("dilations")
    divisor = np.asarray(divisor, dtype=np.float64)
    if set(b.dynamic(x)) & set(range(len(x.shape) - rank, len(x.shape))):
        # Window sizes read at export time: only windows that never reach padding (each
        # divides by the kernel's size) stay right at every input size.
        if any(attrs["pads"]) or not (divisor == np.prod(attrs["kernel_shape"])).all():
            b.require_static(x, range(-rank, 0), "average pooling with padding")
        return b.emit("AveragePool", [name], count_include_pad=0, **attrs)
    divisor = np.broadcast_to(divisor.reshape(divisor.shape[-rank:]) if divisor.ndim > rank
                              else divisor, out[0].shape[-rank:])  # (1-D pools: (1, L))
    for include in (1, 0):  # which ONNX counting gives gradlab's divisors?
        if np.array_equal(_onnx_divisors(x.shape[-rank:], attrs, include), divisor):
            return b.emit("AveragePool", [name], count_include_pad=include, **attrs)
    raise ExportError("onnx.export: this average pool divides by counts ONNX's AveragePool "
                      "cannot express (divisor_override, or ceil_mode windows)")


def _onnx_divisors(size, attrs, include_pad: int) -> np.ndarray:
    """The divisor of each output window of ONNX's AveragePool, computed on ones."""
    rank = len(size)
    pads = attrs["pads"]
    k, s = attrs["kernel_shape"], attrs["strides"]
    inside = np.pad(np.ones(size), [(pads[i], pads[i + rank]) for i in range(rank)],
                    constant_values=float(include_pad))
    out = [(inside.shape[i] - k[i]) // s[i] + 1 for i in range(rank)]
    counts = np.empty(out)
    for index in np.ndindex(*out):
        window = tuple(slice(index[i] * s[i], index[i] * s[i] + k[i]) for i in range(rank))
        counts[index] = inside[window].sum()
    return counts


def _batch_norm(b, args, out):
    x, weight, bias, mean, var, training, _momentum, eps = args
    if training or mean is None:
        raise ExportError("onnx.export: batch_norm on batch statistics (training mode, or "
                          "track_running_stats=False) is not exported; export in eval mode")
    channels = x.shape[1]
    if weight is None or bias is None:
        b.require_static(x, [1], "batch_norm without affine weights")
    scale = b.name(weight) if weight is not None else b.const(np.ones(channels, x.dtype.np))
    shift = b.name(bias) if bias is not None else b.const(np.zeros(channels, x.dtype.np))
    return b.emit("BatchNormalization", [b.name(x), scale, shift, b.name(mean), b.name(var)],
                  epsilon=float(eps))


def _layer_norm(b, args, out):
    x, weight, bias, k, eps = args
    shape = x.shape[-k:]
    if weight is None:
        b.require_static(x, range(-k, 0), "layer_norm without weights")
    scale = b.name(weight) if weight is not None else b.const(np.ones(shape, x.dtype.np))
    inputs = [b.name(x), scale] + ([b.name(bias)] if bias is not None else [])
    return b.emit("LayerNormalization", inputs, axis=-k, epsilon=float(eps))


def _gelu(b, args, out):
    x, approximate = args
    if b.opset >= 20:
        return b.emit("Gelu", [b.name(x)], approximate=approximate)
    half, one = b.scalar_like(0.5, x), b.scalar_like(1.0, x)
    if approximate == "tanh":  # 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³)))
        (cube,) = b.emit("Mul", [b.name(x), b.emit("Mul", [b.name(x), b.name(x)])[0]])
        (inner,) = b.emit("Add", [b.name(x), b.emit("Mul", [cube, b.scalar_like(0.044715, x)])[0]])
        (t,) = b.emit("Tanh", [b.emit("Mul", [inner, b.scalar_like(math.sqrt(2 / math.pi),
                                                                      x)])[0]])
    else:  # 0.5 x (1 + erf(x / √2))
        (t,) = b.emit("Erf", [b.emit("Div", [b.name(x), b.scalar_like(math.sqrt(2), x)])[0]])
    (gate,) = b.emit("Mul", [half, b.emit("Add", [one, t])[0]])
    return b.emit("Mul", [b.name(x), gate])


def _elu(b, args, out):
    x, alpha, scale, input_scale = args
    if input_scale != 1:
        raise ExportError("onnx.export: elu with input_scale != 1 is not exported")
    if scale == 1:
        return b.emit("Elu", [b.name(x)], alpha=float(alpha))
    return b.emit("Selu", [b.name(x)], alpha=float(alpha), gamma=float(scale))


def _softplus(b, args, out):
    x, beta, _threshold = args
    if beta == 1:
        return b.emit("Softplus", [b.name(x)])
    (scaled,) = b.emit("Mul", [b.name(x), b.scalar_like(beta, x)])
    return b.emit("Div", [b.emit("Softplus", [scaled])[0], b.scalar_like(beta, x)])


def _silu(b, args, out):
    return b.emit("Mul", [b.name(args[0]), b.emit("Sigmoid", [b.name(args[0])])[0]])


def _clamp(b, args, out):
    x, lo, hi = args
    return b.emit("Clip", [b.name(x), "" if lo is None else _operand(b, lo, x),
                           "" if hi is None else _operand(b, hi, x)])


def _softmax(op_type):
    def convert(b, args, out):
        return b.emit(op_type, [b.name(args[0])], axis=int(args[1]))
    return convert


def _permute(b, args, out):
    rank = len(args[0].shape)
    return b.emit("Transpose", [b.name(args[0])], perm=[d % rank for d in args[1]])


def _transpose(b, args, out):
    x, d0, d1 = args
    perm = list(range(len(x.shape)))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return b.emit("Transpose", [b.name(x)], perm=perm)


def _axes(dims, rank: int) -> list:
    if dims is None:
        return list(range(rank))
    dims = (dims,) if isinstance(dims, int) else dims
    return [d % rank for d in dims]


def _reduced(b, op_type: str, name: str, axes: list, keepdim) -> list:
    """``op_type`` (ReduceSum, ReduceMean ...) of ``name`` over ``axes``: an input from opset
    18 on (ReduceSum's since 13), an attribute before."""
    if op_type == "ReduceSum" or b.opset >= 18:
        return b.emit(op_type, [name, b.ints(axes)], keepdims=int(bool(keepdim)))
    return b.emit(op_type, [name], axes=axes, keepdims=int(bool(keepdim)))


def _reduce(op_type: str):
    def convert(b, args, out):
        x, dims, keepdim = args[0], args[1], args[2]
        return _reduced(b, op_type, b.name(x), _axes(dims, len(x.shape)), keepdim)
    return convert


def _extreme(b, args, out):
    x, dims, keepdim, largest = args
    values = _reduce("ReduceMax" if largest else "ReduceMin")(b, (x, dims, keepdim), out)
    if len(out) == 1:  # max(x), amax(x, dims)
        return values
    (axis,) = _axes(dims, len(x.shape))  # max(x, dim): (values, indices)
    return values + b.emit("ArgMax" if largest else "ArgMin", [b.name(x)], axis=axis,
                           keepdims=int(bool(keepdim)))


def _cat(b, args, out):
    dim, *tensors = args
    return b.emit("Concat", [b.name(t) for t in tensors], axis=int(dim))


def _embedding(b, args, out):
    weight, ids = args[0], args[1]
    return b.emit("Gather", [b.name(weight), b.name(ids)], axis=0)


def _index_select(b, args, out):
    x, dim, index = args
    return b.emit("Gather", [b.name(x), b.name(index)], axis=int(dim))


def _gather(b, args, out):
    x, dim, index = args
    return b.emit("GatherElements", [b.name(x), b.name(index)], axis=int(dim))


def _pad(b, args, out):
    x, pads, value = args
    if any(p < 0 for pair in pads for p in pair):
        raise ExportError("onnx.export: negative padding (cropping) is not exported")
    onnx_pads = [p[0] for p in pads] + [p[1] for p in pads]
    return b.emit("Pad", [b.name(x), b.ints(onnx_pads), _operand(b, value, x)], mode="constant")


def _prelu(b, args, out):
    x, weight, slope_shape = args
    (slope,) = b.emit("Reshape", [b.name(weight), b.ints(slope_shape)])
    return b.emit("PRelu", [b.name(x), slope])


def _triangle(b, args, out):
    x, diagonal, lower = args
    return b.emit("Trilu", [b.name(x), b.const(np.asarray(diagonal, dtype=np.int64))],
                  upper=0 if lower else 1)


def _where(b, args, out):
    condition, a, c = args
    return b.emit("Where", [b.name(condition), _operand(b, a, out[0]), _operand(b, c, out[0])])


def _masked_fill(b, args, out):
    x, mask, value = args
    return b.emit("Where", [b.name(mask), b.scalar_like(value, x), b.name(x)])


def _compare(op_type: str):
    def convert(b, args, out):
        a, c = args
        like = a if isinstance(a, Value) else c
        return b.emit(op_type, [_operand(b, a, like), _operand(b, c, like)])
    return convert


def _argextreme(b, args, out):
    x, dim, keepdim, largest = args
    name = b.name(x)
    if dim is None:  # over all values: of the flattened tensor
        (name,) = b.emit("Reshape", [name, b.ints([-1])])
        dim = 0
    (index,) = b.emit("ArgMax" if largest else "ArgMin", [name], axis=int(dim),
                      keepdims=int(bool(keepdim)))
    return b.emit("Reshape", [index, b.shape_of(out[0], infer=True)])


def _mish(b, args, out):  # x · tanh(softplus(x))
    (soft,) = b.emit("Softplus", [b.name(args[0])])
    return b.emit("Mul", [b.name(args[0]), b.emit("Tanh", [soft])[0]])


def _logsigmoid(b, args, out):  # -softplus(-x)
    (neg,) = b.emit("Neg", [b.name(args[0])])
    return b.emit("Neg", [b.emit("Softplus", [neg])[0]])


def _resample(b, args, out):
    """Upsampling as gradlab computes it: along each axis, a sum over taps of weight times
    the input gathered at the tap's positions (nearest: one tap, no weight). The same
    arithmetic as gradlab's forward, so every mode and align_corners export alike."""
    x, taps, _ = args
    name = b.name(x)
    rank = len(x.shape)
    b.require_static(x, [axis for axis, _ in taps], "upsampling")
    for axis, (index, weight, _) in taps:
        if weight is None:
            (name,) = b.emit("Gather", [name, b.const(np.asarray(index[0], np.int64))],
                             axis=axis)
            continue
        shape = [1] * rank
        shape[axis] = index.shape[1]
        total = None
        for k in range(index.shape[0]):
            (picked,) = b.emit("Gather", [name, b.const(np.asarray(index[k], np.int64))],
                               axis=axis)
            (term,) = b.emit("Mul", [picked, b.const(np.asarray(weight[k], x.dtype.np)
                                                     .reshape(shape))])
            total = term if total is None else b.emit("Add", [total, term])[0]
        name = total
    return [name]


def _to(b, args, out):
    return b.emit("Cast", [b.name(args[0])], to=b.elem_type(out[0]))


def _expand(b, args, out):
    return b.emit("Expand", [b.name(args[0]), b.shape_of(out[0])])


def _pow(b, args, out):
    return b.emit("Pow", [_operand(b, args[0], out[0]), _operand(b, args[1], out[0])])


def _index(b, args, out):
    """Basic indexing (ints, slices, ``...``, None): one Slice, then a Reshape to the result's
    shape, which drops the int dims and adds the None ones (every shape is known)."""
    if len(args) > 2:  # IndexByTensors: (x, template, *index tensors)
        raise ExportError("onnx.export: indexing with tensors or masks is not exported; use "
                          "index_select or gather")
    x, (basic, advanced) = args
    if advanced is not None:
        raise ExportError("onnx.export: indexing with tensors or masks is not exported; use "
                          "index_select or gather")
    parts = [p for p in basic if p is not None]
    if Ellipsis in parts:
        at = parts.index(Ellipsis)
        parts[at:at + 1] = [slice(None)] * (len(x.shape) - len(parts) + 1)
    starts, ends, axes, steps = [], [], [], []
    moving = b.dynamic(x)
    for axis, (part, size) in enumerate(zip(parts, x.shape)):
        if isinstance(part, slice):
            if part == slice(None):
                continue
            if axis in moving:  # the slice as written: ONNX resolves it at run time
                start, stop, step = _slice_as_written(part)
            else:
                start, stop, step = part.indices(size)
                if step < 0 and stop < 0:
                    stop = -size - 1  # ONNX: past the front of the axis
        elif axis in moving:  # x[-1] stays "the last", whatever the size
            start, step = int(part), 1
            stop = start + 1 if start != -1 else _TO_THE_END
        else:
            start, step = int(part) % size, 1
            stop = start + 1
        starts.append(start)
        ends.append(stop)
        axes.append(axis)
        steps.append(step)
    name = b.name(x)
    if axes:
        (name,) = b.emit("Slice", [name, b.ints(starts), b.ints(ends), b.ints(axes),
                                   b.ints(steps)])
    return b.emit("Reshape", [name, b.shape_of(out[0], infer=True)])


_TO_THE_END = 2 ** 63 - 1  # a Slice end past any size (ONNX clamps it)


def _slice_as_written(part: slice) -> tuple:
    """start, stop, step of a slice along an axis whose size is known only at run time."""
    step = 1 if part.step is None else part.step
    if step > 0:
        return (part.start or 0, _TO_THE_END if part.stop is None else part.stop, step)
    return (-1 if part.start is None else part.start,
            -_TO_THE_END if part.stop is None else part.stop, step)


def _split(b, args, out):
    x, sizes, dim = args
    b.require_static(x, [dim], "split")
    return b.emit("Split", [b.name(x), b.ints(sizes)], [b.fresh("split") for _ in sizes],
                  axis=int(dim))


def _unbind(b, args, out):
    x, dim = args
    pieces = _split(b, (x, [1] * x.shape[dim], dim), out)
    return [b.emit("Reshape", [p, b.shape_of(v, infer=True)])[0] for p, v in zip(pieces, out)]


def _stack(b, args, out):
    dim, *tensors = args
    rows = [b.emit("Unsqueeze", [b.name(t), b.ints([dim])])[0] for t in tensors]
    return b.emit("Concat", rows, axis=int(dim))


def _attention(b, args, out):
    """softmax(Q Kᵀ·scale + mask) V, with the weights as the second result."""
    q, k, v, mask, is_causal, scale, groups, keep, _ = args
    if keep is not None or groups != 1:
        raise ExportError("onnx.export: attention with dropout or grouped keys is not exported "
                          "(export in eval mode, with as many key heads as query heads)")
    rank = len(k.shape)
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    (kt,) = b.emit("Transpose", [b.name(k)], perm=perm)
    (scores,) = b.emit("Mul", [b.emit("MatMul", [b.name(q), kt])[0], b.scalar_like(scale, q)])
    length, keys = q.shape[-2], k.shape[-2]
    if is_causal:
        if b.dynamic(q) or b.dynamic(k):  # the mask's size is read at run time
            shape = b.shape_tensor([b.dim(q, len(q.shape) - 2), b.dim(k, rank - 2)])
            one = b.onnx.numpy_helper.from_array(np.ones(1, np.float32), "value")
            (ones,) = b.emit("ConstantOfShape", [shape], value=one)
            (lower,) = b.emit("Trilu", [ones], upper=0)
            (allowed,) = b.emit("Cast", [lower], to=b.onnx.TensorProto.BOOL)
        else:
            allowed = b.const(np.tril(np.ones((length, keys), dtype=bool)))
        (scores,) = b.emit("Where", [allowed, scores, b.scalar_like(-np.inf, q)])
    if mask is not None:
        (scores,) = b.emit("Where", [b.name(mask), scores, b.scalar_like(-np.inf, q)]) \
            if mask.dtype.np == np.bool_ else b.emit("Add", [scores, b.name(mask)])
    (weights,) = b.emit("Softmax", [scores], axis=-1)
    return b.emit("MatMul", [weights, b.name(v)]) + [weights]


CONVERTERS = {
    "linear": _linear, "matmul": _binary("MatMul"), "convolution": _convolution,
    "conv_transpose": _conv_transpose, "group_norm": _group_norm,
    "batch_norm": _batch_norm, "layer_norm": _layer_norm,
    "max_pool1d": _max_pool, "max_pool2d": _max_pool,
    "avg_pool1d": _avg_pool, "avg_pool2d": _avg_pool,
    "add": _binary("Add"), "sub": _binary("Sub"), "mul": _binary("Mul"),
    "div": _binary("Div"), "pow": _pow,
    "neg": _unary("Neg"), "abs": _unary("Abs"), "exp": _unary("Exp"), "log": _unary("Log"),
    "sqrt": _unary("Sqrt"), "relu": _unary("Relu"), "sigmoid": _unary("Sigmoid"),
    "tanh": _unary("Tanh"), "erf": _unary("Erf"), "gelu": _gelu, "elu": _elu, "silu": _silu,
    "softplus": _softplus, "clamp": _clamp,
    "leaky_relu": lambda b, args, out: b.emit("LeakyRelu", [b.name(args[0])],
                                              alpha=float(args[1])),
    "softmax": _softmax("Softmax"), "log_softmax": _softmax("LogSoftmax"),
    "reshape": _reshape, "view": _reshape, "squeeze": _reshape, "unsqueeze": _reshape,
    "flatten": _reshape,
    "permute": _permute, "transpose": _transpose, "expand": _expand, "cat": _cat,
    "sum": _reduce("ReduceSum"), "mean": _reduce("ReduceMean"), "amax": _extreme,
    "amin": _extreme, "max": _extreme, "min": _extreme,
    "embedding": _embedding, "to": _to, "index": _index, "index_select": _index_select,
    "gather": _gather,
    **{f"upsample_{mode}{d}d": _resample for d in (1, 2, 3)
       for mode in ("nearest", "nearest_exact", "linear", "bilinear", "trilinear", "bicubic")},
    "constant_pad_nd": _pad, "prelu": _prelu, "tril": _triangle,
    "triu": _triangle, "where": _where, "masked_fill": _masked_fill,
    "gt": _compare("Greater"), "lt": _compare("Less"), "ge": _compare("GreaterOrEqual"),
    "le": _compare("LessOrEqual"), "eq": _compare("Equal"),
    "maximum": _binary("Max"), "minimum": _binary("Min"), "argmax": _argextreme,
    "argmin": _argextreme, "sign": _unary("Sign"), "floor": _unary("Floor"),
    "ceil": _unary("Ceil"), "reciprocal": _unary("Reciprocal"), "mish": _mish,
    "logsigmoid": _logsigmoid, "hardswish": _unary("HardSwish"),
    "hardsigmoid": _unary("HardSigmoid", alpha=1 / 6, beta=0.5),
    "hardtanh": _clamp, "split_with_sizes": _split,
    "unbind": _unbind, "stack": _stack, "scaled_dot_product_attention": _attention,
    "detach": _identity, "clone": _identity, "contiguous": _identity,
}
"""Op name -> converter. Each takes the builder, the node's arguments (Values for tensors)
and its result Values, emits ONNX nodes and returns the names of its results."""

CONVERTERS["rsub"] = CONVERTERS["sub"]  # rsub(number, x) is recorded as number - x
