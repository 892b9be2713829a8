"""Expert iteration: a bot taught its search's chosen moves, then checked against its base on the same deals.

Why: a search over a bot (`cardlab.agents.search`) plays better than the bot
but costs a search per move; teaching the bot the search's choices (expert
iteration, as in ExIt and AlphaZero's policy targets) puts some of that
strength into a network that plays in one forward pass.

One round, in a run folder (``cardlab teach CONFIG.yaml``): positions from
the base bot's own play (`opponents` in the other seats; batched, or hand by
hand where the teacher is shown the record or the state:
`cardlab.training.data.teach_positions`);
labels at a share `label_share` of its decisions with a choice, the teacher
search's move and that move's value (`SearchAgent.last_decision`), with
unlabelled positions kept at `keep_share` for the forgetting term; training
of a copy of the base's actor on cross-entropy against the search's move,
`value_coef` times the critic's squared error against its value and
`kl_coef` times KL(base || student) on the kept positions, a holdout share
saying whether the lesson generalises; the bot file, ``labels.npz``
(reusable with `labels_from`) and ``run.json``; with `check_hands` > 0 the
check (`versus_base`): student and base on the same deals against
`check_opponent`, their paired difference with its 95% interval.
docs/training.md, "How it works" (Expert iteration), says it for users.
Reproducible (C2): with the teacher's ``ms=0`` and `max_minutes` 0 the same
config gives the same labels and the same bot (one torch thread).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml
from safetensors.torch import save_file
from torch import nn

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import check_unshown
from cardlab.agents.bot import BotAgent, export_bot
from cardlab.agents.search import SearchAgent
from cardlab.envs.declared import check_that, refusal
from cardlab.envs.game_spec import Game
from cardlab.evaluation.evaluate import evaluate
from cardlab.evaluation.paired import deal_totals
from cardlab.evaluation.request import EvalRequest
from cardlab.evaluation.stats import mean_interval
from cardlab.training.data.teach_labels import (
    LABELS_FILE,
    RECORD_FILE,
    labelled_by,
    read_labels,
    write_labels,
)
from cardlab.training.data.teach_positions import LABELLING, make_positions
from cardlab.training.harness.config import parse_dataclass
from cardlab.training.harness.config_bounds import (
    MINUTES,
    ROLLOUT_HIGH,
    SEED_HIGH,
    bounded,
    check_declared,
    probability,
    rate,
)
from cardlab.training.harness.config_tables import RunHeader, check_header, header_default
from cardlab.training.harness.progress import Progress
from cardlab.training.harness.runs import new_run_dir
from cardlab.training.harness.yaml_files import load_config_file
from cardlab.training.trainers.lean_model import ActorCritic
from cardlab.training.trainers.ppo import ILLEGAL_LOGIT

ALGORITHM = "expert iteration"


@dataclasses.dataclass
class TeachConfig(RunHeader):
    """One round of expert iteration (`cardlab teach CONFIG.yaml`; the module doc has the steps)."""

    name: str = header_default("name", "teach")
    base: str = "bot:huit-2p"
    """the bot spec the student starts from, which plays the learner's seat while the labels are made"""
    teacher: str = "search:worlds=64:ms=0:bot:huit-2p"
    """the search spec that labels the moves (``search:...``; ms=0 for reproducible labels)"""
    opponents: list[str] = dataclasses.field(default_factory=lambda: ["expert"])
    """agent specs of the other seats while the labels are made, drawn per seat and hand"""
    labels: int = bounded(2000, 1, 10_000_000)
    """labelled positions to make (fewer if max_minutes runs out first)"""
    label_share: float = bounded(0.25, 0, 1, above=True, words="a probability in (0, 1]")
    """probability that a learner decision with a choice is labelled (lower: labels from more hands)"""
    keep_share: float = probability(0.25)
    """probability that an unlabelled learner decision with a choice is kept for the KL term"""
    max_minutes: float = bounded(0.0, 0, MINUTES)
    """stop labelling after this many minutes of wall clock (0: when `labels` are made); the run then
    depends on the machine's speed"""
    labels_from: str = ""
    """a teach run folder whose labels.npz is trained on instead of making labels ('' to make them); the keys
    read only while labels are made (teacher, opponents, labels, ...: `LABELLING`) are left out beside it,
    and the run records that run's teacher"""
    num_envs: int = bounded(64, 1, 4_096)
    """games played at once in the batched engine while the labels are made (a teacher that plays from its
    observation; one shown the record or the state labels hands played one at a time, and refuses it)"""
    holdout_share: float = bounded(0.1, 0, 0.9, words="a share from 0 to 0.9")
    """share of the labels held out of training, to measure the student on labels it never saw"""
    epochs: int = bounded(10, 1, 10_000)
    """passes over the training labels"""
    batch_size: int = bounded(256, 1, ROLLOUT_HIGH)
    """labels per gradient step (and as many kept positions for the KL term)"""
    learning_rate: float = rate(1e-4)
    """Adam step size"""
    value_coef: float = bounded(0.5, 0, 1_000)
    """weight of the critic's squared error against the search's value of its move"""
    kl_coef: float = bounded(1.0, 0, 1_000)
    """weight of KL(base || student) on the kept unlabelled positions (0: no forgetting term)"""
    max_grad_norm: float = bounded(0.5, 0, 1_000_000, above=True)
    """gradient clipping norm"""
    check_hands: int = bounded(4000, 0, 10_000_000)
    """hands the student and its base each play against check_opponent on the same deals (0: no check)"""
    check_opponent: str = "expert"
    """agent spec of every other seat in the check"""
    check_seed: int = bounded(123, 0, SEED_HIGH)
    """seed of the check's deals"""
    torch_threads: int = bounded(1, 1, 1_024)
    """torch threads of the run (more than 1 only helps on an otherwise idle machine)"""


DEFAULT_NUM_ENVS = TeachConfig.num_envs
"""`num_envs` left out: the one value a teacher that labels hands one at a time accepts"""


# ---------------------------------------------------------------- config
def load_teach_config(path: str | Path) -> TeachConfig:
    """Read and validate a YAML teach config; a `ValueError` names the file and the key."""
    return load_config_file(path, teach_config_from_dict, "a teach config must at least name its game, e.g. "
                                                          "configs/teach_huit_2p.yaml")


def teach_config_from_dict(data: Any) -> TeachConfig:
    """Build and validate a teach config from plain data (what the YAML holds: its keys are those written)."""
    cfg = parse_dataclass(TeachConfig, data)
    validate_teach(cfg, written=set(data))
    return cfg


def validate_teach(cfg: TeachConfig, written: Collection[str] | None = None) -> Game:
    """Refuse a bad value with the key that holds it and what is accepted; returns the table's game.
    `written`: the keys the config's data holds (None for a config built in Python, where a key counts as
    written when its value is not the default: all that can be known of it)."""
    game = check_header(cfg, "a game with a batched engine and a determinization (the search needs both)",
                        lambda spec: spec.batched_engine() is not None and spec.determinize is not None)
    check_declared(cfg)
    base = _agent(cfg.base, game, "base")
    if not (isinstance(base, BotAgent) and base.has_weights):
        raise ValueError(refusal("base", cfg.base, "not a bot with weights", "a bot file's spec (bot:NAME "
                                 "or bot:PATH of a .json beside its .safetensors, not an ONNX bot), whose "
                                 "weights the student starts from"))
    if cfg.labels_from:
        unset = TeachConfig()
        _check_labels_from(cfg, game, {key for key in LABELLING if getattr(cfg, key) != getattr(unset, key)}
                           if written is None else written)
    else:
        _check_labelling(cfg, game)
    check = _agent(cfg.check_opponent, game, "check_opponent")
    if cfg.check_hands:
        check_unshown("check_opponent", cfg.check_opponent, check, "the check, played batched,",
                      "check_hands: 0")
    return game


def _check_labels_from(cfg: TeachConfig, game: Game, written: Collection[str]) -> None:
    """The labels of `labels_from` (another table's or a damaged file: refused before a run folder is made)
    and its teacher; a key read only while labels are made (`LABELLING`) is refused where `written`, whatever
    its value (its default too), since the labels come from that run."""
    check_that((Path(cfg.labels_from) / LABELS_FILE).is_file(), "labels_from", cfg.labels_from,
               f"a folder without {LABELS_FILE}", f"a teach run folder holding {LABELS_FILE}")
    read_labels(Path(cfg.labels_from), game)
    labelled_by(Path(cfg.labels_from))
    for key in LABELLING:
        check_that(key not in written, key, getattr(cfg, key),
                   f"not read beside labels_from (the labels come from that run, {cfg.labels_from})",
                   f"drop {key} from this config")


def _check_labelling(cfg: TeachConfig, game: Game) -> None:
    """The teacher, the opponents and `num_envs` of the labels this run makes."""
    teacher = _agent(cfg.teacher, game, "teacher")
    if not isinstance(teacher, SearchAgent):
        raise ValueError(refusal("teacher", cfg.teacher, "not a search", "a search spec, e.g. "
                                 "search:worlds=64:ms=0:bot:huit-2p"))
    if not cfg.opponents:
        raise ValueError(refusal("opponents", cfg.opponents, "empty", "a list of at least one agent spec"))
    for i, opponent in enumerate(cfg.opponents):  # hands played one at a time show every seat what it sees
        agent = _agent(opponent, game, f"opponents[{i}]")
        if not teacher.sees:
            check_unshown(f"opponents[{i}]", opponent, agent, "the batched play of the labels of a teacher "
                          "that plays from its observation", "a teacher shown the record (its hands are "
                          "played one at a time)")
    if teacher.sees and cfg.num_envs != DEFAULT_NUM_ENVS:
        raise ValueError(refusal("num_envs", cfg.num_envs, f"read only with a teacher that plays from its "
                                 f"observation, not {cfg.teacher}, which is shown the hand's "
                                 f"{' and '.join(sorted(teacher.sees))} (its labels come from hands played "
                                 "one at a time)", "num_envs left out beside such a teacher"))


def _shown(value: float | None) -> str:
    return "none" if value is None else f"{value:.4f}"


def _agent(spec: str, game: Game, key: str) -> Any:
    try:
        return make_agent(spec, game, seed=0)
    except ValueError as err:
        raise ValueError(f"{key}: {err}") from None


# ---------------------------------------------------------------- training
def masked_log_probs(actor: nn.Module, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Log-softmax of an actor's logits with the illegal actions at `ILLEGAL_LOGIT` (probability 0)."""
    return torch.log_softmax(actor(obs).masked_fill(~mask, ILLEGAL_LOGIT), dim=-1)


def label_fit(actor: nn.Module, obs: torch.Tensor, mask: torch.Tensor,
              actions: torch.Tensor) -> dict[str, float | None]:
    """The actor's cross-entropy on labels and the share of them its masked argmax plays (None: no labels)."""
    if len(actions) == 0:
        return {"cross_entropy": None, "agreement": None}
    with torch.no_grad():
        logp = masked_log_probs(actor, obs, mask)
    return {"cross_entropy": float(nn.functional.nll_loss(logp, actions)),
            "agreement": float((logp.argmax(-1) == actions).float().mean())}


def kl_to_base(base: nn.Module, student: nn.Module, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean KL(base || student) of the masked softmaxes over positions (a tensor, for the loss)."""
    with torch.no_grad():
        target = masked_log_probs(base, obs, mask)
    logp = masked_log_probs(student, obs, mask)
    return (target.exp() * (target - logp)).masked_fill(~mask, 0.0).sum(-1).mean()


def train_student(model: ActorCritic, base: nn.Module, train: dict[str, torch.Tensor],
                  kept: dict[str, torch.Tensor], cfg: TeachConfig,
                  progress: Progress) -> list[dict[str, float]]:
    """`cfg.epochs` passes of the loss (module doc, step 3) over the training labels; per-epoch means."""
    params = list(model.parameters())
    optimizer = torch.optim.Adam(params, lr=cfg.learning_rate)
    generator = torch.Generator().manual_seed(cfg.seed)
    size, kept_size = len(train["action"]), len(kept["obs"])
    steps = math.ceil(size / cfg.batch_size) * cfg.epochs
    history: list[dict[str, float]] = []
    with progress.bar(total=steps, desc="teaching the student", unit="step") as bar:
        for epoch in range(cfg.epochs):
            totals = np.zeros(3)
            for idx in torch.randperm(size, generator=generator).split(cfg.batch_size):
                logp = masked_log_probs(model.actor, train["obs"][idx], train["mask"][idx])
                policy_loss = nn.functional.nll_loss(logp, train["action"][idx])
                known = train["has_value"][idx]
                value_loss = (nn.functional.mse_loss(model.value(train["obs"][idx][known]),
                                                     train["value"][idx][known])
                              if known.any() else torch.zeros(()))
                kl = torch.zeros(())
                if cfg.kl_coef > 0 and kept_size:
                    pick = torch.randint(kept_size, (len(idx),), generator=generator)
                    kl = kl_to_base(base, model.actor, kept["obs"][pick], kept["mask"][pick])
                optimizer.zero_grad()
                (policy_loss + cfg.value_coef * value_loss + cfg.kl_coef * kl).backward()
                nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)
                optimizer.step()
                totals += np.array([policy_loss.item(), value_loss.item(), kl.item()]) * len(idx)
                bar.update(1)
            means = totals / size
            history.append({"epoch": epoch + 1, "cross_entropy": float(means[0]),
                            "value_loss": float(means[1]),
                            "kl_to_base": float(means[2])})
            progress.say(f"epoch {epoch + 1}/{cfg.epochs}: cross-entropy on the labels {means[0]:.4f}, value "
                         f"loss {means[1]:.4f}, KL to the base {means[2]:.4f}")
    return history


def explained_variance(model: ActorCritic, obs: torch.Tensor, values: torch.Tensor) -> float | None:
    """1 - Var(value - critic) / Var(value): what the critic explains of the search's values (None: fewer
    than two values, or all equal)."""
    if len(values) < 2 or float(values.var()) == 0:
        return None
    with torch.no_grad():
        return float(1 - (values - model.value(obs)).var() / values.var())


# ---------------------------------------------------------------- the check
def versus_base(game: Game, student: str, base: str, opponent: str, hands: int, seed: int,
                progress: Progress) -> dict[str, Any]:
    """Student and base each against `opponent` in every other seat on the same deals (seats rotated,
    batched): their win rates and the paired difference, student minus base, with its 95% interval."""
    rules = game.rules.to_dict()
    rates: dict[str, Any] = {}
    per_deal: list[np.ndarray] = []
    for who, spec in (("student", student), ("base", base)):
        progress.say(f"check: {who} against {opponent}, {hands:,} hands (seed {seed})")
        request = EvalRequest(game.id, [spec, *[opponent] * (game.num_players - 1)], hands=hands, seed=seed,
                              rules=rules)
        result = evaluate(request, batched=True, progress=progress.bars, desc=f"{who} vs {opponent}")
        rate = result.stats[0].hands
        wins, episodes = deal_totals(result.hand_records, 0)
        per_deal.append(np.asarray(wins) / np.asarray(episodes))
        low, high = rate.paired_interval
        rates[who] = {"win_rate": rate.rate, "paired_ci95": [low, high], "hands": rate.n}
    mean, low, high = mean_interval((per_deal[0] - per_deal[1]).tolist())
    return {"opponent": opponent, "hands": hands, "seed": seed, **rates,
            "difference": mean, "difference_ci95": [low, high], "better": bool(low > 0)}


# ---------------------------------------------------------------- the run
def teach(cfg: TeachConfig, runs_dir: str | Path = "runs", progress: bool = True) -> Path:
    """One round of expert iteration as `cfg` says (module doc); returns the run folder."""
    game = validate_teach(cfg)
    show = Progress(progress)
    run_dir = new_run_dir(Path(runs_dir), cfg)
    kept = {key: value for key, value in dataclasses.asdict(cfg).items()  # what validate_teach reads again
            if not (cfg.labels_from and key in LABELLING)}
    (run_dir / "config.yaml").write_text(yaml.safe_dump(kept, sort_keys=False), "utf-8")
    show.say(f"run folder: {run_dir}")
    threads = torch.get_num_threads()
    torch.set_num_threads(cfg.torch_threads)
    try:
        record = _teach(cfg, game, run_dir, show)
    finally:
        torch.set_num_threads(threads)
    (run_dir / RECORD_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    show.say(f"run folder: {run_dir}\nbot: {run_dir / 'bot.json'}")
    return run_dir


LABEL_KEYS = ("obs", "mask", "action", "value", "has_value", "base_action")
"""what a labelled position holds, split into training and held-out labels"""


def split_labels(labels: dict[str, np.ndarray], share: float,
                 seed: int) -> tuple[dict[str, dict[str, torch.Tensor]], dict[str, torch.Tensor]]:
    """({'train': ..., 'holdout': ...} labels, the kept unlabelled positions) as tensors; `share` of the
    labels (at least one left to train on) drawn at random for the holdout."""
    data = {key: torch.from_numpy(value) for key, value in labels.items()}
    data["has_value"] = ~torch.isnan(data["value"])
    count = len(data["action"])
    if count == 0:
        raise ValueError("no labels were made: raise max_minutes or label_share")
    order = torch.randperm(count, generator=torch.Generator().manual_seed(seed))
    held = min(count - 1, round(count * share))
    parts = {name: {key: data[key][idx] for key in LABEL_KEYS}
             for name, idx in (("train", order[held:]), ("holdout", order[:held]))}
    return parts, {"obs": data["kept_obs"], "mask": data["kept_mask"]}


def fit_report(model: ActorCritic, base: nn.Module, parts: dict[str, dict[str, torch.Tensor]],
               kept: dict[str, torch.Tensor]) -> dict[str, Any]:
    """How the actor fits the labels of each part, how far it is from the base on the kept positions,
    and what the critic explains of the held-out values."""
    report: dict[str, Any] = {name: label_fit(model.actor, p["obs"], p["mask"], p["action"])
                              for name, p in parts.items()}
    with torch.no_grad():
        report["kl_to_base_on_kept"] = (float(kl_to_base(base, model.actor, kept["obs"], kept["mask"]))
                                        if len(kept["obs"]) else None)
    hold = parts["holdout"]
    known = hold["has_value"]
    report["critic_explained_variance_holdout"] = explained_variance(model, hold["obs"][known],
                                                                     hold["value"][known])
    return report


def student_of(base: BotAgent, game: Game, seed: int) -> ActorCritic:
    """An actor-critic whose actor is a copy of the base bot's network and whose critic is new."""
    torch.manual_seed(seed)
    network = base.metadata["network"]
    model = ActorCritic(game.layout.size, game.num_actions, list(network["layer_sizes"][1:-1]),
                        network["activation"])
    model.actor.load_state_dict(base.network.state_dict())
    return model


def _teach(cfg: TeachConfig, game: Game, run_dir: Path, show: Progress) -> dict[str, Any]:
    base = make_agent(cfg.base, game)
    assert isinstance(base, BotAgent)  # validate_teach refused any other
    began = time.perf_counter()
    labels = (read_labels(Path(cfg.labels_from), game) if cfg.labels_from else
              make_positions(cfg, game, base, show))
    label_seconds = time.perf_counter() - began
    write_labels(run_dir, labels)
    parts, kept = split_labels(labels, cfg.holdout_share, cfg.seed)
    differs = float(np.mean(labels["action"] != labels["base_action"]))
    show.say(f"{len(labels['action']):,} labels ({len(parts['holdout']['action']):,} held out), "
             f"{len(kept['obs']):,} kept unlabelled positions; the search's move is not the base's in "
             f"{differs:.3f} of the labels")
    model = student_of(base, game, cfg.seed)
    frozen = copy.deepcopy(model.actor).requires_grad_(False)
    before = fit_report(model, frozen, parts, kept)
    started = time.perf_counter()
    history = train_student(model, frozen, parts["train"], kept, cfg, show)
    train_seconds = time.perf_counter() - started
    after = fit_report(model, frozen, parts, kept)
    for name in ("train", "holdout"):
        show.say(f"{name} labels: cross-entropy {_shown(before[name]['cross_entropy'])} -> "
                 f"{_shown(after[name]['cross_entropy'])}, agreement {_shown(before[name]['agreement'])} -> "
                 f"{_shown(after[name]['agreement'])}")
    record: dict[str, Any] = {
        "algorithm": ALGORITHM, "run": run_dir.name, "config": cfg.name, "seed": cfg.seed, "base": cfg.base,
        "teacher": labelled_by(Path(cfg.labels_from)) if cfg.labels_from else cfg.teacher,
        "labels_from": cfg.labels_from or None, "labels": len(labels["action"]),
        "holdout_labels": len(parts["holdout"]["action"]),
        "kept_positions": len(kept["obs"]), "search_differs_from_base": differs,
        "label_seconds": round(label_seconds, 1), "train_seconds": round(train_seconds, 1),
        "minutes": round((time.perf_counter() - began) / 60, 2), "before": before, "after": after,
        "epochs": history,
    }
    critic = {key: value.contiguous() for key, value in model.critic.state_dict().items()}
    save_file(critic, run_dir / "critic.safetensors")
    path = export_bot(model.actor, run_dir / "bot", game=game, summary=record)
    if cfg.check_hands:
        check = versus_base(game, f"bot:{path}", cfg.base, cfg.check_opponent, cfg.check_hands,
                            cfg.check_seed, show)
        low, high = check["difference_ci95"]
        show.say(f"check against {cfg.check_opponent}: student {check['student']['win_rate']:.4f}, base "
                 f"{check['base']['win_rate']:.4f}, difference {check['difference']:+.4f} [{low:+.4f}, "
                 f"{high:+.4f}] over {cfg.check_hands:,} hands on the same deals")
        record["check"] = check
        export_bot(model.actor, run_dir / "bot", game=game, summary=record)
    return record
