"""The RLModule that `cardlab rllib` trains: the lean trainer's actor and critic, with action masking.

After RLlib's action-masking example (``ray.rllib.examples.rl_modules.classes.
action_masking_rlm``): the observations are the AEC env's Dict of
``observation`` and ``action_mask``; the actor reads ``observation`` and the
mask sets the logits of illegal actions to `ILLEGAL_LOGIT` in every forward
pass (exploration, inference and training alike), so PPO never samples nor
learns an illegal move.

Why the lean trainer's network (`cardlab.training.trainers.lean_model.ActorCritic`) rather
than RLlib's default encoder and heads: its actor is an `nn.Sequential` of
(Linear, activation) pairs then a Linear, which `export_bot` writes as a bot
file as it is. This module imports Ray: only `cardlab.cluster.rllib` (the
ray extra) imports it.
"""

from __future__ import annotations

from typing import Any

import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule

from cardlab.training.trainers.lean_model import ActorCritic
from cardlab.training.trainers.ppo import ILLEGAL_LOGIT


class MaskedActorCritic(TorchRLModule, ValueFunctionAPI):  # type: ignore[misc, unused-ignore]
    """Masked logits of the actor MLP, values of the critic MLP; ``model_config``: net_arch, activation."""

    def setup(self) -> None:
        """Both networks (the critic even if `inference_only`: env runners get all the learner's weights)."""
        space: Any = self.observation_space  # set by RLlib before setup, so never None here
        actions: Any = self.action_space
        if not hasattr(space, "spaces") or set(space.spaces) != {"observation", "action_mask"}:
            raise ValueError(f"this module reads a Dict of 'observation' and 'action_mask', not {space}")
        config: Any = self.model_config or {}  # a dict: RLModuleSpec's model_config as given
        self.model = ActorCritic(int(space["observation"].shape[0]), int(actions.n),
                                 list(config.get("net_arch", [256, 256])),
                                 str(config.get("activation", "tanh")))

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        logits = self.model.actor(obs["observation"]).masked_fill(obs["action_mask"] == 0, ILLEGAL_LOGIT)
        return {Columns.ACTION_DIST_INPUTS: logits}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        return self.model.value(batch[Columns.OBS]["observation"])
