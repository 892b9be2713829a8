"""Evaluation: seeded hands (and matches) between agents, with seats rotated.

`evaluate(game, specs, hands)` fills the table's seats with *slots*: slot i
plays ``specs[i]``; with fewer specs than seats (``num_players`` in the rule
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

import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

from tqdm import tqdm

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import Agent
from cardlab.envs import make_env, make_game
from cardlab.envs.checked_json import excerpt
from cardlab.evaluation.batched import play_hands_batched
from cardlab.evaluation.episodes import (
    AGENT,
    HAND,
    MATCH,
    check_seed,
    derive_seed,
    players_for,
    run_episode,
    seat_slots,
    table_rules,
)
from cardlab.evaluation.results import EpisodeRecord, EvalResult

AgentFactory = Callable[[Any, Any, int], Agent]
"""(slot spec, game, seed) -> the slot's agent: `make_agent`, or one that sets the agent up further"""


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


def _play_rotations(
    game: str, rules: dict[str, Any], slots: list[str], kind: int, count: int, seed: int,
    tick: Callable[[int], None], batched: bool = False, agent_factory: AgentFactory = make_agent,
) -> list[EpisodeRecord]:
    """`count` episodes (rounded up to whole rotations) of one kind, hands or matches; `tick(episodes)`
    after each deal."""
    deals = range(math.ceil(count / len(slots)))
    if batched and kind == HAND:
        return play_hands_batched(game, rules, slots, deals, seed, agent_factory, on_deal=tick)
    return play_deals(game, rules, slots, kind, deals, seed, agent_factory, on_deal=tick)


def evaluate(
    game: str,
    agent_specs: list[str],
    hands: int,
    seed: int = 0,
    rule_options: dict[str, Any] | None = None,
    matches: int = 0,
    progress: bool = False,
    desc: str | None = None,
    batched: bool = False,
    on_played: Callable[[int, int], None] | None = None,
    agent_factory: AgentFactory = make_agent,
) -> EvalResult:
    """Play `hands` seeded hands (and `matches` matches) with seats rotated; see the module doc.

    `progress` draws a bar on stderr (`desc`: its label); `on_played(episodes played, of total)` is
    called after each deal (a log's progress line, where no bar is drawn). `batched` plays the
    hands many at once in the game's batched engine, each slot's agent asked
    once per move of the batch (`cardlab.evaluation.batched`: the same deals
    and rotations, the agents' random draws differ); matches are played one
    at a time either way. `agent_factory(slot_spec, game, seed)` builds each
    slot's agent (`make_agent`; a factory that sets up an agent further, as the
    search responder of `cardlab.training.best_response.exploit_search` does).
    """
    seed = check_seed(seed)
    for name, value in (("hands", hands), ("matches", matches)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be a whole number >= 0, got {excerpt(value)}")
    if hands == 0 and matches == 0:
        raise ValueError("nothing to play: give hands > 0 or matches > 0")
    rules = dict(rule_options or {})
    rules["num_players"] = players_for(game, rules, agent_specs)
    full_rules = table_rules(game, rules)
    n = full_rules["num_players"]
    slots = seat_slots(agent_specs, n, make_game(game, full_rules))
    total = n * (math.ceil(hands / n) + math.ceil(matches / n))
    with tqdm(total=total, disable=not progress, desc=desc or f"{game} eval", unit="episode",
              file=sys.stderr) as bar:
        done = 0  # counted here: a disabled bar (no terminal) counts nothing

        def tick(episodes: int) -> None:
            nonlocal done
            done += episodes
            bar.update(episodes)
            if on_played is not None:
                on_played(done, total)

        hand_records = _play_rotations(game, rules, slots, HAND, hands, seed, tick, batched, agent_factory)
        match_records = _play_rotations(game, rules, slots, MATCH, matches, seed, tick,
                                        agent_factory=agent_factory)
    return EvalResult(
        game=game, rules=full_rules, num_players=n, seed=seed, slots=slots,
        hand_records=hand_records, match_records=match_records, hands_asked=hands, matches_asked=matches,
    )
