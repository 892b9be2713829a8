"""Switch, as a PettingZoo AEC environment.

```python
from cardlab.envs import switch_v0
env = switch_v0.env(num_players=4)
```

Switch is a shedding game of the Crazy-Eights family for 4 or more players with
four decks and their jokers: 2s and Jokers stack draw penalties, a King
reverses, an 8 skips, a Jack changes the suit; the match runs to 500 points and
the lowest total wins. The rules, by id (A1..A12, C1, C2), are in
`docs/RULES.md` and in `cardlab.envs.switch.rules`.

| | |
|---|---|
| agents | `player_0` ... `player_{n-1}` in seat (play) order, n = `num_players` (2..10, default 4) |
| action space | `Discrete(71)` |
| observation space | `Dict(observation=Box(float32, 167 + 2n), action_mask=Box(int8, 71))` |

## Actions

| ids | action | text |
|---|---|---|
| 0..48 | play one card that is not a Jack (48 suited cards, then the Joker at 48) | `play 9S`, `play JOKER` |
| 49..64 | play the Jack of suit j (S H D C) and declare suit s: 49 + 4j + s | `play JS declare H` |
| 65 | draw one card, or draw the whole pending run (A6) | `draw` |
| 66 | end the turn after drawing a playable card (A8) | `pass` |
| 67..70 | the first player's suit after a Jack starter (A4) | `declare H` |

`env.unwrapped.action_to_str(a)` and `env.unwrapped.str_to_action(s)` convert
between ids and text; bad text raises a `ValueError` that says why.

## Observation

`observation` is a float32 vector from the point of view of the observing
agent; `action_mask` is int8, 1 exactly for the legal actions of the agent to
move (all zero for the others). Layout: see `cardlab.envs.switch.observer`
(`env.unwrapped.layout.table()` prints it; `layout.split(obs)` names the parts).

## Rewards

- `reward="win"` (default): zero-sum, the winner +1, each other player -1/(n-1)
  at the end of the hand (in match mode: at the end of the match, tied winners share).
- `reward="points"`: each player gets -(points scored)/100 when a hand ends, so
  the winner gets 0.
- A truncated hand (C1, `max_turns`) gives 0 to all and sets `truncations`.

## Options

Rule options (A1..A12): `num_players=4`, `num_decks=4`, `extra_jokers=0`,
`extra_twos=0`, `hand_size=7`, `match_rank=True`, `play_after_draw=True`,
`voluntary_draw=False`, `target_score=500`, `max_turns=3000` (C1).
Env options: `render_mode` (None, "ansi", "human"), `episode` ("hand" or
"match"), `reward` ("win" or "points"), `illegal_action` ("raise": a
`ValueError` naming the action and the legal ones; "penalize": the offender
gets -1 and the episode ends, PettingZoo's TerminateIllegalWrapper convention).

## Infos

At the end of a hand every agent's info holds `winner` (seat, or None when
truncated), `truncated`, `hand_points`, `score_changes`, `scores` (totals),
`match_over` (and `match_winners` when it is), plus `hand_number`.

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
`streaks`, `dealer`, `hands_played`, `rng` (the generator's state);
`env.reset(options={"state": d})` restores it exactly.

## Version history

- v0: first release.
"""

from __future__ import annotations

from typing import Any

from cardlab.envs.base import CardGameEnv, make_env_factory
from cardlab.envs import cards as C
from cardlab.envs.switch import rules as R
from cardlab.envs.switch.observer import SwitchObserver


class raw_env(CardGameEnv):
    """Switch without wrappers; see the module doc."""

    metadata = {"render_modes": ["ansi", "human"], "name": "switch_v0", "is_parallelizable": False}
    GAME = "switch"
    NUM_ACTIONS = R.NUM_ACTIONS
    Rules = R.SwitchRules
    State = R.SwitchState
    Observer = SwitchObserver
    _action_to_str = staticmethod(R.action_to_str)
    _str_to_action = staticmethod(R.str_to_action)

    def _status(self) -> dict[str, Any]:
        s = self.state
        suit = "free (any card)" if s.current_suit is None else C.SUIT_NAMES[s.current_suit]
        return {
            "top card": C.card_str(s.top),
            "suit": suit,
            "pending draw": s.pending,
            "direction": "seat+1" if s.direction > 0 else "seat-1 (reversed)",
            "stock": f"{len(s.stock)} cards",
        }


env = make_env_factory(raw_env)
