"""Tensor layouts: how a tensor's values are stored, ``gradlab.strided`` for every gradlab tensor.

PyTorch has dense tensors (layout ``torch.strided``: every value stored, found
through shape and strides) and sparse ones (``torch.sparse_coo``,
``sparse_csr`` ...: only the nonzero values, with their indices). gradlab's
tensors are all dense, so ``x.layout`` is always ``gradlab.strided`` and
``x.is_sparse`` is always False. The sparse layouts exist as names, so that
code written for PyTorch can compare against them (``if x.layout ==
torch.sparse_coo``) and a factory asked for one can say that gradlab has none.
"""

from __future__ import annotations

from ._named_constants import NamedConstant

__all__ = ["layout", "strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
           "sparse_bsc"]


class layout(NamedConstant):  # noqa: N801 - PyTorch's name (torch.layout)
    """One storage layout; the instances below are gradlab's (module docstring)."""

    __slots__ = ()


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")


def check_layout(op: str, value) -> None:
    """A factory's ``layout=``: None or ``strided``; a sparse layout is refused by name."""
    if value is None or value is strided:
        return
    if isinstance(value, layout):
        raise NotImplementedError(
            f"{op}: layout={value!r} asks for a sparse tensor, and gradlab has only dense "
            f"(strided) tensors. Fix: leave layout out, or build the dense tensor and keep "
            f"the indices of its nonzeros yourself (x.nonzero())")
    raise TypeError(f"{op}: layout must be gradlab.strided, got {value!r}")
