"""A cold process compiles each kernel once: no variant for a literal argument, none for a second mask dtype.

numba compiles a function called from compiled code once per argument type,
and a constant argument (`f(x, 0)`, or a counter started at `0` that the
type inference sees before its increments) is a type of its own,
`Literal[int](0)`, so the callee is compiled again for it; masks given as
int8 by the AEC env and as bool by the batched engines compiled each
heuristic twice. Both are compile time that the first run after an install
pays (`benchmarks/cold_start.py`: about 40% of a search's first decision).
The kernels therefore pass `np.int64(0)` where a constant is meant, and
`checked_batch` gives every kernel bool masks.

The check needs a cold kernel cache (a kernel loaded from the cache does not
show the variants its callees were compiled for), so it plays a search's
decisions in a fresh process with an empty `NUMBA_CACHE_DIR`: about a minute.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

PLAY = """
import json, sys
import numpy as np
from numba.core import types
from numba.core.registry import CPUDispatcher
from cardlab.agents.agent_spec import make_agent
from cardlab.envs import make_env

for game in ("huit", "switch"):
    env = make_env(game, num_players=4)
    env.reset(seed=3)
    agents = {"search": make_agent("search:worlds=8:ms=0:expert", env.game, seed=0),
              "expert": make_agent("expert", env.game, seed=0)}
    for turn in range(12):
        seat = env.agent_selection
        if env.terminations[seat] or env.truncations[seat]:
            break
        env.step(int(agents["search" if turn % 2 else "expert"].act(env.observe(seat))))

MASKS = {types.boolean, types.int8, types.uint8}


def variants(signatures):
    '''Why a kernel's signatures are more than its callers need: a literal argument, or two signatures that
    differ only in the dtype of a mask.'''
    found = [f"literal argument {i}: {a}" for s in signatures for i, a in enumerate(s)
             if isinstance(a, types.Literal)]
    for k, first in enumerate(signatures):
        for second in signatures[k + 1:]:
            apart = [(x, y) for x, y in zip(first, second) if x != y]
            if apart and all(isinstance(x, types.Array) and isinstance(y, types.Array) and x.ndim == y.ndim
                             and {x.dtype, y.dtype} <= MASKS for x, y in apart):
                found.append(f"masks of two dtypes: {apart}")
    return found


out, seen = {}, set()
for name, module in sorted(sys.modules.items()):
    if not name.startswith("cardlab"):
        continue
    for attr, value in vars(module).items():
        if isinstance(value, CPUDispatcher) and id(value) not in seen:
            seen.add(id(value))
            if value.signatures:
                out[f"{value.py_func.__module__}.{value.py_func.__name__}"] = variants(value.signatures)
print(json.dumps(out))
"""


def test_a_cold_process_compiles_no_kernel_twice_for_the_same_types(tmp_path: pathlib.Path) -> None:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "kernels")}
    done = subprocess.run([sys.executable, "-c", PLAY], env=env, capture_output=True, text=True, timeout=600,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    compiled = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(compiled) >= 20, f"too few kernels compiled to say anything: {sorted(compiled)}"
    offenders = {name: why for name, why in compiled.items() if why}
    assert not offenders, (f"compiled more than once for the same types (pass np.int64(0) for a constant, "
                           f"give kernels bool masks): {offenders}")
