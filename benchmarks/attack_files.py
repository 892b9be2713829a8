"""The attack probes of the files a person is handed or names (`attack_probes.py files`).

Each probe loads or runs what an attacker would hand over, in this process,
and sorts every case into: refused in one line naming the file (what must
happen), accepted (listed, for a person to judge), or crashed (a traceback,
an error of more than one line or not naming the file, or a load past
`SECONDS`: must be 0). Peak memory is printed: a hostile file must not move it.

- ONNX graphs: the hostile catalogue of the tests (endless Loops, a Loop
  read from the observation, If, ConstantOfShape, Expand, Tile, Range, huge
  broadcasts, a batch squared, a product of initializers) and, `--graphs`
  times, the exported shipped huit-2p graph with one node's operator replaced
  by any operator of the ONNX standard;
- hand readers: the shipped huit-4p reader's metadata tampered (`--tampered`),
  an overflowing network, a link to /proc/self/mem;
- read-hands configs: configs/readers/huit_4p.yaml tampered (`--tampered`),
  validated and checked against the machine, never run;
- export targets: ``cardlab export -o`` at devices, /proc, missing folders,
  an existing bot, a fifo, a link.
"""

from __future__ import annotations

import collections
import contextlib
import io
import json
import os
import pathlib
import random
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import yaml

SECONDS = 10.0
"""the longest a refusal may take"""
ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the hostile graphs and readers are the tests' (tests.agents)


class Tally:
    """Outcomes of one surface's cases, with the accepted and crashed ones listed."""

    def __init__(self, surface: str) -> None:
        self.surface = surface
        self.outcome: collections.Counter[str] = collections.Counter()
        self.accepted: list[str] = []
        self.crashed: list[str] = []
        self.slowest = 0.0

    def case(self, name: str, named: str, attempt: Callable[[], object]) -> None:
        """Run `attempt`: a ValueError of one line naming `named` within SECONDS is a refusal."""
        began = time.monotonic()
        try:
            attempt()
        except ValueError as err:
            took = time.monotonic() - began
            self.slowest = max(self.slowest, took)
            text = str(err)
            if "\n" in text or named not in text or took > SECONDS:
                self.crashed.append(f"{name}: not one line naming {named} within {SECONDS:g} s "
                                    f"({took:.1f} s): {text[:240]!r}")
            else:
                self.outcome["refused"] += 1
                return
        except Exception as err:  # the probe's point: anything else is a crash to report
            self.crashed.append(f"{name}: {type(err).__name__}: {str(err)[:240]}")
        else:
            self.slowest = max(self.slowest, time.monotonic() - began)
            self.outcome["accepted"] += 1
            self.accepted.append(name)
            return
        self.outcome["crashed"] += 1

    def report(self) -> int:
        print(f"{self.surface}: " + ", ".join(f"{k} {v}" for k, v in sorted(self.outcome.items()))
              + f"; slowest {self.slowest:.1f} s")
        for line in sorted(set(self.accepted))[:8]:
            print(f"  accepted: {line}")
        for line in self.crashed[:12]:
            print(f"  crashed: {line}")
        return len(self.crashed)


def difference(old: dict[str, Any], new: Any) -> str:
    """The top-level fields a tampering changed, shortened: what a person judges an acceptance by."""
    if not isinstance(new, dict):
        return json.dumps(new, default=str, allow_nan=True)[:120]
    changed = {key: new.get(key, "(dropped)") for key in sorted(set(old) | set(new))
               if new.get(key, "(dropped)") != old.get(key)}
    return json.dumps(changed, default=str, allow_nan=True)[:120]


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def onnx_graphs(folder: pathlib.Path, graphs: int, rng: random.Random) -> Tally:
    import onnx

    from cardlab.agents.agent_spec import make_agent
    from cardlab.agents.bot import export_onnx, load_bot
    from cardlab.envs import make_game
    from tests.agents import test_onnx_limits as hostile
    from tests.agents.test_onnx_bot import write_bot

    tally = Tally("ONNX graphs")
    game = make_game("huit", {"num_players": 2})
    for index, (name, (make, _)) in enumerate(sorted(hostile.HOSTILE.items())):
        sub = folder / f"hostile{index}"
        sub.mkdir()
        path = write_bot(sub, make())
        tally.case(name, str(path), lambda p=path: load_bot(p, game))
    bot = make_agent("bot:huit-2p", game)
    exported = export_onnx(bot.network, folder / "base", game=game, summary={})  # type: ignore[attr-defined]
    model = onnx.load(str(exported.with_suffix(".onnx")))
    operators = sorted({schema.name for schema in onnx.defs.get_all_schemas() if schema.domain == ""})
    for i in range(graphs):
        changed = onnx.ModelProto()
        changed.CopyFrom(model)
        node = rng.choice(list(changed.graph.node))
        node.op_type = rng.choice(operators)
        sub = folder / f"mutated{i}"
        sub.mkdir()
        path = write_bot(sub, changed)
        tally.case(f"node {node.name or '?'} as {node.op_type}", str(path), lambda p=path: load_bot(p, game))
    return tally


def readers(folder: pathlib.Path, tampered: int, rng: random.Random, mutated: Callable[..., Any]) -> Tally:
    from cardlab.agents.hand_reading.reader import load_reader, shipped_reader_path
    from cardlab.envs import make_game
    from tests.agents.test_reader import overflowing_reader

    tally = Tally("hand readers")
    game = make_game("huit", {"num_players": 4})
    source = shipped_reader_path(game)
    meta = json.loads(source.read_text())
    for i in range(tampered):
        path = folder / f"r{i}.json"
        shutil.copyfile(source.with_suffix(".safetensors"), path.with_suffix(".safetensors"))
        changed = mutated(meta, rng)
        path.write_text(json.dumps(changed, allow_nan=True))
        tally.case(difference(meta, changed), str(path), lambda p=path: load_reader(p, game))
    over = overflowing_reader(folder)
    tally.case("overflowing network", str(over), lambda: load_reader(over, game))
    mem = folder / "mem.json"
    mem.symlink_to("/proc/self/mem")
    tally.case("link to /proc/self/mem", str(mem), lambda: load_reader(mem, game))
    return tally


def configs(folder: pathlib.Path, tampered: int, rng: random.Random, mutated: Callable[..., Any]) -> Tally:
    from cardlab.training.data.reader import check_machine, load_reader_config, validate_reader

    tally = Tally("read-hands configs")
    data = yaml.safe_load((ROOT / "configs" / "readers" / "huit_4p.yaml").read_text())
    extremes = [{"hidden": [65536, 65536]}, {"workers": 256}, {"torch_threads": 1024},
                {"positions": 100_000_000, "chunk": 1},
                {"positions": 1000, "chunk": 1000, "holdout_share": 0.9},
                {"positions": 100_000_000}]
    cases = [{**data, **extreme} for extreme in extremes] + [mutated(data, rng) for _ in range(tampered)]
    for i, case in enumerate(cases):
        path = folder / f"c{i}.yaml"
        path.write_text(yaml.safe_dump(case) if rng.random() < 0.9 else json.dumps(case, allow_nan=True))

        def attempt(p: pathlib.Path = path) -> None:
            cfg = load_reader_config(p)
            try:
                check_machine(cfg, validate_reader(cfg))
            except ValueError as err:
                raise ValueError(f"config file {p}: {err}") from None  # as the command says it

        tally.case(difference(data, case), str(path), attempt)
    return tally


def export_targets(folder: pathlib.Path) -> Tally:
    from cardlab.cli import main

    tally = Tally("export targets")
    (folder / "pair.json").write_text("{}")
    (folder / "pair.onnx").write_text("")
    os.mkfifo(folder / "fifo.onnx")
    (folder / "link.json").symlink_to("/dev/null")
    (folder / "run").mkdir()
    (folder / "run" / "bot.json").write_text("{}")
    targets = ["/dev/null", "/dev/zero", "/proc/x", "/proc/self/mem", str(folder / "no" / "such" / "bot"),
               str(folder / "pair"), str(folder / "pair.onnx"), str(folder / "fifo"), str(folder / "link"),
               str(folder / "run")]
    for target in targets:
        def attempt(t: str = target) -> None:
            said = io.StringIO()
            with contextlib.redirect_stderr(said), contextlib.redirect_stdout(io.StringIO()):
                code = main(["export", "bot:huit-2p", "--format", "onnx", "-o", t])
            if code != 0:
                raise ValueError(said.getvalue().strip())

        tally.case(f"-o {target!r}", target or "-o", attempt)
    return tally


def files(tampered: int, graphs: int, seed: int, mutated: Callable[..., Any]) -> int:
    """Every surface above; the exit status is 1 when any case crashed."""
    rng = random.Random(seed)
    before = peak_mib()
    crashed = 0
    with tempfile.TemporaryDirectory() as folder:
        root = pathlib.Path(folder)
        for name, probe in (("graphs", lambda f: onnx_graphs(f, graphs, rng)),
                            ("readers", lambda f: readers(f, tampered, rng, mutated)),
                            ("configs", lambda f: configs(f, tampered, rng, mutated)),
                            ("export", export_targets)):
            (root / name).mkdir()
            crashed += probe(root / name).report()
    print(f"peak memory: {before:,.0f} MiB before the probes, {peak_mib():,.0f} MiB after")
    return 1 if crashed else 0
