"""Play against agents in the terminal (`cardlab play`).

`play(game, opponents)` seats a person (seat 0 by default) against agent
specs and plays `hands` hands of one match (totals carry over, the dealer
moves on), one hand by default. On the person's turn it shows the table
(`table_text` of their seat: the top card, the suit, every hand size, their
own cards) and the legal moves, numbered; the person types a number or the
move's text (any case; the cards of a group in any order: when only one
order is legal, that one is played). Bad input is explained and asked again. Every opponent move is shown
as text, with what it did to someone beyond the move itself (a Queen or an 8
that skipped a player, an Ace or a draw run that made them draw: the game's
`GameSpec.move_notes`), the cards the person drew, and each hand's result at
its end. End of input quits cleanly.
"""

from __future__ import annotations

import copy
import os
import pathlib
import sys
from collections.abc import Callable
from typing import Any, TextIO

import numpy as np

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import Agent
from cardlab.agents.failure import StopPlay
from cardlab.envs import cards as C
from cardlab.envs import make_env
from cardlab.envs.checked_json import excerpt
from cardlab.envs.game_spec import Game
from cardlab.envs.rng import check_seed
from cardlab.evaluation.episodes import (
    AGENT,
    derive_seed,
    players_for,
    run_episode,
    seat_slots,
    table_rules,
)


class EndOfInput(StopPlay):
    """The person's input ended (Ctrl-D, or the end of a piped file): play stops, no agent failed."""


class OutputClosed(StopPlay):
    """The output was closed (``cardlab play ... | head``): play stops quietly, no agent failed."""


def numbers(count: int) -> str:
    """The move numbers a person may type, in words: "1 to 3", or "1 (the only legal move)"."""
    return "1 (the only legal move)" if count == 1 else f"1 to {count}"


def parse_move(text: str, legal: list[int], game: Game) -> int:
    """The action a person's line names: a 1-based number into `legal`, or an action's text."""
    text = text.strip()
    if not text:
        example = game.action_to_str(legal[0])
        raise ValueError(f"type a move number ({numbers(len(legal))}) or a move's text, e.g. {example!r}")
    try:
        number = int(text)
    except ValueError:
        number = None
    if number is not None:
        if not 1 <= number <= len(legal):
            raise ValueError(f"{number} is not a move number: choose {numbers(len(legal))}")
        return legal[number - 1]
    try:
        action = game.str_to_action(text)
    except ValueError as err:
        raise ValueError(f"cannot read that move: {err}") from None
    if action in legal:
        return action
    same = [a for a in legal if _cards_of(game, a) == _cards_of(game, action)]
    if len(same) == 1:  # the same group in the one order the rules allow (Huit: a matching card first)
        return same[0]
    typed = game.action_to_str(action)
    if same:
        orders = " or ".join(repr(game.action_to_str(a)) for a in same)
        raise ValueError(f"{typed!r} is not legal now: the first card must match the top card and the last "
                         f"one is left on top; these cards can be laid as {orders}")
    raise ValueError(f"{typed!r} is not legal now: choose one of the moves listed above")


def _cards_of(game: Game, action: int) -> list[str]:
    """The words of a move's text in sorted order: two orders of one group of cards give the same list."""
    return sorted(game.action_to_str(action).upper().split())


class HumanAgent(Agent):
    """A person at the terminal: reads each move from `input`, shows the table on `output`.

    `view()` gives the text of the table as this seat may see it (its own
    hand, the top card, hand sizes): all a person is shown.
    """

    name = "human"

    def __init__(self, game: Game, seat: int, view: Callable[[], str], input: TextIO, output: TextIO) -> None:
        super().__init__(game)
        self.seat, self.view, self.input, self.output = seat, view, input, output

    def say(self, text: str = "") -> None:
        self.write(text + "\n")

    def write(self, text: str) -> None:
        try:
            self.output.write(text)
            self.output.flush()
        except BrokenPipeError:
            raise OutputClosed from None

    def act(self, observation: dict[str, np.ndarray]) -> int:
        legal = [int(a) for a in np.flatnonzero(observation["action_mask"])]
        self.say(f"\n== your turn (player_{self.seat}) ==")
        self.say(self.view())
        self.say("legal moves:")
        for number, action in enumerate(legal, 1):
            self.say(f"  {number:>3}  {self.game.action_to_str(action)}")
        while True:
            self.write("your move> ")
            line = self.input.readline()
            if not line:
                raise EndOfInput
            try:
                return parse_move(line, legal, self.game)
            except ValueError as err:
                self.say(f"  ! {err}")


def play(
    game: str,
    opponents: list[str],
    seed: int = 0,
    rule_options: dict[str, Any] | None = None,
    input: TextIO | None = None,
    output: TextIO | None = None,
    hands: int = 1,
    seat: int = 0,
) -> int:
    """Play `hands` hands as `seat` against `opponents` (specs, repeated to fill the table); returns 0.

    The table has ``1 + len(opponents)`` players unless `rule_options` sets
    ``num_players``. `input` and `output` default to the current
    ``sys.stdin`` and ``sys.stdout``.
    """
    seed = check_seed(seed)
    if isinstance(hands, bool) or not isinstance(hands, int) or hands < 1:
        raise ValueError(f"hands must be a whole number >= 1, got {excerpt(hands)}")
    rules = dict(rule_options or {})
    rules["num_players"] = players_for(game, rules, opponents, noun="opponent", other_seats=1)
    env = make_env(game, **table_rules(game, rules), episode="match", render_mode="ansi")
    n = env.rules.num_players
    if not 0 <= seat < n:
        raise ValueError(f"seat {seat} is not at a {n}-player table: choose 0 to {n - 1}")
    specs = dict(zip([s for s in range(n) if s != seat], seat_slots(opponents, n - 1, env.game), strict=True))
    human = HumanAgent(
        env.game, seat, lambda: env.table_text(seat=seat), input or sys.stdin, output or sys.stdout
    )
    seat_agents = [human if s == seat else make_agent(specs[s], env.game, seed=derive_seed(seed, AGENT, s))
                   for s in range(n)]
    labels = {s: _label(spec) for s, spec in specs.items()}
    names = ", ".join(f"player_{s} = {label}" for s, label in labels.items())
    played = 0
    notes = env.game.spec.move_notes
    before: list[Any] = [None]  # the state before the move being played

    def before_step(mover: int, action: int) -> None:
        before[0] = copy.deepcopy(env.game_state)

    def on_step(mover: int, action: int) -> bool:
        nonlocal played
        who = "you" if mover == seat else f"player_{mover} ({labels[mover]})"
        human.say(f"{who}: {env.action_to_str(action)}")
        state = env.game_state
        if state.match.hands_played == played:  # the hand goes on (else the next one is dealt already)
            for affected, text in notes(before[0], state, action) if notes is not None else []:
                human.say("  -> " + text.format(who="you" if affected == seat else f"player_{affected}"))
            if mover == seat:
                drawn = [max(0, int(n)) for n in state.hands[seat] - before[0].hands[seat]]
                if any(drawn):
                    human.say(f"  you drew {C.format_cards(C.counts_to_cards(drawn))}")
            return False
        played += 1
        info = env.infos[env.possible_agents[seat]]
        # Once a hand of a match ends, the next one is dealt at once: its result is then under 'last_hand'.
        result = info if "winner" in info else {**info["last_hand"], "scores": info["scores"]}
        human.say(_hand_result(result, seat, played))
        return played >= hands

    try:
        human.say(f"{env.metadata['name']}: you are player_{seat}; opponents: {names}")
        human.say("Type a move's number or its text; end of input (Ctrl-D) quits.")
        run_episode(env, seat_agents, seed, on_step, before_step)
        human.say(f"\nthanks for playing: {played} hand(s), totals {list(env.game_state.match.scores)}")
    except EndOfInput:
        human.say("\nend of input: leaving the game.")
    except OutputClosed:  # the reader went away: nothing more to say, and nothing left to flush at exit
        if human.output is sys.stdout:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def _label(spec: str) -> str:
    """A short name for a spec: a bot by its file name, not its whole path."""
    return f"bot:{pathlib.Path(spec[4:]).name}" if spec.startswith("bot:") else spec


def _hand_result(info: dict[str, Any], seat: int, number: int) -> str:
    """Text of a hand's end from the env's info."""
    if info["truncated"]:
        text = f"-- hand {number} truncated at the turn limit (C1): no winner, no points"
    else:
        winner = info["winner"]
        who = "you win" if winner == seat else f"player_{winner} wins"
        text = f"-- hand {number} over: {who}; points this hand {info['hand_points']}"
    text += f"; totals {info['scores']}"
    if info.get("match_over"):
        winners = info.get("match_winners", [])
        text += f"\n-- match over: lowest total wins: {', '.join(f'player_{w}' for w in winners)}"
    return text
