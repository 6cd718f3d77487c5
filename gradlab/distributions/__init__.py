"""``gradlab.distributions``: PyTorch's ``torch.distributions`` for RL, VAEs and Bayes.

    from gradlab.distributions import Normal, Categorical, kl_divergence

    pi = Categorical(logits=policy(state))            # policy gradient
    loss = -(pi.log_prob(action) * advantage).mean()
    kl = kl_divergence(Normal(mu, sigma), Normal(0.0, 1.0)).sum(-1)   # VAE

``Distribution`` (distribution.py) is the shared interface: shapes,
``sample``/``rsample``, ``log_prob``, ``entropy``, moments, ``expand`` and
argument validation against ``constraints``. One module per family;
``kl.py`` holds ``kl_divergence`` and the closed forms it dispatches to.
"""

from . import constraints
from .bernoulli import Bernoulli
from .beta import Beta
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .uniform import Uniform

__all__ = ["Bernoulli", "Beta", "Categorical", "Dirichlet", "Distribution", "Exponential",
           "Gamma", "Independent", "Laplace", "MultivariateNormal", "Normal",
           "OneHotCategorical", "Poisson", "Uniform", "constraints", "kl_divergence",
           "register_kl"]
