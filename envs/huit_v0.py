"""Huit américain, as a PettingZoo AEC environment.

```python
from cardlab.envs import huit_v0
env = huit_v0.env(num_players=4)
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
| action space | `Discrete(354)` |
| observation space | `Dict(observation=Box(float32, 103 + 3n), action_mask=Box(int8, 354))` |

## Actions

A *group* is a set of cards of one rank (a 4-bit suit mask, S H D C) and the
suit of the card laid last, which becomes the top; each rank has 32 groups,
numbered in the order of `rules.GROUPS` (mask 1..15, then top suit).

| ids | action | text |
|---|---|---|
| 0..223 | lay group g of rank r (7 9 10 J Q K A): 32r + g | `play 9S 9H` (9H on top) |
| 224..351 | lay group g of 8s and announce suit s: 224 + 4g + s | `play 8C 8D declare S` |
| 352 | draw one card (two when facing a fresh Ace, B7) | `draw` |
| 353 | end the turn after drawing (B9) | `pass` |

The order of the cards below the top does not matter to `str_to_action`; bad
text raises a `ValueError` that says why.

## Observation

`observation` is a float32 vector from the point of view of the observing
agent; `action_mask` is int8, 1 exactly for the legal actions of the agent to
move. Layout: see `cardlab.envs.huit.observer` (`env.unwrapped.layout.table()`).

## Rewards

- `reward="win"` (default): zero-sum, the winner +1, each other player -1/(n-1)
  at the end of the hand (in match mode: at the end of the match, tied winners share).
- `reward="points"`: each player gets -(change of their total)/100 when a hand
  ends (points scored, less the B12 bonus), so the winner gets 0 (or +0.1 with a bonus).
- A truncated hand (C1, `max_turns`) gives 0 to all and sets `truncations`.

## Options

Rule options (B1..B13): `num_players=4`, `hand_size=5` (or "all"),
`queen_skips_each=True`, `shuffle_on_refill=False`, `target_score=151`,
`streak_length=3`, `streak_bonus=10`, `max_turns=1000` (C1).
Env options: `render_mode`, `episode`, `reward`, `illegal_action`, as in `switch_v0`.

## Infos

As in `switch_v0`: at the end of a hand, `winner`, `truncated`, `hand_points`,
`score_changes`, `scores`, `match_over` (`match_winners`), `hand_number`.

## Deals and saved states

`env.reset(seed=s, options={"deal": {"hands": [[...], ...], "bank": [...],
"dealer": 3, "scores": [...]}})` starts from a stacked deal (bank listed top
card first). `env.unwrapped.state_dict()` keys: `game`, `rules`, `hands`,
`bank` (top first), `table` (bottom first), `current_player`, `current_suit`,
`announced`, `ace_penalty`, `phase` ("play", "after_draw"), `turn`,
`hand_over`, `truncated`, `winner`, `hand_points`, `score_changes`,
`match_over`, `scores`, `streaks`, `dealer`, `hands_played`, `rng`;
`env.reset(options={"state": d})` restores it exactly.

## Version history

- v0: first release.
"""

from __future__ import annotations

from typing import Any

from cardlab.envs import cards as C
from cardlab.envs.base import CardGameEnv, make_env_factory
from cardlab.envs.huit import rules as R
from cardlab.envs.huit.observer import HuitObserver


class raw_env(CardGameEnv):
    """Huit américain without wrappers; see the module doc."""

    metadata = {"render_modes": ["ansi", "human"], "name": "huit_v0", "is_parallelizable": False}
    GAME = "huit"
    NUM_ACTIONS = R.NUM_ACTIONS
    Rules = R.HuitRules
    State = R.HuitState
    Observer = HuitObserver
    _action_to_str = staticmethod(R.action_to_str)
    _str_to_action = staticmethod(R.str_to_action)

    def _status(self) -> dict[str, Any]:
        s = self.state
        if s.current_suit is None:
            suit = "none yet (empty table: any single card, or 8s)"
        else:
            suit = C.SUIT_NAMES[s.current_suit] + (" (announced)" if s.announced else "")
        return {
            "top card": "(empty table)" if s.top is None else C.card_str(s.top),
            "suit": suit,
            "pending draw": "2 (fresh Ace)" if s.ace_penalty else 0,
            "direction": "seat+1 (never changes)",
            "bank": f"{len(s.bank)} cards",
        }


env = make_env_factory(raw_env)
