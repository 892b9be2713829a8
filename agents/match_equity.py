"""`MatchEquity`: the chance that each seat wins the match, from the running totals; its checked files.

Why: people play these games as matches (A12, B13: the lowest total when
some total reaches the target wins), and a hand's best play depends on the
totals: a seat far ahead should keep its points down, one far behind must
win hands. A search that values a play-out by the seat's chance of winning
the match after the hand's points are added (``search:value=match``) plays
the match, not the hand.

Model: a small MLP, the same for every seat, reads one seat's features
(`features`: its total against the lowest, the mean and the target, the
match's distance to its end, its B12 streak, and its place in the next
hand's order of play) and gives a logit; a softmax over the seats gives
the probabilities, so they sum to 1 whatever the weights. A match that is
over is not asked of the network: its winners share 1 (ties share the win).
`cardlab match-equity CONFIG.yaml` (`cardlab.training.data.match_equity`) fits it.

Files: one JSON file, ``NAME.json`` (`FORMAT`: the game, table, rules, the
feature version, the network's shape and weights, their SHA-256 and a
summary). `load_equity` refuses in one line a file for another game, table,
rules of play (`equity_rules`) or feature version, whose weights do not hash
as recorded, read another number of seats or pass `MOST_WEIGHT` or the layer
caps, or whose summary is not the writer's (`SUMMARY`). The shipped ones:
``agents/equity/GAME-Np.json`` (`shipped_equity`); a fitted ``RUN/equity.json``
is named where used (search ``equity=PATH``, config ``equity``), via `equity_at`.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cardlab.agents.bot.format import MAX_HIDDEN_LAYERS
from cardlab.envs.checked_json import excerpt, read_json_file
from cardlab.envs.declared import missing_file, refused_file
from cardlab.envs.game_spec import Game
from cardlab.envs.match import Match
from cardlab.envs.options import RuleOptions

FORMAT = "cardlab-match-equity"
FORMAT_VERSION = 1
FEATURES_VERSION = 1
"""raised when `features` changes: a file of another version is refused"""
SHIPPED = pathlib.Path(__file__).resolve().parent / "equity"
"""the folder of the shipped equity models, ``GAME-Np.json`` each"""
MOST_BYTES = 1_000_000
"""the largest equity file read (a shipped one is a few tens of KiB)"""
MOST_HIDDEN = 256
"""the widest hidden layer a file may declare (at most `MAX_HIDDEN_LAYERS` of them, a bot file's cap)"""
MOST_WEIGHT = 1000.0
"""the largest magnitude of a weight or bias a file may hold (the shipped ones stay under 2): within it
every logit is finite, so the softmax gives finite probabilities; past it an edited file could overflow
them to NaN, which a search would read as a value"""
LEFT_FLOOR = 0.05
"""added to the share of the target left before a gap is scaled by its square root (no division by 0)"""
WHOLE = ("format_version", "num_players", "features_version")
"""the fields that are whole numbers (a flag or a float of the same value is refused, not read as one)"""
KEYS = ("format", "format_version", "game", "num_players", "rules", "features_version", "hidden", "weights",
        "weights_sha256", "summary")
RELIABILITY = ("low", "high", "count", "predicted", "observed")
"""the numbers of each row of a summary's reliability table (one row per decile of the prediction)"""
MOST_ROWS = 10
"""the most rows of a reliability table: one per decile"""


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _whole(value: Any) -> bool:
    return type(value) is int and value >= 0


SUMMARY: dict[str, tuple[Callable[[Any], bool], str]] = {
    "policy": (lambda v: isinstance(v, str) and bool(v), "the spec of the policy that played (text)"),
    "hands": (_whole, "a whole number"), "matches": (_whole, "a whole number"),
    "hands_per_match": (_number, "a number"), "holdout_log_loss": (_number, "a number"),
    "uniform_log_loss": (_number, "a number"), "calibration_worst": (_number, "a number"),
    "reliability": (lambda v: isinstance(v, list) and len(v) <= MOST_ROWS and all(
        isinstance(r, dict) and set(r) == set(RELIABILITY) and all(map(_number, r.values())) for r in v),
        f"a list of at most {MOST_ROWS} rows of the numbers {', '.join(RELIABILITY)}"),
    "seed": (lambda v: type(v) is int, "a whole number"),
}
"""the fields of a file's summary (what `cardlab match-equity` measured), each with its check and what it
accepts: `equity_file` writes no other, `load_equity` reads no other"""


def summary_fault(summary: Any) -> str | None:
    """What is wrong with an equity file's `summary` (`SUMMARY`), in words; None where nothing is."""
    if not isinstance(summary, dict) or set(summary) != set(SUMMARY):
        found = sorted(summary) if isinstance(summary, dict) else summary
        return f"summary must be an object of the fields {', '.join(SUMMARY)}, got {excerpt(found)}"
    for key, (valid, accepted) in SUMMARY.items():
        if not valid(summary[key]):
            return f"summary field {key} is {excerpt(summary[key])}; it must be {accepted}"
    return None


def feature_count(num_players: int) -> int:
    """The features of one seat (`features`): seven numbers and the seat's place in the order of play."""
    return 7 + num_players


def features(scores: np.ndarray, dealer: np.ndarray, streaks: np.ndarray, target: int,
             streak_length: int) -> np.ndarray:
    """(B, n, F) features of each seat of B unfinished matches, from (B, n) totals, (B,) dealers of the next
    hand and (B, n) B12 streaks (zeros where the game has none; `streak_length` 0 then).

    Per seat: its total less the lowest and less the mean (over the target),
    both again over the square root of the share of the target left (a gap
    weighs more near the end), its own distance to the target, the match's
    share left, its streak over the streak length, and one-hot its place in
    the next hand's order of play (0: plays first, the dealer's next seat).
    """
    s = np.asarray(scores, dtype=np.float64) / target
    n = s.shape[1]
    left = np.clip(1.0 - s.max(axis=1, keepdims=True), 0.0, None)
    scale = np.sqrt(left + LEFT_FLOOR)
    low = s - s.min(axis=1, keepdims=True)
    mean = s - s.mean(axis=1, keepdims=True)
    runs = np.asarray(streaks, dtype=np.float64) / streak_length if streak_length else np.zeros_like(s)
    place = (np.arange(n)[None, :] - np.asarray(dealer)[:, None] - 1) % n
    numbers = np.stack([low, mean, low / scale, mean / scale, 1.0 - s, np.broadcast_to(left, s.shape), runs],
                       axis=2)
    return np.concatenate([numbers, np.eye(n)[place]], axis=2)


def win_shares(scores: np.ndarray) -> np.ndarray:
    """(B, n) a finished match's result: its winners (the lowest totals) share 1."""
    scores = np.asarray(scores)
    low = scores == scores.min(axis=1, keepdims=True)
    return low / low.sum(axis=1, keepdims=True)


def weights_sha256(weights: dict[str, Any]) -> str:
    """The SHA-256 of the weights as the file writes them (sorted keys, no spaces)."""
    return hashlib.sha256(json.dumps(weights, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class MatchEquity:
    """A table's match-equity model (module doc): `equity` gives each seat's chance to win the match."""

    def __init__(self, game: Game, layers: Sequence[tuple[np.ndarray, np.ndarray]], meta: dict[str, Any]
                 ) -> None:
        self.game = game
        self.layers = [(np.asarray(w, dtype=np.float64), np.asarray(b, dtype=np.float64)) for w, b in layers]
        self.meta = meta
        rules = game.rules.to_dict()
        self.target = int(rules["target_score"])
        self.streak_length = int(rules.get("streak_length", 0))
        """B12's streak length; 0 where the game keeps no streaks (Switch)"""

    def logits(self, x: np.ndarray) -> np.ndarray:
        """(..., F) features -> (...) logits: the MLP, tanh between its layers."""
        for i, (w, b) in enumerate(self.layers):
            x = x @ w.T + b
            if i < len(self.layers) - 1:
                x = np.tanh(x)
        return np.asarray(x[..., 0])

    def equity(self, scores: np.ndarray, dealer: np.ndarray, streaks: np.ndarray | None = None
               ) -> np.ndarray:
        """(B, n) each seat's chance to win the match from (B, n) totals, (B,) dealers of the next hand and
        (B, n) B12 streaks (None: none); each row sums to 1, and a finished match's winners share 1."""
        scores = np.asarray(scores, dtype=np.int64)
        if scores.ndim != 2 or scores.shape[1] != self.game.num_players:
            raise ValueError(f"scores must be (B, {self.game.num_players}) totals, got shape {scores.shape}")
        runs = np.zeros_like(scores) if streaks is None or not self.streak_length else np.asarray(streaks)
        out = np.empty(scores.shape, dtype=np.float64)
        over = scores.max(axis=1) >= self.target
        out[over] = win_shares(scores[over])
        live = ~over
        if live.any():
            z = self.logits(features(scores[live], np.asarray(dealer)[live], runs[live], self.target,
                                     self.streak_length))
            z = np.exp(z - z.max(axis=1, keepdims=True))
            out[live] = z / z.sum(axis=1, keepdims=True)
        return out

    def after_hand(self, match: Match) -> Callable[[Any, np.ndarray, np.ndarray], np.ndarray]:
        """A search's value of its play-outs (`cardlab.agents.rollouts.Values`): seat 0's equity once each
        finished slot's score changes (B12's bonus among them) are added to `match`'s totals, the dealer
        moved on (B3) and the streaks counted; a slot C1 cut adds nothing and ends every streak."""
        totals = np.asarray(match.scores, dtype=np.int64)
        runs = np.asarray(match.streaks, dtype=np.int64)
        dealer = (match.dealer + 1) % self.game.num_players

        def values(engine: Any, rows: np.ndarray, wins: np.ndarray) -> np.ndarray:
            done = np.asarray(engine.done[rows]).ravel()
            changes = np.asarray(engine.score_changes()[rows]).reshape(done.size, -1) * done[:, None]
            streaks = np.zeros_like(changes)
            if self.streak_length:
                winner = np.argmin(changes, axis=1)  # a loser holds a card, and every card scores (B11)
                run = runs[winner] + 1
                streaks[np.arange(done.size), winner] = np.where(done & (run < self.streak_length), run, 0)
            equity = self.equity(totals + changes, np.full(done.size, dealer), streaks)
            return equity[:, 0].reshape(np.shape(rows))

        return values


def _refuse(path: pathlib.Path, reason: str) -> ValueError:
    return refused_file("match equity", path, reason)


def _layers(path: pathlib.Path, meta: dict[str, Any]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The network's (weight, bias) pairs, refused unless they chain from the features to one logit."""
    hidden, weights = meta["hidden"], meta["weights"]
    if not isinstance(hidden, list) or len(hidden) > MAX_HIDDEN_LAYERS or not all(
            type(h) is int and 1 <= h <= MOST_HIDDEN for h in hidden):
        raise _refuse(path, f"hidden must be a list of at most {MAX_HIDDEN_LAYERS} layer widths, each 1 to "
                            f"{MOST_HIDDEN}, got {excerpt(hidden)} (corrupted or edited?)")
    sizes = [feature_count(meta["num_players"]), *hidden, 1]
    if not isinstance(weights, dict) or set(weights) != {f"{k}{i}" for i in range(len(sizes) - 1)
                                                         for k in "wb"}:
        found = sorted(weights) if isinstance(weights, dict) else weights
        raise _refuse(path, f"weights must hold w0, b0, ... w{len(sizes) - 2}, b{len(sizes) - 2} for the "
                            f"layers {sizes}, got {excerpt(found)}")
    layers = []
    for i in range(len(sizes) - 1):
        try:  # numbers only: a cast to float would take the text "0.5" or true as a weight
            w, b = np.asarray(weights[f"w{i}"]), np.asarray(weights[f"b{i}"])
        except (TypeError, ValueError):
            w = b = np.asarray(None)
        if w.dtype.kind not in "iuf" or b.dtype.kind not in "iuf":
            raise _refuse(path, f"layer {i}'s weights are not arrays of numbers")
        w, b = w.astype(np.float64), b.astype(np.float64)
        seats = w.shape[-1] - feature_count(0) if i == 0 and w.ndim == 2 else meta["num_players"]
        if seats != meta["num_players"] and seats >= 2:
            raise _refuse(path, f"its weights read the features of {seats} seats, but it records num_players="
                                f"{excerpt(meta['num_players'])} (edited?); fit it again with cardlab "
                                "match-equity")
        if w.shape != (sizes[i + 1], sizes[i]) or b.shape != (sizes[i + 1],):
            raise _refuse(path, f"layer {i} must be a ({sizes[i + 1]}, {sizes[i]}) weight and "
                                f"({sizes[i + 1]},) bias, got {w.shape} and {b.shape}")
        largest = max(float(np.abs(w).max(initial=0.0)), float(np.abs(b).max(initial=0.0)))
        if not largest <= MOST_WEIGHT:  # an infinite value too (NaN is no JSON number)
            raise _refuse(path, f"layer {i} holds a value of magnitude {largest:.3g}; accepted: finite "
                                f"values from -{MOST_WEIGHT:g} to {MOST_WEIGHT:g} (corrupted or edited?); "
                                "fit it again with cardlab match-equity")
        layers.append((w, b))
    return layers


def equity_rules(game: Game) -> tuple[str, ...]:
    """The rule options an equity depends on, the ones `load_equity` compares with the table's: every rule
    of play of `game`'s rules (`RuleOptions.of_play`).

    Why every one: the model is fitted from hands played out under the rules, so an option that changes a
    hand's points (the deck, the hand size, B12's bonus), its winner (what may follow what, who draws or is
    skipped: A5, A8, B8, B10) or the match's scoring (target_score, B12's streak length) changes the chances
    it gives. ``max_turns`` is one of them: a hand C1 cuts scores nothing and ends every streak, rare at the
    defaults but most hands under a low cap, and whether a cap is low enough to matter depends on the
    table, so any difference is refused. An option that is no rule of play (``memory``: it adds to what a
    seat observes, and the game is the same) leaves every hand as it was, so an equity fitted with or
    without it serves both tables."""
    return type(game.rules).of_play()


def load_equity(path: str | pathlib.Path, game: Game) -> MatchEquity:
    """An equity file checked against `game`'s table (module doc), or a one-line `ValueError`."""
    path = pathlib.Path(path)
    if not path.is_file():
        raise missing_file("match equity", path, "an equity model is one NAME.json, written by cardlab "
                                                 "match-equity")
    try:
        meta = read_json_file(path, "the file", MOST_BYTES)
    except ValueError as err:
        raise _refuse(path, str(err)) from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        found = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
        raise _refuse(path, f'not a {FORMAT} file ("format" is {excerpt(found)}): give the JSON file '
                            "cardlab match-equity writes")
    if set(meta) != set(KEYS):
        raise _refuse(path, f"expected the fields {', '.join(KEYS)}, got {excerpt(sorted(meta))} "
                            "(corrupted?)")
    wrong = [key for key in WHOLE if type(meta[key]) is not int]  # true == 1 and 4.0 == 4 in Python
    if wrong:
        raise _refuse(path, f"{wrong[0]} must be a whole number, got {excerpt(meta[wrong[0]])} (corrupted or "
                            "edited?); fit it again with cardlab match-equity")
    if meta["format_version"] != FORMAT_VERSION or meta["features_version"] != FEATURES_VERSION:
        raise _refuse(path, f"format {excerpt(meta['format_version'])}, features "
                            f"{excerpt(meta['features_version'])}; this cardlab reads format "
                            f"{FORMAT_VERSION}, features {FEATURES_VERSION} (fit it again with cardlab "
                            "match-equity)")
    if meta["game"] != game.spec.id or meta["num_players"] != game.num_players:
        raise _refuse(path, f"it is for {excerpt(meta['game'])} with {excerpt(meta['num_players'])} players, "
                            f"not {game.spec.id} with {game.num_players}; use the equity of this table")
    rules = meta["rules"]
    ours, theirs = game.rules.to_dict(), rules if isinstance(rules, dict) else {}
    apart = set(ours) - set(equity_rules(game))  # no rule of play: the same hands with or without it
    diffs = [f"{k}={excerpt(theirs.get(k, '(missing)'))} (table: {excerpt(ours.get(k, '(missing)'))})"
             for k in sorted((set(ours) | set(theirs)) - apart)
             if theirs.get(k, "(missing)") != ours.get(k, "(missing)")]
    if not isinstance(rules, dict) or diffs:
        raise _refuse(path, f"it was fitted under other rules: {', '.join(diffs) or excerpt(rules)}; use it "
                            "at a table of those rules, or fit one for these with cardlab match-equity and "
                            "name its RUN/equity.json (search option equity=, config key equity)")
    fault = summary_fault(meta["summary"])
    if fault is not None:
        raise _refuse(path, f"{fault} (corrupted or edited?); fit it again with cardlab match-equity")
    if meta["weights_sha256"] != weights_sha256(meta["weights"]):
        raise _refuse(path, "its weights do not hash to the weights_sha256 it records (corrupted or edited); "
                            "fit it again with cardlab match-equity")
    return MatchEquity(game, _layers(path, meta), meta)


def equity_file(game: Game, layers: Sequence[tuple[np.ndarray, np.ndarray]], summary: dict[str, Any]
                ) -> dict[str, Any]:
    """The JSON object of an equity model for `game`'s table (what `load_equity` reads); a `summary` of
    other fields than `SUMMARY`'s is refused, as the reader would."""
    fault = summary_fault(summary)
    if fault is not None:
        raise ValueError(f"an equity file's {fault}")
    weights: dict[str, Any] = {}
    for i, (w, b) in enumerate(layers):
        weights[f"w{i}"] = np.asarray(w, dtype=np.float64).round(7).tolist()
        weights[f"b{i}"] = np.asarray(b, dtype=np.float64).round(7).tolist()
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "game": game.spec.id,
            "num_players": game.num_players, "rules": game.rules.to_dict(),
            "features_version": FEATURES_VERSION,
            "hidden": [int(w.shape[0]) for w, _ in layers[:-1]], "weights": weights,
            "weights_sha256": weights_sha256(weights), "summary": summary}


def shipped_equity_path(game: Game) -> pathlib.Path:
    """Where the shipped equity of `game`'s table would be (one per table size, fitted under the default
    rules)."""
    return SHIPPED / f"{game.spec.id}-{game.num_players}p.json"


_LOADED: dict[pathlib.Path, tuple[tuple[int, int, RuleOptions], MatchEquity]] = {}
"""`equity_at`'s models: resolved path -> ((modification time, size, table rules), the model read from it)"""


def equity_at(path: str | pathlib.Path, game: Game) -> MatchEquity:
    """The equity file at `path` for `game`'s table, as `load_equity` checks it, read once per file and table
    rules: the web app asks at every match table it seats, the searches at every agent they build and a
    training run at every table it deals. The file's size and modification time are part of the key, so a
    file replaced since is read again, and a file that fails to load is refused at every call."""
    path = pathlib.Path(path)
    if not path.is_file():
        return load_equity(path, game)  # its one-line refusal of a missing file
    resolved, found = path.resolve(), path.stat()
    version = (found.st_mtime_ns, found.st_size, game.rules)
    cached = _LOADED.get(resolved)
    if cached is None or cached[0] != version:
        _LOADED[resolved] = cached = (version, load_equity(path, game))
    return cached[1]


def shipped_equity(game: Game) -> MatchEquity:
    """The shipped equity of `game`'s table (`equity_at`); a `ValueError` naming the tables that have one
    otherwise."""
    path = shipped_equity_path(game)
    if not path.is_file():
        have = ", ".join(sorted(p.stem for p in SHIPPED.glob("*.json"))) or "none"
        raise ValueError(f"no match equity ships for {game.spec.id} with {game.num_players} players (equity "
                         f"models: {have}); fit one with cardlab match-equity and name its RUN/equity.json "
                         "(search option equity=, config key equity)")
    return equity_at(path, game)

