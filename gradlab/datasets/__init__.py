"""Built-in datasets that need no network: toy 2-D sets, 8x8 digits, and MNIST-style IDX loaders."""

from .digits import *
from .idx import *
from .toy import *
