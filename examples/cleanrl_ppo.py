"""PPO with action masking on any Gymnasium vector env with Dict(observation, action_mask) observations.

A CleanRL-style single file (after CleanRL's ``ppo.py``): it knows nothing of
the game but its Gymnasium id. ``cardlab:cardlab/Huit-v1`` makes Gymnasium
import the package that registers the id, so this file imports none of it.

Why masking in the logits: most of the 354 (Huit) or 71 (Switch) actions are
illegal at any turn; setting their logits to -inf keeps the policy on legal
moves without any penalty to learn first.

At the end the actor is saved as an ONNX bot (``--save``, default
``runs/cleanrl_ppo.onnx``): ``torch.onnx.export`` writes the graph, then one
call of cardlab, `write_onnx_metadata`, writes the JSON beside it that names
the table the policy plays (the env's game); then ``cardlab bench
bot:runs/cleanrl_ppo.onnx`` measures it, ``cardlab serve --bot
runs/cleanrl_ppo.onnx`` seats it in the web app.

Run: ``python examples/cleanrl_ppo.py --env-id cardlab:cardlab/Huit-v1
--env-kwargs '{"num_players": 2, "opponents": ["random"]}' --total-timesteps 1000000``.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env-id", default="cardlab:cardlab/Huit-v1")
    p.add_argument("--env-kwargs", type=json.loads, default={"num_players": 2, "opponents": ["random"]},
                   help="keyword arguments of gymnasium.make_vec, as JSON")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--total-timesteps", type=int, default=500_000)
    p.add_argument("--learning-rate", type=float, default=2.5e-4)
    p.add_argument("--num-envs", type=int, default=256)
    p.add_argument("--num-steps", type=int, default=64, help="steps per env per rollout")
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--num-minibatches", type=int, default=4)
    p.add_argument("--update-epochs", type=int, default=4)
    p.add_argument("--clip-coef", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    p.add_argument("--threads", type=int, default=1, help="torch threads")
    p.add_argument("--save", type=pathlib.Path, default=pathlib.Path("runs/cleanrl_ppo.onnx"),
                   help="the ONNX bot to write at the end: PATH.onnx and PATH.json beside it")
    return p.parse_args(argv)


def layer(i: int, o: int, std: float = float(np.sqrt(2))) -> nn.Linear:
    lin = nn.Linear(i, o)
    nn.init.orthogonal_(lin.weight, std)
    nn.init.constant_(lin.bias, 0.0)
    return lin


class Agent(nn.Module):
    """Separate actor and critic MLPs; the actor's logits masked to the legal actions."""

    def __init__(self, obs_size: int, num_actions: int) -> None:
        super().__init__()
        self.critic = nn.Sequential(layer(obs_size, 256), nn.Tanh(), layer(256, 256), nn.Tanh(),
                                    layer(256, 1, 1.0))
        self.actor = nn.Sequential(layer(obs_size, 256), nn.Tanh(), layer(256, 256), nn.Tanh(),
                                   layer(256, num_actions, 0.01))

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        return self.critic(x)

    def get_action_and_value(self, x: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None
                             ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        logits = self.actor(x).masked_fill(~mask, -1e9)
        probs = Categorical(logits=logits)
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


def save_onnx_bot(actor: nn.Module, obs_size: int, path: pathlib.Path, game: Any,
                  stats: dict[str, Any]) -> None:
    """The actor's logits as an ONNX graph (plain torch), and the metadata that says which table it plays."""
    path = path.with_suffix(".onnx")
    path.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript-based exporter's notice that a newer one exists
        torch.onnx.export(actor.eval(), (torch.zeros(1, obs_size),), str(path), dynamo=False,
                          input_names=["observation"], output_names=["logits"],
                          dynamic_axes={"observation": {0: "batch"}, "logits": {0: "batch"}})
    from cardlab.agents.bot import write_onnx_metadata  # the only cardlab call: the table of the policy

    meta = write_onnx_metadata(path, game=game, summary={"algorithm": "examples/cleanrl_ppo.py", **stats})
    print(f"wrote {path} and {meta}: cardlab bench bot:{path}", flush=True)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    envs = gym.make_vec(args.env_id, num_envs=args.num_envs, vectorization_mode="vector_entry_point",
                        **args.env_kwargs)
    mode = envs.metadata.get("autoreset_mode")
    assert mode == gym.vector.AutoresetMode.SAME_STEP, f"this loop expects same-step autoreset, got {mode}"
    obs_space = envs.single_observation_space["observation"]
    n_actions = int(envs.single_action_space.n)
    agent = Agent(int(np.prod(obs_space.shape)), n_actions)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    T, N = args.num_steps, args.num_envs
    obs = torch.zeros((T, N, *obs_space.shape))
    masks = torch.zeros((T, N, n_actions), dtype=torch.bool)
    actions = torch.zeros((T, N), dtype=torch.long)
    logprobs, rewards, dones, values = (torch.zeros((T, N)) for _ in range(4))
    batch_size = T * N
    minibatch = batch_size // args.num_minibatches
    iterations = max(1, args.total_timesteps // batch_size)

    next_obs_d, _ = envs.reset(seed=args.seed)
    next_obs = torch.as_tensor(next_obs_d["observation"])
    next_mask = torch.as_tensor(next_obs_d["action_mask"]).bool()
    next_done = torch.zeros(N)
    episode_returns: list[float] = []
    running = np.zeros(N)
    start, steps = time.time(), 0
    stats: dict[str, Any] = {}
    for iteration in range(1, iterations + 1):
        for t in range(T):
            obs[t], masks[t], dones[t] = next_obs, next_mask, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs, next_mask)
            actions[t], logprobs[t], values[t] = action, logprob, value.flatten()
            o, r, term, trunc, _ = envs.step(action.numpy())
            done = np.logical_or(term, trunc)
            running += r
            episode_returns += running[done].tolist()
            running[done] = 0.0
            rewards[t] = torch.as_tensor(r)
            next_obs = torch.as_tensor(o["observation"])
            next_mask = torch.as_tensor(o["action_mask"]).bool()
            next_done = torch.as_tensor(done, dtype=torch.float32)
            steps += N

        with torch.no_grad():  # GAE; an ended step does not bootstrap (same-step autoreset)
            next_value = agent.get_value(next_obs).flatten()
            advantages = torch.zeros_like(rewards)
            last = torch.zeros(N)
            for t in reversed(range(T)):
                live = 1.0 - (next_done if t == T - 1 else dones[t + 1])
                nv = next_value if t == T - 1 else values[t + 1]
                delta = rewards[t] + args.gamma * nv * live - values[t]
                advantages[t] = last = delta + args.gamma * args.gae_lambda * live * last
            returns = advantages + values

        b_obs, b_masks = obs.reshape(batch_size, -1), masks.reshape(batch_size, -1)
        b_actions, b_logprobs = actions.reshape(-1), logprobs.reshape(-1)
        b_adv, b_returns = advantages.reshape(-1), returns.reshape(-1)
        for _ in range(args.update_epochs):
            for idx in torch.randperm(batch_size).split(minibatch):
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(b_obs[idx], b_masks[idx],
                                                                              b_actions[idx])
                ratio = (newlogprob - b_logprobs[idx]).exp()
                adv = b_adv[idx]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg_loss = torch.max(-adv * ratio,
                                    -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                v_loss = 0.5 * ((newvalue.flatten() - b_returns[idx]) ** 2).mean()
                loss = pg_loss - args.ent_coef * entropy.mean() + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
        recent = episode_returns[-1000:]
        stats = {"iteration": iteration, "steps": steps, "SPS": int(steps / (time.time() - start)),
                 "episodes": len(episode_returns), "mean_return": float(np.mean(recent)) if recent else 0.0,
                 "pg_loss": pg_loss.item(), "v_loss": v_loss.item(), "entropy": entropy.mean().item()}
        print(json.dumps(stats), flush=True)
    game = envs.unwrapped.game  # the cardlab table the env plays (its game, rules and players)
    envs.close()
    save_onnx_bot(agent.actor, int(np.prod(obs_space.shape)), args.save, game, stats)
    return stats


if __name__ == "__main__":
    main()
