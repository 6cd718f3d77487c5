"""The layers of ``gradlab.nn``, one kind per module (as in PyTorch's ``torch.nn.modules``)."""

from .activation import *
from .activation_extra import *
from .attention import *
from .container import *
from .conv import *
from .ctc_and_margin_losses import *
from .data_parallel import *
from .dropout import *
from .embedding_bag import *
from .flatten import *
from .fold import *
from .instance_norm import *
from .lazy import *
from .linear import *
from .loss import *
from .module import *
from .more_losses import *
from .normalization import *
from .pooling import *
from .rnn import *
from .simple_layers import *
from .sparse import *
from .transformer import *
from .unpooling import *
from .upsampling import *
from .volumetric import *
