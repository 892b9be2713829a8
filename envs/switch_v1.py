"""Switch, as a PettingZoo AEC environment.

```python
from cardlab.envs import switch_v1
env = switch_v1.env(num_players=4)
```

Switch is a shedding game of the Crazy-Eights family for 4 or more players with
four decks and their jokers: 2s and Jokers stack draw penalties, a King
reverses, an 8 skips, a Jack changes the suit; the match runs to 500 points and
the lowest total wins. The rules, by id (A1..A12, C1, C2), are in
`docs/RULES.md` and in `cardlab.envs.switch.rules`.

| | |
|---|---|
| agents | `player_0` ... `player_{n-1}` in seat (play) order, n = `num_players` (2..10, default 4) |
| spaces | see the generated tables below |

Actions, observations and options: see the sections after the version history.

## Rewards

- `reward="win"` (default): zero-sum, the winner +1, each other player -1/(n-1)
  at the end of the hand (in match mode: at the end of the match, tied winners share).
- `reward="points"`: each player gets -(points scored)/100 when a hand ends, so
  the winner gets 0.
- A truncated hand (C1, `max_turns`) gives 0 to all and sets `truncations`.

## Deals and saved states

`env.reset(seed=s, options={"deal": {"hands": [[...], ...], "stock": [...],
"starter": "7H", "dealer": 3, "scores": [...]}})` starts from a stacked deal
(stock listed top card first; the starter's A4 effects apply; `dealer` defaults
to the last seat so that seat 0 plays first). `env.unwrapped.state_dict()` gives
the full state as JSON-ready data, keys: `game`, `rules`, `hands`, `stock` (top
first), `discard` (bottom first), `current_player`, `direction`,
`current_suit` (None while free), `pending_draw`, `phase` ("play",
"after_draw", "declare"), `drawn_card`, `first_out` (A9), `turn`, `hand_over`,
`truncated`, `winner`, `hand_points`, `score_changes`, `match_over`, `scores`,
`streaks`, `dealer`, `hands_played`, `rng` (the generator's state),
`left_out` (the cards a stacked deal left out of play), `drew_on` (the memory
of the hand: per seat a suit mask, bit s for suit s of S H D C, set when the
seat drew of its own accord on suit s and has laid no card of it since; shown in
the observation with the `memory` option; 0s when absent), `record` (the hand's
public record, below; a state without it restores with an empty one marked
incomplete);
`env.reset(options={"state": d})` restores it exactly, after checking every
field: a bad one is refused with a `ValueError` that names it and what is
accepted, and the env is left as it was. A state saved after the hand (or
match) ended restores ended.

`env.unwrapped.public_record(agent)` is what the table saw of the hand since
the deal, seats numbered from the agent's own: cards dealt per seat, the
starter, lays (a Jack with its declared suit), the A4 suit call, draws (how
many; a run drawn, A6, marked as a penalty; whether the drawn card could be
laid at once, A8), passes and stock refills (A10), never a drawn card
(`cardlab.envs.record`). The observation and the action mask do not change.

## Version history

- v1 (cardlab 0.3.0): the same game as v0 under its new name, with the rule
  decision of RULES.md "Decisions added later" for A9 (the last player
  holding cards may not add to the run: they draw it); in match mode the
  infos of a new hand no longer show the last hand's winner, its result is
  under `last_hand`; `state()` and `state_space`; finished saved states
  restore finished; the option `memory` (default false) adds the observation
  field `drew_on`, and saved states carry `drew_on`. `switch_v0` still imports and gives
  this env, with a `DeprecationWarning`.
- v0 (cardlab 0.1): first release.
"""

from __future__ import annotations

from cardlab.envs.aec import CardGameEnv, doc_page_tail, make_env_factory
from cardlab.envs.switch.spec import SPEC


class raw_env(CardGameEnv):
    """Switch without wrappers; see the module doc."""

    SPEC = SPEC


env = make_env_factory(raw_env)
__doc__ = (__doc__ or "") + doc_page_tail(SPEC)
