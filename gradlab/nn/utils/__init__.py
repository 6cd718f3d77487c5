"""``gradlab.nn.utils``: gradient clipping and parameter/vector conversion."""

from .clip_grad import *
from .convert_parameters import *
