"""The games of the web app: one person against agents, hand after hand, and replays of finished hands.

Play goes through the AEC env and agents as terminal play does (agents built
from the env's `Game`, each seeing only its observation). Every hand starts
from its own seed: the first from ``reset(seed)``, the next ones of a match
from the finished state with a fresh generator (``next_hand()`` of the
engine: dealer moved on, totals and streaks kept). So the replay of a finished
hand, which holds its start state, tells nothing about the hands after it.

A replay (`REPLAY_FORMAT`) is the start state of a hand (`state_dict()`:
the deal, the totals, the generator that refills the pile), every move as
text with its seat, and the result (loaded by `cardlab.serve.hand_replay`).

An agent that fails at its turn (it raises, answers an illegal move or
non-finite numbers, or takes more than `agent_seconds`) never freezes the
table: its seat falls back to `FALLBACK` at that same turn, so the person's
move and the replies to it stay one turn, and the table says so in its
``notices`` (the agent and the kind of failure, never its message or move,
which may name its cards). Why a fallback rather than undoing the person's
move: an agent may fail on the agents' first moves of a deal, where there
is no move of the person to undo, and undoing leaves the same agent to fail
again at the next try; with the fallback the hand always goes on.
"""

from __future__ import annotations

import collections
import dataclasses
import secrets
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import Advice, Agent, show_table
from cardlab.agents.failure import AgentFailure, checked_action, checked_advice, timed_action
from cardlab.agents.search import SearchAgent
from cardlab.envs import env_class
from cardlab.envs.checked_json import excerpt
from cardlab.envs.game_spec import Game
from cardlab.envs.rng import rng_state
from cardlab.evaluation.episodes import AGENT, HAND, derive_seed
from cardlab.serve.view import legal_moves, position, seat_view

MODES = ("hand", "match")
REPLAY_FORMAT = "cardlab-replay"
REPLAY_VERSION = 1
REPLAY_KEYS = ("game", "rules", "seat", "players", "start", "moves", "result")
MAX_LABEL = 60
FALLBACK = "random"
"""the agent a failing seat falls back to: it draws among the legal moves of the action mask and reads
nothing else (no network, no decoding of the observation), so it has no way to fail; a heuristic would play
better, but it decodes the observation, and a bug there is a failure of its own"""
KEPT_HANDS = 50
"""the finished hands whose replays a table keeps (the last ones): about 30 KB each"""
AGENT_SECONDS = 10.0
"""the time an agent may take for one move before its seat falls back (a bot takes milliseconds)"""


Mover = Callable[[Agent, dict[str, np.ndarray], str, float], tuple[int, float]]
"""(agent, observation, its name, seconds) -> (its checked move, seconds it waited to be run): how a table
asks an agent for a move (the web app runs searches on its search workers: `cardlab.serve.searchpool`)"""


def own_thread(agent: Agent, observation: dict[str, np.ndarray], who: str, seconds: float
               ) -> tuple[int, float]:
    """The default `Mover`: `timed_action`, on a thread of the move's own."""
    return timed_action(agent, observation, who, seconds), 0.0


@dataclasses.dataclass(frozen=True)
class Player:
    """A seat at the table: the name the page shows, the agent spec (None for the person) and what the
    agent is as it plays at this table (the page's tooltip: a search says when it plays for the match)."""

    label: str
    spec: str | None = None
    about: str = ""


def first_deal(game: Game, seed: int) -> dict[str, Any]:
    """The start state of a match's first hand."""
    env = env_class(game.spec)(episode="hand", **game.rules.to_dict())
    env.reset(seed=seed)
    return env.state_dict()


def next_deal(game: Game, finished: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """The start state of the hand after `finished`, shuffled by a new generator seeded with `seed`."""
    state = game.restore({**finished, "rng": rng_state(np.random.default_rng(seed))})
    state.next_hand()
    return state.state_dict()


@dataclasses.dataclass(frozen=True)
class FinishedHand:
    """What a table keeps of a finished hand: what its replay needs (the deal, the moves, the result).

    Not the env: a table may see thousands of hands, and an env is tens of kilobytes.
    """

    start: dict[str, Any]
    moves: tuple[dict[str, Any], ...]
    result: dict[str, Any]


class Busy(PermissionError):
    """A move or deal of a game while another one of the same game is being applied."""


F = TypeVar("F", bound=Callable[..., Any])


def changes_table(method: F) -> F:
    """A call that changes the table: refused with `Busy` while another one of the same table runs.

    Refused, not queued: two copies of one click sent at once (a double
    click, a retried request) must not both be played, turn number or not.
    """
    def guarded(self: Table, *args: Any, **kwargs: Any) -> Any:
        if not self.lock.acquire(blocking=False):
            raise Busy("another move of this game is being applied: wait for its answer, then reload "
                       "the table")
        try:
            return method(self, *args, **kwargs)
        finally:
            self.lock.release()
    return guarded  # type: ignore[return-value]


def reads_table(method: F) -> F:
    """A call that reads the table: refused with `Busy` while a move of another request is being applied.

    Refused, not waited for: a move may wait for the search workers, and a
    request (an advice, on a search worker itself) waiting for that move
    would hold a thread, or the worker the move waits for.
    """
    def guarded(self: Table, *args: Any, **kwargs: Any) -> Any:
        if not self.lock.acquire(blocking=False):
            raise Busy("a move of this game is being applied: ask again once it is answered")
        try:
            return method(self, *args, **kwargs)
        finally:
            self.lock.release()
    return guarded  # type: ignore[return-value]


class Hand:
    """One hand in an env: its start state and the moves made since, as text with their seats."""

    def __init__(self, game: Game, start: Mapping[str, Any]) -> None:
        self.game = game
        self.start = dict(start)
        self.env = env_class(game.spec)(episode="hand", **game.rules.to_dict())
        self.env.reset(options={"state": self.start})
        self.moves: list[dict[str, Any]] = []

    @property
    def over(self) -> bool:
        return bool(self.env.game_state.hand_over)

    @property
    def to_move(self) -> int | None:
        return None if self.over else int(self.env.game_state.current)

    def observe(self, seat: int) -> dict[str, np.ndarray]:
        return self.env.observe(self.env.possible_agents[seat])

    def apply(self, action: int) -> None:
        """Play a legal action of the seat to move (an illegal one raises a ValueError, nothing changes)."""
        seat = self.to_move
        if seat is None:
            raise ValueError("the hand is over: nobody is to move")
        self.env.step(action)
        self.moves.append({"seat": seat, "move": self.game.action_to_str(action)})

    def result(self) -> dict[str, Any] | None:
        """Winner, points and totals once the hand is over (None before)."""
        if not self.over:
            return None
        state = self.env.game_state
        result = {"winner": state.winner, "truncated": bool(state.truncated),
                  "hand_points": list(state.hand_points), "score_changes": list(state.score_changes),
                  "scores": list(state.match.scores), "match_over": bool(state.match_over)}
        if state.match_over:
            result["match_winners"] = state.match.winners()
        return result

    def view(self, seat: int, players: Sequence[Player]) -> dict[str, Any]:
        """`seat_view` of the seat, plus the players, this hand's log, the seat's legal moves, the result."""
        view = seat_view(self.game, self.env.game_state, seat)
        view["players"] = [{"seat": s, "label": p.label, "about": p.about, "you": s == seat}
                           for s, p in enumerate(players)]
        view["hand_number"] = self.env.game_state.match.hands_played + (0 if self.over else 1)
        view["log"] = list(self.moves)
        view["legal"] = legal_moves(self.game, self.env.legal_actions()) if self.to_move == seat else []
        view["result"] = self.result()
        return view

    def advice(self, seat: int, advisor: Agent, top: int, who: str) -> list[Advice]:
        """The advisor's likeliest moves for `seat`; an `AgentFailure` naming `who` if it fails."""
        return checked_advice(advisor, self.shown(seat, advisor), top, who)

    def shown(self, seat: int, advisor: Agent) -> dict[str, np.ndarray]:
        """Show `advisor` the table as `seat` sees it (a reading search sees the record); a copy of the
        seat's observation, which later moves leave as it is."""
        if self.to_move != seat:
            raise PermissionError("advice is for your own decisions: it is not your turn")
        show_table(advisor, self.env, self.env.possible_agents[seat])
        return {k: np.array(v, copy=True) for k, v in self.observe(seat).items()}


class Advisors:
    """The advisor agents of one game, built once per spec, apart from the players.

    A heuristic breaks ties with its own generator: asking a separate agent
    leaves the players' draws, and so their play, untouched.
    """

    def __init__(self, game: Game) -> None:
        self.game = game
        self.agents: dict[str, Agent] = {}

    def get(self, spec: str) -> Agent:
        if spec not in self.agents:
            self.agents[spec] = make_agent(spec, self.game, seed=0)
        return self.agents[spec]

    def searches(self) -> int:
        """How many of them are searches (each holds a rollout engine: the web app caps them)."""
        return sum(isinstance(agent, SearchAgent) for agent in list(self.agents.values()))


class Table:
    """A person at `seat` against agents, in hand play (each hand alone) or match play (to the target score).

    `seed` makes the deals and the agents repeatable; without it every hand is
    shuffled from a fresh secret seed.
    """

    def __init__(self, game: Game, seat: int, players: Sequence[Player], mode: str = "hand",
                 seed: int | None = None, agent_seconds: float = AGENT_SECONDS,
                 kept_hands: int = KEPT_HANDS, mover: Mover = own_thread) -> None:
        if mode not in MODES:
            raise ValueError(f"mode {excerpt(mode)} is not known: use {' or '.join(MODES)}")
        if len(players) != game.num_players:
            raise ValueError(f"{len(players)} players for a {game.num_players}-player table")
        if not 0 <= seat < game.num_players or players[seat].spec is not None:
            raise ValueError(f"seat {seat} is not the person's seat at this {game.num_players}-player table")
        self.game, self.seat, self.players, self.mode, self.seed = game, seat, list(players), mode, seed
        base = secrets.randbits(63) if seed is None else seed
        self.base_seed, self.agent_seconds, self.mover = base, agent_seconds, mover
        self.waited = 0.0
        """seconds the agents' moves of the answer being made waited for a search worker"""
        self.notices: list[str] = []
        """what the table says of itself: each seat that fell back, who failed and how"""
        self.agents: dict[int, Agent] = {
            s: make_agent(p.spec, game, seed=derive_seed(base, AGENT, s))
            for s, p in enumerate(players) if p.spec is not None
        }
        for s, agent in self.agents.items():
            if "state" in agent.sees:
                raise ValueError(f"agent {excerpt(players[s].spec)} sees the true state of the game (the "
                                 "hidden cards): a cheat for measured upper bounds, not seated at a person's "
                                 "table; choose an agent that plays from what its seat sees")
        self.advisors = Advisors(game)
        self.lock = threading.RLock()
        """held by every call that reads or changes the table: requests run on several threads"""
        self.advising = threading.Lock()
        """held while an advisor searches (`advice`), apart from `lock`: moves go on meanwhile"""
        self.finished: collections.deque[FinishedHand] = collections.deque(maxlen=kept_hands)
        """the last `kept_hands` finished hands, for their replays (a table may see thousands)"""
        self.hands_finished = 0
        self.wins = [0] * game.num_players
        self.hand = self._deal(None)
        self.latest = self.view()
        """the view made last: what `view` answers while a move is being applied"""

    def searches(self) -> int:
        """How many of its agents (seats, advisors) are searches (each holds a rollout engine)."""
        seats = sum(isinstance(agent, SearchAgent) for agent in self.agents.values())
        return seats + self.advisors.searches()

    def _hand_seed(self, number: int) -> int:
        return secrets.randbits(63) if self.seed is None else derive_seed(self.seed, HAND, number)

    def _deal(self, previous: Hand | None) -> Hand:
        number = self.hands_finished + 1
        seed = self._hand_seed(number)
        if previous is None or self.mode == "hand":
            start = first_deal(self.game, seed)
        else:
            start = next_deal(self.game, previous.env.state_dict(), seed)
        for agent in self.agents.values():
            agent.reset()
        return Hand(self.game, start)

    # ------------------------------------------------------------ play
    def view(self) -> dict[str, Any]:
        """The person's view; while a move is being applied (by another request), the last view made, with
        ``busy`` true: a view never waits for the agents' moves."""
        if not self.lock.acquire(blocking=False):
            return {**self.latest, "busy": True}
        try:
            self.latest = self._view()
            return self.latest
        finally:
            self.lock.release()

    def _view(self) -> dict[str, Any]:
        view = self.hand.view(self.seat, self.players)
        view["hand_number"] = self.hands_finished + (0 if self.hand.over else 1)  # of this table, either mode
        view["mode"] = self.mode
        view["hands_finished"] = self.hands_finished
        view["wins"] = list(self.wins)
        view["can_deal"] = self.hand.over and not self._match_over()
        view["notices"] = list(self.notices)
        view["search_wait_ms"] = round(self.waited * 1000)
        view["busy"] = False
        return view

    def advance(self) -> list[dict[str, Any]]:
        """Let the agents move until the person is to move or the hand is over; a view after each move."""
        frames = []
        while not self.hand.over and self.hand.to_move != self.seat:
            mover = self.hand.to_move
            assert mover is not None
            observation = self.hand.observe(mover)
            show_table(self.agents[mover], self.hand.env, self.hand.env.possible_agents[mover])
            try:
                action, waited = self.mover(self.agents[mover], observation, self.players[mover].label,
                                            self.agent_seconds)
                self.waited += waited
            except AgentFailure as err:
                action = self._fall_back(mover, err, observation)
            self.hand.apply(action)
            frames.append(self._after_move())
        return frames

    def _fall_back(self, seat: int, failure: AgentFailure, observation: dict[str, np.ndarray]) -> int:
        """Seat `FALLBACK` for the failed agent from now on, say so, and return its move here."""
        label = self.players[seat].label
        self.notices.append(f"player_{seat} ({label}) failed: {failure.reason}; {FALLBACK} plays its seat "
                            "from now on")
        self.players[seat] = Player(f"{FALLBACK} (for {label})"[:MAX_LABEL], FALLBACK)
        self.agents[seat] = make_agent(FALLBACK, self.game, seed=derive_seed(self.base_seed, AGENT, seat, 1))
        return checked_action(self.agents[seat], observation, FALLBACK)

    def _after_move(self) -> dict[str, Any]:
        if self.hand.over:
            result = self.hand.result()
            assert result is not None
            if result["winner"] is not None:
                self.wins[result["winner"]] += 1
            self.finished.append(FinishedHand(dict(self.hand.start), tuple(self.hand.moves), result))
            self.hands_finished += 1
        return self.view()

    def start(self) -> list[dict[str, Any]]:
        """The first frames of the table: the deal, then the agents' moves up to the person's turn."""
        with self.lock:
            self.waited = 0.0
            return [self.view(), *self.advance()]

    @changes_table
    def move(self, text: str, turn: int | None = None) -> list[dict[str, Any]]:
        """The person's move (its text), then the agents' moves; refused moves change nothing.

        A `PermissionError` when it is not the person's turn (or `turn`, the
        turn number the move was chosen at, is not the current one: the web
        API always gives it, so a copy of a move sent again is refused), a
        `ValueError` for an unreadable or illegal move.
        """
        self._check_turn(turn)
        self.waited = 0.0
        action = self.game.str_to_action(text)
        legal = self.hand.env.legal_actions()
        if action not in legal:
            shown = ", ".join(self.game.action_to_str(a) for a in legal)
            raise ValueError(f"{self.game.action_to_str(action)!r} is not legal now; legal moves: {shown}")
        self.hand.apply(action)
        return [self._after_move(), *self.advance()]

    def _check_turn(self, turn: int | None) -> None:
        if self.hand.over:
            raise PermissionError("the hand is over: deal the next one")
        if self.hand.to_move != self.seat:
            raise PermissionError(f"it is player_{self.hand.to_move}'s turn, not yours")
        current = int(self.hand.env.game_state.turn)
        if turn is not None and turn != current:
            raise PermissionError(f"the move was chosen at turn {turn}, the table is at turn {current}: "
                                  "reload the table")

    @changes_table
    def next_hand(self) -> list[dict[str, Any]]:
        """Deal the next hand (of the match, or a new one in hand play) once this one is over."""
        if not self.hand.over:
            raise PermissionError("the hand is still being played")
        if self._match_over():
            raise PermissionError("the match is over: start a new game")
        self.hand = self._deal(self.hand)
        return self.start()

    def _match_over(self) -> bool:
        return self.mode == "match" and bool(self.hand.env.game_state.match_over)

    # ------------------------------------------------------------ advice, positions, replays
    def advice(self, spec: str, top: int = 3, name: str | None = None) -> tuple[int, list[Advice]]:
        """The turn and the advisor `spec`'s likeliest moves for the person at it; a failure names the
        advisor as `name` (else `spec`).

        The position is read under the table's lock and searched outside it, so
        a move sent while a slow advisor thinks is played rather than refused;
        the advice is then for a turn gone by, which its turn says. One advice
        of a table at a time: its advisors keep what they were shown.
        """
        with self.advising:
            turn, advisor, observation = self._advice_position(spec)
            return turn, checked_advice(advisor, observation, top, name or spec)

    @reads_table
    def _advice_position(self, spec: str) -> tuple[int, Agent, dict[str, np.ndarray]]:
        advisor = self.advisors.get(spec)
        return int(self.hand.env.game_state.turn), advisor, self.hand.shown(self.seat, advisor)

    @reads_table
    def position(self) -> dict[str, Any]:
        """The person's position for `cardlab advise`: on their turn only."""
        self._check_turn(None)
        return position(self.game, self.view(), self.hand.observe(self.seat))

    @reads_table
    def replay(self, number: int) -> dict[str, Any]:
        """The replay of finished hand `number` (1 = the first of this table)."""
        if not 1 <= number <= self.hands_finished:
            raise LookupError(f"hand {number} is not a finished hand of this game: "
                              f"{self.hands_finished} finished so far")
        first_kept = self.hands_finished - len(self.finished) + 1
        if number < first_kept:
            kept = f"{first_kept} to {self.hands_finished}"
            raise LookupError(f"hand {number}'s replay is no longer kept: a game keeps the replays of its "
                              f"last {self.finished.maxlen} hands ({kept} now)")
        hand = self.finished[number - first_kept]
        return {
            "format": REPLAY_FORMAT, "version": REPLAY_VERSION, "game": self.game.id,
            "rules": self.game.rules.to_dict(), "seat": self.seat, "players": [p.label for p in self.players],
            "hand_number": number, "start": hand.start, "moves": list(hand.moves), "result": hand.result,
        }
