"""Evaluation: seeded hands (and matches) between agents, with seats rotated.

`evaluate(EvalRequest(game, specs, hands=...))` fills the table's seats with
*slots*: slot i plays ``specs[i]``; with fewer specs than seats (``num_players`` in the rule
options) the specs repeat in order to fill them; without ``num_players`` each
spec gets a seat (`players_for` checks the count against the game's range).
Each deal is played once in every rotation: in rotation r slot i sits in seat
(i + r) mod n, so every slot holds every seat equally often, on the same cards
(duplicate style, which also cancels much of the luck of the deal). `hands`
(and `matches`) are rounded up to a multiple of n for that, and the report
says so.

Reported: only what was played (no hand columns for ``hands=0``, no match
columns without matches). Each episode reseeds every agent from (seed, deal,
rotation, slot), so results depend on the seed only, not on the order of play.

Per slot: hands, hand wins and win rate with two 95% intervals, the one
clustered by deal (`cardlab.evaluation.paired`: a deal's rotations are one
unit, which is what the duplicate deals earn) and Wilson's (every hand independent),
mean points per non-truncated hand (fewer is better), truncated hands (C1,
counted as non-wins); with ``matches`` > 0 also matches played to the target
score (episode="match") and the match win rate, tied winners sharing a win.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from tqdm import tqdm

from cardlab.agents.agent_spec import make_agent
from cardlab.envs import make_env
from cardlab.evaluation.batched_deals import play_hands_batched
from cardlab.evaluation.episodes import (
    AGENT,
    HAND,
    MATCH,
    derive_seed,
    run_episode,
)
from cardlab.evaluation.request import AgentFactory, EvalRequest, old_form, one_request
from cardlab.evaluation.results import EpisodeRecord, EvalResult


def play_deals(
    game: str,
    rules: dict[str, Any],
    slots: Sequence[Any],
    kind: int,
    deals: range,
    seed: int,
    agent_factory: AgentFactory = make_agent,
    on_deal: Callable[[int], object] | None = None,
) -> list[EpisodeRecord]:
    """Every seat rotation of each deal in `deals` (hands or matches, per `kind`): the unit of work.

    `evaluate` plays all deals here; Ray workers (`cardlab.cluster`) play blocks
    of them and the records are merged in deal order. A record depends only on
    (seed, kind, deal, rotation, slot), so both give the same records.
    `agent_factory(slot_spec, game, seed)` builds each slot's agent (Ray
    workers build bots from received bytes); `on_deal(episodes)` follows each deal.
    """
    env = make_env(game, **rules, episode="match" if kind == MATCH else "hand")
    agents = [
        agent_factory(spec, env.game, derive_seed(seed, AGENT, slot)) for slot, spec in enumerate(slots)
    ]
    n = len(agents)
    records = []
    for deal in deals:
        deal_seed = derive_seed(seed, kind, deal)
        for rotation in range(n):
            seats = tuple((slot + rotation) % n for slot in range(n))
            seat_agents = [agents[(seat - rotation) % n] for seat in range(n)]
            for slot, agent in enumerate(agents):
                agent.seed(derive_seed(seed, AGENT, kind, deal, rotation, slot))
            names = [f"{slots[slot]} (slot {slot}, seat {seat}, deal {deal})"
                     for seat, slot in ((seat, (seat - rotation) % n) for seat in range(n))]
            info = run_episode(env, seat_agents, deal_seed, names=names)
            truncated = bool(info.get("truncated"))
            if kind == MATCH:
                winner_seats, seat_points = ([] if truncated else info["match_winners"]), info["scores"]
            else:
                winner_seats, seat_points = ([] if truncated else [info["winner"]]), info["hand_points"]
            records.append(EpisodeRecord(
                deal=deal, rotation=rotation, seats=seats,
                winners=tuple(slot for slot in range(n) if seats[slot] in winner_seats),
                points=tuple(int(seat_points[seats[slot]]) for slot in range(n)),
                truncated=truncated,
            ))
        if on_deal is not None:
            on_deal(n)
    return records


def _play_rotations(request: EvalRequest, kind: int, tick: Callable[[int], None], batched: bool = False
                    ) -> list[EpisodeRecord]:
    """The request's deals of one kind, hands or matches, every rotation; `tick(episodes)` after each deal."""
    table = request.table
    deals = range(table.deals[kind])
    if batched and kind == HAND:
        return play_hands_batched(request.game, table.rules, table.slots, deals, request.seed,
                                  request.agent_factory, on_deal=tick)
    return play_deals(request.game, table.rules, table.slots, kind, deals, request.seed,
                      request.agent_factory, on_deal=tick)


@old_form(one_request)
def evaluate(request: EvalRequest, *, progress: bool = False, desc: str | None = None,
             batched: bool = False, on_played: Callable[[int, int], None] | None = None) -> EvalResult:
    """Play the request's seeded hands (and matches) with seats rotated; see the module doc.

    `progress` draws a bar on stderr (`desc`: its label); `on_played(episodes played, of total)` is
    called after each deal (a log's progress line, where no bar is drawn). `batched` plays the
    hands many at once in the game's batched engine, each slot's agent asked
    once per move of the batch (`cardlab.evaluation.batched_deals`: the same deals
    and rotations, the agents' random draws differ); matches are played one
    at a time either way. ``evaluate(game, specs, hands, ...)``, the old form, still works for one
    version, with a deprecation warning.
    """
    table = request.table
    n = table.num_players
    total = n * sum(table.deals.values())
    with tqdm(total=total, disable=not progress, desc=desc or f"{request.game} eval", unit="episode",
              file=sys.stderr) as bar:
        done = 0  # counted here: a disabled bar (no terminal) counts nothing

        def tick(episodes: int) -> None:
            nonlocal done
            done += episodes
            bar.update(episodes)
            if on_played is not None:
                on_played(done, total)

        hand_records = _play_rotations(request, HAND, tick, batched)
        match_records = _play_rotations(request, MATCH, tick)
    return EvalResult(
        game=request.game, rules=table.full_rules, num_players=n, seed=request.seed, slots=table.slots,
        hand_records=hand_records, match_records=match_records, hands_asked=request.hands,
        matches_asked=request.matches,
    )
