"""Training a hand reader from a config: `cardlab read-hands CONFIG.yaml` (configs/readers/).

Steps, each shown as it goes (bars on a terminal, lines in a log):

1. labelled positions are made in chunks by a field of players
   (`cardlab.training.data.reader_data`), each chunk written to the run folder as
   it is made (``data/chunk-NNNNN.npz``, by rename); ``--resume RUN`` makes
   only the chunks the run lacks and trains again;
2. `holdout_share` of the positions (whole chunks, the last ones) are held
   out; the reader (`cardlab.agents.hand_reading.reader`: an MLP whose logits over each
   kind's places are added to the log of the places' sizes) is fitted by
   Adam to the cross-entropy of each unseen card's true place;
3. the run writes ``reader.json`` / ``reader.safetensors`` and ``run.json``:
   the held-out log loss per card against the uniform deal's, the mean
   probability given to each card's true place among the other hands, and a
   calibration table (predicted against observed, by decile).

The figures that matter for play (the share of the other hands' cards a
world dealt from the reader places right, against uniform and the
likelihood belief, per field) are `benchmarks/belief_probe.py`'s.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.bot import MAX_LAYER_UNITS
from cardlab.agents.hand_reading.reader import (
    READER_ACTIVATIONS,
    SHIPPED,
    new_network,
    place_log_probs,
    reader_layout,
    save_reader,
)
from cardlab.envs.declared import refusal
from cardlab.envs.game_spec import Game
from cardlab.training.data.reader_data import Table, make_chunks
from cardlab.training.harness.config import OpponentConfig, parse_dataclass
from cardlab.training.harness.config_bounds import (
    ROLLOUT_HIGH,
    bounded,
    check_declared,
    check_network,
    rate,
    word,
)
from cardlab.training.harness.config_tables import RunHeader, check_header, header_default
from cardlab.training.harness.placement import DEVICES, check_device, learner_device, usable_cores
from cardlab.training.harness.progress import Progress
from cardlab.training.harness.runs import new_run_dir
from cardlab.training.harness.yaml_files import load_config_file

ACTIVATIONS = READER_ACTIVATIONS
CHUNKS = "data"


@dataclasses.dataclass
class ReaderConfig(RunHeader):
    """A hand reader's training run (`cardlab read-hands CONFIG.yaml`; the module doc has the steps)."""

    name: str = header_default("name", "reader")
    num_players: int = header_default("num_players", 4)
    field: list[OpponentConfig] = dataclasses.field(
        default_factory=lambda: [OpponentConfig("expert", 2.0), OpponentConfig("greedy", 1.0),
                                 OpponentConfig("random", 0.5)])
    """the players drawn for every seat of every hand (spec and weight), so the reader reads more than one
    style"""
    positions: int = bounded(200_000, 1, 100_000_000)
    """labelled positions to make"""
    chunk: int = bounded(5_000, 1, 1_000_000)
    """positions per chunk (the unit of resuming and of the held-out share)"""
    keep_share: float = bounded(0.5, 0, 1, above=True, words="a probability in (0, 1]")
    """probability that a decision with a choice is kept as a position"""
    workers: int = bounded(1, 1, 256)
    """processes making chunks (the positions do not depend on it)"""
    hidden: list[int] = bounded([256, 256], 1, MAX_LAYER_UNITS)
    """hidden layer widths of the reader's MLP"""
    activation: str = word("relu", ACTIVATIONS)
    """activation of the hidden layers: relu or tanh"""
    epochs: int = bounded(8, 1, 10_000)
    """passes over the training positions"""
    batch_size: int = bounded(512, 1, ROLLOUT_HIGH)
    """positions per gradient step"""
    learning_rate: float = rate(1e-3)
    """Adam step size (halved at each of the last three epochs)"""
    holdout_share: float = bounded(0.1, 0, 0.9, words="a share from 0 to 0.9")
    """share of the chunks held out of training, to measure the reader on positions it never saw"""
    torch_threads: int = bounded(1, 1, 1_024)
    """torch threads of the training"""
    device: str = word("cpu", DEVICES)
    """where the reader trains: cpu, cuda where torch sees a GPU, or auto (a GPU where there is one, else the
    CPU); the positions are made on the CPUs"""


def load_reader_config(path: str | Path) -> ReaderConfig:
    """Read and validate a YAML reader config; a `ValueError` names the file and the key."""

    def build(data: Any) -> ReaderConfig:
        cfg = parse_dataclass(ReaderConfig, data)
        validate_reader(cfg)
        return cfg

    return load_config_file(path, build, "a reader config names at least its game, e.g. "
                                         "configs/readers/huit_4p.yaml")


def validate_reader(cfg: ReaderConfig) -> Game:
    """Refuse a bad value with the key that holds it and what is accepted; returns the table's game."""
    game = check_header(cfg, "a game with a determinization (a reader's positions need it)",
                        lambda spec: spec.determinize is not None)
    check_declared(cfg)
    check_device(cfg.device)
    if not cfg.field:
        raise ValueError(refusal("field", cfg.field, "empty", "a list of at least one agent spec"))
    for i, player in enumerate(cfg.field):
        try:
            make_agent(player.spec, game, seed=0)
        except ValueError as err:
            raise ValueError(f"field[{i}].spec: {err}") from None
    if sum(p.weight for p in cfg.field) <= 0:
        raise ValueError("field: the weights add up to 0; give at least one a weight above 0")
    layout = reader_layout(game)
    check_network(list(cfg.hidden), layout.size, len(layout.deck_kinds) * game.num_players, key="hidden",
                  what="a reader")
    chunks = -(-cfg.positions // cfg.chunk)
    if chunks > MAX_CHUNKS:
        raise ValueError(f"positions={cfg.positions:,} in chunks of {cfg.chunk:,} make {chunks:,} chunks: "
                         f"use at most {MAX_CHUNKS:,} (a larger chunk)")
    if held_out(chunks, cfg.holdout_share) < 1:
        raise ValueError(f"holdout_share={cfg.holdout_share} of {chunks:,} chunk(s) ({cfg.positions:,} "
                         f"positions in chunks of {cfg.chunk:,}) holds none out apart from those trained on: "
                         "use more chunks (a smaller chunk) or a larger holdout_share, so that at least one "
                         "chunk is held out and another trained on")
    return game


MAX_CHUNKS = 10_000
"""most chunks of a run: each is a file the run lists and reads (200,000 positions take 20 to 40)"""


def held_out(chunks: int, share: float) -> int:
    """How many of a run's chunks (the last ones) are held out of training: `share` of them, rounded, and
    never every one (0 is refused by `validate_reader`)."""
    return min(chunks - 1, round(chunks * share))


def check_machine(cfg: ReaderConfig, game: Game) -> None:
    """Refuse what this machine cannot run: more workers or torch threads than its cores, or positions
    whose arrays (kept in memory while the reader trains) would take more than half its memory."""
    cores = usable_cores()
    for key, value in (("workers", cfg.workers), ("torch_threads", cfg.torch_threads)):
        if value > cores:
            raise ValueError(refusal(key, value, f"more than this machine's {cores} core(s)",
                                     f"at most {cores}"))
    layout = reader_layout(game)
    places = game.num_players
    per_position = 4 * layout.size + len(layout.deck_kinds) * places + 8 * places + places
    need, memory = 2 * cfg.positions * per_position, os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if need > memory // 2:
        raise ValueError(f"positions={cfg.positions:,} take about {need / 2**30:,.1f} GiB while the reader "
                         f"trains (twice {per_position:,} bytes each); this machine has "
                         f"{memory / 2**30:,.1f} GiB: use at most {memory // 2 // (2 * per_position):,} "
                         "positions")


def _chunk_path(run_dir: Path, chunk: int) -> Path:
    return run_dir / CHUNKS / f"chunk-{chunk:05d}.npz"


def _save_chunk(run_dir: Path, chunk: int, data: dict[str, np.ndarray]) -> None:
    """Write a chunk whole or not at all (a temporary name, then a rename)."""
    final = _chunk_path(run_dir, chunk)
    temporary = final.with_name(f".tmp-{final.stem}-{os.getpid()}.npz")
    arrays: dict[str, Any] = dict(data)  # typed so: numpy's stubs read ** as its allow_pickle
    np.savez_compressed(temporary, **arrays)
    os.replace(temporary, final)


def _load_chunk(path: Path) -> dict[str, np.ndarray] | None:
    """A chunk's arrays; None for a file that cannot be read (it is made again)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            return {key: data[key] for key in ("inputs", "labels", "room", "field")}
    except (OSError, ValueError, KeyError, EOFError):
        return None


def gather(cfg: ReaderConfig, run_dir: Path, show: Progress) -> list[dict[str, np.ndarray]]:
    """Every chunk of the run, made where missing (`reader_data.make_chunks`), in chunk order."""
    count = -(-cfg.positions // cfg.chunk)
    (run_dir / CHUNKS).mkdir(parents=True, exist_ok=True)
    have: dict[int, dict[str, np.ndarray]] = {}
    for i in range(count):
        data = _load_chunk(_chunk_path(run_dir, i)) if _chunk_path(run_dir, i).is_file() else None
        if data is not None:
            have[i] = data
        show.heartbeat(functools.partial("reading the chunks already made: {} of {} looked at".format, i + 1,
                                         count))
    missing = [i for i in range(count) if i not in have]
    if have:
        show.say(f"{len(have)} of {count} chunks already made; making {len(missing)}")
    table = Table(cfg.game, {**cfg.rules, "num_players": cfg.num_players},
                  tuple((p.spec, p.weight) for p in cfg.field), cfg.keep_share, cfg.seed)
    sizes = {i: min(cfg.chunk, cfg.positions - i * cfg.chunk) for i in range(count)}
    show.doing(lambda: f"making positions: {len(have)} of {count} chunks of {cfg.chunk:,} made")
    with show.bar(total=sum(sizes[i] for i in missing), desc="labelled positions", unit="pos") as bar:
        def done(chunk: int, data: dict[str, np.ndarray]) -> None:
            _save_chunk(run_dir, chunk, data)
            have[chunk] = data
            bar.update(len(data["inputs"]))
            show.heartbeat(lambda: f"{len(have)} of {count} chunks of positions made")

        def wait() -> None:
            show.heartbeat(lambda: f"making positions: {len(have)} of {count} chunks of {cfg.chunk:,} made "
                                   f"({cfg.workers} worker(s))")

        for size in sorted({sizes[i] for i in missing}):
            make_chunks(table, [i for i in missing if sizes[i] == size], size, cfg.workers, done, wait)
    return [have[i] for i in range(count)]


def _tensors(chunks: list[dict[str, np.ndarray]]) -> dict[str, torch.Tensor]:
    return {key: torch.from_numpy(np.concatenate([c[key] for c in chunks])) for key in chunks[0]}


def fit_report(network: torch.nn.Module, data: dict[str, torch.Tensor], kinds: int,
               places: int) -> dict[str, Any]:
    """The reader's fit on `data` (`fit_figures`) beside the uniform deal's log loss and true-place
    probability."""
    with torch.inference_mode():
        logits = network(data["inputs"].float()).reshape(-1, kinds, places)
        log_probs = place_log_probs(logits, data["room"])
        uniform = fit_figures(place_log_probs(torch.zeros_like(logits), data["room"]), data["labels"].float())
    return {"positions": len(data["labels"]), **fit_figures(log_probs, data["labels"].float()),
            "uniform_log_loss": uniform["log_loss"],
            "uniform_true_place_probability": uniform["true_place_probability"]}


def fit_figures(log_probs: torch.Tensor, labels: torch.Tensor) -> dict[str, Any]:
    """Log loss per unseen card (nats), the mean probability of each card's true place among the other
    hands, and a calibration table by decile ([predicted, observed, count] per filled bin) of (..., P)
    place log-probabilities against (..., P) copy counts, the pile last."""
    cards = labels.sum()
    hands = labels[..., :-1]
    probs = log_probs.exp()
    edges = torch.linspace(0, 1, 11)
    share = labels / labels.sum(dim=-1, keepdim=True).clamp(min=1)
    present = labels.sum(dim=-1, keepdim=True).expand_as(labels) > 0
    bins = torch.bucketize(probs[present], edges[1:-1])
    observed, predicted = share[present], probs[present]
    calibration = [[round(float(predicted[bins == b].mean()), 4), round(float(observed[bins == b].mean()), 4),
                    int((bins == b).sum())] for b in range(10) if bool((bins == b).any())]
    return {
        "log_loss": float(-(torch.nan_to_num(log_probs, neginf=0.0) * labels).sum() / cards),
        "true_place_probability": float((probs[..., :-1] * hands).sum() / hands.sum().clamp(min=1)),
        "calibration": calibration,
    }


def fit(cfg: ReaderConfig, game: Game, train: dict[str, torch.Tensor], show: Progress) -> torch.nn.Module:
    """The reader's network, fitted to `train` as the module doc says."""
    torch.manual_seed(cfg.seed)
    kinds, places = len(reader_layout(game).deck_kinds), game.num_players
    device = learner_device(cfg.device)
    network = new_network(train["inputs"].shape[1], kinds, places, list(cfg.hidden), cfg.activation)
    network = network.to(device)
    train = {key: value.to(device) for key, value in train.items()}
    optimiser = torch.optim.Adam(network.parameters(), lr=cfg.learning_rate)
    count = len(train["inputs"])
    order_rng = torch.Generator().manual_seed(cfg.seed)
    steps = cfg.epochs * -(-count // cfg.batch_size)
    with show.bar(total=steps, desc="reader training", unit="step") as bar:
        for epoch in range(cfg.epochs):
            show.doing(functools.partial(_epoch_line, epoch + 1, cfg.epochs))
            for group in optimiser.param_groups:
                group["lr"] = cfg.learning_rate * 0.5 ** max(0, epoch - (cfg.epochs - 4))
            order = torch.randperm(count, generator=order_rng)
            total = 0.0
            for start in range(0, count, cfg.batch_size):
                rows = order[start:start + cfg.batch_size].to(device)
                logits = network(train["inputs"][rows].float()).reshape(-1, kinds, places)
                log_probs = torch.nan_to_num(place_log_probs(logits, train["room"][rows]), neginf=0.0)
                labels = train["labels"][rows].float()
                loss = -(log_probs * labels).sum() / labels.sum().clamp(min=1)
                optimiser.zero_grad()
                loss.backward()
                optimiser.step()
                total += loss.item() * len(rows)
                bar.update(1)
                show.heartbeat(functools.partial(_epoch_line, epoch + 1, cfg.epochs))
            show.say(f"epoch {epoch + 1}/{cfg.epochs}: training log loss {total / count:.4f} per card")
    return network.cpu()


def readers_table() -> str:
    """The docs' table of the shipped readers, from their metadata (docs/update_tables.py writes it)."""
    lines = ["| reader | positions | held-out log loss per card (uniform deal) | probability of the true "
             "hand (uniform deal) | network |", "|---|---|---|---|---|"]
    for path in sorted(SHIPPED.glob("*.json")):
        meta = json.loads(path.read_text(encoding="utf-8"))
        fit = meta["summary"]["holdout"]
        lines.append(f"| `{path.stem}` | {meta['summary']['positions']:,} | {fit['log_loss']:.4f} "
                     f"({fit['uniform_log_loss']:.4f}) | {fit['true_place_probability']:.3f} "
                     f"({fit['uniform_true_place_probability']:.3f}) | "
                     f"{' x '.join(map(str, meta['network']['layer_sizes']))} |")
    return "\n".join(lines) + "\n"


def _epoch_line(epoch: int, epochs: int) -> str:
    return f"epoch {epoch} of {epochs}"


def read_hands(cfg: ReaderConfig, runs_dir: str | Path = "runs", resume: Path | None = None,
               progress: bool = True) -> Path:
    """Train a reader as `cfg` says (module doc); `resume`: a run folder of this config to finish."""
    game = validate_reader(cfg)
    check_machine(cfg, game)
    show = Progress(progress)
    if resume is not None:
        run_dir = Path(resume)
        if not (run_dir / "config.yaml").is_file():
            raise ValueError(f"--resume {run_dir}: not a reader run folder (no config.yaml)")
    else:
        run_dir = new_run_dir(Path(runs_dir), cfg)
        text = yaml.safe_dump(dataclasses.asdict(cfg), sort_keys=False)
        (run_dir / "config.yaml").write_text(text, "utf-8")
    show.say(f"run folder: {run_dir}")
    began = time.perf_counter()
    threads = torch.get_num_threads()
    torch.set_num_threads(cfg.torch_threads)
    try:
        with show.watched():
            chunks = gather(cfg, run_dir, show)
            held = held_out(len(chunks), cfg.holdout_share)
            train = _tensors(chunks[:len(chunks) - held])
            holdout = _tensors(chunks[len(chunks) - held:])
            made = time.perf_counter()
            network = fit(cfg, game, train, show)
    finally:
        torch.set_num_threads(threads)
    kinds = len(reader_layout(game).deck_kinds)
    record: dict[str, Any] = {
              "algorithm": "hand reader (per-card softmax)", "run": run_dir.name, "config": cfg.name,
              "seed": cfg.seed, "field": [dataclasses.asdict(p) for p in cfg.field],
              "positions": cfg.positions, "holdout_positions": len(holdout["inputs"]),
              "label_minutes": round((made - began) / 60, 2),
              "train_minutes": round((time.perf_counter() - made) / 60, 2),
              "train": fit_report(network, train, kinds, game.num_players),
              "holdout": fit_report(network, holdout, kinds, game.num_players)}
    hold = record["holdout"]
    show.say(f"held-out log loss {hold['log_loss']:.4f} per card (uniform {hold['uniform_log_loss']:.4f}); "
             f"true place {hold['true_place_probability']:.3f} (uniform "
             f"{hold['uniform_true_place_probability']:.3f})")
    path = save_reader(network, run_dir / "reader", game, cfg.activation, record)
    (run_dir / "run.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    show.say(f"reader: {path}")
    return run_dir
