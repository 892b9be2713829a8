"""A loaded replay of a finished hand (`REPLAY_FORMAT`, written by `Table.replay`), played again step by step.

Loading one plays the moves again through the env, so a damaged or forged
file is refused with the move that fails. A replay is read by one request at
a time (its lock): a step moves its one env.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from cardlab.envs.checked_json import excerpt
from cardlab.envs.game_spec import get_spec
from cardlab.serve.table import MAX_LABEL, REPLAY_FORMAT, REPLAY_KEYS, REPLAY_VERSION, Advisors, Hand, Player

MAX_HANDS = 10**9
"""the largest hand number a replay may carry"""


class Replay:
    """A loaded replay: the hand played again move by move, seen from the replay's seat."""

    def __init__(self, data: Any) -> None:
        if not isinstance(data, Mapping) or data.get("format") != REPLAY_FORMAT:
            raise ValueError(f"not a replay: a replay is a JSON object with \"format\": \"{REPLAY_FORMAT}\"")
        if data.get("version") != REPLAY_VERSION:
            raise ValueError(f"replay version {excerpt(data.get('version'))}: "
                             f"this cardlab reads version {REPLAY_VERSION}")
        missing = [k for k in REPLAY_KEYS if k not in data]
        if missing:
            raise ValueError(f"the replay lacks {', '.join(missing)}")
        spec = get_spec(data["game"])
        rules = data["rules"]
        if not isinstance(rules, Mapping):
            raise ValueError("the replay's 'rules' must be an object of rule options")
        self.game = spec.make(rules)
        n = self.game.num_players
        seat, labels = data["seat"], data["players"]
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < n:
            raise ValueError(f"the replay's 'seat' must be a seat 0..{n - 1}")
        if not isinstance(labels, list) or len(labels) != n or not all(
            isinstance(x, str) and len(x) <= MAX_LABEL for x in labels
        ):
            raise ValueError(f"the replay's 'players' must be {n} names of at most {MAX_LABEL} characters")
        self.seat, self.players = seat, [Player(x) for x in labels]
        if not isinstance(data["start"], Mapping):
            raise ValueError("the replay's 'start' must be a saved state (state_dict() data)")
        self.hand = Hand(self.game, data["start"])
        self.hand_number = self._hand_number(data.get("hand_number"))
        self.actions = self._read_moves(data["moves"])
        self._goto(len(self.actions))
        if self.hand.result() != data["result"]:
            raise ValueError("the replay's 'result' is not what its moves give: the file was changed")
        self.advisors = Advisors(self.game)
        self.lock = threading.Lock()
        """held while a step is shown: a step moves the replay's one env"""

    def searches(self) -> int:
        """How many of its advisors are searches (each holds a rollout engine)."""
        return self.advisors.searches()

    def _hand_number(self, number: Any) -> int:
        """The hand's number at its table (saved since a game's hand 3 in hand play starts like hand 1)."""
        if number is None:  # a file from before the field: count the hands of the match
            return int(self.hand.env.game_state.match.hands_played) + 1
        if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= MAX_HANDS:
            raise ValueError(f"the replay's 'hand_number' must be a whole number 1..{MAX_HANDS}")
        return number

    def _read_moves(self, moves: Any) -> list[int]:
        """Check every move (seat, text, legality) by playing it; returns the action ids."""
        if not isinstance(moves, list):
            raise ValueError("the replay's 'moves' must be a list of {\"seat\": s, \"move\": text}")
        actions = []
        for i, entry in enumerate(moves, 1):
            if not isinstance(entry, Mapping) or not isinstance(entry.get("move"), str):
                raise ValueError(f"move {i} of the replay must be {{\"seat\": s, \"move\": text}}")
            if entry.get("seat") != self.hand.to_move:
                raise ValueError(f"move {i} of the replay is by seat {excerpt(entry.get('seat'))}, but "
                                 f"{'nobody' if self.hand.over else f'seat {self.hand.to_move}'} is to move")
            try:
                action = self.game.str_to_action(entry["move"])
                self.hand.apply(action)
            except ValueError as err:
                raise ValueError(f"move {i} of the replay ({excerpt(entry['move'])}): {err}") from None
            actions.append(action)
        if not self.hand.over:
            raise ValueError("the replay ends before the hand does: only finished hands are replays")
        return actions

    def _goto(self, step: int) -> None:
        if step < len(self.hand.moves):
            self.hand = Hand(self.game, self.hand.start)
        while len(self.hand.moves) < step:
            self.hand.apply(self.actions[len(self.hand.moves)])

    @property
    def steps(self) -> int:
        return len(self.actions)

    def frame(self, step: int, advisor: str | None = None, top: int = 3, name: str | None = None
              ) -> dict[str, Any]:
        """The seat's view after `step` moves (0: the deal), with advice when the seat is to move.

        `advisor` is a spec; a failure of it names it as `name` (else the spec).
        """
        if not 0 <= step <= self.steps:
            raise LookupError(f"step {step} is not in this replay: steps are 0..{self.steps}")
        with self.lock:
            return self._frame(step, advisor, top, name)

    def _frame(self, step: int, advisor: str | None, top: int, name: str | None) -> dict[str, Any]:
        self._goto(step)
        view = self.hand.view(self.seat, self.players)
        view["hand_number"] = self.hand_number
        view["step"], view["steps"] = step, self.steps
        view["next_move"] = None
        if step < self.steps:
            move = self.game.action_to_str(self.actions[step])
            view["next_move"] = {"seat": self.hand.to_move, "move": move}
        if advisor is not None and self.hand.to_move == self.seat:
            advice = self.hand.advice(self.seat, self.advisors.get(advisor), top, name or advisor)
            view["advice"] = [a._asdict() for a in advice]
        return view
