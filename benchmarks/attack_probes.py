"""An attacker's probes, run again: fuzzed web requests, and tampered suites and leaderboard rows.

`web`: `--requests` requests against the web app in this process (its real
routes, no network), each built by mutating a valid request: bodies with
fields dropped, added, retyped, huge, negative, nested, non-ASCII or not
JSON; unknown, stale and hostile ids and steps; advisors and query values
out of range. Printed: the answers by status, and every 5xx (the count the
app must keep at 0) with the request that caused it.

`rows`: each shipped suite file and leaderboard row, changed in one field at
a time (`--tampered` files in all) by the same mutations, is read the way
`bench` (suites) and `docs/update_tables.py` (rows) read them. Each is sorted
into: refused in one line naming the file (what must happen to anything
changed), accepted (the change kept the file valid, e.g. a win rate within
its bounds, listed so a person can judge it), or crashed (a traceback, or
an error of more than one line: must be 0).

`files`: hostile ONNX graphs, tampered hand readers and read-hands configs,
and `cardlab export -o` targets (`attack_files.py` says which), each sorted
the same way; a refusal must also come within seconds.

`hogs`: one address taking every game and replay slot it can, and advice
requests closed at once (`attack_hogs.py` says what must hold).

The saved-state fuzz is the property test with more examples:
`CARDLAB_STATE_EXAMPLES=20000 pytest tests/envs/test_saved_state.py -k mutated`.

    python benchmarks/attack_probes.py web --requests 9000
    python benchmarks/attack_probes.py rows --tampered 3000
    python benchmarks/attack_probes.py files --tampered 300 --graphs 300
    python benchmarks/attack_probes.py hogs --abandoned 10
"""

from __future__ import annotations

import argparse
import collections
import copy
import json
import pathlib
import random
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from tqdm import tqdm

from cardlab.evaluation.leaderboard import bench_markdown
from cardlab.evaluation.suites import SUITES_DIR, load_suite

ROOT = pathlib.Path(__file__).resolve().parents[1]
ROWS = ROOT / "docs" / "leaderboard"
ODD = [None, True, -1, 0, 10**30, -(10**30), 1e308, float("nan"), "", "x" * 100_000, "\uff12", "<script>",
       "|\n<!-- END GENERATED -->", "../../../tmp/x", [], [1, 2], {}, {"a": {"b": [None]}}, "0.5", 3.5]


def mutated(value: Any, rng: random.Random) -> Any:
    """`value` with one field (at any depth) dropped, replaced by an odd value, or given a new sibling."""
    if isinstance(value, dict) and value and rng.random() < 0.8:
        out = dict(value)
        key = rng.choice(sorted(out))
        roll = rng.random()
        if roll < 0.2:
            del out[key]
        elif roll < 0.3:
            out[rng.choice(["extra", key.upper(), key + " "])] = rng.choice(ODD)
        elif roll < 0.65 and isinstance(out[key], (dict, list)) and out[key]:
            out[key] = mutated(out[key], rng)
        else:
            out[key] = rng.choice(ODD)
        return out
    if isinstance(value, list) and value and rng.random() < 0.8:
        out_list = list(value)
        i = rng.randrange(len(out_list))
        roll = rng.random()
        if roll < 0.3:
            del out_list[i]
        elif roll < 0.5:
            out_list.append(copy.deepcopy(out_list[i]))
        else:
            out_list[i] = mutated(out_list[i], rng) if rng.random() < 0.5 else rng.choice(ODD)
        return out_list
    return rng.choice(ODD)


def json_text(value: Any) -> str:
    return json.dumps(value, allow_nan=True)


# ---------------------------------------------------------------- web
def web(requests: int, seed: int) -> int:
    from fastapi.testclient import TestClient

    from cardlab.serve.app import Settings, create_app

    rng = random.Random(seed)
    api = TestClient(create_app(Settings()), base_url="http://127.0.0.1", raise_server_exceptions=False)
    made = api.post("/api/games", json={"game": "huit", "num_players": 3, "opponents": ["greedy", "random"]})
    made.raise_for_status()
    game_id, frame = made.json()["id"], made.json()["frames"][-1]
    bodies: dict[str, dict[str, Any]] = {
        "game": {"game": "switch", "num_players": 4, "seat": 1, "opponents": ["expert", "greedy", "random"],
                 "mode": "hand", "rules": {}},
        "move": {"move": frame["legal"][0]["text"] if frame["legal"] else "pass", "turn": frame["turn"]},
    }
    replay = api.get(f"/api/games/{game_id}/hands/1/replay")
    if replay.status_code == 200:
        bodies["replay"] = replay.json()
    ids = ["0" * 32, "../../etc/passwd", "x" * 5000, "%00", "\uff11"]
    statuses: collections.Counter[int] = collections.Counter()
    failures: list[str] = []
    started = time.monotonic()
    for _ in tqdm(range(requests), desc="fuzzed requests", unit="req"):
        key = game_id if rng.random() < 0.7 else rng.choice(ids)
        roll = rng.random()
        if roll < 0.3:
            body = json_text(mutated(bodies["game"], rng)) if rng.random() < 0.95 else "{not json"
            method, path = "POST", "/api/games"
        elif roll < 0.55:
            body = json_text(mutated(bodies["move"], rng))
            method, path = "POST", f"/api/games/{key}/move"
        elif roll < 0.7 and "replay" in bodies:
            body = json_text(mutated(bodies["replay"], rng))
            method, path = "POST", "/api/replays"
        else:
            body = ""
            step = rng.choice(["0", "1", "-1", "99999999999999999999", "x", "1.5"])
            advisor = rng.choice(["expert", "search-quick", "bot", "x" * 200, "", "<script>"])
            method, path = rng.choice([
                ("GET", f"/api/games/{key}"),
                ("GET", f"/api/games/{key}/advice?advisor={advisor}&top={step}"),
                ("GET", f"/api/games/{key}/position"), ("GET", f"/api/games/{key}/hands/{step}/replay"),
                ("POST", f"/api/games/{key}/next"), ("GET", f"/api/replays/{key}/{step}?advisor={advisor}"),
                ("GET", "/api/options"), ("GET", f"/static/{rng.choice(['app.js', '../app.py', 'x'])}"),
            ])
        answer = api.request(method, path, content=body.encode(),
                             headers={"content-type": "application/json"})
        statuses[answer.status_code] += 1
        if answer.status_code >= 500:
            failures.append(f"{answer.status_code} {method} {path[:80]} {body[:200]!r}")
    took = time.monotonic() - started
    print(f"{requests} fuzzed requests in {took:.0f} s: "
          + ", ".join(f"{code}: {count}" for code, count in sorted(statuses.items())))
    print(f"server errors (5xx): {len(failures)}")
    for line in failures[:20]:
        print("  " + line)
    return 1 if failures else 0


# ---------------------------------------------------------------- rows and suites
def rows(tampered: int, seed: int) -> int:
    rng = random.Random(seed)
    originals: list[tuple[str, dict[str, Any], Callable[[pathlib.Path], object]]] = []
    for path in sorted(SUITES_DIR.glob("*.json")):
        originals.append(("suite", json.loads(path.read_text()), lambda p: load_suite(str(p), check=False)))
    for path in sorted(ROWS.glob("*.json")):
        originals.append(("row", json.loads(path.read_text()), lambda p: bench_markdown(p.parent)))
    outcome: collections.Counter[str] = collections.Counter()
    accepted: list[str] = []
    crashed: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        for i in tqdm(range(tampered), desc="tampered files", unit="file"):
            kind, data, read = originals[i % len(originals)]
            changed = mutated(data, rng)
            sub = pathlib.Path(folder) / str(i)
            sub.mkdir()
            name = f"{data.get('name', 'row')}.json" if kind == "suite" and rng.random() < 0.5 else "t.json"
            path = sub / name
            path.write_text(json_text(changed))
            try:
                read(path)
            except ValueError as err:
                text = str(err)
                if "\n" in text or str(path) not in text:
                    crashed.append(f"{kind}: error not one line naming the file: {text[:300]!r}")
                    outcome[f"{kind} crashed"] += 1
                else:
                    outcome[f"{kind} refused"] += 1
                continue
            except Exception as err:
                crashed.append(f"{kind}: {type(err).__name__}: {str(err)[:300]}")
                outcome[f"{kind} crashed"] += 1
                continue
            outcome[f"{kind} accepted"] += 1
            diff = {k: changed.get(k) for k in set(changed) | set(data) if changed.get(k) != data.get(k)}
            accepted.append(f"{kind}: {json_text(diff)[:160]}")
    print(f"{tampered} tampered files: " + ", ".join(f"{k} {v}" for k, v in sorted(outcome.items())))
    print(f"accepted (valid after the change), {len(accepted)}; the first of each kind:")
    for kind in ("suite", "row"):
        for line in sorted({a for a in accepted if a.startswith(kind)})[:12]:
            print("  " + line)
    print(f"crashed: {len(crashed)}")
    for line in crashed[:20]:
        print("  " + line)
    return 1 if crashed else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="probe", required=True)
    w = sub.add_parser("web", help="fuzzed requests against the web app")
    w.add_argument("--requests", type=int, default=9000)
    r = sub.add_parser("rows", help="tampered suites and leaderboard rows")
    r.add_argument("--tampered", type=int, default=3000)
    f = sub.add_parser("files", help="hostile ONNX graphs, readers, read-hands configs, export targets")
    f.add_argument("--tampered", type=int, default=300, help="tampered readers, and as many configs")
    f.add_argument("--graphs", type=int, default=300, help="shipped graphs with one operator replaced")
    h = sub.add_parser("hogs", help="one address taking every slot; advice requests closed at once")
    h.add_argument("--abandoned", type=int, default=10, help="advice requests sent and closed at once")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.probe == "web":
        return web(args.requests, args.seed)
    if args.probe == "hogs":
        sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
        from attack_hogs import hogs

        return hogs(args.abandoned)
    if args.probe == "files":
        sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
        from attack_files import files

        return files(args.tampered, args.graphs, args.seed, mutated)
    return rows(args.tampered, args.seed)


if __name__ == "__main__":
    raise SystemExit(main())
