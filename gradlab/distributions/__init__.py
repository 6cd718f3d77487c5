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

from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .gamma import Gamma
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .gumbel import Gumbel
from .half_distributions import HalfCauchy, HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import LogitRelaxedBernoulli, RelaxedBernoulli
from .relaxed_categorical import ExpRelaxedCategorical, RelaxedOneHotCategorical
from .straight_through import OneHotCategoricalStraightThrough
from .student_t import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F403 - ExpTransform, AffineTransform ... as in PyTorch
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2",
           "ContinuousBernoulli", "Dirichlet", "Distribution", "ExpRelaxedCategorical",
           "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma", "GeneralizedPareto",
           "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "InverseGamma",
           "Kumaraswamy", "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal",
           "LogitRelaxedBernoulli", "LowRankMultivariateNormal", "MixtureSameFamily",
           "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "RelaxedBernoulli",
           "RelaxedOneHotCategorical", "StudentT", "TransformedDistribution", "Uniform",
           "VonMises", "Weibull", "Wishart", "biject_to", "constraints", "kl_divergence",
           "register_kl", "transform_to", "transforms", *transforms.__all__]
