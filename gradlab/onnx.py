"""``gradlab.onnx.export``: write a model as ONNX (``torch.onnx.export``'s name and arguments).

The exporter lives in :mod:`gradlab.jit.onnx_export`; it traces the model with
:func:`gradlab.jit.trace` and converts each op. Needs the optional ``onnx``
package (``pip install 'gradlab[onnx]'``).
"""

from .jit.onnx_export import CONVERTERS, ExportError, export

__all__ = ["export", "ExportError", "CONVERTERS"]
