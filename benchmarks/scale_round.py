"""One prepared scale round on a machine with a GPU and many cores: the actors table, then a long run grown.

Such a machine may be lent for minutes, with no internet and a Python that has torch, numba and the
lighter dependencies but not gymnasium, pettingzoo or stable-baselines3; so the round is one command
whose results all land in one folder (`--out`, default ``$OUT``, else ``out``):

- ``wheels`` (here, with internet): downloads the wheels that machine lacks, in the versions this
  environment runs, into ``.whl/`` (ignored by git; carried to the machine with the working tree);
- ``run`` (there): installs them and the project into a folder of its own (`--site`; no pip, no
  build, no network: `install`), records the machine (machine.json), measures lean steps/s by actors
  with the learner on the GPU (benchmarks/actor_throughput.py; actors.json, rewritten after each row),
  grows a long run with 16 actors and the GPU learner for the minutes left (benchmarks/learning_curve.py
  long) and packs what its next round needs into LABEL.tar.gz; everything said goes to scale_round.log
  too. Without a GPU it refuses, unless told ``--cpu`` (a dry run, the learner on the CPU);
- ``bring`` (here): puts a packed run in place of the one in benchmarks/results/long-runs/, prints its
  curve's table and draws its PNG.

Each part of ``run`` is a child process with a time limit taken from one budget (`--limit-minutes`, the
machine's limit on a command less a margin), so a part that runs long cannot take the next one's time:
the table stops where its limit falls (actors.json keeps the rows measured), the round is interrupted
as Ctrl-C interrupts it (the learner saves a checkpoint) and packed as it stands. This file's top
imports only the standard library: ``run`` starts before the wheels are installed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import zipfile
from pathlib import Path
from typing import IO, Any

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO / "benchmarks"
LONG_RUNS = BENCHMARKS / "results" / "long-runs"
"""learning_curve.LONG_RUNS_DIR (that module imports cardlab, which `run` installs first)"""
WHEELS = ("gymnasium", "farama-notifications", "pettingzoo", "stable-baselines3", "sb3-contrib")
"""what the GPU machine's Python lacks of what cardlab imports (all pure Python)"""
MODULES = ("gymnasium", "pettingzoo", "stable_baselines3", "sb3_contrib", "cardlab")
"""what `run` needs importable before it measures anything"""
TARGET_PYTHON = "3.12"
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")
"""the machine's Python and platform tags, for `pip download` (the wheels above are pure Python)"""
PACK_LIMIT = 16 * 2**20
"""the largest file the machine sends back"""
ROUND_RESERVE = 2.5
"""minutes a round needs past its training: resuming and starting its actors, the final evaluation, an
interruption's checkpoint, packing"""
STOP_GRACE = 45.0
"""seconds an interrupted round has to save its checkpoint before it is killed"""
PARTS = ("table", "round")
"""what `run` does after installing, each if asked (`--parts`)"""

PROBE = """
import json, os, platform, torch
gpu = torch.cuda.is_available()
print(json.dumps({"python": platform.python_version(), "torch": torch.__version__,
                  "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(0) if gpu else None,
                  "cores": os.cpu_count(), "usable_cores": len(os.sched_getaffinity(0))}))
"""
"""the machine, as machine.json records it (torch is there before anything is installed)"""
MISSING = """
import importlib.util, json, sys
print(json.dumps([m for m in sys.argv[1:] if importlib.util.find_spec(m) is None]))
"""
"""which of the modules named in its arguments cannot be imported"""
PREFLIGHT = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import learning_curve as lc
label, actors, device, root = sys.argv[2], int(sys.argv[3]), sys.argv[4], Path(sys.argv[5])
cfg = lc.placed(lc.long_config(label), actors, device)
print(json.dumps(lc.steps_done(lc.own_runs(label, root / label, cfg.name))))
"""
"""the round's label, placement and run folder checked as the round will check them, before the table
takes its minutes: its learner steps so far"""


def pins() -> list[str]:
    """`WHEELS` as ``name==version``, the versions installed here (what the tests passed with)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return [f"{name}=={version(name)}" for name in WHEELS]
    except PackageNotFoundError as err:
        raise SystemExit(f"{err.name} is not installed here; accepted: this command in an environment "
                         "with cardlab's dependencies (README.md's set-up)") from None


def download_wheels(dest: Path) -> list[Path]:
    """Download `pins` for the machine's Python into `dest`; print each wheel and the total size."""
    platforms = [arg for tag in PLATFORMS for arg in ("--platform", tag)]
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                    "--python-version", TARGET_PYTHON, "--implementation", "cp", *platforms, "-d", str(dest),
                    *pins()], check=True)
    found = sorted(dest.glob("*.whl"))
    for wheel in found:
        print(f"{wheel.stat().st_size / 2**20:7.2f} MiB  {wheel.name}")
    print(f"{sum(w.stat().st_size for w in found) / 2**20:7.2f} MiB in {len(found)} wheels in {dest}")
    return found


def child_json(code: str, env: dict[str, str], *argv: str) -> Any:
    """What a Python snippet run as a child process with `env` prints, as JSON; where it fails, its last
    line (a refusal's one line) ends this process."""
    done = subprocess.run([sys.executable, "-c", code, *argv], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        said = done.stderr.strip().splitlines()
        raise SystemExit(said[-1] if said else f"a check in a child process failed ({done.returncode})")
    return json.loads(done.stdout)


def with_site(env: dict[str, str], site: Path) -> dict[str, str]:
    """`env` with `site` first on PYTHONPATH (the child processes and their actors import from it)."""
    paths = [str(site), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    return {**env, "PYTHONPATH": os.pathsep.join(paths)}


def install(wheels: Path, site: Path, env: dict[str, str], log: Path) -> dict[str, str]:
    """Put the wheels in `wheels` and the project into `site` where `MODULES` are not all importable; the
    environment the children then run in (`site` first on their path).

    Neither pip nor a build is needed, so a Python without pip or setuptools will do: a pure-Python wheel
    is a zip of what pip would copy (`unpack_wheels`), and the project is linked as pyproject maps its
    folders (`link_project`), as an editable install links them.
    """
    missing = child_json(MISSING, env, *MODULES)
    if not missing:
        say(log, "installed already: " + ", ".join(MODULES))
        return env
    found = sorted(wheels.glob("*.whl"))
    if not found and missing != ["cardlab"]:
        raise SystemExit(f"{', '.join(missing)} cannot be imported and {wheels} holds no wheels; accepted: "
                         "the wheels of `python benchmarks/scale_round.py wheels`, carried in .whl")
    unpack_wheels(found, site)
    link_project(site)
    env = with_site(env, site)
    still = child_json(MISSING, env, *MODULES)
    if still:
        raise SystemExit(f"{', '.join(still)} still cannot be imported after installing {len(found)} wheels "
                         f"and the project into {site}")
    say(log, f"installed {len(found)} wheels and cardlab into {site}")
    return env


def unpack_wheels(found: list[Path], site: Path) -> None:
    """Unzip each wheel into `site`, what pip does with a pure-Python wheel; a wheel of compiled code
    (whose install needs more than that) is refused in one line."""
    for wheel in found:
        if not wheel.name.endswith("-none-any.whl"):
            raise SystemExit(f"{wheel} is not a pure-Python wheel; accepted: NAME-VERSION-py3-none-any.whl, "
                             "as `python benchmarks/scale_round.py wheels` downloads them")
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(site)


def link_project(site: Path) -> None:
    """Make `site`/cardlab the package of this checkout as pyproject.toml maps it (`[tool.setuptools.
    package-dir]`): a folder of links to the mapped top package's entries, and a link to each mapped
    folder that the links above it do not reach, so that cardlab.envs is envs/ and so on."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10: the backport
        import tomli as tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    mapping: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    for name, folder in sorted(mapping.items(), key=lambda item: item[0].count(".")):
        target, source = site.joinpath(*name.split(".")), REPO / folder
        if "." not in name:
            shutil.rmtree(target, ignore_errors=True)  # a previous call's links (rmtree unlinks, not follows)
            target.mkdir(parents=True)
            for entry in source.iterdir():
                if entry.name != "__pycache__":
                    (target / entry.name).symlink_to(entry)
        elif not target.exists():
            target.symlink_to(source, target_is_directory=True)
        elif target.resolve() != source.resolve():
            raise SystemExit(f"{name} maps to {source}, but {target} is {target.resolve()}: pyproject.toml's "
                             "package-dir maps a package inside another one's folder elsewhere")


def copy_lines(source: IO[str], sink: IO[str]) -> None:
    """Echo a child's output here and into the log, line by line, as it comes."""
    for line in source:
        sys.stdout.write(line)
        sys.stdout.flush()
        sink.write(line)
        sink.flush()


def limited(argv: list[str], env: dict[str, str], seconds: float, log: Path, interrupt: bool) -> int | None:
    """Run `argv` in a session of its own for at most `seconds`; its exit status, None where the limit
    stopped it. At the limit an `interrupt`ed child gets Ctrl-C's signal first (a training run saves its
    checkpoint) and `STOP_GRACE` seconds; then the child and its actors are killed."""
    with log.open("a", encoding="utf-8") as sink:
        sink.write(f"$ {' '.join(argv)}\n")
        sink.flush()
        child = subprocess.Popen(argv, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True, start_new_session=True)
        assert child.stdout is not None
        echo = threading.Thread(target=copy_lines, args=(child.stdout, sink), daemon=True)
        echo.start()
        try:
            code = child.wait(timeout=max(seconds, 1.0))
            if code != 0:
                say(log, f"{Path(argv[1]).name} ended with exit status {code}")
            return code
        except subprocess.TimeoutExpired:
            say(log, f"time limit ({seconds / 60:.1f} min) reached: stopping {Path(argv[1]).name}")
            if interrupt:
                os.killpg(child.pid, signal.SIGINT)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    child.wait(timeout=STOP_GRACE)
            return None
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)  # what is left of its session (actors)
            child.wait()
            echo.join(timeout=10)


def say(log: Path, line: str) -> None:
    """Print `line` and add it to the log."""
    print(line, flush=True)
    with log.open("a", encoding="utf-8") as sink:
        sink.write(line + "\n")


def pack(home: Path, out: Path) -> Path:
    """`home` (a long run's folder) as out/LABEL.tar.gz, without TensorBoard's event files (eval.csv holds
    the curve; a round ended normally has removed them)."""
    if not home.is_dir():
        raise SystemExit(f"{home}: no long run there to pack")
    tarball = out / f"{home.name}.tar.gz"

    def kept(member: tarfile.TarInfo) -> tarfile.TarInfo | None:
        name = Path(member.name).name
        return None if name.startswith("events.out.tfevents.") or name == "__pycache__" else member

    with tarfile.open(tarball, "w:gz") as tar:
        tar.add(home, arcname=home.name, filter=kept)
    return tarball


def run(args: argparse.Namespace) -> None:
    """The round, as the module doc says."""
    started = time.monotonic()
    out: Path = args.out or Path(os.environ.get("OUT") or "out")
    out.mkdir(parents=True, exist_ok=True)
    log = out / "scale_round.log"
    env = dict(os.environ)
    info = child_json(PROBE, env)
    info["nvidia_smi"] = nvidia_smi()
    (out / "machine.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    say(log, f"machine: {info['nvidia_smi'] or 'no nvidia-smi'}; {info['usable_cores']} of {info['cores']} "
             f"cores; Python {info['python']}, torch {info['torch']}, CUDA {info['cuda']}, GPU {info['gpu']}")
    if info["gpu"] is None and not args.cpu:
        raise SystemExit("no GPU here: torch.cuda.is_available() is false; accepted: a machine with a GPU, "
                         "or --cpu for a dry run with the learner on the CPU")
    device = "cpu" if args.cpu else "cuda"
    env = install(args.wheels, args.site, env, log)
    if "round" in args.parts:
        steps = child_json(PREFLIGHT, env, str(BENCHMARKS), args.label, str(args.round_actors), device,
                           str(args.long_runs))
        say(log, f"{args.label}: {steps:,} learner steps in {args.long_runs / args.label}")

    def left() -> float:
        return args.limit_minutes * 60.0 - (time.monotonic() - started)

    if "table" in args.parts:
        table = [sys.executable, str(BENCHMARKS / "actor_throughput.py"), "--configs", args.config,
                 "--device", device, "--repeats", "1"]
        limited([*table, "--actors", "0", "--steps", "1"], env, min(120.0, left()), log, False)  # compiles
        limited([*table, "--actors", *map(str, args.actors), "--steps", str(args.table_steps),
                 "--json", str(out / "actors.json")], env, min(args.table_minutes * 60.0, left()), log, False)
    if "round" in args.parts:
        grow_round(args, device, env, left() / 60.0, log)
        tarball = pack(args.long_runs / args.label, out)
        size = tarball.stat().st_size
        say(log, f"packed {tarball} ({size / 2**20:.2f} MiB"
                 f"{'' if size <= PACK_LIMIT else ', more than the machine sends back'})")
    say(log, f"done in {(time.monotonic() - started) / 60:.1f} min")


def grow_round(args: argparse.Namespace, device: str, env: dict[str, str], left: float, log: Path) -> None:
    """The long run's round in the `left` minutes: training for what `ROUND_RESERVE` leaves of them (at
    most `--minutes`), interrupted as Ctrl-C interrupts it where it runs past them."""
    minutes = min(args.minutes, left - ROUND_RESERVE)
    if minutes <= 0.5:
        say(log, f"no round: {left:.1f} minutes left, a round needs more than {ROUND_RESERVE + 0.5:.1f}")
        return
    grow = [sys.executable, str(BENCHMARKS / "learning_curve.py"), "long", args.label, "--minutes",
            f"{minutes:.2f}", "--actors", str(args.round_actors), "--device", device, "--no-plot",
            "--long-runs", str(args.long_runs), *(["--until", str(args.until)] if args.until else [])]
    limited(grow, env, left * 60.0 - STOP_GRACE - 20.0, log, True)


def nvidia_smi() -> str | None:
    """The GPU as nvidia-smi names it (name, memory, driver), None without nvidia-smi."""
    if shutil.which("nvidia-smi") is None:
        return None
    query = ["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"]
    done = subprocess.run(query, capture_output=True, text=True)
    return done.stdout.strip() or done.stderr.strip()


def bring(tarball: Path, root: Path) -> Path:
    """Put the long run packed in `tarball` in place of its folder in `root`, once its contents are checked:
    one label's folder holding only its own runs, a curve to read, and no fewer learner steps than the
    run it replaces. Prints the curve's table and draws its PNG beside the folder."""
    sys.path.insert(0, str(BENCHMARKS))
    import learning_curve as lc

    with tarfile.open(tarball) as tar:
        labels = sorted({Path(name).parts[0] for name in tar.getnames() if Path(name).parts})
        if len(labels) != 1 or not lc.LABEL.fullmatch(labels[0]):
            raise SystemExit(f"{tarball} holds {', '.join(labels) or 'nothing'}; accepted: one long run's "
                             f"folder, as `run` packs it ({lc.LABELS})")
        label = labels[0]
        cfg = lc.long_config(label)
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=root) as tmp:
            tar.extractall(tmp, filter="data")
            runs = lc.own_runs(label, Path(tmp) / label, cfg.name)
            if not runs:
                raise SystemExit(f"{tarball} holds no run folder of {label}; accepted: one as `run` packs it")
            lc.read_curve(runs[-1])
            home = root / label
            here = lc.steps_done(lc.own_runs(label, home, cfg.name))
            if lc.steps_done(runs) < here:
                raise SystemExit(f"{tarball}: {label} at {lc.steps_done(runs):,} learner steps, fewer than "
                                 f"the {here:,} of {home}; accepted: a run grown from the one here")
            shutil.rmtree(home, ignore_errors=True)
            shutil.move(str(Path(tmp) / label), home)
    curve = lc.read_curve(lc.own_runs(label, home, cfg.name)[-1])
    print(lc.curve_table(curve))
    print(f"wrote {lc.plot([curve], root / f'{label}.png', by_steps=True)}")
    return home


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("wheels", help="download the wheels the GPU machine lacks (here, with internet)")
    p.add_argument("--dest", type=Path, default=REPO / ".whl", help="where they go (carried with the tree)")
    p = sub.add_parser("run", help="the round, on the GPU machine")
    p.add_argument("--cpu", action="store_true", help="a dry run without a GPU: the learner on the CPU")
    p.add_argument("--out", type=Path, help="where the results go (default: $OUT, else ./out)")
    p.add_argument("--limit-minutes", type=float, default=9.0, help="the whole command's minutes")
    p.add_argument("--table-minutes", type=float, default=3.5, help="at most this long for the table")
    p.add_argument("--table-steps", type=int, default=2_000_000, help="learner steps of each table run")
    p.add_argument("--actors", type=int, nargs="+", default=[16, 8, 4, 2, 1],
                   help="the table's actor counts, in the order measured")
    p.add_argument("--config", default="long", help="the table's config (actor_throughput.py --configs)")
    p.add_argument("--label", default="switch-4p-ppo-clone", help="the long run grown")
    p.add_argument("--minutes", type=float, default=10.0, help="the round's minutes of training at most "
                                                                "(fewer where the limit leaves fewer)")
    p.add_argument("--round-actors", type=int, default=16, help="the round's actor processes")
    p.add_argument("--until", type=int, help="the round stops at this many learner steps")
    p.add_argument("--long-runs", type=Path, default=LONG_RUNS, help="the long runs' folder")
    p.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS), help="what to run")
    p.add_argument("--wheels", type=Path, default=REPO / ".whl", help="the carried wheels")
    p.add_argument("--site", type=Path, default=Path(tempfile.gettempdir()) / "cardlab-site",
                   help="where the wheels and the project are installed")
    p = sub.add_parser("bring", help="put a packed long run back in benchmarks/results/long-runs (here)")
    p.add_argument("tarball", type=Path, help="LABEL.tar.gz from a round's output folder")
    p.add_argument("--long-runs", type=Path, default=LONG_RUNS, help="the long runs' folder")
    args = parser.parse_args(argv)
    if args.command == "wheels":
        download_wheels(args.dest)
    elif args.command == "run":
        for option in ("limit_minutes", "table_minutes", "table_steps", "minutes"):
            value = getattr(args, option)
            if not 0 < value < float("inf"):
                parser.error(f"--{option.replace('_', '-')}={value} is out of range; accepted: a number > 0")
        for option, values, low in (("actors", args.actors, 0), ("round_actors", [args.round_actors], 0),
                                    ("until", [args.until] if args.until is not None else [], 1)):
            for value in values:
                if value < low:  # --until 0 read as no --until at all before
                    parser.error(f"--{option.replace('_', '-')}={value} is out of range; accepted: a whole "
                                 f"number >= {low}")
        run(args)
    else:
        bring(args.tarball, args.long_runs)


if __name__ == "__main__":
    main()
