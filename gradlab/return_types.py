"""``gradlab.return_types``: the named tuples ops return (PyTorch's ``torch.return_types``).

``x.max(dim=0)`` returns ``return_types.max(values=..., indices=...)``: a tuple
(``values, indices = x.max(0)`` unpacks it) whose fields also have names. Every
such type lives here, in one module, so that pickle finds each by its name.
"""

from __future__ import annotations

from collections import namedtuple

_VALUES_INDICES = ["values", "indices"]

max = namedtuple("max", _VALUES_INDICES)  # noqa: A001 - PyTorch's names
min = namedtuple("min", _VALUES_INDICES)  # noqa: A001
sort = namedtuple("sort", _VALUES_INDICES)
topk = namedtuple("topk", _VALUES_INDICES)
kthvalue = namedtuple("kthvalue", _VALUES_INDICES)
median = namedtuple("median", _VALUES_INDICES)
nanmedian = namedtuple("nanmedian", _VALUES_INDICES)
mode = namedtuple("mode", _VALUES_INDICES)
cummax = namedtuple("cummax", _VALUES_INDICES)
cummin = namedtuple("cummin", _VALUES_INDICES)
slogdet = namedtuple("slogdet", ["sign", "logabsdet"])
linalg_slogdet = namedtuple("linalg_slogdet", ["sign", "logabsdet"])
linalg_eigh = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
linalg_eig = namedtuple("linalg_eig", ["eigenvalues", "eigenvectors"])
linalg_svd = namedtuple("linalg_svd", ["U", "S", "Vh"])
linalg_qr = namedtuple("linalg_qr", ["Q", "R"])
linalg_inv_ex = namedtuple("linalg_inv_ex", ["inverse", "info"])
linalg_solve_ex = namedtuple("linalg_solve_ex", ["result", "info"])
linalg_cholesky_ex = namedtuple("linalg_cholesky_ex", ["L", "info"])
linalg_lu_factor = namedtuple("linalg_lu_factor", ["LU", "pivots"])
linalg_lu_factor_ex = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
linalg_lu = namedtuple("linalg_lu", ["P", "L", "U"])
linalg_ldl_factor = namedtuple("linalg_ldl_factor", ["LD", "pivots"])
linalg_ldl_factor_ex = namedtuple("linalg_ldl_factor_ex", ["LD", "pivots", "info"])
linalg_lstsq = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
# the older top-level API (gradlab/ops/legacy_linalg.py): svd returns V, not Vh
qr = namedtuple("qr", ["Q", "R"])
svd = namedtuple("svd", ["U", "S", "V"])
lu_unpack = namedtuple("lu_unpack", ["P", "L", "U"])
triangular_solve = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])
histogramdd = namedtuple("histogramdd", ["hist", "bin_edges"])
histogram = namedtuple("histogram", ["hist", "bin_edges"])
aminmax = namedtuple("aminmax", ["min", "max"])
frexp = namedtuple("frexp", ["mantissa", "exponent"])
