"""The batched engines' one API, and what every game's batched engine shares (`BatchedEngine`).

A batched engine plays B games of one game at once, its state in arrays,
stepped by numba kernels: the game's rules engine stays the definition of the
rules, and the differential tests (`tests/envs/test_*_batched.py`) check each
batch against it step by step (legal sets, `state_dict`, observations, rewards,
ends of hands).

```python
from cardlab.envs import get_spec
from cardlab.envs.batched_engine import sample_legal

spec = get_spec("huit")
batch = spec.batched_engine()(spec.make({"num_players": 4}).rules, batch_size=4096, seed=0)
rng = np.random.default_rng(0)
while True:
    mask = batch.legal_mask()                             # (B, num_actions) bool, the player to move
    obs = batch.observe(batch.current_player())           # (B, obs_size) float32, as the game's observer
    rewards, done, truncated = batch.step(sample_legal(mask, rng))
    batch.reset(done | truncated)                         # finished slots wait for reset
```


The API every engine keeps (reset, load, observe, step, the match state) and
the one design of the numba engines are written in docs/envs.md.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import ModuleType
from typing import Any, ClassVar

import numpy as np
from numba import njit

from cardlab.envs.checked_json import excerpt
from cardlab.envs.declared import check_choice, check_whole
from cardlab.envs.match import EPISODES

MatchState = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""`BatchedEngine.match_state`: totals (B, n), dealer of the hand in play (B,), streaks (B, n), hands (B,)"""


@njit(cache=True)
def pick_legal(row: np.ndarray, uniform: float) -> int:
    """The legal action of one mask row that a uniform draw in [0, 1) picks: the k-th, k = floor(u * count).

    0 in a row without any. `sample_legal` picks with it, and a compiled
    `play_random` picks the same id from the same draw (Huit's from its sorted legal ids).
    """
    count = 0
    for a in range(row.shape[0]):
        count += row[a]
    if count == 0:
        return 0
    k = min(int(uniform * count), count - 1)
    for a in range(row.shape[0]):
        if row[a]:
            if k == 0:
                return a
            k -= 1
    return 0


@njit(cache=True)
def _pick(mask: np.ndarray, uniforms: np.ndarray, out: np.ndarray) -> None:
    for b in range(mask.shape[0]):
        out[b] = pick_legal(mask[b], uniforms[b])


def sample_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row of a (B, A) bool mask (0 in a row without any)."""
    mask = np.ascontiguousarray(mask, dtype=np.bool_)
    out = np.zeros(mask.shape[0], dtype=np.int64)
    _pick(mask, np.asarray(rng.random(mask.shape[0])), out)
    return out


@njit(cache=True)
def _only(mask: np.ndarray, out: np.ndarray) -> None:
    for b in range(mask.shape[0]):
        found = -1
        for a in range(mask.shape[1]):
            if mask[b, a]:
                if found >= 0:
                    found = -1
                    break
                found = a
        out[b] = found


def only_legal(mask: np.ndarray) -> np.ndarray:
    """(B,) int64: each row's one legal action in a (B, A) bool mask, -1 where it has more (or none)."""
    out = np.empty(mask.shape[0], dtype=np.int64)
    _only(np.ascontiguousarray(mask, dtype=np.bool_), out)
    return out


def seat_indices(seats: np.ndarray, batch_size: int, num_players: int) -> np.ndarray:
    """`seats` as (B,) int64 seat indices, or a `ValueError` saying what `observe` accepts."""
    who = np.asarray(seats)
    if who.shape != (batch_size,) or who.dtype.kind not in "iu":  # (kind: cheaper than issubdtype per step)
        raise ValueError(f"seats must be {batch_size} seat indices (ints), got {who.dtype} {who.shape}")
    if who.size and (who.min() < 0 or who.max() >= num_players):
        raise ValueError(f"seats must be seat indices 0..{num_players - 1}")
    return np.ascontiguousarray(who, dtype=np.int64)  # read only by the kernels: int64 seats not copied


@contextlib.contextmanager
def holding(over: np.ndarray, active: np.ndarray | None) -> Iterator[None]:
    """While the block runs, mark the live slots outside `active` finished, so a step leaves them as they are.

    `over` is the engine's (B,) hand-over column (a view into its state);
    `active=None` holds nothing.
    """
    if active is None:
        yield
        return
    held = np.flatnonzero(~np.asarray(active, dtype=np.bool_) & (over == 0))
    over[held] = 1
    try:
        yield
    finally:
        over[held] = 0


class BatchedEngine:
    """Base of the batched engines: `done`, `truncated` and `step`; a game supplies its columns and move.

    `done` and `truncated` are Gymnasium's terminated and truncated (never
    both): the episode ended by a win, or C1 cut it; a slot with either waits
    for `reset`. `step` checks the action ids, holds the slots outside
    `active`, and lets `_apply` move the rest; an illegal action in a live
    slot is refused by `_refuse` before any slot moves.
    """

    STATE_ARRAYS: ClassVar[tuple[str, ...]]
    """the names of the per-slot state arrays (first axis the slot): what `load_worlds` copies"""
    RULES: ClassVar[ModuleType | Any]
    """the game's rules module, or anything with its `NUM_ACTIONS` and `action_to_str` (they name actions
    in errors)"""
    RULES_CLASS: ClassVar[type]
    """the game's rule options class: the rules a batch is built from"""
    OBSERVER: ClassVar[type]
    """the game's observer class (built from the rules): `observe` gives its vectors"""
    batch_size: int

    def __init__(self, rules: Any, batch_size: int | np.integer, seed: int | None = None,
                 episode: str = "hand") -> None:
        if not issubclass(type(rules), self.RULES_CLASS):  # (no narrowing: rules keeps its game type)
            raise ValueError(f"rules must be {self.RULES_CLASS.__name__}, got {type(rules).__name__}")
        self.rules = rules
        self.batch_size = check_whole("batch_size", batch_size, 1, None, "a whole number >= 1")
        self.episode = check_choice("episode", episode, EPISODES)
        self.n: int = rules.num_players
        self.num_actions: int = self.RULES.NUM_ACTIONS
        self.observer = self.OBSERVER(rules)
        self.layout = self.observer.layout
        self.obs_size: int = self.layout.size
        self._every = np.arange(self.batch_size, dtype=np.int64)
        self.generators: Any = [
            np.random.default_rng(child) for child in np.random.SeedSequence(seed).spawn(self.batch_size)
        ]

    def _slots(self, slots: Any) -> np.ndarray:
        """`reset`'s slots as sorted unique int64 indices: indices, a (B,) bool mask, or None for all."""
        if slots is None:
            return np.arange(self.batch_size, dtype=np.int64)
        idx = np.asarray(slots)
        if idx.dtype == np.bool_ and idx.shape == (self.batch_size,):
            return np.flatnonzero(idx).astype(np.int64)
        accepted = f"slot indices 0..{self.batch_size - 1} or a ({self.batch_size},) bool mask"
        if idx.dtype == np.bool_ or (idx.size and not np.issubdtype(idx.dtype, np.integer)):
            raise ValueError(f"slots must be {accepted}, got {excerpt(slots)}")
        idx = idx.astype(np.int64).ravel()
        if idx.size and (idx.min() < 0 or idx.max() >= self.batch_size):
            raise ValueError(f"slots must be {accepted}, got {excerpt(slots)}")
        return np.unique(idx)  # a slot named twice is dealt once

    def _rows(self, rows: Any) -> np.ndarray:
        """`legal_mask`'s and `observe`'s rows as int64 slot indices (all slots when None)."""
        if rows is None:
            return self._every
        idx = np.asarray(rows)
        if idx.ndim != 1 or (idx.size and not np.issubdtype(idx.dtype, np.integer)):
            raise ValueError(f"rows must be a 1-d array of slot indices, got {idx.dtype} {idx.shape}")
        if idx.size and (idx.min() < 0 or idx.max() >= self.batch_size):
            raise ValueError(f"rows must be slot indices 0..{self.batch_size - 1}, got {excerpt(rows)}")
        return idx.astype(np.int64, copy=False)

    def _check_slot(self, slot: Any) -> int:
        """One slot index (`load`, `to_state`, `state_dict`), as an int."""
        whole = isinstance(slot, (int, np.integer)) and not isinstance(slot, bool)
        if not whole or not 0 <= slot < self.batch_size:
            raise ValueError(f"slot must be an index 0..{self.batch_size - 1}, got {excerpt(slot)}")
        return int(slot)

    def reset(self, slots: Any = None) -> None:
        raise NotImplementedError

    def load(self, slot: int, state: Any) -> None:
        raise NotImplementedError

    def load_worlds(self, known: Any, worlds: Any, slots: Any) -> None:
        """The W worlds of a `Determinization` (`known`, `Worlds` from its `deal`) into a (W, K) grid of
        distinct slots: world w into every slot of row w (K candidates of one world, say).

        World 0 is built as a state and loaded (`load`, so every observed field
        is set as `load` sets it) into the first slot, whose generator it keeps;
        its arrays are copied into every other slot, and each world's own cards
        written over them (`_deal_worlds`): no Python per slot or per world.
        Every slot keeps its own generator (a reshuffle, A10 or B10 with
        `shuffle_on_refill`, draws from it).
        """
        grid = self._world_grid(slots, worlds.count)
        flat = grid.ravel()
        if not flat.size:
            return
        first = int(flat[0])
        self.load(first, known.world(worlds, 0, self.generators[first]))
        for name in self.STATE_ARRAYS:
            array = getattr(self, name)
            array[flat] = array[first]
        self._deal_worlds(known, worlds, flat, np.repeat(np.arange(worlds.count), grid.shape[1]))

    def _world_grid(self, slots: Any, count: int) -> np.ndarray:
        """`load_worlds`' slots as a checked (count, K) int64 grid of distinct slot indices."""
        grid = np.asarray(slots)
        accepted = f"a (worlds={count}, K) grid of distinct slot indices 0..{self.batch_size - 1}"
        if grid.ndim != 2 or grid.shape[0] != count or not np.issubdtype(grid.dtype, np.integer):
            raise ValueError(f"slots must be {accepted}, got {grid.dtype} {grid.shape}")
        flat = grid.ravel()
        outside = flat.size and (flat.min() < 0 or flat.max() >= self.batch_size)
        if outside or np.unique(flat).size != flat.size:
            raise ValueError(f"slots must be {accepted}, got {excerpt(grid.tolist())}")
        return grid.astype(np.int64)

    def _deal_worlds(self, known: Any, worlds: Any, flat: np.ndarray, world: np.ndarray) -> None:
        """Write each world's cards (hands but `known.seat`'s, the face-down pile, the order under the top
        card) and picks into slots `flat`, slot flat[i] getting world world[i]."""
        raise NotImplementedError

    def reseed(self, seed: int | None) -> None:
        """Every slot's generator restarted from `seed` as the constructor seeds it (C2: a search reusing
        one engine across decisions replays them from its own seed)."""
        for gen, child in zip(self.generators, np.random.SeedSequence(seed).spawn(self.batch_size),
                              strict=True):
            gen.bit_generator.state = type(gen.bit_generator)(child).state

    def to_state(self, slot: int) -> Any:
        raise NotImplementedError

    def state_dict(self, slot: int) -> dict[str, Any]:
        """The rules engine's `state_dict()` of a slot."""
        return self.to_state(slot).state_dict()

    def score_changes(self) -> np.ndarray:
        raise NotImplementedError

    def match_state(self) -> MatchState:
        raise NotImplementedError

    def observe(self, seats: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        raise NotImplementedError

    def _end_columns(self) -> tuple[np.ndarray, np.ndarray]:
        """Views of the (B,) hand-over and truncated columns of the state (nonzero: set)."""
        raise NotImplementedError

    def _apply(self, actions: np.ndarray) -> np.ndarray:
        """Move every live slot by its action (checked (B,) int64 ids); the (B, n) float32 rewards."""
        raise NotImplementedError

    def current_player(self) -> np.ndarray:
        raise NotImplementedError

    def legal_mask(self, rows: np.ndarray | None = None) -> np.ndarray:
        raise NotImplementedError

    @property
    def over(self) -> np.ndarray:
        """(B,) bool: the episode ended, by a win or a truncation (a copy: reading it changes nothing)."""
        return self._end_columns()[0] != 0

    def hold(self, active: np.ndarray | None) -> contextlib.AbstractContextManager[None]:
        """While the block runs, the live slots outside `active` are held: a step leaves them as they are."""
        return holding(self._end_columns()[0], active)

    @property
    def done(self) -> np.ndarray:
        """(B,) bool: the episode ended by a win (terminated)."""
        over, truncated = self._end_columns()
        return (over != 0) & (truncated == 0)

    @property
    def truncated(self) -> np.ndarray:
        """(B,) bool: the hand was truncated at max_turns (C1), which ends the episode."""
        return self._end_columns()[1] != 0

    def step(self, actions: np.ndarray,
             active: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Apply one action per live slot; returns (rewards (B, n), done (B,), truncated (B,)).

        `active`: (B,) bool, the slots that move (default: every live one); the
        others keep their state and get no reward, as finished slots do (so a
        caller can hold some games while others catch up).
        """
        acts = np.asarray(actions)
        if acts.shape != (self.batch_size,) or not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(f"actions must be a ({self.batch_size},) integer array of action ids, "
                             f"got {acts.dtype} {acts.shape}")
        with self.hold(active):
            rewards = self._apply(acts.astype(np.int64))
        return rewards, self.done, self.truncated

    def play_random(self, seats: np.ndarray, rng: np.random.Generator, gained: np.ndarray,
                    counted: np.ndarray) -> bool:
        """Uniformly random legal moves for every seat but `seats[b]` in each live slot b, round by round.

        Each round moves every live slot whose seat to move is not `seats[b]`
        (the others wait), its action drawn as `sample_legal` draws them
        (rows in slot order, one `rng.random()` each), until `seats[b]` is to
        move in every live slot; a slot whose episode ends on the way stays
        finished (the caller deals it again and calls again for it). Returns
        whether some episode ended. `gained` (B,) float64 adds, where
        `counted` (B,) bool is set, the rewards of `seats[b]` along the way.
        Why here: a Gymnasium vector env's random opponents play the other
        seats' moves up to the learner's next turn, and an engine with a
        compiled version plays all the rounds in one call.
        """
        who, gained, counted = self.checked_play_args(seats, gained, counted)
        actions = np.zeros(self.batch_size, dtype=np.int64)
        ended = False
        while True:
            waiting = (self.current_player() != who) & ~self.over
            rows = np.flatnonzero(waiting)
            if rows.size == 0:
                return ended
            with self.hold(waiting):
                actions[rows] = sample_legal(self.legal_mask()[rows], rng)
                moved = self.step(actions)[0]
            take = rows[counted[rows]]
            gained[take] += moved[take, who[take]]
            ended |= bool(self.over[rows].any())

    def checked_play_args(self, seats: np.ndarray, gained: np.ndarray,
                   counted: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`play_random`'s arguments checked: (B,) seats, float64 gains, bool flags."""
        who = seat_indices(seats, self.batch_size, self.n)
        shape = (self.batch_size,)
        if not isinstance(gained, np.ndarray) or gained.shape != shape or gained.dtype != np.float64:
            raise ValueError(f"gained must be a ({self.batch_size},) float64 array (it is added to in place)")
        flags = np.asarray(counted)
        if flags.shape != shape or flags.dtype != np.bool_:
            raise ValueError(f"counted must be a ({self.batch_size},) bool array")
        return who, gained, flags

    def _refuse(self, b: int, action: int) -> None:
        """Raise the `ValueError` of an illegal `action` in slot `b`: what it is, and what is legal there."""
        rules = self.RULES
        legal = np.flatnonzero(self.legal_mask()[b])
        listed = ", ".join(f"{a} ({rules.action_to_str(int(a))})" for a in legal)
        if 0 <= action < rules.NUM_ACTIONS:
            what = f"{action} ({rules.action_to_str(action)})"
        else:
            what = f"{action} (not an action id 0..{rules.NUM_ACTIONS - 1})"
        raise ValueError(f"slot {b}: illegal action {what} for seat {self.current_player()[b]}; "
                         f"legal actions: {listed}; no slot was stepped")
