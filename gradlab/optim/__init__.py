"""``gradlab.optim``: optimizers that update parameters from their gradients, and LR schedules.

Every parameter update emits an :class:`~gradlab.events.OptimizerStep` event,
and optimizer state is counted in the ``optimizer`` memory category.
"""

from . import lr_scheduler
from .adadelta import *
from .adagrad import *
from .adam import *
from .adamw import *
from .lbfgs import *
from .optimizer import *
from .rmsprop import *
from .sgd import *
