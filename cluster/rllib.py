"""RLlib's multi-agent PPO on the AEC env: one shared, masked policy for every seat, exported as a bot.

```python
from cardlab.cluster.rllib import train_rllib
from cardlab.training.harness.config import load_config
run_dir = train_rllib(load_config("configs/huit_rllib.yaml")).run_dir  # run_dir / "bot.json" plays as bot:
```

What runs: RLlib's new API stack (RLModule, Learner, EnvRunner) over
``PettingZooEnv`` (RLlib's wrapper of a PettingZoo AEC env) around the game's
AEC env. Every seat maps to the one policy `POLICY` (parameter sharing: the
learner plays itself), whose network is `MaskedActorCritic`. The config is a
cardlab training config (`cardlab.training.harness.config`): game, rules, reward,
seed, ``ppo`` (mapped to RLlib's names by `algorithm_config`), ``policy``,
``num_envs`` (envs per env runner), ``total_timesteps`` (env steps = moves of
any seat), ``eval`` (the final evaluation of the bot) and
``rllib.num_env_runners``. What RLlib does not do here (fixed opponents,
snapshots, imitation, ...) is refused by name (`check_rllib_config`).

Ray: a local one by default (`cardlab.cluster.runtime.ray_session`), or a
cluster joined with `address`; the env runners are Ray actors placed where the
cluster has CPUs, the learner runs in this process.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cardlab.agents.bot.export import export_bot
from cardlab.cluster.runtime import import_ray, ray_session
from cardlab.training.harness.config import TrainConfig, save_config
from cardlab.training.harness.records import LearnerEval, evaluate_policy
from cardlab.training.harness.runs import bot_summary, new_run_dir, print_end

POLICY = "shared"
"""the id of the one RLModule every seat plays"""
ENV_NAME = "cardlab_aec"
ALGORITHM = "RLlib multi-agent PPO (shared policy)"
INSTALL_HINT = 'pip install torch==2.13.0 -e ".[rllib]"'
SUPPORTED_TRAINER = "maskable_ppo"
"""the `trainer` key is the other trainers'; left at its default it is ignored here"""


def check_rllib_config(cfg: TrainConfig) -> None:
    """Refuse by name what `cardlab rllib` does not do, rather than ignore it."""
    default = TrainConfig()
    unsupported = {
        "opponents": (cfg.opponents != default.opponents, "every seat plays the shared policy"),
        "self_play.enabled": (cfg.self_play.enabled, "the shared policy already plays itself"),
        "population.dir": (bool(cfg.population.dir), "no population with RLlib"),
        "imitation.enabled": (cfg.imitation.enabled, "no warm start with RLlib"),
        "policy.privileged_critic": (cfg.policy.privileged_critic, "the critic reads the observation"),
        "skip_forced_moves": (cfg.skip_forced_moves, "RLlib plays every move"),
        "trainer": (cfg.trainer != SUPPORTED_TRAINER, "cardlab rllib is its own trainer"),
        "eval.final_matches": (cfg.eval.final_matches > 0, "the final evaluation plays hands"),
        "eval.matches": (cfg.eval.matches > 0, "the bot is evaluated at the end only"),
    }
    refused = [f"{key} ({why})" for key, (bad, why) in unsupported.items() if bad]
    if refused:
        raise ValueError(f"cardlab rllib does not take {', '.join(refused)}: leave these keys at their "
                         "defaults (or use cardlab train)")


def import_rllib() -> None:
    """Check that RLlib imports, or a ValueError that says how to install it (the CLI prints it as one line).

    The ray extra (Ray Tune) is not enough: RLlib needs more (dm_tree, lz4, a pinned gymnasium).
    """
    import_ray()
    try:
        import ray.rllib  # noqa: F401
    except ImportError as err:
        raise ValueError(f"RLlib is not installed ({err}); install cardlab's rllib extra: {INSTALL_HINT}") \
            from None


def make_env(env_config: dict[str, Any]) -> Any:
    """RLlib's env creator: the game's AEC env in RLlib's PettingZoo wrapper."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    from cardlab.envs import env_class

    return PettingZooEnv(env_class(env_config["game"])(reward=env_config["reward"],
                                                       num_players=env_config["num_players"],
                                                       **env_config["rules"]))


def shared_policy(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
    """Every seat plays `POLICY` (a module-level function, so that Ray can ship it to the env runners)."""
    return POLICY


def algorithm_config(cfg: TrainConfig) -> Any:
    """The PPOConfig of a cardlab config (``ppo.*`` under RLlib's names; a rollout is n_steps * num_envs
    env steps per env runner)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    from cardlab.cluster.rllib_module import MaskedActorCritic

    register_env(ENV_NAME, make_env)
    ppo, runners = cfg.ppo, cfg.rllib.num_env_runners
    module = RLModuleSpec(module_class=MaskedActorCritic,
                          model_config={"net_arch": list(cfg.policy.net_arch),
                                        "activation": cfg.policy.activation})
    return (
        PPOConfig()
        .environment(ENV_NAME, env_config={"game": cfg.game, "num_players": cfg.num_players,
                                           "rules": dict(cfg.rules), "reward": cfg.reward},
                     disable_env_checking=True)  # its check plays random moves, which the env refuses
        .multi_agent(policies={POLICY}, policy_mapping_fn=shared_policy)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={POLICY: module}))
        .env_runners(num_env_runners=runners, num_envs_per_env_runner=cfg.num_envs,
                     num_cpus_per_env_runner=1)
        .learners(num_learners=0)
        .training(lr=ppo.learning_rate, gamma=ppo.gamma, lambda_=ppo.gae_lambda, clip_param=ppo.clip_range,
                  entropy_coeff=ppo.ent_coef, vf_loss_coeff=ppo.vf_coef, grad_clip=ppo.max_grad_norm,
                  num_epochs=ppo.n_epochs, minibatch_size=ppo.batch_size, use_kl_loss=False,
                  train_batch_size_per_learner=ppo.n_steps * cfg.num_envs * max(1, runners))
        .debugging(seed=cfg.seed)
    )


@dataclass(frozen=True)
class RLlibRun:
    """What `train_rllib` did: the run folder (with ``bot.json``), its steps, rate and final evaluation."""

    run_dir: Path
    steps: int
    iterations: int
    steps_per_second: float
    """env steps sampled per second of wall clock over the training iterations"""
    results: list[LearnerEval]


def sampled_steps(result: dict[str, Any]) -> int:
    """Env steps sampled so far, from an RLlib training result."""
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME

    lifetime = result.get(NUM_ENV_STEPS_SAMPLED_LIFETIME)
    if lifetime is None:
        lifetime = result.get(ENV_RUNNER_RESULTS, {}).get(NUM_ENV_STEPS_SAMPLED_LIFETIME, 0)
    return int(lifetime)


def train_rllib(cfg: TrainConfig, runs_dir: str | Path = "runs", address: str | None = None,
                progress: bool = True) -> RLlibRun:
    """Train to `total_timesteps` env steps, export ``bot.json``, evaluate it; on a local Ray or `address`."""
    check_rllib_config(cfg)
    import_rllib()  # says how to install the extra before anything else happens
    import torch

    run_dir = new_run_dir(Path(runs_dir), cfg)
    save_config(cfg, run_dir / "config.yaml")
    torch.set_num_threads(cfg.torch_threads)
    # The driver runs the learner (and, with 0 env runners, the sampling): a CPU for it and one per runner.
    with ray_session(workers=None if address else cfg.rllib.num_env_runners + 1, address=address):
        algo = algorithm_config(cfg).build_algo()
        try:
            steps, iterations, start = 0, 0, time.perf_counter()
            with (run_dir / "progress.jsonl").open("w", encoding="utf-8") as log:
                while steps < cfg.total_timesteps:
                    result = algo.train()
                    steps, iterations = sampled_steps(result), iterations + 1
                    rate = steps / (time.perf_counter() - start)
                    log.write(json.dumps({"iteration": iterations, "steps": steps,
                                          "steps_per_second": round(rate, 1)}) + "\n")
                    log.flush()
                    if progress:
                        print(f"iteration {iterations}: {steps:,} steps, {rate:,.0f} steps/s", flush=True)
            actor = algo.get_module(POLICY).model.actor
        finally:
            algo.stop()
    results = evaluate_policy(actor, cfg, cfg.eval.final_hands, steps) if cfg.eval.final_hands else []
    summary = {**bot_summary(cfg, run_dir, steps, results), "algorithm": ALGORITHM,
               "opponents": [], "rllib": dataclasses.asdict(cfg.rllib)}
    export_bot(actor, run_dir / "bot", game=cfg.game, rules=cfg.rules, num_players=cfg.num_players,
               summary=summary)
    if progress:
        print_end(cfg, run_dir, steps, results)
    return RLlibRun(run_dir, steps, iterations, rate, results)
