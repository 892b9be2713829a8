"""How fast does an ONNX bot move, against the bot file it was exported from?

Each shipped bot named is exported to ONNX (`export_onnx`, into a temporary
folder) and both are loaded with `load_bot` at one thread (torch's for the bot
file, onnxruntime's for the ONNX bot). On the same observations of random
play at the bot's table, both are timed: a single move (`act` on one
observation dict, what a play loop, the web app or `cardlab eval` asks) and a
batched move (`act_batch` on `--batch` rows, what search rollouts and self-play
ask), each the median of `--repeats` rounds of `--moves` calls (batched: of
`--moves // 8` calls). Times are the process's CPU time (one thread each),
so that other processes sharing the machine's cores do not count. The moves
are checked to be the same.

    python benchmarks/onnx_speed.py                          # huit-2p and switch-4p
    python benchmarks/onnx_speed.py --bots huit-2p --batch 1024
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # read when numba is imported: before cardlab

import argparse
import pathlib
import statistics
import tempfile
import time
from collections.abc import Callable

import numpy as np
import torch

from cardlab.agents.bot import BotAgent, export_onnx, load_bot
from cardlab.agents.bot.validate import random_play
from cardlab.agents.bot_catalogue import shipped_bots
from cardlab.envs import make_game
from cardlab.envs.checked_json import read_json_file


def per_call_us(call: Callable[[int], object], calls: int, repeats: int) -> float:
    """Median over `repeats` rounds of the CPU microseconds one call takes (`calls` calls a round)."""
    rounds = []
    for _ in range(repeats):
        began = time.process_time()
        for i in range(calls):
            call(i)
        rounds.append((time.process_time() - began) / calls * 1e6)
    return statistics.median(rounds)


def measure(name: str, moves: int, batch: int, repeats: int) -> tuple[float, float, float, float]:
    """(single move us: bot file, ONNX; batched us per row: bot file, ONNX) of one shipped bot."""
    meta = read_json_file(shipped_bots()[f"bot:{name}"])
    game = make_game(meta["game"], meta["rules"])
    file = load_bot(shipped_bots()[f"bot:{name}"], game, threads=1)
    with tempfile.TemporaryDirectory() as folder:
        export_onnx(file.network, pathlib.Path(folder) / name, game=game, summary={})
        onnx = load_bot(pathlib.Path(folder) / f"{name}.onnx", game, threads=1)
    obs, masks = random_play(game, max(moves, batch), seed=11)
    rows = [{"observation": o, "action_mask": m} for o, m in zip(obs, masks, strict=True)]
    bots: tuple[BotAgent, BotAgent] = (file, onnx)
    singles = [[bot.act(row) for row in rows[:moves]] for bot in bots]
    if singles[0] != singles[1] or not np.array_equal(file.act_batch(obs[:batch], masks[:batch]),
                                                      onnx.act_batch(obs[:batch], masks[:batch])):
        raise SystemExit(f"{name}: the ONNX bot chose other moves than its bot file")
    single = [per_call_us(lambda i, bot=bot: bot.act(rows[i % moves]), moves, repeats) for bot in bots]
    calls = max(1, moves // 8)
    batched = [per_call_us(lambda _i, bot=bot: bot.act_batch(obs[:batch], masks[:batch]), calls, repeats)
               / batch for bot in bots]
    return single[0], single[1], batched[0], batched[1]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bots", nargs="+", default=["huit-2p", "switch-4p"], help="shipped bots to measure")
    p.add_argument("--moves", type=int, default=400, help="single-move calls per round")
    p.add_argument("--batch", type=int, default=256, help="rows of a batched move")
    p.add_argument("--repeats", type=int, default=5, help="rounds, the median kept")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    print(f"one thread, CPU time; single move: median us per act(); batched: median us per row of "
          f"act_batch() of {args.batch} rows; {args.repeats} rounds")
    print("| bot | single move: bot file | single move: ONNX | batched, per row: bot file | "
          "batched, per row: ONNX |")
    print("|---|---|---|---|---|")
    for name in args.bots:
        file_one, onnx_one, file_batch, onnx_batch = measure(name, args.moves, args.batch, args.repeats)
        print(f"| bot:{name} | {file_one:.0f} us | {onnx_one:.0f} us | {file_batch:.2f} us | "
              f"{onnx_batch:.2f} us |", flush=True)


if __name__ == "__main__":
    main()
