"""A run's checkpoints, and the record that a run on this machine saved them.

SB3 checkpoints are zip files of pickles (the lean trainer's are `torch.save`
zip files, pickles too): loading one runs whatever code its
author put in it. So cardlab loads a checkpoint (``cardlab export``,
``cardlab train --resume``) only when a run on this machine saved it:

- as a run saves ``RUN/checkpoints/model_<steps>.zip`` (`save_checkpoint`), it
  records its sha256 in ``RUN/checkpoints/SHA256SUMS`` (`record_checkpoint`;
  the format of ``sha256sum``: one ``<hex>  <file name>`` line per
  checkpoint), atomically;
- `load_checkpoint` (through `verify_checkpoint`) refuses a checkpoint that is
  not in its run's checkpoints folder, has no line in that record, or whose
  bytes no longer match it, then loads exactly the bytes it checked.

The record tells the checkpoints a run saved from ones copied, dropped or
edited in later. It lives in the run folder, so it does not vouch for a whole
run folder received from someone else, record included: take bot files
(JSON + safetensors, checked by `cardlab.agents.bot.load_bot`) from others,
never checkpoints or run folders.
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
import re
import secrets
import shutil
import signal
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from sb3_contrib import MaskablePPO

CHECKPOINT_PREFIX = "model_"
RECORD_NAME = "SHA256SUMS"
MAX_RECORD_BYTES = 1 << 20
"""about 10,000 lines: far more checkpoints than a run keeps"""
_CHECKPOINT_NAME = re.compile(rf"{CHECKPOINT_PREFIX}([0-9]+)\.zip")
_TEMPORARY_NAME = re.compile(rf"\.tmp-(?:([0-9]+)-)?{CHECKPOINT_PREFIX}[0-9]+\.zip"
                             rf"|\.{RECORD_NAME}\.([0-9]+)\.[0-9a-f]+")
"""what a save in progress names its files (`.tmp-<pid>-model_<steps>.zip`, `.SHA256SUMS.<pid>.<hex>`)"""
_RECORD_LINE = re.compile(r"([0-9a-f]{64}) [ *](.+)")
_NEVER = "checkpoints are pickles and can run code; take bot files from others, never checkpoints"


class Saveable(Protocol):
    """What a checkpoint is saved from: an SB3 model, or the lean trainer's
    (`cardlab.training.trainers.lean`)."""

    def save(self, path: Path) -> Any: ...


def checkpoint_dir(run_dir: Path) -> Path:
    return Path(run_dir) / "checkpoints"


def checkpoint_path(run_dir: Path, steps: int) -> Path:
    """Where a run keeps its checkpoint after `steps` (zero-padded, so names sort by steps)."""
    return checkpoint_dir(run_dir) / f"{CHECKPOINT_PREFIX}{steps:012d}.zip"


def checkpoint_steps(path: Path) -> int:
    """The training step of a checkpoint, from its name."""
    return int(Path(path).stem[len(CHECKPOINT_PREFIX):])


def list_checkpoints(run_dir: Path) -> list[Path]:
    """A run's checkpoints, oldest first (files named ``model_<steps>.zip`` only)."""
    folder = checkpoint_dir(run_dir)
    if not folder.is_dir():
        return []
    found = [p for p in folder.glob(f"{CHECKPOINT_PREFIX}*.zip") if _CHECKPOINT_NAME.fullmatch(p.name)]
    return sorted(found, key=checkpoint_steps)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:  # in blocks (hashlib.file_digest is Python 3.11+; cardlab runs on 3.10)
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_record(record: Path) -> dict[str, str]:
    """File name -> sha256 of a SHA256SUMS file; a malformed one is refused, not half read."""
    with record.open("rb") as f:
        data = f.read(MAX_RECORD_BYTES + 1)
    if len(data) > MAX_RECORD_BYTES:
        raise ValueError(f"{record} is larger than {MAX_RECORD_BYTES:,} bytes, so not a record cardlab wrote")
    try:
        lines = data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        raise ValueError(f"{record} is not UTF-8 text, so not a record cardlab wrote") from None
    entries: dict[str, str] = {}
    for number, line in enumerate(lines, 1):
        match = _RECORD_LINE.fullmatch(line)
        if match is None:
            raise ValueError(f"{record} line {number} is not '<sha256>  <file name>' (the format of "
                             "sha256sum), so not a record cardlab wrote")
        entries[match[2]] = match[1]
    return entries


def _record(folder: Path, name: str, digest: str | None) -> None:
    """Set the line of `name` in the folder's SHA256SUMS (`digest` None: drop it).

    The record is rewritten whole into a temporary file, then renamed over the
    old one, so a killed run leaves the old record or the new one, never half.
    """
    record = folder / RECORD_NAME
    entries = _read_record(record) if record.exists() else {}
    if digest is None:
        entries.pop(name, None)
    else:
        entries[name] = digest
    names = sorted(entries, key=lambda n: (_CHECKPOINT_NAME.fullmatch(n) is None, n))
    tmp = folder / f".{RECORD_NAME}.{os.getpid()}.{secrets.token_hex(4)}"
    # os.open with mode 0o666 follows the umask, like the checkpoints (a NamedTemporaryFile would be 0600).
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    with open(fd, "w", encoding="utf-8", newline="\n") as f:
        f.write("".join(f"{entries[n]}  {n}\n" for n in names))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, record)


def remove_checkpoint(path: Path) -> None:
    """Delete a checkpoint and its line of SHA256SUMS (the line first: a record never names a file that a
    run deleted on purpose, so a missing recorded checkpoint still means a damaged folder)."""
    path = Path(path)
    _record(path.parent, path.name, None)
    path.unlink()


def record_checkpoint(path: Path) -> str:
    """Record a checkpoint this machine's run just saved in its folder's SHA256SUMS; returns its sha256."""
    path = Path(path)
    digest = _sha256(path)
    _record(path.parent, path.name, digest)
    return digest


def save_checkpoint(model: Saveable, path: Path) -> str:
    """Save and record a run's checkpoint; returns its sha256.

    The model is written under a temporary name, recorded, then renamed into
    place: the folder never shows a half-written checkpoint, nor one the
    record does not list.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
    try:
        with _interrupt_after():
            model.save(tmp)
            digest = _sha256(tmp)
            _record(path.parent, path.name, digest)
            os.replace(tmp, path)
    except (OSError, RuntimeError) as err:
        tmp.unlink(missing_ok=True)
        if _disk_full(err, path.parent):
            free = shutil.disk_usage(path.parent).free
            raise OSError(errno.ENOSPC, f"the disk is full ({free:,} bytes free): the checkpoint is not "
                          "saved", str(path)) from None
        raise
    return digest


def remove_stale_temporaries(run_dir: Path) -> list[Path]:
    """Delete the temporary files of saves that never finished (a run killed by ``kill -9`` or a power cut
    in the middle of one) from a run's checkpoints folder; returns them.

    A file whose name holds the id of a live process is that process's save in progress, and kept.
    """
    folder = checkpoint_dir(run_dir)
    removed = []
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        match = _TEMPORARY_NAME.fullmatch(path.name)
        if match is None or not path.is_file():
            continue
        pid = match[1] or match[2]
        if pid is not None and _alive(int(pid)):
            continue
        path.unlink(missing_ok=True)
        removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # this process saves one checkpoint at a time, and none is in progress now
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # no such process (a pid past the range of any)
        return False
    except PermissionError:
        return True  # another user's process: not ours to judge
    return True


@contextmanager
def _interrupt_after() -> Iterator[None]:
    """Hold a Ctrl-C that comes while a checkpoint is written until it is written.

    torch turns a KeyboardInterrupt raised inside its zip writer into a RuntimeError
    ("unexpected pos"), so a Ctrl-C in the middle of a save would end the run with a
    traceback instead of the resume command, and with no checkpoint of that step.
    Outside the main thread (where Python runs signal handlers) nothing changes.
    """
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    caught: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, _frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if caught:
        raise KeyboardInterrupt


def _disk_full(err: BaseException, folder: Path) -> bool:
    """ENOSPC, or torch's zip writer failing (a RuntimeError without errno) on a disk with no space left."""
    if isinstance(err, OSError):
        return err.errno in (errno.ENOSPC, errno.EDQUOT)
    return "write" in str(err) and shutil.disk_usage(folder).free < 1 << 20


def run_of_checkpoint(path: Path) -> Path:
    """The run folder of a checkpoint; refused unless the file is ``RUN/checkpoints/model_<steps>.zip``.

    Symbolic links are followed first, so a link to a file elsewhere is refused too.
    """
    real = Path(path).resolve()
    if real.parent.name != "checkpoints" or not _CHECKPOINT_NAME.fullmatch(real.name):
        raise ValueError(f"checkpoint {path} is not in a run's checkpoints folder "
                         f"(RUN/checkpoints/{CHECKPOINT_PREFIX}<steps>.zip, recorded in RUN/checkpoints/"
                         f"{RECORD_NAME} by the run that saved it): {_NEVER}")
    return real.parent.parent


def verify_checkpoint(path: Path, run_dir: Path | None = None) -> bytes:
    """The bytes of a checkpoint that a run on this machine saved (in `run_dir`, if given).

    Refused unless it is in its run's checkpoints folder, listed in that
    folder's SHA256SUMS, and unchanged. Load the returned bytes, not the file
    again, so that what was checked is what is loaded.
    """
    path = Path(path)
    run = run_of_checkpoint(path)
    real = path.resolve()
    if run_dir is not None and run != Path(run_dir).resolve():
        raise ValueError(f"checkpoint {path} is outside its run's checkpoints folder "
                         f"{checkpoint_dir(run_dir)} (it is {real}): {_NEVER}")
    record = real.parent / RECORD_NAME
    if not record.is_file():
        raise ValueError(f"checkpoint {path} cannot be checked: {record} is missing, so no run on this "
                         f"machine recorded it: {_NEVER} (for a run of your own from before cardlab "
                         f"recorded checkpoints: make sure it is yours, then run `sha256sum {real.name} >> "
                         f"{RECORD_NAME}` in {real.parent})")
    try:
        expected = _read_record(record).get(real.name)
    except ValueError as err:
        raise ValueError(f"checkpoint {path} cannot be checked: {err}: {_NEVER}") from None
    if expected is None:
        raise ValueError(f"checkpoint {path} was not written by a run on this machine (no entry in "
                         f"{record}): {_NEVER}")
    data = real.read_bytes()
    if hashlib.sha256(data).hexdigest() != expected:
        raise ValueError(f"checkpoint {path} has changed since it was saved (its sha256 is not the one in "
                         f"{record}): {_NEVER}; use an unchanged checkpoint of the run, or train again")
    return data


def load_checkpoint(path: Path, run_dir: Path | None = None, **kwargs: Any) -> MaskablePPO:
    """`MaskablePPO.load` of a checkpoint that `verify_checkpoint` accepts (kwargs: env, device, ...)."""
    from sb3_contrib import MaskablePPO  # the command line imports SB3 only when it needs it

    data = verify_checkpoint(path, run_dir)
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise ValueError(f"checkpoint {path} is not a zip file, so not a MaskablePPO checkpoint (damaged "
                         "while it was saved?); use another checkpoint of the run, or train again")
    return MaskablePPO.load(io.BytesIO(data), **kwargs)
