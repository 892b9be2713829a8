"""The vector env's compiled opponent passes play the games its round-by-round Python passes play (C2)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cardlab.agents.batch import fused_play_out
from cardlab.envs import make_game
from cardlab.envs.batched_engine import sample_legal
from cardlab.training.arena.vector import CardVectorEnv


def run(opponent: str, players: int, fused: bool, steps: int = 60) -> list[np.ndarray]:
    """Everything the learner sees over `steps` random steps: observations, masks, rewards, ends, seats,
    the final observations, and last how many episodes ended."""
    env = CardVectorEnv("huit", 24, opponents=[opponent], num_players=players)
    env.fused = fused
    rng = np.random.default_rng(5)
    obs, infos = env.reset(seed=11)
    seen = [obs["observation"], obs["action_mask"], infos["seat"]]
    ends = 0
    for _ in range(steps):
        actions = sample_legal(obs["action_mask"].view(bool), rng)
        obs, rewards, terminated, truncated, infos = env.step(actions)
        seen += [obs["observation"], obs["action_mask"], rewards, terminated, truncated, infos["seat"]]
        if "final_obs" in infos:
            seen += [np.stack([f["observation"] for f in infos["final_obs"][infos["_final_obs"]]])]
        ends += int((terminated | truncated).sum())
    return [*seen, np.array(ends)]


@pytest.mark.parametrize("players", [2, 4])
@pytest.mark.parametrize("opponent", ["random", "greedy", "expert"])
def test_the_compiled_pass_plays_the_games_of_the_round_by_round_pass(opponent: str, players: int) -> None:
    fused, rounds = run(opponent, players, True), run(opponent, players, False)
    assert len(fused) == len(rounds)
    for a, b in zip(fused, rounds, strict=True):
        np.testing.assert_array_equal(a, b)
    assert fused[-1] > 0  # some episodes ended on the way, so dealing again is compared too


def test_the_compiled_pass_is_used_for_one_compiled_heuristic_only() -> None:
    assert CardVectorEnv("huit", 2, opponents=["expert"])._fused_play is not None
    assert CardVectorEnv("huit", 2, opponents=["expert", "greedy"])._fused_play is None
    assert CardVectorEnv("switch", 2, opponents=["expert"])._fused_play is None


def test_an_agent_of_other_rules_gets_no_compiled_pass() -> None:
    from cardlab.agents.agent_spec import make_agent
    from cardlab.training.arena.selfplay import batched_engine

    engine = batched_engine(make_game("huit", {"num_players": 2}), 4)
    assert fused_play_out(engine, make_agent("expert", make_game("huit", {"num_players": 3}))) is None
    assert fused_play_out(engine, make_agent("expert", make_game("huit", {"num_players": 2}))) is not None


def steps_of(env: CardVectorEnv, steps: int, illegal_every: int = 0) -> list[np.ndarray]:
    """Everything `env` gives over `steps` random steps from reset(seed=3) (one game's move illegal every
    `illegal_every` steps), with its seats, owners and generator state after each step."""
    rng = np.random.default_rng(9)
    obs, infos = env.reset(seed=3)
    seen = [obs["observation"], obs["action_mask"], infos["seat"], env.owners.copy()]
    for t in range(steps):
        actions = sample_legal(obs["action_mask"].view(bool), rng)
        if illegal_every and t % illegal_every == 0:
            actions[t % env.num_envs] = int(np.argmin(obs["action_mask"][t % env.num_envs]))
        obs, rewards, terminated, truncated, infos = env.step(actions)
        seen += [obs["observation"], obs["action_mask"], rewards, terminated, truncated, infos["seat"],
                 env.owners.copy(), np.array(env.rng.bit_generator.state["state"]["state"] % 2**62)]
        if "final_obs" in infos:
            ended = infos["_final_obs"]
            seen += [np.flatnonzero(ended), np.stack([f["observation"] for f in infos["final_obs"][ended]]),
                     np.stack([f["action_mask"] for f in infos["final_obs"][ended]])]
    return seen


@pytest.mark.parametrize(("opponents", "players", "reward", "illegal"), [
    (["random", "random"], 3, "points", "raise"),
    (["random"], 2, "win", "penalize"),
    (["expert"], 2, "points", "penalize"),
    (["greedy"], 5, "win", "raise"),
])
def test_the_one_call_step_gives_what_the_python_step_gives(opponents: list[str], players: int, reward: str,
                                                             illegal: str) -> None:
    """Claim: `vector_step.FusedStep` (one compiled call a step) gives, step for step from the same seed,
    the observations, masks, rewards (both reward options), ends, final observations, seats, owners (several
    random specs draw them) and generator state of the Python loop over compiled passes (`_play_out`:
    `play_random`, `fused_play_out`); steps with a penalized illegal move (played by that loop) interleave
    with it. (Several random specs draw their moves in slot order, as `play_random` does, not per spec as
    the round-by-round reference does.)"""
    def env(one_call: bool) -> CardVectorEnv:
        made = CardVectorEnv("huit", 16, opponents=opponents, reward=reward, illegal_action=illegal,
                             num_players=players)
        assert made._fast is not None
        if not one_call:
            made._fast = None
        return made

    fast, slow = env(True), env(False)
    every = 7 if illegal == "penalize" else 0
    one, other = steps_of(fast, 80, every), steps_of(slow, 80, every)
    assert len(one) == len(other)
    for a, b in zip(one, other, strict=True):
        np.testing.assert_array_equal(a, b)
    assert sum(a.size for a in one[13::8] if a.dtype == np.bool_) > 0  # episodes ended on the way
    for slot in range(fast.num_envs):  # the engines end in the same states, generators included
        assert json.dumps(fast.engine.state_dict(slot), default=str) == \
            json.dumps(slow.engine.state_dict(slot), default=str)


@pytest.mark.parametrize("opponents", [["random"], ["expert"]])
def test_a_step_is_one_compiled_call(opponents: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Claim: with random or one compiled heuristic as opponents, reset (past its deal) and step call none
    of the engine's Python API (step, observe, masks, play-outs, reset): the whole step is `vector_step`."""
    env = CardVectorEnv("huit", 8, opponents=opponents, num_players=2)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the engine's Python API was called")

    for name in ("step", "observe", "legal_mask", "play_random", "current_player"):
        monkeypatch.setattr(env.engine, name, refuse)
    monkeypatch.setattr(env, "_fused_play", refuse)
    obs, _ = env.reset()
    monkeypatch.setattr(env.engine, "reset", refuse)  # new deals after the first are the kernel's
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(100):
        obs, _, terminated, truncated, _ = env.step(sample_legal(obs["action_mask"].view(bool), rng))
        ends += int((terminated | truncated).sum())
    assert ends > 0 and obs["action_mask"].any(axis=1).all()


def test_an_illegal_learner_move_is_refused_as_the_engine_refuses_it_and_nothing_moves() -> None:
    """Claim: the one-call step refuses an illegal learner action with the engine's message, before any game
    moves: the next legal steps give what a Python-stepped env gives."""
    envs = [CardVectorEnv("huit", 6, opponents=["expert"], num_players=3) for _ in range(2)]
    envs[1].fused = False
    messages, after = [], []
    for env in envs:
        obs, _ = env.reset(seed=4)
        bad = np.argmax(obs["action_mask"], axis=1)
        bad[2] = int(np.argmin(obs["action_mask"][2]))
        with pytest.raises(ValueError, match=r"slot 2: illegal action .* no slot was stepped") as caught:
            env.step(bad)
        messages.append(str(caught.value))
        after.append(env.step(np.argmax(obs["action_mask"], axis=1))[0]["observation"])
    assert messages[0] == messages[1]
    np.testing.assert_array_equal(after[0], after[1])
