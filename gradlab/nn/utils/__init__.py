"""``gradlab.nn.utils``: gradient clipping, parameter/vector conversion, and (in ``rnn``)
padding and packing of variable-length sequences."""

from . import rnn
from .clip_grad import *
from .convert_parameters import *
