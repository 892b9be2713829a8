"""Evaluation, tournaments and comparisons on Ray: blocks of deals as Ray tasks, merged back in deal order.

`evaluate` (`cardlab.evaluation.evaluate`) plays every seat rotation of each
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
- A local Ray takes a few seconds to start and stop, so the speed-up shows on
  evaluations of more than a few seconds (README: "Running on a cluster").
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from tqdm import tqdm

from cardlab.agents.agent_spec import bot_source, make_agent
from cardlab.agents.base import Agent
from cardlab.cluster.botfiles import BotFile
from cardlab.cluster.runtime import import_ray, ray_session, task_error
from cardlab.evaluation.compare import Contest, PlayDeals
from cardlab.evaluation.episodes import HAND, MATCH
from cardlab.evaluation.evaluate import play_deals
from cardlab.evaluation.request import AgentFactory, EvalRequest, Table, each_table, old_form, one_request
from cardlab.evaluation.results import EpisodeRecord, EvalResult
from cardlab.evaluation.tournament import TOURNAMENT_ORDER, TournamentResult, tournament

BLOCKS_PER_WORKER = 16
"""Blocks per worker, all tables together: enough for an even finish and a moving progress bar, few
enough that building the agents of a block costs nothing next to playing it."""
MAX_RETRIES = 3
"""Times Ray plays a block again after its worker died."""

BeforeBlock = Callable[[int], object]
"""Runs in the worker before each block, with the block's number (tests kill the worker with it)."""


@dataclasses.dataclass(frozen=True)
class _Block:
    table: int
    kind: int
    deals: range


def _blocks(tables: Sequence[Table], parallel: int) -> list[_Block]:
    """Each table's deals of each kind cut into runs of about the same size, in deal order."""
    total = sum(sum(t.deals.values()) for t in tables)
    size = max(1, math.ceil(total / (parallel * BLOCKS_PER_WORKER)))
    return [_Block(i, kind, range(first, min(first + size, count)))
            for i, table in enumerate(tables) for kind, count in table.deals.items()
            for first in range(0, count, size)]


def _is_bot(spec: str) -> bool:
    return spec.strip().startswith("bot:")


def _read_bots(tables: Sequence[Table]) -> dict[str, BotFile]:
    """Bot spec -> its files' bytes; each bot is loaded here first, against each table's game."""
    bots: dict[str, BotFile] = {}
    for table in tables:
        for spec in table.slots:
            if _is_bot(spec):
                make_agent(spec, table.game)  # a wrong or damaged file is refused here, naming its path
                if spec not in bots:
                    bots[spec] = BotFile.read(bot_source(spec, table.game), source=spec)
    return bots


def _agent(slot: Any, game: Any, seed: int, factory: AgentFactory = make_agent) -> Agent:
    """A slot's agent in a worker: a bot from received bytes, or what `factory` builds of a spec string."""
    if isinstance(slot, BotFile):
        return slot.load(game, seed)
    return factory(slot, game, seed)


def play_block(game: str, rules: dict[str, Any], slots: Sequence[Any], kind: int, first: int, stop: int,
               seed: int, block: int = 0, before_block: BeforeBlock | None = None,
               agent_factory: AgentFactory = make_agent) -> list[EpisodeRecord]:
    """The records of deals first..stop-1 (a Ray task); `slots` holds specs, BotFiles or refs to them, and
    `agent_factory` (sent to the worker, so picklable) builds the agents of the specs."""
    if before_block is not None:
        before_block(block)
    if not all(isinstance(slot, (str, BotFile)) for slot in slots):  # refs of bots: fetched in the worker
        ray = import_ray()
        slots = [ray.get(slot) if isinstance(slot, ray.ObjectRef) else slot for slot in slots]
    return play_deals(game, rules, slots, kind, range(first, stop), seed,
                      agent_factory=functools.partial(_agent, factory=agent_factory))


@old_form(each_table)
def evaluate_many(requests: Sequence[EvalRequest], *, progress: bool = False,
                  workers: int | None = None, address: str | None = None,
                  before_block: BeforeBlock | None = None) -> list[EvalResult]:
    """`evaluate` each request, all their blocks on Ray: equal to ``[evaluate(r) for r in requests]``.

    See `ray_session` for `workers` and `address`. A bot slot is loaded from its bytes, the other specs
    built by the request's `agent_factory` in the workers. The old form ``evaluate_many(game, tables,
    hands, ...)`` still works for one version, with a deprecation warning.
    """
    plans = [r.table for r in requests]
    bots = _read_bots(plans)
    with ray_session(workers, address) as parallel:
        ray = import_ray()
        blocks = _blocks(plans, parallel)
        remote = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(play_block)
        refs = {spec: ray.put(bot) for spec, bot in bots.items()}  # each bot's bytes sent once
        shipped = [ray.put([refs.get(spec, spec) for spec in plan.slots]) for plan in plans]

        def submit(index: int) -> Any:
            b = blocks[index]
            r = requests[b.table]
            return remote.remote(r.game, plans[b.table].rules, shipped[b.table], b.kind, b.deals.start,
                                 b.deals.stop, r.seed, index, before_block, r.agent_factory)

        total = sum(len(b.deals) * len(plans[b.table].slots) for b in blocks)
        games = sorted({r.game for r in requests})
        done = _run(ray, len(blocks), submit, parallel, progress, total, f"{'/'.join(games)} eval")
    records: dict[tuple[int, int], list[EpisodeRecord]] = {}
    for b, part in zip(blocks, done, strict=True):
        records.setdefault((b.table, b.kind), []).extend(part)
    return [EvalResult(game=r.game, rules=plan.full_rules, num_players=len(plan.slots), seed=r.seed,
                       slots=plan.slots, hand_records=records.get((i, HAND), []),
                       match_records=records.get((i, MATCH), []), hands_asked=r.hands,
                       matches_asked=r.matches)
            for i, (r, plan) in enumerate(zip(requests, plans, strict=True))]


def _run(ray: Any, count: int, submit: Callable[[int], Any], parallel: int, progress: bool, total: int,
         desc: str) -> list[list[EpisodeRecord]]:
    """Run tasks 0..count-1, `parallel` at a time; their results by task number.

    A task's own error (a refused bot, ...) is raised as it is, after the pending tasks are cancelled.
    """
    results: list[list[EpisodeRecord] | None] = [None] * count
    pending: dict[Any, int] = {}
    upcoming = iter(range(count))

    def top_up() -> None:
        while len(pending) < parallel:
            index = next(upcoming, None)
            if index is None:
                return
            pending[submit(index)] = index

    bar = tqdm(total=total, disable=not progress, desc=f"{desc} on Ray", unit="episode", file=sys.stderr)
    with bar:
        top_up()
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            index = pending.pop(ready[0])
            try:
                results[index] = part = ray.get(ready[0])
            except ray.exceptions.RayError as err:
                for ref in pending:
                    ray.cancel(ref)
                raise task_error(err) from None
            bar.update(len(part))
            top_up()
    return [part for part in results if part is not None]


@old_form(one_request)
def evaluate_parallel(request: EvalRequest, *, progress: bool = False,
                      workers: int | None = None, address: str | None = None,
                      before_block: BeforeBlock | None = None) -> EvalResult:
    """`evaluate` on Ray workers: the same request and the same result (the old form still works for one
    version, with a deprecation warning)."""
    return evaluate_many([request], progress=progress, workers=workers, address=address,
                         before_block=before_block)[0]


@old_form(one_request, TOURNAMENT_ORDER[:-1])
def tournament_parallel(request: EvalRequest, *, progress: bool = False, workers: int | None = None,
                        address: str | None = None) -> TournamentResult:
    """`tournament` with every pairing's blocks on Ray at once: the same request, the same result (the old
    form still works for one version, with a deprecation warning)."""

    def evaluate_tables(requests: list[EvalRequest], progress: bool) -> list[EvalResult]:
        return evaluate_many(requests, progress=progress, workers=workers, address=address)

    return tournament(request, progress=progress, evaluate_tables=evaluate_tables)


@contextlib.contextmanager
def deal_player(contest: Contest, *, workers: int | None = None,
                address: str | None = None) -> Iterator[PlayDeals]:
    """A `PlayDeals` for `compare_agents` on Ray: each call's deals split into one block per worker.

    Ray starts (or is joined) once for the whole comparison, and each bot's
    bytes go through the object store once; the records are `contest.play`'s.
    """
    plan = EvalRequest(contest.game, contest.slots, hands=contest.num_players, rules=contest.rules).table
    bots = _read_bots([plan])
    with ray_session(workers, address) as parallel:
        ray = import_ray()
        remote = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(play_block)
        refs = {spec: ray.put(bot) for spec, bot in bots.items()}
        shipped = ray.put([refs.get(spec, spec) for spec in plan.slots])

        def play(deals: range) -> list[EpisodeRecord]:
            size = max(1, math.ceil(len(deals) / parallel))
            starts = range(deals.start, deals.stop, size)
            blocks = [range(first, min(first + size, deals.stop)) for first in starts]

            def submit(index: int) -> Any:
                block = blocks[index]
                return remote.remote(contest.game, plan.rules, shipped, HAND, block.start, block.stop,
                                     contest.seed, index)

            done = _run(ray, len(blocks), submit, parallel, False, 0, f"{contest.game} compare")
            return [record for part in done for record in part]

        yield play
