"""What one seat may know of a table, as JSON: the only game data the web app sends.

`seat_view` is the one function that turns an engine state into what a
browser gets, and it names no game: what is a game's own comes from its
`GameSpec`. It keeps only what the seat can see:

- the fields every game saves (`COMMON_FIELDS`: player to move, turn, the
  result of a finished hand, the match's totals), read from `state_dict()`;
- the game's own public fields, from `GameSpec.view(state, seat)` (suit to
  follow, flags, a card only this seat saw drawn); a field the game does not
  return there is never sent;
- the game's status lines, from `GameSpec.status(state)`, as [label, text]
  pairs in order (what terminal play shows too, so the page does not
  re-derive them);
- the seat's own hand, every hand's size, the size of the face-down pile
  (never its cards) and the played pile, which lies face up on the table.

The random generator's state, the other hands, the face-down pile and the
cards a stacked deal left out are never read into a view. Tests check it on
whole hands played through the HTTP API.

`position` adds the seat's observation vector and legal actions: what
`cardlab advise` reads back (an agent's observation is, by its contract, what
the seat may see).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from cardlab.envs import env_class
from cardlab.envs.checked_json import excerpt
from cardlab.envs.game_spec import Game, GameSpec, GameState, make_game
from cardlab.envs.hand import END_KEYS
from cardlab.envs.options import NOT_PLAY

VIEW_FORMAT = "cardlab-view"
POSITION_FORMAT = "cardlab-position"
FORMAT_VERSION = 1

COMMON_FIELDS = ("current_player", *END_KEYS)
"""`state_dict` fields of every game, which every player sees: the player to move, the match's bookkeeping."""


def seat_view(game: Game, state: GameState, seat: int) -> dict[str, Any]:
    """The table as `seat` may know it, from the engine state (see the module doc)."""
    data = state.state_dict()
    face_down, face_up = state.PILES
    view: dict[str, Any] = {"format": VIEW_FORMAT, "version": FORMAT_VERSION, "game": game.id,
                            "rules": game.rules.to_dict(), "seat": seat}
    view.update({key: data[key] for key in COMMON_FIELDS})
    view["hand"] = list(data["hands"][seat])
    view["hand_sizes"] = [len(hand) for hand in data["hands"]]
    view["pile"] = {"name": face_down, "size": len(data[face_down])}
    view["played"] = {"name": face_up, "cards": list(data[face_up])}
    view["top"] = data[face_up][-1] if data[face_up] else None
    view["status"] = [[label, text] for label, text in game.spec.status(state).items()]
    own = {} if game.spec.view is None else game.spec.view(state, seat)
    clash = sorted(set(own) & set(view))
    if clash:
        raise ValueError(f"game {game.id!r}: its view fields {', '.join(clash)} are the web app's own names")
    view.update(own)
    return view


def move_entry(game: Game, action: int) -> dict[str, Any]:
    """An action as the page shows and clicks it: text, cards laid (last on top), suit named."""
    text = game.action_to_str(action)
    words = text.split()
    cards, declare = words[1:], None
    if "declare" in words:
        at = words.index("declare")
        cards, declare = words[1:at], words[at + 1]
    return {"id": action, "text": text, "kind": words[0], "cards": cards, "declare": declare}


def legal_moves(game: Game, legal: Sequence[int]) -> list[dict[str, Any]]:
    return [move_entry(game, a) for a in legal]


def position(game: Game, view: Mapping[str, Any], observation: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """A saved position: the seat's view plus its observation and legal actions (`cardlab advise` input)."""
    legal = [int(a) for a in np.flatnonzero(observation["action_mask"])]
    return {
        **view,
        "format": POSITION_FORMAT,
        "observation_version": game.spec.observation_version,
        "observation": [float(x) for x in observation["observation"]],
        "legal": [move_entry(game, a) for a in legal],
    }


def observation_of_position(game: Game, data: Mapping[str, Any], seat: int = 0) -> dict[str, np.ndarray]:
    """The observation dict stored in a `position`, checked as a saved state is: every value in its
    field's range, and observation and legal moves those of a state of these rules (`position_fits`)."""
    if data.get("observation_version") != game.spec.observation_version:
        raise ValueError(f"the position's observation layout is version "
                         f"{excerpt(data.get('observation_version'))}, "
                         f"{game.id}'s is {game.spec.observation_version}")
    values, legal = data.get("observation"), data.get("legal")
    if not isinstance(values, list) or len(values) != game.layout.size or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in values
    ):
        raise ValueError(f"the position's 'observation' must be a list of {game.layout.size} numbers")
    layout = game.layout
    vector = np.asarray(values, dtype=np.float64)
    outside = np.flatnonzero(~((vector >= layout.low) & (vector <= layout.high)))  # NaN is outside too
    if outside.size:
        i = int(outside[0])
        field = next(f for f in layout.fields if i < layout.slices[f.name].stop)
        raise ValueError(f"the position's observation[{i}] (field {field.name!r}) is {excerpt(values[i])}: "
                         f"that field holds values from {field.low:g} to {field.high:g}")
    if not isinstance(legal, list) or not legal:
        raise ValueError("the position's 'legal' must list the legal moves (it is saved on the seat's turn)")
    mask = np.zeros(game.num_actions, dtype=np.int8)
    for move in legal:
        text = move.get("text") if isinstance(move, Mapping) else None
        if not isinstance(text, str):
            raise ValueError(f"each of the position's legal moves needs its 'text', got {excerpt(move)}")
        mask[game.str_to_action(text)] = 1
    observation: dict[str, np.ndarray] = {"observation": vector.astype(np.float32), "action_mask": mask}
    world = position_fits(game, observation, seat)
    if world is not None:
        view_fits(game, data, world, seat)
    return observation


UNOBSERVED = ("turn", "dealer", "hands_played")
"""a position's view fields that its observation does not hold (nor the advice depend on; docs/envs.md, what
a world chooses): checked for range only, as `view_fits` says"""


def view_fits(game: Game, data: Mapping[str, Any], world: GameState, seat: int) -> None:
    """Refuse a position whose view fields are not the ones its observation shows `seat` (its hand, the hand
    sizes, the top card, the totals, the game's own fields...): the view of `world`, a state sampled from
    the observation (`position_fits`), field by field (a missing one refused too), the played pile as the
    cards it holds (their order below the top card is not observed). `UNOBSERVED` fields need only be in
    range: `turn` and `hands_played` whole numbers from 0, `dealer` a seat. The web table's own fields
    beside them (its players, log, mode...) say nothing of the seat's view and are not read."""
    view = {**seat_view(game, world, seat), "format": POSITION_FORMAT}
    missing = [key for key in view if key not in data]
    if missing:
        raise ValueError(f"the position has no field {missing[0]}: a position holds the seat's view "
                         f"({', '.join(view)}) beside its observation (save it again from the web app)")
    for key, shown in view.items():
        given = data[key]
        if key == "rules":
            continue  # what the game was made of (`read_position`): it may name only the options changed
        if key in UNOBSERVED:
            top = game.num_players - 1 if key == "dealer" else None
            if type(given) is not int or given < 0 or (top is not None and given > top):
                accepted = f"a seat 0..{top}" if top is not None else "a whole number from 0"
                raise ValueError(f"the position's field {key} is {excerpt(given)}; accepted: {accepted}")
            continue
        if key == "played" and isinstance(given, Mapping) and isinstance(given.get("cards"), list):
            shown, given = _as_held(shown), _as_held(given)
        if json_value(given) != json_value(shown):
            raise ValueError(f"the position's field {key} is {excerpt(data[key])}, but its observation shows "
                             f"{excerpt(view[key])}: a position's view fields must be the ones its "
                             "observation shows (was it edited?); save the position again from the web app")


def _as_held(played: Mapping[str, Any]) -> dict[str, Any]:
    """The played pile without the order of the cards below its top (which no observation holds)."""
    cards = [str(c) for c in played["cards"]]
    return {**played, "cards": sorted(cards[:-1]) + cards[-1:]}


def json_value(value: Any) -> Any:
    """`value` as JSON gives it back (tuples as lists): what a saved position holds of it."""
    return json.loads(json.dumps(value))


def position_fits(game: Game, observation: Mapping[str, np.ndarray], seat: int) -> GameState | None:
    """Refuse an observation no state gives `seat`, or legal moves other than that state's; the state
    sampled, None for a game that cannot sample one.

    A state is sampled from the observation (`Game.determinize`); its own
    observation for the seat must be the one given, and its legal moves the
    listed ones (they depend only on what the seat sees). A move listed that
    is not legal (a card not in the hand) would otherwise be advised.
    """
    if game.spec.determinize is None:
        return None  # a game without determinization: its values were range-checked only
    try:
        world = game.determinize(observation, np.random.default_rng(0), seat=seat)
    except ValueError as err:
        raise ValueError(f"the position's {err}") from None
    if not np.array_equal(game.observer.observe(world, seat), observation["observation"]):
        raise ValueError("the position's observation fits no state of these rules: its fields disagree with "
                         "each other (was it edited?); save the position again from the web app")
    legal = {int(a) for a in world.legal_actions()}
    listed = {int(a) for a in np.flatnonzero(observation["action_mask"])}
    if legal != listed:
        wrong = sorted(listed - legal) or sorted(legal - listed)
        what = "is not legal there" if listed - legal else "is legal there but not listed"
        texts = [game.action_to_str(a) for a in sorted(legal)[:20]]
        raise ValueError(f"the position's legal moves disagree with its observation: "
                         f"{', '.join(game.action_to_str(a) for a in wrong[:5])} {what}; the legal moves of "
                         f"this observation are {', '.join(texts)}")
    return world


@dataclasses.dataclass(frozen=True)
class RuleField:
    """A rule option as the page's form shows it."""

    name: str
    default: Any
    kind: str
    low: int | None
    high: int | None
    accepted: str
    doc: str
    help: str = ""
    """the option in words for a player (`player_help`): no rule ids, field names or formulas"""


RULE_ID = re.compile(r"\s*\((?:[A-Z]\d+(?:, [A-Z]\d+)*)(?:; ([^)]*))?\)")
"""a rule id cited in an option's doc, "(B2)" or "(A1; a note)": the note is kept, the id dropped"""
LARGE = 100_000
"""a range's top this large is no limit a player meets: the help says "from LOW" only"""


def player_help(doc: str, accepted: str, low: int | None, high: int | None) -> str:
    """An option's doc and accepted values in words for the page: the rule ids (which the page does not
    show) dropped, an option that only changes what bots are shown said as such, a formula of another
    option in words, and a range's top that no player meets left out."""
    if doc.startswith(NOT_PLAY):
        return ("Not a rule of play: the game is the same; it only changes what a bot is shown, for bots "
                "trained with it.")
    words = RULE_ID.sub(lambda m: f" ({m[1]})" if m[1] else "", doc)
    words = words.strip()
    if high is not None and high >= LARGE:
        accepted = f"a whole number from {low}" if low is not None else "a whole number"
    accepted = re.sub(r"(\d+) // num_players", r"\1 divided by the number of players", accepted)
    accepted = accepted.replace("'", "")
    return f"{words[:1].upper()}{words[1:]} ({accepted})."


def rule_fields(spec: GameSpec) -> list[dict[str, Any]]:
    """The rule options of a game for the page's form: kind (bool, int or text), range, meaning and the
    meaning in words for a player (`player_help`)."""
    docs = {d.name: d for d in spec.rules.describe()}
    out = []
    for f in dataclasses.fields(spec.rules):
        doc = docs[f.name]
        kind = "bool" if isinstance(f.default, bool) else "int" if str(f.type) == "int" else "text"
        low, high = spec.rules.limits(f.name)
        out.append(dataclasses.asdict(RuleField(f.name, f.default, kind, low, high, doc.accepted, doc.doc,
                                                player_help(doc.doc, doc.accepted, low, high))))
    return out


class ReadPosition(NamedTuple):
    """What `read_position` read: the game, the seat to move, its observation and, for a saved state, the
    env restored from it (None for a web app position, which holds no hand record)."""

    game: Game
    seat: int
    observation: dict[str, np.ndarray]
    env: Any


def read_position(game_id: str, data: Any) -> ReadPosition:
    """The game, seat to move, observation (and env) of a saved state (`state_dict()` data) or a `position`.

    The rule options come from the file; a saved state is restored through
    the env, every field checked, and the env kept so that an agent that must
    be shown the hand's record (`Agent.sees`) can be shown it.
    """
    if not isinstance(data, Mapping):
        raise ValueError("expected a JSON object: a saved state (state_dict()) or a web app position")
    if "game" not in data:
        raise ValueError("this JSON object is not a saved state nor a position (it has no 'game' field): "
                         "give env.unwrapped.state_dict() as JSON, or a position saved by the web app")
    if data.get("game") != game_id:
        raise ValueError(f"this file is for the game {excerpt(data.get('game'))}, not {excerpt(game_id)}")
    if data.get("format") == VIEW_FORMAT:
        raise ValueError("a view holds no observation: save the position instead "
                         "(the page's 'Save position', or GET /api/games/ID/position)")
    rules = data.get("rules")
    if not isinstance(rules, Mapping):
        raise ValueError("the file has no 'rules' object (state_dict() and positions both store them)")
    game = make_game(game_id, rules)
    if data.get("format") == POSITION_FORMAT:
        if data.get("version") != FORMAT_VERSION:
            raise ValueError(f"the position's format version is {excerpt(data.get('version'))}; this cardlab "
                             f"reads version {FORMAT_VERSION} (save the position again from the web app)")
        seat = data.get("seat")
        if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < game.num_players:
            raise ValueError(f"the position's 'seat' must be a seat 0..{game.num_players - 1}")
        return ReadPosition(game, seat, observation_of_position(game, data, seat), None)
    env = env_class(game.spec)(**game.rules.to_dict())
    env.reset(options={"state": dict(data)})
    if env.game_state.hand_over:
        raise ValueError("the saved hand is over: nobody is to move")
    seat = int(env.game_state.current)
    return ReadPosition(game, seat, env.observe(env.possible_agents[seat]), env)
