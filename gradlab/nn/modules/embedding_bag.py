"""EmbeddingBag: a learned table whose rows are looked up and reduced, one vector per bag.

``nn.EmbeddingBag(num_embeddings, embedding_dim, mode="mean")`` holds a
(num_embeddings, embedding_dim) weight, initialised N(0, 1) as Embedding's;
calling it with bags of ids (a 2-D tensor, or a 1-D one with ``offsets``)
returns each bag's sum, mean or max (see
:func:`gradlab.ops.embedding_bag.embedding_bag`). A bag-of-words text
classifier is ``EmbeddingBag`` followed by ``Linear``.
"""

from __future__ import annotations

from ...ops.embedding_bag import embedding_bag
from ...tensor import Tensor
from .sparse import _EmbeddingTable

__all__ = ["EmbeddingBag"]


class EmbeddingBag(_EmbeddingTable):
    """Each bag's rows of a learned table, summed, averaged (default) or maxed:
    ``EmbeddingBag(10, 3)(ids)`` with ids (B, N) has shape (B, 3)."""

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: Tensor | None = None,
                 include_last_offset: bool = False, padding_idx: int | None = None,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self._init_table("EmbeddingBag", num_embeddings, embedding_dim, padding_idx, _weight,
                         True, device, dtype)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        return embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                             self.scale_grad_by_freq, self.mode, self.sparse,
                             per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings!r}, {self.embedding_dim!r}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm!r}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type!r}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq!r}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx!r}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        max_norm: float | None = None, norm_type: float = 2.0,
                        scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """An EmbeddingBag whose table is ``embeddings`` (shared, not copied); ``freeze=True``
        keeps it fixed (``weight.requires_grad = False``). The padding row is not zeroed."""
        rows, cols = cls._pretrained_size("EmbeddingBag", embeddings)
        bag = cls(rows, cols, max_norm=max_norm, norm_type=norm_type,
                  scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  _weight=embeddings, include_last_offset=include_last_offset,
                  padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
