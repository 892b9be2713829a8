"""The batched Huit engine plays the same games as the rules engine and the AEC env.

Why: `HuitBatch` re-implements the rules in numba kernels for speed; the
engine (`HuitState`) and the AEC env (`huit_v1.raw_env`) stay the definition.
Each slot of a batch runs beside its own AEC env, fed the same random legal
actions, and after every step the legal sets, `state_dict()` (so the next state
and the generator), the observations of the mover and of another seat, the
rewards and the end of the episode must agree exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from cardlab.envs import huit_v1
from cardlab.envs.batched_engine import sample_legal
from cardlab.envs.huit.batched import NUM_ACTIONS, HuitBatch
from cardlab.envs.huit.observer import HuitObserver
from cardlab.envs.huit.rules import DRAW, HuitRules, HuitState
from tests.benchmarks import load_benchmark
from tests.envs.helpers import check_options_reach_the_batch, position


class Differential:
    """A batch and one AEC env per slot, played side by side and compared after every step."""

    def __init__(self, batch: HuitBatch, envs: list[Any], seed: int) -> None:
        self.batch, self.envs = batch, envs
        self.observer = HuitObserver(batch.rules)
        self.rng = np.random.default_rng(seed)
        self.steps = 0
        self.ends = {"won": 0, "truncated": 0, "hands": 0}

    @classmethod
    def dealt(cls, rules: HuitRules, batch_size: int, seed: int, episode: str = "hand") -> Differential:
        """The batch deals; each env starts from the state its slot's generator deals in the engine."""
        batch = HuitBatch(rules, batch_size, seed=seed, episode=episode)
        envs = []
        for child in np.random.SeedSequence(seed).spawn(batch_size):
            env = huit_v1.raw_env(episode=episode, **rules.to_dict())
            env.reset(options={"state": HuitState(rules, np.random.default_rng(child)).state_dict()})
            envs.append(env)
        return cls(batch, envs, seed)

    def compare(self) -> None:
        batch = self.batch
        mask = batch.legal_mask()
        mover = batch.current_player()
        seen = {"mover": batch.observe(mover), "next": batch.observe((mover + 1) % batch.n)}
        for i, env in enumerate(self.envs):
            state = env.game_state
            assert position(batch.state_dict(i)) == position(state.state_dict()), f"slot {i}"
            assert np.flatnonzero(mask[i]).tolist() == (env.legal_actions() if not state.hand_over else [])
            assert mover[i] == state.current
            np.testing.assert_array_equal(seen["mover"][i], self.observer.observe(state, state.current))
            np.testing.assert_array_equal(
                seen["next"][i], self.observer.observe(state, (state.current + 1) % batch.n)
            )

    def play(self, rounds: int) -> int:
        """`rounds` steps of the whole batch (finished slots reset first); returns the slot steps."""
        batch = self.batch
        for _ in range(rounds):
            finished = [i for i, env in enumerate(self.envs) if env.game_state.hand_over]
            for i in finished:
                self.envs[i].reset()  # the next episode, dealt from the same generator
            if finished:
                batch.reset(np.array(finished))
            self.compare()
            actions = np.array([env.legal_actions()[self.rng.integers(len(env.legal_actions()))]
                                for env in self.envs])
            hands_before = [env.game_state.match.hands_played for env in self.envs]
            rewards, done, truncated = batch.step(actions)
            for i, env in enumerate(self.envs):
                env.step(int(actions[i]))
                agents = env.possible_agents
                np.testing.assert_array_equal(rewards[i], np.array([env.rewards[a] for a in agents],
                                                                   dtype=np.float32))
                assert done[i] == all(env.terminations[a] for a in agents), f"slot {i}"
                assert truncated[i] == all(env.truncations[a] for a in agents), f"slot {i}"
                self.ends["won"] += bool(done[i])
                self.ends["truncated"] += bool(truncated[i])
                self.ends["hands"] += env.game_state.match.hands_played != hands_before[i]
            self.steps += batch.batch_size
        self.compare()
        return self.steps


# (rules, episode, batch size, rounds): every player count, each non-default option, match episodes.
CASES: list[tuple[dict[str, Any], str, int, int]] = [
    *[({"num_players": n}, "hand", 12, 180) for n in range(2, 7)],
    ({"num_players": 3, "queen_skips_each": False}, "hand", 12, 150),
    ({"num_players": 2, "shuffle_on_refill": True, "hand_size": "all"}, "hand", 12, 150),
    ({"num_players": 4, "shuffle_on_refill": True, "hand_size": 3}, "hand", 12, 150),
    ({"num_players": 5, "hand_size": "all"}, "hand", 12, 120),
    ({"num_players": 4, "max_turns": 25}, "hand", 12, 120),
    ({"num_players": 3, "target_score": 40, "streak_length": 2, "streak_bonus": 7}, "match", 12, 250),
    ({"num_players": 2, "target_score": 60, "shuffle_on_refill": True, "max_turns": 60}, "match", 12, 200),
    ({"num_players": 2, "memory": True}, "hand", 12, 150),
    ({"num_players": 6, "memory": True, "hand_size": 3}, "hand", 12, 150),
    ({"num_players": 4, "memory": True, "target_score": 40}, "match", 12, 200),
]
CASE_IDS = [f"{ep}-" + "-".join(f"{k}={v}" for k, v in kw.items()) for kw, ep, _b, _r in CASES]


def test_options_reach_the_kernels() -> None:
    """Every Huit rule option is a kernel parameter or declared as read elsewhere, changes what it
    feeds, and takes a non-default value in one of the CASES."""
    check_options_reach_the_batch(HuitBatch, HuitRules, [options for options, *_ in CASES])


@pytest.mark.parametrize(("options", "episode", "batch_size", "rounds"), CASES, ids=CASE_IDS)
def test_batch_plays_as_the_engine(
    options: dict[str, Any], episode: str, batch_size: int, rounds: int
) -> None:
    diff = Differential.dealt(HuitRules(**options), batch_size, seed=rounds, episode=episode)
    diff.play(rounds)
    assert diff.ends["hands"] > 0
    if "max_turns" in options:
        assert diff.ends["truncated"] > 0
    if episode == "match":
        assert diff.ends["won"] > 0 and diff.ends["hands"] > diff.ends["won"]


def test_the_normal_run_plays_at_least_ten_thousand_steps() -> None:
    assert sum(b * r for _o, _e, b, r in CASES) >= 10_000


@pytest.mark.long
@pytest.mark.parametrize(("options", "episode"), [(kw, ep) for kw, ep, _b, _r in CASES], ids=CASE_IDS)
def test_batch_plays_as_the_engine_a_million_steps(options: dict[str, Any], episode: str) -> None:
    """10^6 slot steps over all the cases (about 30 s per case, 6 minutes in all, on one core)."""
    per_case = -(-1_000_000 // len(CASES))
    diff = Differential.dealt(HuitRules(**options), 64, seed=7, episode=episode)
    assert diff.play(-(-per_case // 64)) >= per_case


def test_load_a_stacked_deal_and_play_on() -> None:
    rules = HuitRules(num_players=3)
    diff = Differential.dealt(rules, 4, seed=3)
    deal = {"hands": [["8S", "AH", "QH"], ["QS", "QD", "7C"], ["9H", "9D", "AS", "AD"]],
            "bank": ["10H", "JH", "KH", "10D"], "dealer": 1, "scores": [20, 5, 0]}
    env = diff.envs[2]
    env.reset(seed=11, options={"deal": deal})
    diff.batch.load(2, env.game_state)
    assert diff.batch.state_dict(2)["left_out"] == env.state_dict()["left_out"] != []
    diff.play(40)


def test_load_a_saved_state_mid_hand_and_finished() -> None:
    rules = HuitRules(num_players=4, max_turns=30)
    diff = Differential.dealt(rules, 3, seed=5)
    diff.play(7)
    saved = diff.envs[0].state_dict()
    env = diff.envs[1]
    env.reset(options={"state": saved})
    diff.batch.load(1, HuitState.from_state_dict(saved, rules))
    diff.play(30)  # reaches max_turns: every slot is truncated once at least
    assert diff.ends["truncated"] > 0
    for i in range(3):  # a slot's saved state passes the engine's checks and loads back unchanged
        saved = diff.batch.state_dict(i)
        assert HuitState.from_state_dict(saved, rules).state_dict() == saved
        diff.batch.load(i, diff.batch.to_state(i))
        assert diff.batch.state_dict(i) == saved
    diff.play(5)


def test_finished_slots_ignore_actions_until_reset() -> None:
    batch = HuitBatch(HuitRules(num_players=2, max_turns=3), 4, seed=0)
    rng = np.random.default_rng(0)
    for _ in range(3):
        _rewards, done, truncated = batch.step(sample_legal(batch.legal_mask(), rng))
    assert truncated.all() and not done.any()
    saved = [batch.state_dict(i) for i in range(4)]
    assert not batch.legal_mask().any()
    rewards, done, truncated = batch.step(np.full(4, 12345))
    assert [batch.state_dict(i) for i in range(4)] == saved
    assert not rewards.any() and truncated.all()
    batch.reset(np.array([1]))
    assert batch.truncated.tolist() == [True, False, True, True]
    assert batch.state_dict(1)["turn"] == 0


def test_an_illegal_action_is_refused_naming_the_slot_and_nothing_moves() -> None:
    batch = HuitBatch(HuitRules(), 6, seed=2)
    mask = batch.legal_mask()
    before = [batch.state_dict(i) for i in range(6)]
    actions = sample_legal(mask, np.random.default_rng(1))
    for bad in (int(np.flatnonzero(~mask[3])[0]), -1, NUM_ACTIONS, DRAW + 1):
        if mask[3, bad % NUM_ACTIONS] and 0 <= bad < NUM_ACTIONS:
            continue
        wrong = actions.copy()
        wrong[3] = bad
        with pytest.raises(ValueError, match="slot 3"):
            batch.step(wrong)
        assert [batch.state_dict(i) for i in range(6)] == before
    for nonsense in (actions.astype(np.float64), actions[:5], actions.reshape(2, 3)):
        with pytest.raises(ValueError, match="action ids"):
            batch.step(nonsense)


def test_shapes_and_dtypes() -> None:
    rules = HuitRules(num_players=5)
    batch = HuitBatch(rules, 7, seed=1, episode="match")
    layout_size = HuitObserver(rules).layout.size
    assert batch.current_player().shape == (7,) and batch.current_player().dtype == np.int64
    assert batch.legal_mask().shape == (7, NUM_ACTIONS) and batch.legal_mask().dtype == np.bool_
    obs = batch.observe(batch.current_player())
    assert obs.shape == (7, layout_size) and obs.dtype == np.float32
    rewards, done, truncated = batch.step(sample_legal(batch.legal_mask(), np.random.default_rng(0)))
    assert rewards.shape == (7, 5) and rewards.dtype == np.float32
    assert done.shape == truncated.shape == (7,) and done.dtype == truncated.dtype == np.bool_
    with pytest.raises(ValueError, match="seats"):
        batch.observe(np.full(7, 5))
    with pytest.raises(ValueError, match="episode"):
        HuitBatch(rules, 2, episode="game")
    with pytest.raises(ValueError, match="slot indices"):
        batch.reset(np.array([7]))


def test_same_seed_same_games() -> None:
    rules = HuitRules(num_players=3, shuffle_on_refill=True)
    one, two = HuitBatch(rules, 5, seed=9), HuitBatch(rules, 5, seed=9)
    rng_one, rng_two = np.random.default_rng(4), np.random.default_rng(4)
    for _ in range(60):
        one.step(sample_legal(one.legal_mask(), rng_one))
        two.step(sample_legal(two.legal_mask(), rng_two))
    assert [one.state_dict(i) for i in range(5)] == [two.state_dict(i) for i in range(5)]


def test_the_benchmark_loop_runs_and_skips_a_game_without_a_batched_engine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`benchmarks/batched_throughput.py` stays runnable (it is not run by the test suite otherwise)."""
    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)  # the module sets it; restored after the test
    bench = load_benchmark("batched_throughput", monkeypatch)
    assert bench.batch_class("huit") is HuitBatch

    class NoBatch:
        def batched_engine(self) -> type:
            raise ValueError("game 'nogame' has no batched engine")

    monkeypatch.setattr(bench, "get_spec", lambda game: NoBatch())
    assert bench.batch_class("nogame") is None
    rate, per_hand = bench.batched_loop(HuitBatch, "huit", 64, 6400, 0)
    assert rate > 0 and 20 < per_hand < 1000


@pytest.mark.parametrize("bit_generator", ["MT19937", "Philox", "SFC64", "PCG64DXSM"])
def test_a_loaded_state_keeps_its_bit_generator(bit_generator: str) -> None:
    """Saved states may hold any generator `rng_from_state` accepts; B10 shuffles must use it."""
    rules = HuitRules(num_players=2, shuffle_on_refill=True, hand_size="all")
    batch = HuitBatch(rules, 3, seed=0)
    state = HuitState(rules, np.random.Generator(getattr(np.random, bit_generator)(5)))
    batch.load(1, state)
    rng = np.random.default_rng(0)
    while not state.hand_over:
        actions = sample_legal(batch.legal_mask(), rng)
        state.apply(int(actions[1]))
        batch.step(actions)
        assert position(batch.state_dict(1)) == position(state.state_dict())
        finished = np.flatnonzero(batch.done | batch.truncated)
        batch.reset(finished[finished != 1])
    assert batch.state_dict(1)["rng"]["bit_generator"] == bit_generator
