"""Evaluation and tournaments on Ray: blocks of deals as Ray tasks, merged back in deal order.

`evaluate` (`cardlab.training.evaluate`) plays every seat rotation of each
deal with `play_deals`, and a record depends only on (seed, kind, deal,
rotation, slot). Here the deals of every table are cut into blocks, each
block is a Ray task calling the same `play_deals`, and the blocks' records
are put back in deal order: the `EvalResult` is the serial one, record for
record, whatever the number of workers or the order they finish in.

- A worker that dies (a killed process, a lost node) has its block retried
  (`MAX_RETRIES` times) by Ray; the block is played again from its seeds, so
  the result does not change.
- Bots travel as their files' bytes (`BotFile`), once each through the object
  store, and are loaded with `load_bot`'s checks on arrival; the driver loads
  each bot first, so a wrong file is refused before any task starts.
- The progress bar counts hands (and matches) of finished blocks across workers.
- While a local Ray starts (seconds), the driver plays blocks from the same
  queue itself (`_DriverPlayer`), so no core waits for Ray.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from tqdm import tqdm

from cardlab.agents.base import Agent, make_agent
from cardlab.cluster.botfiles import BotFile
from cardlab.cluster.runtime import import_ray, ray_session, task_error
from cardlab.training.evaluate import (
    HAND,
    MATCH,
    EpisodeRecord,
    EvalResult,
    check_seed,
    make_env,
    play_deals,
    players_for,
    seat_slots,
)
from cardlab.training.tournament import TournamentResult, tournament

BLOCKS_PER_WORKER = 8
"""Blocks per worker, all tables together: enough for an even finish and a moving progress bar, few
enough that building the agents of a block costs nothing next to playing it."""
MAX_RETRIES = 3
"""Times Ray plays a block again after its worker died."""

BeforeBlock = Callable[[int], object]
"""Runs in the worker before each block, with the block's number (tests kill the worker with it)."""


@dataclasses.dataclass(frozen=True)
class _Table:
    """One evaluation: its rules as given and resolved, its slots and how many deals of each kind."""

    hands: int
    matches: int
    rules: dict[str, Any]
    full_rules: dict[str, Any]
    slots: list[str]
    game: Any  # the cardlab Game, to check bots against on the driver
    deals: dict[int, int]  # kind -> deals


@dataclasses.dataclass(frozen=True)
class _Block:
    table: int
    kind: int
    deals: range


def _plan(game: str, specs: Sequence[str], hands: int, matches: int,
          rule_options: dict[str, Any] | None) -> _Table:
    """What `evaluate` would play, checked the same way (the same messages for bad arguments)."""
    for name, value in (("hands", hands), ("matches", matches)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be a whole number >= 0, got {value!r}")
    if hands == 0 and matches == 0:
        raise ValueError("nothing to play: give hands > 0 or matches > 0")
    rules = dict(rule_options or {})
    rules["num_players"] = players_for(game, rules, specs)
    env = make_env(game, rules)
    full_rules = env.rules.to_dict()
    n = full_rules["num_players"]
    slots = seat_slots(list(specs), n)
    deals = {HAND: math.ceil(hands / n), MATCH: math.ceil(matches / n)}
    return _Table(hands, matches, rules, full_rules, slots, env.game, deals)


def _blocks(tables: Sequence[_Table], parallel: int) -> list[_Block]:
    """Each table's deals of each kind cut into runs of about the same size, in deal order."""
    total = sum(sum(t.deals.values()) for t in tables)
    size = max(1, math.ceil(total / (parallel * BLOCKS_PER_WORKER)))
    return [_Block(i, kind, range(first, min(first + size, count)))
            for i, table in enumerate(tables) for kind, count in table.deals.items()
            for first in range(0, count, size)]


def _is_bot(spec: str) -> bool:
    return spec.strip().startswith("bot:")


def _read_bots(tables: Sequence[_Table]) -> dict[str, BotFile]:
    """Bot spec -> its files' bytes; each bot is loaded here first, against each table's game."""
    bots: dict[str, BotFile] = {}
    for table in tables:
        for spec in table.slots:
            if _is_bot(spec):
                make_agent(spec, table.game)  # a wrong or damaged file is refused here, naming its path
                if spec not in bots:
                    bots[spec] = BotFile.read(spec.strip()[4:].strip(), source=spec)
    return bots


def _agent(slot: Any, game: Any, seed: int) -> Agent:
    """A slot's agent in a worker: a spec string, or a bot from received bytes."""
    if isinstance(slot, BotFile):
        return slot.load(game, seed)
    return make_agent(slot, game, seed)


def play_block(game: str, rules: dict[str, Any], slots: Sequence[Any], kind: int, first: int, stop: int,
               seed: int, block: int = 0, before_block: BeforeBlock | None = None) -> list[EpisodeRecord]:
    """The records of deals first..stop-1 (a Ray task); `slots` holds specs, BotFiles or refs to them."""
    if before_block is not None:
        before_block(block)
    if not all(isinstance(slot, (str, BotFile)) for slot in slots):  # refs of bots: fetched in the worker
        ray = import_ray()
        slots = [ray.get(slot) if isinstance(slot, ray.ObjectRef) else slot for slot in slots]
    return play_deals(game, rules, slots, kind, range(first, stop), seed, agent_factory=_agent)


class _Queue:
    """Block numbers handed out once each, to Ray tasks and to the driver's own player."""

    def __init__(self, count: int) -> None:
        self.count = count
        self._next = 0
        self._lock = threading.Lock()

    def take(self) -> int | None:
        with self._lock:
            if self._next >= self.count:
                return None
            self._next += 1
            return self._next - 1


class _DriverPlayer:
    """Plays blocks in the driver (a thread) while its local Ray starts, so no core waits for Ray.

    Starting a local Ray and its workers takes seconds; meanwhile this takes
    blocks from the same queue as the Ray tasks. Told to stop once the
    workers deliver, it finishes the block in hand and stops.
    """

    def __init__(self, queue: _Queue, play: Callable[[int], list[EpisodeRecord]]) -> None:
        self.queue, self.play = queue, play
        self.done: dict[int, list[EpisodeRecord]] = {}
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._first = queue.take()  # claimed now, so the driver plays at least one block
        self._thread = threading.Thread(target=self._loop, name="cardlab-driver-player", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        index = self._first
        try:
            while index is not None:
                self.done[index] = self.play(index)
                index = None if self._stop.is_set() else self.queue.take()
        except BaseException as err:  # raised in the main thread by `collect`
            self.error = err

    def stop(self) -> None:
        self._stop.set()

    @property
    def busy(self) -> bool:
        return self._thread.is_alive()

    def collect(self, results: list[list[EpisodeRecord] | None]) -> int:
        """Move finished blocks into `results`; returns their episodes (for the progress bar)."""
        if self.error is not None:
            raise self.error
        episodes = 0
        for index in [i for i in self.done if results[i] is None]:
            results[index] = self.done[index]
            episodes += len(results[index] or [])
        return episodes

    def join(self) -> None:
        self.stop()
        self._thread.join()


def evaluate_many(
    game: str,
    tables: Sequence[Sequence[str]],
    hands: int,
    seed: int = 0,
    rule_options: dict[str, Any] | None = None,
    matches: int = 0,
    progress: bool = False,
    *,
    workers: int | None = None,
    address: str | None = None,
    driver_plays: bool | None = None,
    before_block: BeforeBlock | None = None,
) -> list[EvalResult]:
    """`evaluate` each table's agent specs (same hands, matches, seed, rules), all tables' blocks on Ray.

    Equal to ``[evaluate(game, specs, ...) for specs in tables]``; see `ray_session` for
    `workers` and `address`. `driver_plays`: the driver plays blocks until the workers deliver
    (default: when this call starts a local Ray, whose start-up takes seconds).
    """
    seed = check_seed(seed)
    plans = [_plan(game, specs, hands, matches, rule_options) for specs in tables]
    bots = _read_bots(plans)
    ray = import_ray()
    if driver_plays is None:
        driver_plays = not address and not ray.is_initialized()
    # Block sizes follow the parallelism: known before connecting unless a cluster decides it.
    blocks = _blocks(plans, workers) if workers else []
    queue = _Queue(len(blocks))
    helper = None
    if driver_plays and blocks:
        local = [[bots.get(spec, spec) for spec in plan.slots] for plan in plans]
        helper = _DriverPlayer(queue, lambda i: play_block(
            game, plans[blocks[i].table].rules, local[blocks[i].table], blocks[i].kind, blocks[i].deals.start,
            blocks[i].deals.stop, seed, i, before_block))
    try:
        with ray_session(workers, address) as parallel:
            if not blocks:
                blocks = _blocks(plans, parallel)
                queue = _Queue(len(blocks))
            remote = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(play_block)
            refs = {spec: ray.put(bot) for spec, bot in bots.items()}  # each bot's bytes sent once
            shipped = [ray.put([refs.get(spec, spec) for spec in plan.slots]) for plan in plans]

            def submit(index: int) -> Any:
                b = blocks[index]
                return remote.remote(game, plans[b.table].rules, shipped[b.table], b.kind, b.deals.start,
                                     b.deals.stop, seed, index, before_block)

            total = sum(len(b.deals) * len(plans[b.table].slots) for b in blocks)
            done = _run(ray, queue, submit, parallel, helper, progress, total, f"{game} eval")
    finally:
        if helper is not None:
            helper.join()
    records: dict[tuple[int, int], list[EpisodeRecord]] = {}
    for b, part in zip(blocks, done, strict=True):
        records.setdefault((b.table, b.kind), []).extend(part)
    return [EvalResult(game=game, rules=plan.full_rules, num_players=len(plan.slots), seed=seed,
                       slots=plan.slots, hand_records=records.get((i, HAND), []),
                       match_records=records.get((i, MATCH), []), hands_asked=plan.hands,
                       matches_asked=plan.matches)
            for i, plan in enumerate(plans)]


def _run(ray: Any, queue: _Queue, submit: Callable[[int], Any], parallel: int, helper: _DriverPlayer | None,
         progress: bool, total: int, desc: str) -> list[list[EpisodeRecord]]:
    """Play every block of `queue`, `parallel` Ray tasks at a time (and the driver's player); by number.

    A block's own error (a refused bot, ...) is raised as it is, after the pending tasks are cancelled.
    """
    results: list[list[EpisodeRecord] | None] = [None] * queue.count
    pending: dict[Any, int] = {}

    def top_up() -> None:
        while len(pending) < parallel:
            index = queue.take()
            if index is None:
                return
            pending[submit(index)] = index

    bar = tqdm(total=total, disable=not progress, desc=f"{desc} on Ray", unit="episode", file=sys.stderr)
    with bar:
        top_up()
        while pending or (helper is not None and helper.busy):
            try:
                if helper is not None:
                    bar.update(helper.collect(results))
                if not pending:
                    time.sleep(0.05)  # only the driver's last block is left
                    continue
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=0.5)
                if not ready:
                    continue
                index = pending.pop(ready[0])
                results[index] = part = ray.get(ready[0])
            except Exception as err:  # a Ray task's (unwrapped) or the driver's block's
                for ref in pending:
                    ray.cancel(ref)
                raise task_error(err) from None
            if helper is not None:
                helper.stop()  # the workers are up: the driver's core is theirs after its block
            bar.update(len(part))
            top_up()
        if helper is not None:
            bar.update(helper.collect(results))
    return [part for part in results if part is not None]


def evaluate_parallel(
    game: str,
    agent_specs: list[str],
    hands: int,
    seed: int = 0,
    rule_options: dict[str, Any] | None = None,
    matches: int = 0,
    progress: bool = False,
    *,
    workers: int | None = None,
    address: str | None = None,
    driver_plays: bool | None = None,
    before_block: BeforeBlock | None = None,
) -> EvalResult:
    """`evaluate` on Ray workers: the same arguments and the same result."""
    return evaluate_many(game, [agent_specs], hands, seed, rule_options, matches, progress, workers=workers,
                         address=address, driver_plays=driver_plays, before_block=before_block)[0]


def tournament_parallel(
    game: str,
    specs: list[str],
    hands_per_pair: int,
    seed: int = 0,
    rule_options: dict[str, Any] | None = None,
    progress: bool = False,
    *,
    workers: int | None = None,
    address: str | None = None,
) -> TournamentResult:
    """`tournament` with every pairing's blocks on Ray at once: the same result."""

    def evaluate_tables(game: str, tables: list[list[str]], hands: int, seed: int, rules: dict[str, Any],
                        progress: bool) -> list[EvalResult]:
        return evaluate_many(game, tables, hands, seed, rules, progress=progress, workers=workers,
                             address=address)

    return tournament(game, specs, hands_per_pair, seed, rule_options, progress,
                      evaluate_tables=evaluate_tables)
