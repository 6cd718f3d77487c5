"""``gradlab.utils.tensorboard``: logs for TensorBoard (``torch.utils.tensorboard``'s API).

:class:`SummaryWriter` (:mod:`.writer`) writes event files (:mod:`.event_file`)
without TensorFlow or the ``tensorboard`` package; view them with
``tensorboard --logdir runs`` (``pip install tensorboard``).
"""

from .writer import SummaryWriter

__all__ = ["SummaryWriter"]
