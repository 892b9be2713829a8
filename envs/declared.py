"""One way to declare an option: a dataclass field made by `option`, its default, doc, bounds or choices.

Why one primitive: rule options (`cardlab.envs.options.RuleOptions`), search options
(`cardlab.agents.search_options.SearchOptions`) and training config fields
(`cardlab.training.harness.config`) each need a default, a doc, and what is
accepted; declared in one shape, each reader (the checks, the error text, the docs
table) takes them from the field, so a new option is one edit. It lives in `envs`,
the lowest layer, so that all three can import it. A refused value of any kind is
worded by `refusal` (`check_that` where a condition decides), one sentence shape
for the three, and a name none of them declares by `unknown`; `check_fields`
checks every declared field of any dataclass (call it from `__post_init__`).
A foreign or damaged file (bot, hand reader, match equity) is worded by
`refused_file`, one that is missing or a folder by `missing_file`.
"""

from __future__ import annotations

import copy
import dataclasses
import numbers
import pathlib
from collections.abc import Hashable, Iterable, Mapping
from typing import Any

from cardlab.envs.checked_json import excerpt, key_names

_KEY = "declared"

RANGE = "out of range"
CHOICE = "not one of the choices"
KIND = "of the wrong type"
"""the problems `refusal` names most: a number past its bounds, a word outside its choices, a value of
another type"""


def refusal(key: str, value: Any, problem: str, accepted: str, kind: str = "") -> str:
    """The one wording of a refused option value, for rule options (`kind` ``rule option``), search options
    (``search option``) and config keys (no kind: the key path names it):
    ``[KIND ]KEY=VALUE is PROBLEM; accepted: ACCEPTED``, the value shortened by `excerpt`."""
    return f"{kind + ' ' if kind else ''}{key}={excerpt(value)} is {problem}; accepted: {accepted}"


def check_that(ok: bool, key: str, value: Any, problem: str, accepted: str, kind: str = "") -> None:
    """Refuse `value` unless `ok`, worded by `refusal`: the check of what no declaration states, most often a
    value another key's value rules out (``reward='points' is not accepted with episode: match; accepted:
    ...``), said as PROBLEM."""
    if not ok:
        raise ValueError(refusal(key, value, problem, accepted, kind))


def unknown(kind: str, names: Iterable[Any], accepted: str, where: str = "") -> ValueError:
    """The one wording of names nothing declares (config keys, rule options, search options, a deal's or saved
    state's keys), where a value's refusal names a known key: ``unknown KIND(s) NAMES[ WHERE]; accepted:
    ACCEPTED``, the names sorted and cut short by `key_names` (``unknown config key(s) seeed; accepted:
    name, game, ...``)."""
    shown = key_names(names) + (" " + where if where else "")
    return ValueError(f"unknown {kind}(s) {shown}; accepted: {accepted}")


def refused_file(what: str, path: Any, reason: str) -> ValueError:
    """The one wording of a file refused as foreign or damaged (a bot, a hand reader, a match equity: files
    that cross a boundary, each read by its own checks): ``WHAT PATH: REASON``, naming the file since a
    loader may read several, REASON saying what is wrong and what to give instead."""
    return ValueError(f"{what} {path}: {reason}")


def missing_file(what: str, path: pathlib.Path, layout: str, suffix: str = ".json") -> ValueError:
    """The refusal of a `path` that is not a file where a loader reads one, worded by `refused_file`: a folder
    as a folder (``is a folder, not a file; give the path of the SUFFIX file (LAYOUT)``), since "not found"
    would send its user looking for what is there, else ``file not found (LAYOUT)``; `layout` says what the
    file is and what writes it."""
    if path.is_dir():
        return refused_file(what, path, f"is a folder, not a file; give the path of the {suffix} file "
                                        f"({layout})")
    return refused_file(what, path, f"file not found ({layout})")


def quoted(words: Any) -> str:
    """The accepted words of a refusal, each quoted: ``'tanh', 'relu'``."""
    return ", ".join(repr(word) for word in words)


def check_choice(key: str, value: Any, choices: tuple[Any, ...], kind: str = "") -> Any:
    """`value` where it is one of `choices` (an unhashable value never is), else refused by `refusal`: the
    check of a word argument that is not a declared field (an env's ``reward``, a table's ``episode``)."""
    if not (isinstance(value, Hashable) and value in choices):
        raise ValueError(refusal(key, value, CHOICE, quoted(choices), kind))
    return value


def check_whole(key: str, value: Any, low: int, high: int | None, accepted: str, kind: str = "") -> int:
    """`value` as an int where it is a whole number (a numpy integer too, never a bool) from `low` to `high`
    (None: no upper bound), else refused by `refusal` as of the wrong type or out of range, saying
    `accepted`: the check of a count or seed that is an argument rather than a declared field."""
    whole = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if not (whole and low <= value and (high is None or value <= high)):
        raise ValueError(refusal(key, value, RANGE if whole else KIND, accepted, kind))
    return int(value)


@dataclasses.dataclass(frozen=True)
class Declared:
    """One option as `option` declared it; `name` is filled from its field by `declarations`."""

    default: Any
    doc: str
    low: float | None = None
    """the least value of a number option (None: not a bounded number)"""
    high: float | None = None
    """the largest value (None: no upper bound given; a kind may supply its own)"""
    whole: bool = True
    """a number option takes whole numbers only (else any number from `low` to `high`)"""
    above: bool = False
    """`low` itself is refused (a learning rate of 0)"""
    choices: tuple[str, ...] = ()
    """the words accepted (a word option), else ()"""
    words: str = ""
    """what is accepted in words, when plainer than the bounds, or checked elsewhere (a game's players)"""
    shown: str = ""
    """the default as the docs show it ("" : the default itself)"""
    text: str = ""
    """a text option (a file's path, say): what the text names, for the docs; "" for a word or a number"""
    name: str = ""

    def in_range(self, value: Any) -> bool:
        """Whether the number `value` lies within the bounds (NaN fails every comparison, so is refused)."""
        if self.low is None:
            return True
        above_low = self.low < value if self.above else self.low <= value
        return above_low and (self.high is None or value <= self.high)

    def is_number(self, value: Any) -> bool:
        """Whether `value` is a number of the declared kind (whole or any), never a bool."""
        kinds = (int,) if self.whole else (int, float)
        return isinstance(value, kinds) and not isinstance(value, bool)


def option(default: Any, doc: str, low: float | None = None, high: float | None = None, *, whole: bool = True,
           above: bool = False, choices: tuple[str, ...] = (), words: str = "", shown: str = "",
           text: str = "") -> Any:
    """A declared dataclass field: its default, meaning, and bounds (`low`..`high`, whole unless `whole` is
    false, `above` for an exclusive `low`; a list's bounds hold for each item) or `choices`, written once.
    A list default is copied for each instance."""
    if low is not None and high is not None and not low <= high:
        raise ValueError(f"option bounds {low}..{high} are empty")
    meta = {_KEY: Declared(default, doc, low, high, whole, above, tuple(choices), words, shown, text)}
    if isinstance(default, list):
        return dataclasses.field(default_factory=lambda: copy.deepcopy(default), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def declared(field: dataclasses.Field[Any]) -> Declared | None:
    """The declaration of a dataclass field (named), or None for a field not made by `option`."""
    found = field.metadata.get(_KEY)
    return dataclasses.replace(found, name=field.name) if isinstance(found, Declared) else None


def declarations(cls: Any) -> Mapping[str, Declared]:
    """name -> declaration of every declared field of the dataclass `cls`, in field order."""
    return {f.name: d for f in dataclasses.fields(cls) if (d := declared(f)) is not None}


def accepted(declared: Declared) -> str:
    """What a declared number accepts, as its refusal and a docs table say it: its `words`, else its bounds
    (``a value >= 1 and <= 9``)."""
    if declared.words:
        return declared.words
    text = f"a value {'>' if declared.above else '>='} {declared.low:,}"
    return text if declared.high is None else f"{text} and <= {declared.high:,}"


def check_value(key: str, declared: Declared, value: Any, kind: str = "") -> None:
    """Refuse `value` (each item of a list) where `declared` does not accept it, worded by `refusal`: a word
    outside its choices, a bounded number of another type or outside its bounds. A field declared with
    neither choices nor bounds is checked elsewhere (`words` says where)."""
    if isinstance(value, list):
        for i, item in enumerate(value):
            check_value(f"{key}[{i}]", declared, item, kind)
    elif declared.choices:
        check_choice(key, value, declared.choices, kind)
    elif declared.low is not None:
        if not declared.is_number(value):
            number = "a whole number" if declared.whole else "a number"
            raise ValueError(refusal(key, value, KIND, number, kind))
        if not declared.in_range(value):
            raise ValueError(refusal(key, value, RANGE, accepted(declared), kind))


def check_fields(obj: Any, kind: str = "", path: str = "") -> None:
    """Refuse the first declared field of the dataclass instance `obj`, or of a dataclass it holds (its key
    ``path.field``), whose value its declaration does not accept (`check_value`): what a dataclass with
    `option` fields calls from `__post_init__`."""
    for field in dataclasses.fields(obj):
        value, key = getattr(obj, field.name), f"{path}{field.name}"
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            check_fields(value, kind, f"{key}.")
        elif (found := declared(field)) is not None:
            check_value(key, found, value, kind)
