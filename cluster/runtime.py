"""Getting a Ray: the optional import, a local Ray started for you, or a running cluster joined.

Ray is an optional extra (`INSTALL_HINT`); without it cardlab
runs as it always did, and asking for Ray says how to install it. A local
Ray (no address given) listens on the loopback address only and is shut down
when the work is done; a cluster given by address (``ray start --head`` prints
it; ``auto`` finds one started on this machine) is joined and left running.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from types import ModuleType
from typing import Any

from cardlab.envs.checked_json import excerpt

INSTALL_HINT = 'pip install torch==2.13.0 -e ".[ray]"'
# Ray reads this when it picks a node's address: "0" keeps a local Ray on 127.0.0.1 instead of the
# machine's network address (nothing outside this machine is needed or reachable).
_LOOPBACK_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
_AUTH_NOTICE = "ray._private.authentication.authentication_token_setup"


def import_ray() -> ModuleType:
    """The `ray` module, or a ValueError that says how to install it (the CLI prints it as one line).

    No usage statistics leave the machine unless the user asked for them (RAY_USAGE_STATS_ENABLED=1).
    """
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        import ray
    except ImportError:
        raise ValueError(f"Ray is not installed; install cardlab's ray extra: {INSTALL_HINT}") from None
    return ray


def check_workers(workers: int | None) -> int | None:
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be a whole number >= 1, got {excerpt(workers)}")
    return workers


@contextlib.contextmanager
def _loopback_only() -> Iterator[None]:
    """While a local Ray starts: its processes use 127.0.0.1 (they inherit the environment).

    Ray's notice that token authentication is on (it is, by default) is not
    shown: the user did not start this Ray and has nothing to do about it.
    """
    from ray._private import ray_constants  # the flag is read from here at start-up

    saved_env, saved_flag = os.environ.get(_LOOPBACK_ONLY), ray_constants.ENABLE_RAY_CLUSTER
    notice = logging.getLogger(_AUTH_NOTICE)
    saved_level = notice.level
    os.environ[_LOOPBACK_ONLY] = "0"
    ray_constants.ENABLE_RAY_CLUSTER = False
    notice.setLevel(logging.ERROR)
    try:
        yield
    finally:
        notice.setLevel(saved_level)
        ray_constants.ENABLE_RAY_CLUSTER = saved_flag
        if saved_env is None:
            os.environ.pop(_LOOPBACK_ONLY, None)
        else:
            os.environ[_LOOPBACK_ONLY] = saved_env


@contextlib.contextmanager
def ray_session(workers: int | None = None, address: str | None = None) -> Iterator[int]:
    """A connected Ray for the block; yields how many tasks to run at once.

    Already connected (a test or a notebook called `ray.init`): used as it is.
    `address` given: that cluster is joined (and left running). Otherwise a
    local Ray with `workers` CPUs (default: this machine's) is started on the
    loopback address and shut down at the end. Parallelism is `workers`, or
    every CPU the Ray has.
    """
    check_workers(workers)
    ray = import_ray()
    started = False
    if not ray.is_initialized():
        options: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.WARNING,
                                   "configure_logging": True}
        if address:
            try:
                ray.init(address=address, **options)
            except (ConnectionError, RuntimeError, ValueError) as err:  # Ray's ways of saying "cannot join"
                detail = " ".join(str(err).split())[:300] or type(err).__name__
                raise ValueError(
                    f"cannot join the Ray cluster at {address}: {detail}; check the address (`ray status` on "
                    "the head) and, as Ray protects clusters with a token, set RAY_AUTH_MODE=token with the "
                    "cluster's token in ~/.ray/auth_token or RAY_AUTH_TOKEN"
                ) from None
        else:
            with _loopback_only():
                ray.init(address="local", num_cpus=workers or os.cpu_count() or 1, **options)
        started = True
    try:
        yield workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    finally:
        if started:
            ray.shutdown()


def task_error(err: BaseException) -> BaseException:
    """The error a Ray task raised (a bad bot file's ValueError, ...) rather than Ray's wrapper of it."""
    cause = getattr(err, "cause", None)
    return cause if isinstance(cause, Exception) else err
