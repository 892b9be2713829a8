"""The one checked JSON reader of untrusted input, and the one bounded excerpt that errors quote.

Every JSON that crosses into cardlab from outside (web request bodies, saved
states, replays, bot files) is read by `read_json`: at most `max_bytes` of
UTF-8, arrays/objects nested at most `MAX_DEPTH` deep (`json.loads` would
recurse, not refuse), numbers of at most `MAX_NUMBER_CHARS` characters (Python
refuses ints over 4,300 digits with its own error), strict: no NaN/Infinity,
no number that overflows to infinity (`1e400`), refused naming its key, and
no key given twice in one object (`json.loads` keeps the last one silently).
Each refusal is one `ValueError` saying what is wrong and what is accepted.

Errors quote input through `excerpt` only: a short, bounded repr that never
recurses deeply (a plain `repr()` of a value nested 1,000 deep raises
`RecursionError`) nor prints a 100,000-character value whole.
"""

from __future__ import annotations

import json
import math
import pathlib
import re
import reprlib
from collections.abc import Iterable
from typing import Any

MAX_DEPTH = 32
"""deepest nesting of arrays/objects accepted: cardlab's own files use a handful of levels"""
MAX_NUMBER_CHARS = 100
"""longest number literal accepted (a 128-bit RNG state is 39 digits)"""
MAX_BYTES = 4 << 20
"""default size cap of a JSON text (4 MiB: a saved state or replay is a few KiB)"""
EXCERPT_CHARS = 80
"""longest excerpt of the input an error message quotes"""

# A JSON string (an unterminated one runs to the end: a failed match would be retried at every later
# quote, quadratic time), or a bracket.
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)


class _Excerpt(reprlib.Repr):
    """`reprlib` with shallow levels, and ints too long to print shown by their size."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel, self.maxstring, self.maxother, self.maxlong = 3, 40, 40, 30
        self.maxlist = self.maxtuple = self.maxset = self.maxdict = 8

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 128:
            return f"<a number of about {int(x.bit_length() * 0.30103):,} digits>"
        return super().repr_int(x, level)


_EXCERPT = _Excerpt()


def excerpt(value: Any, limit: int = EXCERPT_CHARS) -> str:
    """A value as an error message quotes it: a repr of at most `limit` characters, shallow, never failing."""
    try:
        text = _EXCERPT.repr(value)
    except Exception:  # a value's own __repr__ may fail; the message must not
        text = f"<{type(value).__name__}>"
    return _cut(text, limit)


def key_names(keys: Iterable[Any], most: int = 5) -> str:
    """Keys for a message: the first `most`, sorted, each cut short; a key that is not a string has quotes."""
    listed = sorted(keys, key=excerpt)
    names = [_cut(k, 40) if isinstance(k, str) else excerpt(k, 40) for k in listed[:most]]
    more = f" and {len(listed) - most} more" if len(listed) > most else ""
    return ", ".join(names) + more


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def too_deep(text: str, max_depth: int = MAX_DEPTH) -> bool:
    """Whether arrays/objects nest deeper than `max_depth` (brackets inside strings do not count)."""
    depth = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > max_depth:
                return True
        elif token in ("]", "}"):
            depth -= 1
    return False


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _number(parse: type) -> Any:
    def read(text: str) -> Any:
        if len(text) > MAX_NUMBER_CHARS:
            raise ValueError(f"a number of {len(text):,} characters (at most {MAX_NUMBER_CHARS} accepted)")
        return parse(text)

    return read


class _Overflow:
    """Stands for a number literal too large for a float (`1e400`) until its key is known."""

    def __init__(self, text: str) -> None:
        self.text = text



def _overflow_at(value: Any, where: str) -> tuple[str, _Overflow] | None:
    """Where the first `_Overflow` sits, as a key path (`['meta']['num_players']`, `[3]`), or None."""
    if isinstance(value, _Overflow):
        return where, value
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = _overflow_at(item, f"{where}[{excerpt(key, 40)}]")
        if found is not None:
            return found
    return None


class DuplicateKey(ValueError):
    """A JSON object that gives one key twice (`json.loads` would keep the last silently)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKey(key)
        out[key] = value
    return out


def read_json(data: bytes | str, what: str, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """Parse untrusted JSON; a ValueError names `what` and the limit it broke."""
    if len(data) > max_bytes:
        raise ValueError(f"{what} is larger than {max_bytes:,} bytes; at most {max_bytes:,} are accepted")
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise ValueError(f"{what} is not UTF-8 text (byte {err.start}); it must be UTF-8 JSON") from None
    if too_deep(data, max_depth):
        raise ValueError(f"{what} nests arrays/objects more than {max_depth} deep; at most {max_depth} "
                         "levels are accepted")
    overflows: list[_Overflow] = []

    def read_float(text: str) -> float | _Overflow:
        number = _number(float)(text)
        if math.isfinite(number):
            return number
        overflows.append(_Overflow(text))
        return overflows[-1]

    try:
        value = json.loads(data, parse_constant=_no_constant, parse_int=_number(int), parse_float=read_float,
                           object_pairs_hook=_unique_keys)
    except RecursionError:  # pragma: no cover - too_deep refuses such text first
        raise ValueError(f"{what} nests too deep") from None
    except DuplicateKey as err:
        raise ValueError(f"{what} gives the key {_cut(err.key, 40)!r} twice in one object: each key may "
                         "appear once (which one would count?)") from None
    except ValueError as err:
        raise ValueError(f"{what} is not valid JSON (truncated or corrupted?): {str(err)[:200]}") from None
    found = _overflow_at(value, "") if overflows else None
    if found is not None:
        where, number = found
        raise ValueError(f"{what}: the number {_cut(number.text, 40)} at {where or 'the top'} is too large "
                         "to be finite; numbers up to about 1.8e308 are accepted")
    return value


def read_json_file(path: pathlib.Path, what: str = "", max_bytes: int = MAX_BYTES) -> Any:
    """`read_json` of a file, reading at most `max_bytes` + 1 bytes of it (a huge file is not read whole)."""
    what = what or f"the file {path}"
    with path.open("rb") as f:  # an OSError (no such file) is the caller's to word
        data = f.read(max_bytes + 1)
    return read_json(data, what, max_bytes)
