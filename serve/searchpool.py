"""The web app's search workers: every search runs off the event loop, a few at a time, each client in turn.

Why: a search takes a core for up to its level's bound (`LEVEL_BOUNDS_MS`)
and most of it holds the interpreter's lock (its play-outs are compiled
without releasing it). Run on the event loop it stops every other request;
run on a thread per move, twenty tables' searches share two cores, each
overruns its own time cap many times over, their seats fall back, and the
threads of the abandoned searches go on. So `SearchPool` runs searches (a
search seat's move, a search's advice) on `workers` threads, no more: a
search starts only when a worker is free, so its own time cap holds. The
waiting searches queue per client (the address a request came from) and the
workers take the clients in turn; a client may have at most `per_client`
searches waiting (beyond that a 429 with ``Retry-After``).
`SearchPool.wait_estimate` is the time a new search would wait now (the app
refuses a search table with a 503 when it is past its bound). A search whose
asker has gone (`SearchPool.answer` watches the connection) is dropped from
the queue or, running, asked to stop (`cardlab.agents.stopping`). The time a
move waited in the queue is not counted in the agent's time limit
(`Table.agent_seconds`): the page shows it instead.
"""

from __future__ import annotations

import asyncio
import collections
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np
from fastapi import HTTPException

from cardlab.agents.base import Agent
from cardlab.agents.failure import AgentFailure, checked_action
from cardlab.agents.stopping import stoppable

PER_CLIENT = 8
"""the most searches one client may have waiting at once"""
PACE_WEIGHT = 0.2
"""weight of the latest search in the running mean of a search's duration"""
FIRST_PACE = 1.0
"""the duration assumed of a search before one was measured, in seconds"""
WATCH_SECONDS = 0.1
"""how often a waiting request checks that its client is still connected"""


class Abandoned(Exception):
    """A search dropped from the queue because its asker has gone."""


class Job:
    """One search to run: the call, its client, when it was queued, started and ended, and its outcome;
    `paced`: whether its duration joins the pool's pace (a start-up's warm-up, compiling, does not)."""

    def __init__(self, client: str, call: Callable[[], Any], paced: bool = True) -> None:
        self.client, self.call, self.paced = client, call, paced
        self.queued = time.monotonic()
        self.began: float | None = None
        self.started, self.done = threading.Event(), threading.Event()
        self.stop = threading.Event()
        """set when its asker has gone: the search ends as at its time cap (`cardlab.agents.stopping`)"""
        self.result: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        self.began = time.monotonic()
        self.started.set()
        try:
            with stoppable(self.stop):
                self.result = self.call()
        except BaseException as err:  # handed to the waiting request, which raises it there
            self.error = err
        finally:
            self.done.set()

    @property
    def waited(self) -> float:
        """Seconds it spent in the queue (so far, while it waits)."""
        return (self.began if self.began is not None else time.monotonic()) - self.queued

    def outcome(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.result


class SearchPool:
    """`workers` threads running searches, the waiting ones queued per client and taken client by client."""

    def __init__(self, workers: int, per_client: int = PER_CLIENT) -> None:
        if workers < 1:
            raise ValueError(f"search workers {workers}: give 1 or more")
        self.workers, self.per_client = workers, per_client
        self.queues: dict[str, collections.deque[Job]] = {}
        """each client's waiting searches; the dict's order is the order the clients are served in"""
        self.cond = threading.Condition()
        self.running = 0
        self.pace = FIRST_PACE
        """the running mean of a search's duration, in seconds"""
        self.threads: list[threading.Thread] = []
        self.closed = False

    # ------------------------------------------------------------ submitting
    def submit(self, client: str, call: Callable[[], Any], paced: bool = True) -> Job:
        """Queue `call` for `client` (`paced`: see `Job`); a 429 with ``Retry-After`` when the client has
        `per_client` waiting."""
        with self.cond:
            if self.closed:
                raise HTTPException(503, "the server is shutting down", headers={"Retry-After": "10"})
            queue = self.queues.setdefault(client, collections.deque())
            if len(queue) >= self.per_client:
                wait = retry_seconds(self.pace * len(queue))
                raise HTTPException(
                    429, f"you have {len(queue)} searches waiting for a search worker already (at most "
                         f"{self.per_client}): wait for their answers, then ask again",
                    headers={"Retry-After": str(wait)})
            job = Job(client, call, paced)
            queue.append(job)
            self._start_workers()
            self.cond.notify()
            return job

    def run(self, client: str, call: Callable[[], Any]) -> tuple[Any, float]:
        """(what `call` returns, seconds it waited for a worker): `call` run on a worker; it raises what
        `call` raises."""
        job = self.submit(client, call)
        job.done.wait()
        return job.outcome(), job.waited

    def act(self, client: str, agent: Agent, observation: dict[str, np.ndarray], who: str,
            seconds: float) -> tuple[int, float]:
        """(the agent's checked move, seconds it waited for a worker); an `AgentFailure` if it fails or
        takes more than `seconds` once started (the time waiting for a worker is not counted). A search
        that overruns ends at its own time cap on its worker; its agent must not be asked again."""
        observation = {key: np.array(value, copy=True) for key, value in observation.items()}
        job = self.submit(client, lambda: checked_action(agent, observation, who))
        job.started.wait()
        if not job.done.wait(seconds):
            raise AgentFailure(who, f"it took more than {seconds:g} s to move")
        action: int = job.outcome()
        return action, job.waited

    async def answer(self, job: Job, gone: Callable[[], Awaitable[bool]]) -> Any:
        """What `job` returns, awaited on the event loop; if `gone()` (the request's ``is_disconnected``)
        turns true first, the job is cancelled (`cancel`) and `Abandoned` raised."""
        while not job.done.is_set():
            if await gone():
                self.cancel(job)
                raise Abandoned("the client closed the connection before the search's answer")
            await asyncio.sleep(WATCH_SECONDS)
        return job.outcome()

    def cancel(self, job: Job) -> None:
        """Drop `job` from the queue if it waits there, else ask it to stop (a running search ends as at its
        time cap, freeing its worker)."""
        with self.cond:
            queue = self.queues.get(job.client)
            if job.began is None and queue is not None and job in queue:
                queue.remove(job)
                if not queue:
                    del self.queues[job.client]
                job.error = Abandoned("dropped from the queue: its asker has gone")
                job.done.set()
                return
        job.stop.set()

    # ------------------------------------------------------------ the queue
    def wait_estimate(self) -> float:
        """Seconds a search queued now would wait for a worker, at the measured pace."""
        with self.cond:
            waiting = sum(len(q) for q in self.queues.values())
            if self.running + waiting < self.workers:
                return 0.0
            return self.pace * (self.running + waiting - self.workers + 1) / self.workers

    def waiting(self) -> int:
        with self.cond:
            return sum(len(q) for q in self.queues.values())

    def _next(self) -> Job | None:
        """The next client's oldest search (the client then goes to the back of the line)."""
        for client, queue in self.queues.items():
            if queue:
                job = queue.popleft()
                del self.queues[client]
                if queue:
                    self.queues[client] = queue
                return job
        return None

    def _start_workers(self) -> None:
        while len(self.threads) < self.workers:
            name = f"cardlab search {len(self.threads)}"
            thread = threading.Thread(target=self._work, name=name, daemon=True)
            self.threads.append(thread)
            thread.start()

    def _work(self) -> None:
        while True:
            with self.cond:
                job = self._next()
                while job is None:
                    if self.closed:
                        return
                    self.cond.wait()
                    job = self._next()
                self.running += 1
            began = time.monotonic()
            job.run()
            with self.cond:
                self.running -= 1
                if job.paced:
                    self.pace = (1 - PACE_WEIGHT) * self.pace + PACE_WEIGHT * (time.monotonic() - began)

    def close(self) -> None:
        """Let the workers end once the queue is empty (the app's shutdown)."""
        with self.cond:
            self.closed = True
            self.cond.notify_all()


def retry_seconds(seconds: float) -> int:
    """A ``Retry-After`` value: whole seconds, at least 1."""
    return max(1, int(seconds + 0.999))
