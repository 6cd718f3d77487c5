"""``gradlab.utils.data``: datasets, samplers and the DataLoader, as in PyTorch."""

from .collate import *
from .dataloader import *
from .dataset import *
from .sampler import *
