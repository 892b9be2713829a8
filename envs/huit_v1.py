"""Huit américain, as a PettingZoo AEC environment.

```python
from cardlab.envs import huit_v1
env = huit_v1.env(num_players=4)
```

Huit américain is the 32-card game of the Crazy-Eights family: an 8 goes on
anything and announces a suit, an Ace makes the next player draw 2 unless they
answer with an Ace or an 8, a Queen skips, and several cards of one rank can be
laid at once; the match runs to 151 points and the lowest total wins. The
rules, by id (B1..B13, C1, C2), are in `docs/RULES.md` and in
`cardlab.envs.huit.rules`.

| | |
|---|---|
| agents | `player_0` ... `player_{n-1}` in seat (play) order, n = `num_players` (2..6, default 4) |
| spaces | see the generated tables below |

Actions, observations and options: see the sections after the version history.

## Rewards

- `reward="win"` (default): zero-sum, the winner +1, each other player -1/(n-1)
  at the end of the hand (in match mode: at the end of the match, tied winners share).
- `reward="points"`: each player gets -(change of their total)/100 when a hand
  ends (points scored, less the B12 bonus), so the winner gets 0 (or +0.1 with a bonus).
- A truncated hand (C1, `max_turns`) gives 0 to all and sets `truncations`.

## Deals and saved states

`env.reset(seed=s, options={"deal": {"hands": [[...], ...], "bank": [...],
"dealer": 3, "scores": [...]}})` starts from a stacked deal (bank listed top
card first). `env.unwrapped.state_dict()` keys: `game`, `rules`, `hands`,
`bank` (top first), `table` (bottom first), `current_player`, `current_suit`,
`announced`, `ace_penalty`, `phase` ("play", "after_draw"), `turn`,
`hand_over`, `truncated`, `winner`, `hand_points`, `score_changes`,
`match_over`, `scores`, `streaks`, `dealer`, `hands_played`, `rng`, `left_out`
(the cards a stacked deal left out of play), `drew_on` (per seat the suits it
drew on and has not laid since, the memory the option `memory` observes; a
state without it has none), `record` (the hand's public record, below; a state
without it restores with an empty one marked incomplete); `env.reset(options={"state": d})`
restores it exactly, after checking every field: a bad one is refused with a
`ValueError` that names it and what is accepted, and the env is left as it
was. A state saved after the hand (or match) ended restores ended.

`env.unwrapped.public_record(agent)` is what the table saw of the hand since
the deal, seats numbered from the agent's own: cards dealt per seat, lays
(groups in the order laid, 8s with their announced suit), draws (how many; a
B7 penalty marked), passes and banks turned over (B10), never a drawn card
(`cardlab.envs.record`). The observation and the action mask do not change.

## Version history

- v1 (cardlab 0.3.0): the same game as v0 under its new name, with the rule
  decisions of RULES.md "Decisions added later": B8 (Queens never skip the
  player who laid them), stacked deals with an empty hand are refused, B5's
  order of a group under the top card; in match mode the infos of a new hand
  no longer show the last hand's winner, its result is under `last_hand`;
  `state()` and `state_space`; finished saved states restore finished;
  the option `memory` (default false) adds the observation field `drew_on`,
  and saved states carry `drew_on`. `huit_v0` still
  imports and gives this env, with a `DeprecationWarning`.
- v0 (cardlab 0.1): first release.
"""

from __future__ import annotations

from cardlab.envs.aec import CardGameEnv, doc_page_tail, make_env_factory
from cardlab.envs.huit.spec import SPEC


class raw_env(CardGameEnv):
    """Huit américain without wrappers; see the module doc."""

    SPEC = SPEC


env = make_env_factory(raw_env)
__doc__ = (__doc__ or "") + doc_page_tail(SPEC)
