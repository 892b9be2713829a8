"""Seeds checked, and generators saved as JSON-ready data and restored from it, each saved value checked."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from cardlab.envs.checked_json import excerpt, key_names
from cardlab.envs.declared import check_whole
from cardlab.envs.state_checks import is_whole, shown


def check_seed(seed: Any, name: str = "seed") -> int:
    """A seed as a Python int (numpy ints too, any size, as numpy's SeedSequence takes); anything else is
    refused in the one wording of a refused value, named `name` (``seed``, ``seed[3]``)."""
    return check_whole(name, seed, 0, None, "a whole number >= 0 (of any size)")


def rng_state(rng: np.random.Generator) -> dict[str, Any]:
    """The generator's state as JSON-ready data (Philox, SFC64 and MT19937 hold numpy arrays)."""
    return _plain(rng.bit_generator.state)


def copied_into(held: np.random.Generator, source: np.random.Generator) -> np.random.Generator:
    """A copy of `source`: `held` itself given `source`'s state when both are of one kind, else a new one.

    Why: the batched engines' `load` copies a state's generator into a slot, and
    a search loads hundreds of slots per move; setting a state costs about 4 us,
    a deep copy about 60 us, and putting a new Generator into a numba typed list
    about 1.6 ms.
    """
    if type(held.bit_generator) is type(source.bit_generator):
        held.bit_generator.state = source.bit_generator.state
        return held
    return rng_from_state(rng_state(source))


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value.tolist() if isinstance(value, np.ndarray) else value


BIT_GENERATORS = ("PCG64", "PCG64DXSM", "Philox", "SFC64", "MT19937")
# Ranges of the whole-number entries of those generators' states, by key (arrays: their dtype's range).
# numpy accepts some values out of these ranges and then reads past its buffers (MT19937 `pos`,
# Philox `buffer_pos`), so they are checked here rather than left to numpy.
_RNG_INT_RANGES = {
    "has_uint32": (0, 1), "uinteger": (0, 2**32 - 1), "pos": (0, 624), "buffer_pos": (0, 4),
    "state": (0, 2**128 - 1), "inc": (0, 2**128 - 1),
}


def rng_from_state(state: Any, where: str = "state['rng']") -> np.random.Generator:
    """A generator from a saved `Generator.bit_generator.state`; a `ValueError` names what is wrong.

    The state must have exactly the layout of a fresh generator of the same kind
    (keys, whole numbers in range, arrays of the right length).
    """
    if not isinstance(state, Mapping):
        raise ValueError(f"{where} must be a dict from Generator.bit_generator.state, got {shown(state)}")
    name = state.get("bit_generator")
    if not isinstance(name, str) or name not in BIT_GENERATORS:
        raise ValueError(
            f"{where} names the bit generator {shown(name)}: accepted {', '.join(BIT_GENERATORS)}"
        )
    bitgen = getattr(np.random, name)()
    _check_rng_layout(state, bitgen.state, where)
    try:
        bitgen.state = dict(state)
    except (TypeError, ValueError, KeyError, IndexError, OverflowError) as err:
        raise ValueError(f"{where}: numpy refused this {name} state: {err}") from None
    return np.random.Generator(bitgen)


def _check_rng_layout(given: Mapping[str, Any], model: Mapping[str, Any], where: str) -> None:
    """`given` has the keys of `model` (a fresh generator's state) with values of the same kind."""
    if set(given) != set(model):
        raise ValueError(f"{where} must have the keys {key_names(model)}, got {key_names(given)}")
    for key, example in model.items():
        value, path = given[key], f"{where}[{excerpt(key)}]"
        if isinstance(example, str):
            continue
        if isinstance(example, Mapping):
            if not isinstance(value, Mapping):
                raise ValueError(
                    f"{path} must be a dict with the keys {key_names(example)}, got {shown(value)}"
                )
            _check_rng_layout(value, example, path)
        elif isinstance(example, np.ndarray):
            high = int(np.iinfo(example.dtype).max)
            if not _whole_array(value, len(example), high):
                raise ValueError(
                    f"{path} must be a list of {len(example)} whole numbers 0..{high}, got {shown(value)}"
                )
        else:
            low, high = _RNG_INT_RANGES.get(key, (0, 2**64 - 1))
            if not is_whole(value) or not low <= value <= high:
                raise ValueError(f"{path} must be a whole number {low}..{high}, got {shown(value)}")


def _whole_array(value: Any, size: int, high: int) -> bool:
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            return False
    elif not isinstance(value, (list, tuple)):
        return False
    return len(value) == size and all(is_whole(v) and 0 <= v <= high for v in value)
