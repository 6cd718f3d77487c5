"""``gradlab.optim``: optimizers that update parameters from their gradients, and LR schedules.

Every parameter update emits an :class:`~gradlab.events.OptimizerStep` event,
and optimizer state is counted in the ``optimizer`` memory category.
"""

from . import lr_scheduler, swa_utils
from .adadelta import *
from .adafactor import *
from .adagrad import *
from .adam import *
from .adamax import *
from .adamw import *
from .asgd import *
from .lbfgs import *
from .muon import *
from .nadam import *
from .optimizer import *
from .radam import *
from .rmsprop import *
from .rprop import *
from .sgd import *
