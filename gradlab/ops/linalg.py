"""Linear algebra: matrix products, einsum, and their gradients.

For C = A @ B the chain rule gives dA = dC @ Bᵀ and dB = Aᵀ @ dC: each
gradient has the shape of its input, and the products line up because the
shared dimension k appears in both. Batched and 1-D cases reduce to this
one rule (see ``Matmul.backward``).

``einsum`` generalises it: out = Σ over the indices missing from the output
of the product of the operands. The gradient of one operand is again an
einsum, of the output gradient with all the *other* operands, producing
that operand's indices (see ``Einsum.backward``).
"""

from __future__ import annotations

import string

import numpy as np

from .. import dtypes as _dt
from ..autograd.function import Function
from ..autograd.grad_mode import state as _grad_state
from ..tensor import Tensor
from ._util import autocast_inputs, autocast_once, promote, unbroadcast, widened, xp_for
from .complex_parts import conj

__all__ = ["matmul", "mm", "bmm", "dot", "outer", "einsum"]
TENSOR_METHODS = ["matmul", "mm", "bmm", "dot", "outer"]


class Matmul(Function):
    """a @ b with NumPy's (= PyTorch's) rules for 1-D and batched operands.

    jvp: ẏ = ȧ @ b + a @ ḃ (linear in each operand, so the "multilinear" shortcut).
    """

    raw = True
    supports_complex = True
    tangent_rule = "multilinear"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        name = _PRODUCT_NODE_NAMES.get((a.ndim, b.ndim))
        if name is not None:
            ctx.node_name = name
        return matrix_product(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        sa, sb = ctx.input_shapes
        # Lift 1-D operands to matrices so one rule covers every case:
        # a (k,) is a row (1, k); b (k,) is a column (k, 1); grad gains those dims too.
        a2 = a.unsqueeze(0) if a.ndim == 1 else a
        b2 = b.unsqueeze(-1) if b.ndim == 1 else b
        g2 = grad
        if a.ndim == 1:
            g2 = g2.unsqueeze(-2 if b.ndim > 1 else 0)
        if b.ndim == 1:
            g2 = g2.unsqueeze(-1)
        grad_a = grad_b = None
        # (Matmul.apply, not @: these shapes line up by construction, so skip the checks.)
        if sa is not None:  # dA = dC @ Bᵀ (Bᴴ for complex), summed over broadcast batch dims
            grad_a = unbroadcast(Matmul.apply(g2, b2.mH), a2._data.shape)
            if a.ndim == 1:
                grad_a = grad_a.reshape(sa)
        if sb is not None:  # dB = Aᵀ @ dC (Aᴴ for complex)
            grad_b = unbroadcast(Matmul.apply(a2.mH, g2), b2._data.shape)
            if b.ndim == 1:
                grad_b = grad_b.reshape(sb)
        return grad_a, grad_b


def matrix_product(a, b):
    """``a @ b`` on raw arrays, minding how OpenBLAS packs a transposed operand.

    Packing a transposed matrix (a ``.T`` view, laid out column by column) is
    slow: for a few rows times a big Wᵀ, as in dA = dC Wᵀ or a small batch's
    x Wᵀ, the packing costs more than the multiplication (784x256 at 32 rows:
    ~290 µs against ~200 µs). (bᵀ aᵀ)ᵀ is the same product with ``a`` (m×k)
    transposed instead of ``b`` (k×n), and its m×n result copied back to
    row-major order: worth it when those move fewer values, m(k + n) < kn.
    cuBLAS takes transposes for free, so this is for NumPy matrices only.

    NumPy has no half-precision BLAS: its float16 product is a plain loop,
    about 150x slower than float32. Half floats on the CPU are multiplied
    in float32 and rounded once at the end (PyTorch accumulates them in
    float32 too); see :func:`host_operands`.
    """
    dtype = _product_dtype(a, b)
    a, b = host_operands(a, b)
    if (type(a) is np.ndarray and a.ndim == 2 and b.ndim == 2
            and b.flags.f_contiguous and not b.flags.c_contiguous):
        m, k = a.shape
        n = b.shape[1]
        if m * (k + n) < k * n:
            # .copy(): a fresh C-ordered array even for one row, where .T is already
            # contiguous (a view of a temporary is a slower output for the dispatcher)
            return (b.T @ a.T).T.copy().astype(dtype, copy=False)
    # (.astype: half floats were multiplied in float32, as PyTorch accumulates them; a
    # bfloat16 product on CuPy also comes back as float32)
    return (a @ b).astype(dtype, copy=False)


def host_operands(a, b):
    """NumPy half-float operands of a product as float32 (CuPy and other dtypes as they are).

    The product's dtype is still the operands' own: callers round the
    float32 result back (``.astype(dtype, copy=False)``).
    """
    if type(a) is np.ndarray and a.dtype.itemsize == 2 and a.dtype.kind in "fV":
        return widened(a), widened(b)
    return a, b


def _product_dtype(a, b):
    return a.dtype if a.dtype == b.dtype else np.result_type(a.dtype, b.dtype)


_PRODUCT_NODE_NAMES = {(1, 1): "DotBackward0", (2, 1): "MvBackward0", (2, 2): "MmBackward0"}
"""PyTorch's node names for the products matmul becomes at these ranks (the rest stay
MatmulBackward0: PyTorch shows the reshapes around its batched product there)."""


def _check_matmul(op: str, a, b) -> None:
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError(f"{op}: expected two tensors, got {type(a).__name__} and "
                        f"{type(b).__name__}; use * to multiply by a number")
    sa, sb = a._data.shape, b._data.shape
    if not sa or not sb:
        raise RuntimeError(f"{op}: both arguments need at least 1 dimension, got shapes "
                           f"{sa} and {sb}; use * for scalars")
    ka = sa[-1]
    kb = sb[-2] if len(sb) > 1 else sb[0]
    if ka != kb:
        hint = ""
        if b.ndim > 1 and a.shape[-1] == b.shape[-1]:
            hint = "; did you mean b.T (or b.mT)?"
        elif a.ndim > 1 and a.shape[-2] == kb:
            hint = "; did you mean a.T (or a.mT)?"
        raise RuntimeError(
            f"{op}: shapes {tuple(a.shape)} and {tuple(b.shape)} don't line up "
            f"({ka} != {kb}): the last dim of the first must equal the "
            f"{'first' if b.ndim == 1 else 'second-to-last'} dim of the second{hint}"
        )
    if len(sa) < 3 or len(sb) < 3 or sa[:-2] == sb[:-2]:
        return  # at most one operand has batch dims, or they are equal: nothing to broadcast
    try:
        np.broadcast_shapes(sa[:-2], sb[:-2])
    except ValueError:
        raise RuntimeError(
            f"{op}: the batch dims {tuple(a.shape[:-2])} and {tuple(b.shape[:-2])} of shapes "
            f"{tuple(a.shape)} and {tuple(b.shape)} don't broadcast (each pair of sizes must "
            f"be equal or 1)"
        ) from None


def matmul(input, other) -> Tensor:
    """Matrix product with broadcasting over batch dims (``@``)."""
    if _grad_state.autocast is not None:
        input, other = autocast_inputs("matmul", input, other)
    a, b = promote(input, other)
    _check_matmul("matmul", a, b)
    return Matmul.apply(a, b)


def mm(input, mat2) -> Tensor:
    """Product of two matrices (2-D only)."""
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mm: expects two 2-D tensors, got shapes {tuple(input.shape)} and "
                           f"{tuple(mat2.shape)}; use matmul for other ranks")
    a, b = promote(*autocast_inputs("mm", input, mat2))
    _check_matmul("mm", a, b)
    return Matmul.apply(a, b)


def bmm(input, mat2) -> Tensor:
    """Batched product of (b, n, m) and (b, m, p) tensors (no broadcasting)."""
    if input.ndim != 3 or mat2.ndim != 3 or input.shape[0] != mat2.shape[0]:
        raise RuntimeError(f"bmm: expects (b, n, m) and (b, m, p) with the same b, got shapes "
                           f"{tuple(input.shape)} and {tuple(mat2.shape)}")
    a, b = promote(*autocast_inputs("bmm", input, mat2))
    _check_matmul("bmm", a, b)
    return Matmul.apply(a, b)


def dot(input, other) -> Tensor:
    """Inner product of two 1-D tensors of the same length."""
    if input.ndim != 1 or other.ndim != 1 or input.shape != other.shape:
        raise RuntimeError(f"dot: expects two 1-D tensors of the same length, got shapes "
                           f"{tuple(input.shape)} and {tuple(other.shape)}")
    return autocast_once("dot", matmul, input, other)


def outer(input, vec2) -> Tensor:
    """Outer product of two 1-D tensors: ``out[i, j] = a[i] * b[j]``."""
    if input.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"outer: expects two 1-D tensors, got shapes {tuple(input.shape)} "
                           f"and {tuple(vec2.shape)}")
    return input.unsqueeze(1) * vec2.unsqueeze(0)


# --- einsum ---------------------------------------------------------------------------------
#
# The public ``einsum`` turns the user's equation into a canonical one before any math:
# '...' becomes explicit letters, implicit output is spelled out, and a size-1 dim that
# broadcasts against a bigger one gets a letter of its own (a size-1 index summed away is
# exactly broadcasting). In a canonical equation every letter has one size, so the
# backward rule below needs no special cases for '...' or broadcasting.

class Einsum(Function):
    """out = Σ_(indices not in the output) Π_k operand_k.

    d out / d operand_k is the product of the other operands, so the gradient
    of operand k is ``einsum(grad, others -> indices of k)`` (the others
    conjugated, for complex numbers), plus two fixes:
    an index only operand k has was summed in forward, so the gradient is
    the same along it (expand); an index repeated in operand k ('ii') only
    touched the diagonal, so the gradient goes on the diagonal, zeros elsewhere.

    jvp: ẏ = Σ_k einsum(operands with operand k replaced by its tangent): a
    product is linear in each factor (the "multilinear" shortcut).
    """

    raw = True
    supports_complex = True
    tangent_rule = "multilinear"

    @staticmethod
    def forward(ctx, equation, *operands):
        ctx.equation = equation
        # Operand j is needed only for the gradients of the *other* operands.
        needs = ctx.needs_input_grad[1:]  # () when no graph is recorded: nothing is kept
        ctx.save_for_backward(*(o if any(n for i, n in enumerate(needs) if i != j) else None
                                for j, o in enumerate(operands)))
        xp = xp_for(operands[0])
        dtype = operands[0].dtype
        work = _einsum_dtype(equation, dtype)
        if work != dtype:
            operands = tuple(o.astype(work) for o in operands)
        # The path planner costs ~20 µs: worth it for 3+ operands or big ones (BLAS).
        big = len(operands) > 2 or (len(operands) == 2 and max(o.size for o in operands) > 4096)
        out = xp.asarray(xp.einsum(equation, *operands, optimize=big))
        if work != dtype and dtype.kind in "fV":
            out = out.astype(dtype)  # a half float: computed in float32, rounded back
        if out.base is not None and any(out.base is o or out.base is o.base for o in operands):
            out = out.copy()  # 'ii->i' is a view of its input in NumPy; outputs own their memory
        return out

    @staticmethod
    def backward(ctx, grad):
        operands = ctx.saved_tensors
        lhs, output = ctx.equation.split("->")
        inputs = lhs.split(",")
        shapes = ctx.input_shapes[1:]
        grads = [None]
        for k, shape in enumerate(shapes):
            needed = shape is not None
            grads.append(_operand_grad(k, shape, grad, operands, inputs, output) if needed
                         else None)
        return tuple(grads)


def _operand_grad(k: int, shape, grad: Tensor, operands, inputs, output: str) -> Tensor:
    """The gradient of operand k (of ``shape``) of a canonical einsum (see ``Einsum``)."""
    target = inputs[k]
    unique = "".join(dict.fromkeys(target))  # indices in order, each once
    others = [j for j in range(len(inputs)) if j != k]
    available = set(output).union(*(inputs[j] for j in others))
    kept = "".join(c for c in unique if c in available)
    terms = ",".join([output] + [inputs[j] for j in others])
    g = _contract(f"{terms}->{kept}", grad, *(conj(operands[j]) for j in others))
    size = dict(zip(target, shape))
    if kept != unique:  # (a) indices only operand k had: the gradient is constant along them
        g = g.reshape([size[c] if c in available else 1 for c in unique])
        g = g.expand([size[c] for c in unique])
    if unique != target:  # (b) repeated indices: the gradient lives on the diagonal
        g = DiagonalEmbed.apply(g, unique, target, shape)
    return g


def _contract(equation: str, *tensors) -> Tensor:
    lhs, out = equation.split("->")
    if len(tensors) == 1 and lhs == out:  # the identity: nothing to compute
        return tensors[0]
    return Einsum.apply(equation, *tensors)


class DiagonalEmbed(Function):
    """Values (indices ``unique``) written on a diagonal (indices ``target``) of zeros.

    The backward of einsum's diagonal ('ii->i'); its own backward reads the
    diagonal back out: ``einsum('ii->i', grad)``. Linear in the values, so
    jvp: ẏ = the same embedding of their tangent.
    """

    raw = True
    supports_complex = True
    tangent_rule = "linear"
    name = "diagonal_backward"  # PyTorch's name for this op

    @staticmethod
    def forward(ctx, values, unique, target, shape):
        ctx.equation = f"{target}->{unique}"
        xp = xp_for(values)
        out = xp.zeros(shape, dtype=values.dtype)
        # out[i, i, j] = values[i, j]: one arange per position, laid along its index's axis.
        ndim = len(unique)
        index = tuple(
            xp.arange(n).reshape([-1 if q == unique.index(c) else 1 for q in range(ndim)])
            for c, n in zip(target, shape))
        out[index] = values
        return out

    @staticmethod
    def backward(ctx, grad):
        return Einsum.apply(ctx.equation, grad), None, None, None


_LETTERS = string.ascii_letters  # NumPy's einsum accepts a-z and A-Z: 52 indices at most


def einsum(equation: str, *operands) -> Tensor:
    """Einstein summation: ``einsum('ij,jk->ik', a, b)`` is ``a @ b``.

    Each operand gets one letter per dim. Letters missing from the output are
    summed over; a letter repeated within one operand takes its diagonal
    ('ii->i'), or its trace ('ii'). Without '->' the output is the letters
    that appear once, in alphabetical order. '...' stands for the dims no
    letter names, broadcast across operands. Operands may also be passed as
    one list, or in the sublist form, ``einsum(a, [0, 1], b, [1, 2], [0, 2])``
    (numbers for letters, ``...`` as Ellipsis; the last list is the output).
    Unlike PyTorch, operands of different dtypes are promoted.
    """
    if isinstance(equation, Tensor):
        equation, operands = _sublist_equation((equation, *operands))
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError(f"einsum: the first argument must be the equation string, got "
                        f"{type(equation).__name__}; call einsum('ij,jk->ik', a, b)")
    for k, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise TypeError(f"einsum: operand {k} is a {type(t).__name__}, expected a Tensor")
    if not operands:
        raise RuntimeError("einsum: needs at least one operand")
    shapes = [tuple(t.shape) for t in operands]
    inputs, output, ellipsis_letters = _parse_equation(equation.replace(" ", ""), shapes)
    inputs = _separate_broadcast_dims(inputs, output, shapes, ellipsis_letters)
    operands = autocast_inputs("einsum", *operands)
    dtype = operands[0].dtype
    for t in operands[1:]:
        dtype = _dt.promote_types(dtype, t.dtype)
    operands = [t if t.dtype is dtype else t.to(dtype) for t in operands]
    return Einsum.apply(",".join(inputs) + "->" + output, *operands)


def _einsum_dtype(equation: str, dtype):
    """What einsum computes in: float32 for half floats (NumPy's einsum has no bfloat16
    loop and adds float16 in float16); int64 for integers and bools when a letter is
    summed away (PyTorch's sum of integers; bools would just "or"); else the dtype."""
    if dtype.itemsize == 2 and dtype.kind in "fV":
        return np.dtype(np.float32)
    if dtype.kind in "biu" and dtype != np.int64:
        inputs, output = equation.split("->")
        if set(inputs.replace(",", "")) - set(output):
            return np.dtype(np.int64)
    return dtype


_SUBSCRIPT_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _sublist_equation(args) -> tuple[str, tuple]:
    """The sublist form (operand, subscripts, operand, subscripts, ..., [output]) as an
    equation and its operands: subscript k is the k-th letter, a-z then A-Z (PyTorch's)."""
    pairs = args if len(args) % 2 == 0 else args[:-1]

    def term(sublist) -> str:
        if not isinstance(sublist, (list, tuple)):
            raise TypeError(f"einsum: in the sublist form, each operand is followed by a list "
                            f"of subscripts, got {type(sublist).__name__}; e.g. "
                            f"einsum(a, [0, 1], b, [1, 2], [0, 2])")
        letters = []
        for s in sublist:
            if s is Ellipsis:
                letters.append("...")
            elif isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 52:
                letters.append(_SUBSCRIPT_LETTERS[s])
            else:
                raise ValueError(f"einsum: sublist subscripts must be ints in [0, 52) or "
                                 f"Ellipsis, got {s!r} in {list(sublist)}")
        return "".join(letters)

    equation = ",".join(term(s) for s in pairs[1::2])
    if len(args) % 2:
        equation += "->" + term(args[-1])
    return equation, tuple(pairs[0::2])


def _parse_equation(equation: str, shapes):
    """Per-operand letters with '...' spelled out, the output letters, the '...' letters."""
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise RuntimeError(
            f"einsum: the equation '{equation}' has subscripts for {len(terms)} operand(s) but "
            f"{len(shapes)} were given; give one comma-separated term per operand")
    for term in terms + ([rhs] if arrow else []):
        _check_term(term, equation)
    # How many dims '...' covers in each operand.
    spans = []
    for k, (term, shape) in enumerate(zip(terms, shapes)):
        named = len(term.replace("...", ""))
        if "..." in term and named <= len(shape):
            spans.append(len(shape) - named)
            continue
        if named != len(shape) or "..." in term:
            raise RuntimeError(
                f"einsum: operand {k} has {len(shape)} dim(s) (shape {shape}) but its "
                f"subscripts '{term}' name {named}"
                + ("" if "..." in term else "; add '...' to stand for the dims you don't name"))
        spans.append(0)
    used = set(equation)
    free = [c for c in _LETTERS if c not in used]
    width = max(spans)
    if width > len(free):
        raise RuntimeError(f"einsum: '...' covers {width} dims but only {len(free)} letters "
                           f"are left unused; einsum supports 52 distinct indices")
    ell = "".join(free[:width])
    inputs = [t.replace("...", ell[width - n:]) for t, n in zip(terms, spans)]
    if arrow:
        output = rhs.replace("...", ell)  # '...' absent from the output: those dims are summed
        for c in output:
            if output.count(c) > 1:
                raise RuntimeError(f"einsum: output subscript '{c}' appears more than once in "
                                   f"'{equation}'; each output index must be distinct")
            if c not in lhs and c not in ell:
                raise RuntimeError(f"einsum: output subscript '{c}' in '{equation}' does not "
                                   f"appear in any input, so its size is unknown")
    else:  # implicit: '...' first, then each letter used exactly once, sorted
        letters = lhs.replace("...", "").replace(",", "")
        output = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    return inputs, output, ell


def _check_term(term: str, equation: str) -> None:
    rest = term.replace("...", "", 1)
    for c in rest:
        if c not in _LETTERS:
            what = "'...' may appear once per term" if c == "." else "use letters a-z, A-Z"
            raise RuntimeError(f"einsum: invalid subscript '{c}' in term '{term}' of "
                               f"'{equation}': {what}")


def _separate_broadcast_dims(inputs, output, shapes, ellipsis_letters):
    """Check sizes; give each size-1 dim that broadcasts against a bigger one its own letter."""
    size = {}  # letter -> (size, operand that set it)
    for k, (term, shape) in enumerate(zip(inputs, shapes)):
        for c, n in zip(term, shape):
            first = term.index(c)
            if shape[first] != n:
                raise RuntimeError(
                    f"einsum: index '{c}' is repeated in operand {k} (shape {shape}) but its dims "
                    f"have sizes {shape[first]} and {n}; a diagonal needs equal sizes")
            if n != 1:
                if c in size and size[c][0] != n:
                    what = ("a '...' dim" if c in ellipsis_letters else f"index '{c}'")
                    raise RuntimeError(
                        f"einsum: {what} has size {size[c][0]} in operand {size[c][1]} but {n} in "
                        f"operand {k} (shapes {shapes[size[c][1]]} and {shape}); sizes must "
                        f"match, or be 1 to broadcast")
                size[c] = (n, k)
    free = [c for c in _LETTERS if c not in "".join(inputs) + output]
    canonical = []
    for term, shape in zip(inputs, shapes):
        renamed = {}
        for c, n in zip(term, shape):
            if n == 1 and size.get(c, (1,))[0] != 1 and c not in renamed:
                if not free:
                    raise RuntimeError("einsum: too many distinct indices after broadcasting "
                                       "(at most 52)")
                renamed[c] = free.pop(0)
        canonical.append("".join(renamed.get(c, c) for c in term))
    return canonical
