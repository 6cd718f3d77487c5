"""A named constant: one object per name, shown and pickled by its name (``gradlab.strided``,
``gradlab.channels_last``), as PyTorch's layouts and memory formats are."""

from __future__ import annotations

__all__: list[str] = []


class NamedConstant:
    """An instance per name; subclasses are the kinds (``layout``, ``memory_format``)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"gradlab.{self.name}"

    def __reduce__(self):  # pickles as the module-level instance of that name
        return self.name
