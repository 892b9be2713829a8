"""Torch thread control of a bot's forward pass.

A bot's network is small (a forward pass takes well under a millisecond on
one thread), and torch's default of one thread per core only adds waiting:
on a machine whose cores are busy a move took 40-56 ms instead of 0.08 ms.
So a bot runs its network on `inference_threads()` torch threads: the
`THREADS_ENV` environment variable (``CARDLAB_TORCH_THREADS``, which the
command line's ``--torch-threads`` sets), else 1; `load_bot(threads=...)`
chooses for one bot. Only the forward pass uses that count; torch's setting
for the rest of the process is left as it was (see `torch_threads`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import torch

from cardlab.agents.base import THREADS_ENV
from cardlab.envs.checked_json import excerpt


def inference_threads(threads: int | None = None) -> int:
    """The torch threads a bot's forward pass uses: `threads`, else $CARDLAB_TORCH_THREADS, else 1."""
    if threads is None:
        text = os.environ.get(THREADS_ENV, "").strip()
        if not text:
            return 1
        try:
            threads = int(text)
        except ValueError:
            raise ValueError(f"the environment variable {THREADS_ENV}={excerpt(text)} is not a whole "
                             f"number: set it "
                             f"to the torch threads of bot inference, e.g. {THREADS_ENV}=1") from None
        where = f"the environment variable {THREADS_ENV}"
    else:
        where = "torch threads"
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"{where}={excerpt(threads)}: give a whole number >= 1 (1 is fastest for a bot "
                         f"on a busy "
                         "machine)")
    return threads


@contextlib.contextmanager
def torch_threads(threads: int) -> Iterator[None]:
    """Run the block with `threads` torch intra-op threads, then restore the count it had.

    Nothing is changed when the count is already `threads` (the command line
    sets it once for a whole evaluation, so a move costs no switching).
    """
    before = torch.get_num_threads()
    if before == threads:
        yield
        return
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)
