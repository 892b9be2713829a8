"""Many clients on search tables at once: does the web app keep its searches' budgets and its other requests
fast, or say it is busy before a table starts?

`cardlab serve` runs in a process of its own on a free loopback port; each
of `--clients` clients comes from an address of its own (127.0.0.2, ...,
so each counts as a client of its own) and opens one table with search
opponents (Huit 2 to 4 players and Switch 4, ``search-strong`` by default),
then plays its first legal move again and again until `--seconds` are up.
An observer asks ``GET /api/options`` and the view of a table of its own
every 100 ms. Printed: the tables admitted and refused (status and
Retry-After), the moves' latencies and the seats that fell back for time,
the search waits the pages were shown, the observer's latencies, the
server's threads during and after the storm, and its memory.

`--one-address` sends every client from one address (127.0.0.2), right
after the server answers (its start-up's warm-up still running): the admitted
tables' starts are then checked against their searches' bounds plus the
wait they show, and the refused ones for an answer at once with Retry-After.

`--tables N` measures memory alone instead: once the start-up's warm-up is
over, N Huit 4-player tables with three search seats are opened one after
another (each from an address of its own), each plays one move, and the
server's resident memory is printed after each, so the growth per table is
read without a storm's other allocations.

    python benchmarks/web_storm.py                       # 20 clients, 60 s
    python benchmarks/web_storm.py --tables 6            # memory per search table
    python benchmarks/web_storm.py --clients 8 --seconds 30 --level quick
    python benchmarks/web_storm.py --clients 10 --seconds 20 --one-address
"""

from __future__ import annotations

import argparse
import itertools
import socket
import statistics
import subprocess
import sys
import threading
import time
from typing import Any

import httpx

from cardlab.agents.search import LEVEL_BOUNDS_MS

TABLES = [("huit", 2), ("huit", 3), ("huit", 4), ("switch", 4)]
SLACK_S = 0.5
"""what a move may take beyond its searches' bounds and its shown wait (the request, applying the moves)"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def proc_status(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1])
    return 0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1)))] if ordered else float("nan")


def play(base: str, address: str, table: tuple[str, int], level: str, stop: float,
         out: dict[str, Any], retry: bool = False) -> None:
    """One client: open a table (with `retry`, once more after a 503's Retry-After), then play its first
    legal move until `stop`."""
    game, n = table
    transport = httpx.HTTPTransport(local_address=address)
    with httpx.Client(transport=transport, timeout=120) as http:
        for _ in range(2 if retry else 1):
            started = time.monotonic()
            answer = http.post(f"{base}/api/games", json={"game": game, "num_players": n, "seat": n - 1,
                                                          "opponents": [f"search-{level}"] * (n - 1)})
            took = time.monotonic() - started
            out.setdefault("refusals", []).append(took)
            if answer.status_code != 503:
                break
            time.sleep(min(30.0, float(answer.headers.get("retry-after", 1))))
        out["status"], out["retry"] = answer.status_code, answer.headers.get("retry-after")
        out["moves"], out["waits"], out["fallbacks"] = [took], [], 0
        if answer.status_code != 200:
            return
        out["refusals"].pop()
        key, frames = answer.json()["id"], answer.json()["frames"]
        view = frames[-1]
        out["start_wait"] = wait = view["search_wait_ms"] / 1000
        out["start_over"] = took - wait - (len(frames) - 1) * LEVEL_BOUNDS_MS[level] / 1000 - SLACK_S
        while time.monotonic() < stop:
            if view["legal"]:
                move = {"move": view["legal"][0]["text"], "turn": view["turn"]}
                t = time.monotonic()
                reply = http.post(f"{base}/api/games/{key}/move", json=move)
                if reply.status_code != 200:
                    out.setdefault("errors", []).append(reply.status_code)
                    break
                took = time.monotonic() - t
                out["moves"].append(took)
                frames = reply.json()["frames"]
                view = frames[-1]
                out["waits"].append(view["search_wait_ms"] / 1000)
                # each frame after the person's own is a search seat's decision, each within its level's bound
                bound = view["search_wait_ms"] / 1000 + (len(frames) - 1) * LEVEL_BOUNDS_MS[level] / 1000
                out.setdefault("over", []).append(took - bound - SLACK_S)
            else:
                reply = http.post(f"{base}/api/games/{key}/next")
                if reply.status_code != 200:
                    break
                view = reply.json()["frames"][-1]
        out["fallbacks"] = sum("took more than" in notice for notice in view["notices"])


def observe(base: str, stop: float, took: list[float]) -> None:
    with httpx.Client(timeout=30) as http:
        key = http.post(f"{base}/api/games", json={"game": "huit", "num_players": 2,
                                                   "opponents": ["greedy"]}).json()["id"]
        while time.monotonic() < stop:
            for path in ("/api/options", f"/api/games/{key}"):
                t = time.monotonic()
                http.get(base + path).raise_for_status()
                took.append(time.monotonic() - t)
            time.sleep(0.1)


def table_memory(base: str, pid: int, tables: int, level: str) -> None:
    """Open `tables` Huit 4p tables with three search seats, one at a time, and print the RSS after each,
    from when the start-up's warm-up is over (the RSS steady for 5 s; it holds about 150 MB)."""
    steady, last = 0, -1
    while steady < 5:
        time.sleep(1)
        size = proc_status(pid, "VmRSS")
        steady, last = (steady + 1 if size == last else 0), size
    sizes = [proc_status(pid, "VmRSS")]
    for i in range(tables):
        transport = httpx.HTTPTransport(local_address=f"127.0.0.{i + 2}")
        with httpx.Client(transport=transport, timeout=120) as http:
            answer = http.post(f"{base}/api/games", json={"game": "huit", "num_players": 4, "seat": 3,
                                                          "opponents": [f"search-{level}"] * 3})
            if answer.status_code != 200:
                print(f"table {i + 1}: refused {answer.status_code} {answer.text[:120]}")
                break
            key, view = answer.json()["id"], answer.json()["frames"][-1]
            if view["legal"]:
                http.post(f"{base}/api/games/{key}/move",
                          json={"move": view["legal"][0]["text"], "turn": view["turn"]}).raise_for_status()
        sizes.append(proc_status(pid, "VmRSS"))
        print(f"table {i + 1}: {sizes[-1] / 1024:.0f} MB (+{(sizes[-1] - sizes[-2]) / 1024:.1f} MB)")
    growth = [(b - a) / 1024 for a, b in itertools.pairwise(sizes[1:])]
    print(f"memory: {sizes[0] / 1024:.0f} MB after the warm-up; first table "
          f"+{(sizes[1] - sizes[0]) / 1024:.1f} MB, "
          f"each further table median +{statistics.median(growth) if growth else float('nan'):.1f} MB")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--level", choices=("quick", "strong"), default="strong")
    p.add_argument("--tables", type=int, default=0, help="measure memory per search table instead of a storm")
    p.add_argument("--one-address", action="store_true",
                   help="every client from one address, starting while the server warms up")
    args = p.parse_args()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([sys.executable, "-m", "cardlab", "serve", "--port", str(port)],
                              stdout=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                httpx.get(f"{base}/api/options", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.2)
        if args.tables:
            table_memory(base, server.pid, args.tables, args.level)
            return 0
        rss0 = proc_status(server.pid, "VmRSS")
        stop = time.monotonic() + args.seconds
        outs: list[dict[str, Any]] = [{} for _ in range(args.clients)]
        took: list[float] = []
        threads = [threading.Thread(target=play, args=(base, f"127.0.0.{2 if args.one_address else i + 2}",
                                                       TABLES[i % len(TABLES)],
                                                       args.level, stop, outs[i], args.one_address))
                   for i in range(args.clients)]
        threads.append(threading.Thread(target=observe, args=(base, stop, took)))
        for t in threads:
            t.start()
        most_threads = 0
        while time.monotonic() < stop:
            most_threads = max(most_threads, proc_status(server.pid, "Threads"))
            time.sleep(1)
        for t in threads:
            t.join(300)
        time.sleep(5)
        after = proc_status(server.pid, "Threads")
        rss = proc_status(server.pid, "VmRSS")
    finally:
        server.terminate()
        server.wait(10)
    admitted = [o for o in outs if o.get("status") == 200]
    refused = [(o.get("status"), o.get("retry")) for o in outs if o.get("status") != 200]
    refusals = [took for o in outs for took in o.get("refusals", [])]
    most_wait = max((o["start_wait"] for o in admitted), default=0)
    print(f"table starts: search wait shown most {most_wait:.2f} s; "
          f"later than their searches' bounds plus the wait shown plus {SLACK_S:g} s: "
          f"{sum(o['start_over'] > 0 for o in admitted)} of {len(admitted)}; refusals answered in at most "
          f"{max(refusals, default=0):.2f} s")
    moves = [m for o in admitted for m in o["moves"]]
    waits = [w for o in admitted for w in o["waits"]]
    print(f"{args.clients} clients on search-{args.level} tables for {args.seconds:g} s")
    print(f"tables admitted {len(admitted)}, refused {len(refused)}: {sorted(set(refused), key=str)}")
    print(f"moves {len(moves)}: median {statistics.median(moves) if moves else float('nan'):.2f} s, "
          f"p99 {percentile(moves, 0.99):.2f} s; search waits shown: median "
          f"{statistics.median(waits) if waits else 0:.2f} s, most {max(waits, default=0):.2f} s")
    over = [x for o in admitted for x in o.get("over", [])]
    print(f"moves later than their searches' bounds plus the wait shown plus {SLACK_S:g} s: "
          f"{sum(x > 0 for x in over)} of {len(over)} (most by {max(over, default=0):.2f} s)")
    print(f"seats fallen back for time: {sum(o.get('fallbacks', 0) for o in admitted)}; "
          f"move errors: {[e for o in admitted for e in o.get('errors', [])]}")
    print(f"observer requests {len(took)}: median {statistics.median(took) * 1000:.0f} ms, "
          f"p99 {percentile(took, 0.99) * 1000:.0f} ms, most {max(took) * 1000:.0f} ms")
    print(f"server threads: most {most_threads} during, {after} five seconds after; "
          f"memory {rss0 / 1024:.0f} MB before, {rss / 1024:.0f} MB after "
          f"({(rss - rss0) / 1024 / max(1, len(admitted)):.0f} MB per admitted table)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
