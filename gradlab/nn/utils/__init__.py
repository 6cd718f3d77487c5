"""``gradlab.nn.utils``: gradient clipping, parameter/vector conversion, (in ``rnn``) padding
and packing of variable-length sequences, parametrizations (``parametrize``,
``parametrizations``), the hook-based weight/spectral norm, BatchNorm fusion, ``skip_init``,
``stateless`` and ``prune``."""

from . import parametrizations, parametrize, prune, rnn, stateless
from .clip_grad import *
from .convert_parameters import *
from .fusion import *
from .init import skip_init
from .memory_format import *
from .spectral_norm import remove_spectral_norm, spectral_norm
from .weight_norm import remove_weight_norm, weight_norm
