"""Complex numbers apart and together: conj, real, imag, angle, complex, polar, and the
views between a complex tensor and its real pairs.

How a complex gradient is defined (PyTorch's convention, which gradlab follows):
the loss ``L`` is real, and the gradient of a complex ``z = x + iy`` is

    z.grad = ∂L/∂x + i·∂L/∂y

the direction of steepest ascent in the plane, so ``z -= lr * z.grad`` goes
downhill as it does for reals. (It is twice the conjugate Wirtinger derivative
∂L/∂z̄.) The chain rule then reads, for a holomorphic ``w = f(z)``,

    grad_z = grad_w · conj(f'(z))

so complex backward formulas are the real ones with a ``conj()`` on the local
derivative: ``d(a·b)/da`` passes ``grad · conj(b)``. For a real tensor
``conj()`` is the tensor itself, so one formula serves both.

Non-holomorphic ops (conj, real, imag, abs, angle) get their gradient from the
two real partials directly: ``imag(z)`` sends ``grad · i`` back, ``abs(z)``
sends ``grad · z/|z|``.

gradlab's ``conj`` makes a new tensor; PyTorch's is a lazy view with a
"conjugate bit". The values and gradients are the same; ``is_conj()`` is
always False here.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Tensor
from ._util import xp_for

__all__ = ["conj", "conj_physical", "resolve_conj", "resolve_neg", "is_conj", "is_neg", "real",
           "imag", "angle", "complex", "polar", "view_as_real", "view_as_complex"]
TENSOR_METHODS = ["conj", "conj_physical", "resolve_conj", "resolve_neg", "is_conj", "is_neg",
                  "angle"]
# (real and imag are properties, as in PyTorch: see methods.install_methods)


def _tensor(op: str, x) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    return x


class Conj(Function):
    """conj(x + iy) = x - iy.   Backward: conj(grad) (∂L/∂y flips sign with y)."""

    raw = True
    supports_complex = True
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, a):
        return xp_for(a).conj(a)

    @staticmethod
    def backward(ctx, grad):
        return conj(grad)


def conj(input) -> Tensor:
    """The complex conjugate; a real tensor is returned as it is (as in PyTorch). Backward
    formulas call it on whatever they hold, so a number is conjugated too."""
    if not isinstance(input, Tensor):
        return input.conjugate() if hasattr(input, "conjugate") else input
    return Conj.apply(input) if input.dtype.is_complex else input


def conj_physical(input) -> Tensor:
    """The conjugate, computed now (gradlab's conj always is): the same as ``conj``."""
    return conj(input)


def resolve_conj(input) -> Tensor:
    """The tensor with its conjugate bit resolved: gradlab has no such bit, so itself."""
    return _tensor("resolve_conj", input)


def resolve_neg(input) -> Tensor:
    """The tensor with its negative bit resolved: gradlab has no such bit, so itself."""
    return _tensor("resolve_neg", input)


def is_conj(input) -> bool:
    """Is this a lazy conjugate view? Never in gradlab (conj makes the values at once)."""
    _tensor("is_conj", input)
    return False


def is_neg(input) -> bool:
    """Is this a lazy negative view? Never in gradlab."""
    _tensor("is_neg", input)
    return False


class Real(Function):
    """Re z, a view of the real parts.   Backward: grad as a complex number (∂L/∂y = 0)."""

    raw = True
    supports_complex = True
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, a):
        return a.real

    @staticmethod
    def backward(ctx, grad):
        return grad  # the engine makes it complex, the input's dtype


class Imag(Function):
    """Im z, a view of the imaginary parts.   Backward: grad · i (L moves with y only)."""

    raw = True
    supports_complex = True
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, a):
        return a.imag

    @staticmethod
    def backward(ctx, grad):
        return grad * 1j


def real(input) -> Tensor:
    """The real parts of a complex tensor, as a view (writing to it changes ``input``); a
    real tensor is returned as it is."""
    input = _tensor("real", input)
    return Real.apply(input) if input.dtype.is_complex else input


def imag(input) -> Tensor:
    """The imaginary parts of a complex tensor, as a view (writing to it changes
    ``input``)."""
    input = _tensor("imag", input)
    if not input.dtype.is_complex:
        raise RuntimeError(
            f"imag is not implemented for tensors with non-complex dtypes (got {input.dtype}, "
            f"shape {tuple(input.shape)}): a real number's imaginary part is 0 everywhere. "
            "Fix: use zeros_like(x), or make it complex first: x.to(gradlab.complex64)")
    return Imag.apply(input)


class Angle(Function):
    """arg z = atan2(y, x), in (-π, π].   Backward: grad · i·z/|z|² (0 at z = 0); a real
    input's angle (0 or π) is flat, so its gradient is 0."""

    raw = True
    supports_complex = True

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        xp = xp_for(a)
        out = xp.angle(a)
        if a.dtype.kind != "c":  # NumPy's angle of a real is float64; PyTorch keeps the dtype
            out = xp.where(xp.isnan(a), a, out).astype(a.dtype, copy=False)
        return out

    @staticmethod
    def backward(ctx, grad):
        (a,) = ctx.saved_tensors
        if not a.dtype.is_complex:
            return grad.new_zeros(a.shape)
        from .selection import where

        squared = (a * conj(a)).real
        return where(a == 0, 0.0, grad * a / squared * 1j)

    @staticmethod
    def jvp(ctx, tangent):
        """ẏ = Im(ż / z) (0 at z = 0); a real input's angle is flat: ẏ = 0."""
        (a,) = ctx.primals
        if not a.dtype.is_complex:
            return tangent.new_zeros(tangent.shape)
        from .selection import where

        zero = a == 0
        return where(zero, 0.0, (tangent / where(zero, 1.0, a)).imag)


def angle(input) -> Tensor:
    """The argument (phase) of each value, in radians: atan2(imag, real). For real input,
    0 where x >= 0 and π where x < 0 (integers give the default float dtype)."""
    input = _tensor("angle", input)
    if input.dtype.category < 2:
        input = input.to(_dt.get_default_dtype())
    return Angle.apply(input)


class Complex(Function):
    """real + i·imag from two real tensors.   Backward: (Re grad, Im grad)."""

    raw = True
    supports_complex = True

    @staticmethod
    def forward(ctx, re, im):
        xp = xp_for(re)
        out = xp.empty(xp.broadcast_shapes(re.shape, im.shape),
                       dtype=_dt.from_numpy_dtype(re.dtype).to_complex().np)
        out.real, out.imag = re, im
        return out

    @staticmethod
    def backward(ctx, grad):
        from ._util import unbroadcast

        sr, si = ctx.input_shapes
        return (None if sr is None else unbroadcast(real(grad), sr),
                None if si is None else unbroadcast(imag(grad), si))

    @staticmethod
    def jvp(ctx, t_re, t_im):
        """ẏ = (tangent of re) + i·(tangent of im): linear in both parts at once, a missing
        tangent being 0."""
        re, im = ctx.primals
        return Complex.apply(t_re if t_re is not None else re.new_zeros(re.shape),
                             t_im if t_im is not None else im.new_zeros(im.shape))


def complex(real, imag) -> Tensor:  # noqa: A001 - PyTorch's name
    """The complex tensor ``real + i·imag`` (broadcasting). Both parts must be float
    tensors of one dtype: float32 parts give complex64, float64 parts complex128."""
    re, im = _tensor("complex", real), _tensor("complex", imag)
    if re.dtype is not im.dtype or re.dtype not in (_dt.float32, _dt.float64, _dt.float16):
        raise RuntimeError(
            f"complex: expected real and imag to be float tensors of one dtype (float32 or "
            f"float64), got {re.dtype} {tuple(re.shape)} and {im.dtype} {tuple(im.shape)}. "
            "Fix: convert both, e.g. complex(a.float(), b.float())")
    return Complex.apply(re, im)


def polar(abs, angle) -> Tensor:  # noqa: A002 - PyTorch's argument names
    """The complex tensor ``abs · (cos(angle) + i·sin(angle))``."""
    from .unary import cos, sin

    r, theta = _tensor("polar", abs), _tensor("polar", angle)
    return complex(r * cos(theta), r * sin(theta))


class ViewAsReal(Function):
    """A complex tensor of shape S seen as a real one of shape S + (2,): [..., 0] holds
    the real parts, [..., 1] the imaginary ones, in the same memory.
    Backward: the pairs of grad put back together as complex numbers."""

    raw = True
    supports_complex = True
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, a):
        return a[..., None].view(_dt.from_numpy_dtype(a.dtype).to_real().np)

    @staticmethod
    def backward(ctx, grad):
        return complex(grad[..., 0], grad[..., 1])


def view_as_real(input) -> Tensor:
    """``input`` (complex, shape S) as a real tensor of shape S + (2,) sharing its memory:
    the real and imaginary parts side by side."""
    input = _tensor("view_as_real", input)
    if not input.dtype.is_complex:
        raise RuntimeError(
            f"view_as_real is only supported for complex tensors, got {input.dtype} with "
            f"shape {tuple(input.shape)}. Fix: make it complex first (x.to(gradlab.complex64)"
            "), or stack with zeros: gradlab.stack([x, zeros_like(x)], -1)")
    return ViewAsReal.apply(input)


class ViewAsComplex(Function):
    """A real tensor of shape S + (2,) seen as complex of shape S (pairs as re, im).
    Backward: the complex grad seen as pairs again."""

    raw = True
    supports_complex = True
    tangent_rule = "linear"

    @staticmethod
    def forward(ctx, a):
        return a.view(_dt.from_numpy_dtype(a.dtype).to_complex().np)[..., 0]

    @staticmethod
    def backward(ctx, grad):
        return view_as_real(grad)


def view_as_complex(input) -> Tensor:
    """A real tensor whose last dim is 2 (re, im) as a complex tensor sharing its memory."""
    input = _tensor("view_as_complex", input)
    shape = tuple(input.shape)
    if input.dtype not in (_dt.float32, _dt.float64):
        raise RuntimeError(f"view_as_complex is only supported for float32 and float64 "
                           f"tensors, got {input.dtype} with shape {shape}")
    if not shape or shape[-1] != 2:
        raise RuntimeError(f"view_as_complex: the last dimension must have size 2 (the real "
                           f"and imaginary parts), got shape {shape}")
    strides = input.stride()
    if strides[-1] != 1 or any(s % 2 for s in strides[:-1]):
        raise RuntimeError(
            f"view_as_complex: each (re, im) pair must lie side by side in memory, but this "
            f"tensor of shape {shape} has strides {strides}. Fix: x.contiguous() first")
    return ViewAsComplex.apply(input)


def refuse_complex_to_real(array, np_dtype) -> None:
    """A cast from complex to real is refused (PyTorch keeps the real part and warns).

    On purpose: many ops cast what is not a float to one before computing, and
    from such a hidden cast a complex input would come out as its real part,
    a wrong answer with only a warning to show for it. Asking for the part
    you mean is one attribute away.
    """
    raise TypeError(
        f"to: casting {array.dtype} (shape {tuple(array.shape)}) to {np_dtype} would "
        "discard the imaginary parts, so gradlab refuses it (PyTorch keeps the real parts "
        "and warns). If an op you called made this cast, it does not take complex numbers "
        "yet. Fix: say which real number you mean: z.real, z.imag, z.abs() or z.angle()")
