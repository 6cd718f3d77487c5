"""Embedding: a learned lookup table from integer ids to vectors.

``nn.Embedding(num_embeddings, embedding_dim)`` holds a (num_embeddings,
embedding_dim) weight, initialised N(0, 1); calling it with an integer
tensor of ids returns their rows (see :func:`gradlab.ops.lookup.embedding`
for the gradient, ``padding_idx`` and ``max_norm``).
"""

from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ...ops.creation import empty
from ...ops.lookup import embedding
from ...tensor import Tensor
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Embedding"]


class _EmbeddingTable(Module):
    """What Embedding and EmbeddingBag share: a (num_embeddings, embedding_dim) weight,
    initialised N(0, 1), whose ``padding_idx`` row (negative counts from the end) starts at 0."""

    def _init_table(self, kind: str, num_embeddings: int, embedding_dim: int,
                    padding_idx: int | None, _weight: Tensor | None, requires_grad: bool,
                    device, dtype) -> None:
        """Sets num_embeddings, embedding_dim, padding_idx and the weight (``_weight``, shared,
        or a new one drawn by reset_parameters); ``kind`` names the class in the messages."""
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(
                    f"{kind}: padding_idx={padding_idx} must be within num_embeddings="
                    f"{num_embeddings} (in [{-num_embeddings}, {num_embeddings - 1}]; "
                    f"negative values count from the end)")
            padding_idx %= num_embeddings
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(empty((num_embeddings, embedding_dim), device=device,
                                          dtype=dtype), requires_grad=requires_grad)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(
                    f"{kind}: the given weight has shape {tuple(_weight.shape)}, but "
                    f"num_embeddings={num_embeddings} and embedding_dim={embedding_dim} need "
                    f"({num_embeddings}, {embedding_dim})")
            self.weight = Parameter(_weight, requires_grad=requires_grad)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    @staticmethod
    def _pretrained_size(kind: str, embeddings) -> tuple[int, int]:
        """(num_embeddings, embedding_dim) of a table given to ``from_pretrained``."""
        if not isinstance(embeddings, Tensor) or embeddings.ndim != 2:
            shape = tuple(embeddings.shape) if hasattr(embeddings, "shape") else \
                type(embeddings).__name__
            raise ValueError(f"{kind}.from_pretrained: embeddings must be a 2D tensor "
                             f"(num_embeddings, embedding_dim), got {shape}")
        rows, cols = embeddings.shape
        return rows, cols


class Embedding(_EmbeddingTable):
    """Rows of a learned table picked by id: ``Embedding(10, 3)(ids)`` has shape
    ``ids.shape + (3,)``. The ``padding_idx`` row starts at zero and gets no gradient."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: Tensor | None = None, _freeze: bool = False, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self._init_table("Embedding", num_embeddings, embedding_dim, padding_idx, _weight,
                         not _freeze, device, dtype)
        self.sparse = sparse

    def forward(self, input: Tensor) -> Tensor:
        return embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                         self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        padding_idx: int | None = None, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """An Embedding whose table is ``embeddings`` (shared, not copied); ``freeze=True``
        keeps it fixed (``weight.requires_grad = False``). The padding row is not zeroed."""
        rows, cols = cls._pretrained_size("Embedding", embeddings)
        return cls(rows, cols, padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse, _weight=embeddings,
                   _freeze=freeze)
