"""An asymmetric actor-critic for MaskablePPO: the critic also reads the hidden cards.

A hand's outcome (+1 or -1) is mostly decided by cards nobody at the table
can see, so a critic that reads only the learner's observation explains
almost none of it, and PPO's advantages are mostly noise. During training the
simulator knows the hidden cards, so the critic may read them (Pinto et al.
2017, "Asymmetric Actor Critic"; Suphx's "oracle guiding"): its value
estimates get sharper and the policy gradient less noisy. The actor, which is
all that a bot file keeps, still reads only the public observation: the first
`public_size` numbers of the input (`SingleSeatEnv` with ``privileged=True``
appends the hidden part).
"""

from __future__ import annotations

from typing import Any

import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import MlpExtractor
from torch import nn


class SplitMlpExtractor(nn.Module):
    """SB3's MlpExtractor with the actor cut off from everything past `public_size`."""

    def __init__(self, feature_dim: int, net_arch: dict[str, list[int]], activation_fn: type[nn.Module],
                 device: torch.device | str, public_size: int) -> None:
        super().__init__()
        if not 0 < public_size < feature_dim:
            raise ValueError(f"public_size must be between 1 and {feature_dim - 1}, got {public_size}")
        self.public_size = public_size
        actor = MlpExtractor(public_size, {"pi": net_arch.get("pi", []), "vf": []}, activation_fn, device)
        critic = MlpExtractor(feature_dim, {"pi": [], "vf": net_arch.get("vf", [])}, activation_fn, device)
        self.policy_net, self.value_net = actor.policy_net, critic.value_net
        self.latent_dim_pi, self.latent_dim_vf = actor.latent_dim_pi, critic.latent_dim_vf

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self.policy_net(features[..., : self.public_size])

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.value_net(features)


class PrivilegedCriticPolicy(MaskableActorCriticPolicy):
    """MaskableActorCriticPolicy whose critic reads the whole input and whose actor reads its public part.

    Takes ``public_size`` in ``policy_kwargs``; the net_arch must be a dict
    with separate ``pi`` and ``vf`` layers (nothing shared).
    """

    def __init__(self, *args: Any, public_size: int, **kwargs: Any) -> None:
        self.public_size = public_size
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        if not isinstance(self.net_arch, dict):
            raise ValueError("PrivilegedCriticPolicy needs net_arch as a dict with 'pi' and 'vf' layers")
        # SB3 infers the attribute's type from its own MlpExtractor, but its documented contract (the
        # "custom network" example) is any nn.Module with latent_dim_pi/vf and forward_actor/critic.
        self.mlp_extractor = SplitMlpExtractor(  # type: ignore[assignment]
            self.features_dim, self.net_arch, self.activation_fn, self.device, self.public_size
        )

    def _get_constructor_parameters(self) -> dict[str, Any]:
        return {**super()._get_constructor_parameters(), "public_size": self.public_size}
