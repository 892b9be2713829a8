"""The `cardlab` command as a person runs it: a separate process, with Ctrl-C
(SIGINT to the whole process group, as a terminal sends it), a pipe closed by
``head``, a log file instead of a terminal, a terminal, and its own temp folder.
"""

from __future__ import annotations

import fcntl
import os
import pathlib
import re
import select
import shlex
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time
from typing import Any

import pytest
import yaml

CARDLAB = [sys.executable, "-m", "cardlab"]
TIMEOUT = 240  # seconds; a busy 2-core machine runs these in 10-30

SMALL_RUN = {  # complete in seconds: imitation in worker processes, two evaluations, a final one
    "name": "small", "seed": 1, "game": "huit", "num_players": 2,
    "opponents": ["random"],
    "imitation": {"enabled": True, "teacher": "greedy", "hands": 20, "epochs": 2, "batch_size": 64},
    "ppo": {"n_steps": 32, "batch_size": 32, "n_epochs": 1},
    "policy": {"net_arch": [16]}, "num_envs": 2, "vec_env": "subproc", "total_timesteps": 128,
    "eval": {"every_steps": 64, "hands": 4, "final_hands": 6, "opponents": ["random", "greedy"]},
    "checkpoint_every": 64,
}
# Runs far longer than a test: Ctrl-C stops it once it has a checkpoint. Its imitation and step-0 evaluation
# take seconds before PPO's first step, which is what made the bar's first ETA read 190 hours.
LONG_RUN = {
    **SMALL_RUN, "name": "long", "total_timesteps": 300_000, "checkpoint_every": 64,
    "imitation": {"enabled": True, "teacher": "expert", "hands": 60, "epochs": 2, "batch_size": 64},
    "eval": {"every_steps": 1_000_000, "hands": 100, "final_hands": 0, "opponents": ["expert"]},
}


def ctrl_c_as_a_terminal() -> None:
    """In the child, before it runs: Ctrl-C does what it does from a terminal, even when the tests were
    started with SIGINT ignored (`nohup`, a background job of a script), which a child would inherit."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def write_config(folder: pathlib.Path, data: dict[str, Any]) -> pathlib.Path:
    path = folder / f"{data['name']}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def environment(tmp: pathlib.Path) -> dict[str, str]:
    """The test's environment with a temp folder of the run's own (to see what it leaves behind)."""
    tmp.mkdir(exist_ok=True)
    # PYTHONFAULTHANDLER: a crash of the child shows where it was in its stderr.
    env = dict(os.environ, TMPDIR=str(tmp), PYTHONUNBUFFERED="1", PYTHONFAULTHANDLER="1")
    env.pop("SB3_LOGDIR", None)
    return env


def wait_for(condition: Any, process: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert process.poll() is None, f"the command ended (status {process.returncode}) before {what}"
        assert time.monotonic() < deadline, f"no {what} after {TIMEOUT} s"
        time.sleep(0.2)


def left_behind(tmp: pathlib.Path) -> list[str]:
    """What a command left in its temp folder, but torch's per-user cache (one folder, reused)."""
    return sorted(p.name for p in tmp.iterdir() if not p.name.startswith("torchinductor_"))


def first_run(runs: pathlib.Path) -> pathlib.Path | None:
    found = sorted(runs.glob("*/checkpoints/SHA256SUMS")) if runs.is_dir() else []
    return found[0].parent.parent if found else None


@pytest.mark.slow
def test_a_logged_run_prints_lines_not_a_bar_and_leaves_no_temp_files(tmp_path: pathlib.Path) -> None:
    config = write_config(tmp_path, SMALL_RUN)
    runs, tmp = tmp_path / "runs", tmp_path / "tmp"
    done = subprocess.run([*CARDLAB, "train", str(config), "--runs-dir", str(runs)], capture_output=True,
                          text=True, env=environment(tmp), timeout=TIMEOUT, check=False)
    assert done.returncode == 0, done.stderr
    (run,) = runs.iterdir()
    lines = done.stdout.splitlines()
    assert lines[0] == f"run folder: {run}"  # said when the run starts, not only at the end
    # Stderr is not a terminal: no bar at all (a redirected log once got 2,750 updates), lines instead.
    assert done.stderr == ""
    assert "imitation: collecting 20 hands of greedy play in 2 env(s)" in lines
    assert "imitation: 20 of 20 hands collected" in lines  # collecting demonstrations is no silent gap
    assert any(line.startswith("imitation epoch 2/2: ") for line in lines)
    rate = r"\d\.\d{3} +\[\d\.\d{3}, \d\.\d{3}\]"
    for steps in ("0", "64"):
        assert any(re.fullmatch(rf"evaluation at {steps} steps.*: random {rate}, greedy {rate}", line)
                   for line in lines), steps
    assert f"checkpoint at 64 steps: {run}/checkpoints/model_000000000064.zip" in lines
    assert "final evaluation: 6 hands against each of random, greedy" in lines
    assert any(re.fullmatch(rf"  against greedy: {rate}", line) for line in lines)  # the final eval goes on
    # One format for rates: fractions, as `cardlab eval` prints them, in the lines and in the final table.
    assert not re.search(r"\d%", done.stdout.replace("95% CI", ""))
    head = "opponent                  hands  win rate  95% CI (paired)  Wilson          mean points"
    table = lines[lines.index(head) + 1]
    assert re.fullmatch(rf"random +6 +{rate} +\[\d\.\d{{3}}, \d\.\d{{3}}\] +\d+\.\d\d", table)
    assert lines[-2:] == [f"run folder: {run}", f"bot: {run / 'bot.json'}"]
    # Nothing left in the temp folder: no SB3-*, pymp-* or cardlab-eval-* folders.
    assert left_behind(tmp) == []


@pytest.mark.slow
def test_ctrl_c_stops_training_with_the_resume_command(tmp_path: pathlib.Path) -> None:
    config = write_config(tmp_path, LONG_RUN)
    runs, tmp = tmp_path / "runs", tmp_path / "tmp"
    process = subprocess.Popen([*CARDLAB, "train", str(config), "--runs-dir", str(runs)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=environment(tmp), start_new_session=True, preexec_fn=ctrl_c_as_a_terminal)
    try:
        wait_for(lambda: first_run(runs) is not None, process, "checkpoint")
        os.killpg(process.pid, signal.SIGINT)  # Ctrl-C: every process of the terminal's group, workers too
        out, err = process.communicate(timeout=TIMEOUT)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    run = first_run(runs)
    assert run is not None
    assert process.returncode == 130, err
    assert out.splitlines()[0] == f"run folder: {run}"
    (line,) = err.splitlines()  # one line: no traceback from the trainer or its worker processes
    resume = shlex.join(["cardlab", "train", str(config), "--resume", str(run)])
    assert re.fullmatch(rf"cardlab train: interrupted; the run folder is {re.escape(str(run))}; continue "
                        rf"from its checkpoint at [\d,]+ steps with: {re.escape(resume)}", line)
    assert left_behind(tmp) == []


def run_in_terminal(argv: list[str], env: dict[str, str], until: Any) -> tuple[int, str, str]:
    """Run with stderr on a terminal (150 columns): (status, stdout, stderr); SIGINT once `until()` holds."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 150, 0, 0))
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL, env=env,
                               start_new_session=True, preexec_fn=ctrl_c_as_a_terminal)
    os.close(slave)
    screen = b""
    interrupted = False
    deadline = time.monotonic() + TIMEOUT
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 1 << 16)
                except OSError:  # the terminal's other end closed: the command ended
                    break
                if not chunk:
                    break
                screen += chunk
            elif process.poll() is not None:
                break
            if not interrupted and until():
                os.killpg(process.pid, signal.SIGINT)
                interrupted = True
        out = process.communicate(timeout=TIMEOUT)[0].decode()
    finally:
        os.close(master)
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    return process.returncode, out, screen.decode(errors="replace")


def seconds(text: str) -> int:
    parts = [int(p) for p in text.split(":")]
    return sum(value * 60**i for i, value in enumerate(reversed(parts)))


@pytest.mark.slow
def test_the_bar_on_a_terminal_shows_a_sane_eta_and_its_evaluation(tmp_path: pathlib.Path) -> None:
    config = write_config(tmp_path, LONG_RUN)
    runs = tmp_path / "runs"
    status, out, screen = run_in_terminal([*CARDLAB, "train", str(config), "--runs-dir", str(runs)],
                                          environment(tmp_path / "tmp"), lambda: first_run(runs) is not None)
    assert status == 130, screen[-2000:]
    updates = [u for u in re.split(r"[\r\n]+", screen) if u.startswith("long:")]
    assert updates, screen[-2000:]
    # The ETA is the average rate since PPO started (not since the imitation and the first evaluation before
    # it): a few minutes for 300k steps on these machines, never the hundreds of hours it once read.
    etas = [seconds(m) for u in updates for m in re.findall(r"<(\d+(?::\d+)+)", u)]
    assert etas and max(etas) < 5 * 3600, max(etas)
    assert any("last eval (0 steps): expert 0." in u for u in updates)  # the postfix names its evaluation
    assert "Traceback" not in screen
    assert screen.rstrip().splitlines()[-1].startswith("cardlab train: interrupted; the run folder is ")
    assert out.splitlines()[0].startswith("run folder: ")


def test_ctrl_c_while_playing(tmp_path: pathlib.Path) -> None:
    process = subprocess.Popen([*CARDLAB, "play", "huit", "--opponents", "random"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment(tmp_path),
                               start_new_session=True, preexec_fn=ctrl_c_as_a_terminal)
    assert process.stdout is not None
    try:
        fd = process.stdout.fileno()
        shown = b""
        deadline = time.monotonic() + TIMEOUT
        while b"your move> " not in shown and time.monotonic() < deadline:
            if select.select([fd], [], [], 0.2)[0]:
                chunk = os.read(fd, 1 << 16)
                assert chunk, "play ended before asking for a move"
                shown += chunk
        os.killpg(process.pid, signal.SIGINT)
        _out, err = process.communicate(timeout=TIMEOUT)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130
    assert err.decode() == "cardlab play: interrupted\n"


def test_a_closed_pipe_ends_quietly(tmp_path: pathlib.Path) -> None:
    # `cardlab rules switch | head -1`: the reader is gone before all is written.
    process = subprocess.Popen([*CARDLAB, "rules", "switch"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=environment(tmp_path))
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()
    err = process.stderr.read().decode()
    assert process.wait(timeout=TIMEOUT) == 0
    assert err == ""


def test_tests_keep_temp_files_in_pytests_folder(tmp_path_factory: pytest.TempPathFactory) -> None:
    # tests/conftest.py: what the code under test, its processes and SB3 put in "the" temp folder lands in
    # pytest's own (which it prunes), not in the system's.
    base = str(tmp_path_factory.getbasetemp())
    for folder in (tempfile.gettempdir(), os.environ["TMPDIR"], os.environ["SB3_LOGDIR"]):
        assert folder.startswith(base), folder


def one_line_refusal(argv: list[str], tmp_path: pathlib.Path) -> str:
    """A command that must refuse its input: status 2, one line on stderr, no traceback."""
    done = subprocess.run([*CARDLAB, *argv], capture_output=True, text=True, timeout=TIMEOUT,
                          env=environment(tmp_path / "tmp"), check=False)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


def test_eval_refuses_a_huge_rule_option_in_one_line(tmp_path: pathlib.Path) -> None:
    line = one_line_refusal(["eval", "--game", "huit", "--agents", "random", "random", "--hands", "1",
                             "--rule", "target_score=" + "9" * 400], tmp_path)
    assert "target_score=<a number of about 400 digits> is out of range; accepted: 1 to 1,000,000" in line


@pytest.mark.parametrize(("content", "words"), [
    ("[" * 3000 + "]" * 3000, "nests arrays/objects more than 32 deep"),
    ("SCORES", "saved state field 'scores'[0] must be a whole number -1000000000..1000000000"),
], ids=["deep", "huge-scores"])
def test_advise_refuses_deep_or_huge_state_files_in_one_line(tmp_path: pathlib.Path, content: str,
                                                             words: str) -> None:
    import json

    from cardlab.envs import huit_v1

    env = huit_v1.env(num_players=2)
    env.reset(seed=1)
    state = env.state_dict()
    state["scores"] = [10**80, 0]
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state) if content == "SCORES" else content)
    line = one_line_refusal(["advise", "huit", "--state", str(path), "--agent", "greedy"], tmp_path)
    assert words in line and len(line) < 300
