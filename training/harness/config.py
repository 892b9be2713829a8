"""Training configuration: typed sections, YAML loading, strict validation.

A config is a YAML file whose keys mirror the dataclasses below (CleanRL style: each field's docstring
says what it does). Loading refuses unknown keys, wrong types and bad values with a `ValueError` that
names the key path (``ppo.learning_rate``, ``opponents[1].spec``) and what is accepted. The header keys
(name, seed, game, num_players, rules) are `cardlab.training.harness.config_tables.RunHeader`'s; rule options
are checked by building the game, agent specs by building the agents, so a config that loads also runs.

```python
from cardlab.training.harness.config import load_config
cfg = load_config("configs/huit_ppo.yaml")
```
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yaml

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import check_unshown
from cardlab.envs import games, get_spec
from cardlab.envs.aec import REWARDS
from cardlab.envs.checked_json import excerpt
from cardlab.envs.declared import KIND, RANGE, check_that, refusal, unknown
from cardlab.envs.game_spec import Game
from cardlab.envs.match import EPISODES
from cardlab.training.arena.match_reward import MATCH, check_reward_episode, check_reward_equity, table_equity
from cardlab.training.harness import config_bounds as bounds
from cardlab.training.harness.config_tables import RunHeader, check_header, header_default
from cardlab.training.harness.dmc_config import ALGORITHMS, DMCConfig, check_dmc
from cardlab.training.harness.placement import DEVICES, check_placement
from cardlab.training.harness.yaml_files import read_extended

TRAINED_ACTIVATIONS = ("tanh", "relu")
"""what `policy.activation` accepts: the ones trained and tested here (bot files may hold more,
`cardlab.agents.bot.ACTIVATIONS`, which builds the layers)"""
VEC_ENVS = ("subproc", "dummy")
TRAINERS = ("maskable_ppo", "lean")
if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")


@dataclasses.dataclass
class OpponentConfig:
    """One kind of opponent of the league, with its weight."""

    spec: str = "random"
    """agent spec string: 'random', 'greedy', 'expert', a shipped 'bot:NAME', 'bot:GAME' (the shipped
    bot of the table's size) or 'bot:PATH' (a plain string in YAML means weight 1); with trainer: lean, one
    that plays from its observation"""
    weight: float = bounds.bounded(1.0, 0, 1_000_000)
    """relative chance that an opponent seat not taken by a snapshot gets this agent"""


@dataclasses.dataclass
class SelfPlayConfig:
    """Frozen snapshots of the learner in the opponent seats."""

    enabled: bool = False
    """put snapshots of the learner's own policy in the league"""
    share: float = bounds.probability(0.3)
    """probability that an opponent seat is taken by a snapshot (0..1)"""
    snapshot_every: int = bounds.step_count(50_000)
    """take a snapshot every this many env steps (one is also taken at step 0)"""
    pool_size: int = bounds.bounded(5, 1, 1_000)
    """how many of the newest snapshots are in play"""
    deterministic: bool = False
    """snapshots play their masked argmax (true) or sample their masked distribution (false)"""
    learner_share: float = bounds.probability(0.0)
    """lean trainer only: probability that a seat other than the learner's own is the learner's too (it
    then plays itself, and every one of its seats yields transitions); the rest of the seats go to
    snapshots (`share`) and the fixed opponents"""


@dataclasses.dataclass
class PopulationConfig:
    """Other learners in the league: a population that trains against each other.

    Learners given the same `dir` publish their self-play snapshots there and
    draw opponents from the others' (see `cardlab.training.arena.league`); a sweep
    (`cardlab sweep`) sets this up for its trials.
    """

    dir: str = ""
    """the folder the population shares (on a shared file system across machines); '' for no population"""
    share: float = bounds.probability(0.2)
    """probability that an opponent seat not taken by an own snapshot gets another learner's snapshot"""
    pool_size: int = bounds.bounded(10, 1, 1_000)
    """how many of the other learners' newest snapshots are in play"""


@dataclasses.dataclass
class ImitationConfig:
    """Warm start: before PPO, the policy copies a teacher agent's play (behaviour cloning).

    The teacher plays the learner's seat against the league's fixed opponents;
    the actor learns its moves (cross-entropy on the masked logits) and the
    critic the discounted outcomes. The objective of PPO afterwards is unchanged.
    """

    enabled: bool = False
    """copy the teacher before PPO starts (a resumed run skips this)"""
    teacher: str = "expert"
    """agent spec of the teacher (with trainer: lean, one that plays from its observation)"""
    hands: int = bounds.bounded(3000, 1, 1_000_000)
    """hands of teacher play to copy (collected in the env processes, in parallel)"""
    epochs: int = bounds.bounded(10, 1, 10_000)
    """passes over the demonstrations"""
    batch_size: int = bounds.bounded(256, 1, bounds.ROLLOUT_HIGH)
    """minibatch size"""
    learning_rate: float = bounds.rate(1e-3)
    """Adam step size of the imitation phase"""


@dataclasses.dataclass
class PPOConfig:
    """PPO hyper-parameters (``ppo.*``, names as in stable-baselines3), read by every trainer.

    - ``trainer: maskable_ppo`` (`cardlab.training.trainers.sb3`) passes all to sb3-contrib's MaskablePPO;
    - ``trainer: lean`` (`cardlab.training.trainers.lean`, and the responder of `cardlab exploit`) uses all,
      the loss and GAE being `cardlab.training.trainers.ppo`'s;
    - `cardlab rllib` maps them to RLlib's PPO (`cardlab.cluster.rllib.algorithm_config`: a rollout of
      n_steps * num_envs per env runner);
    - the imitation warm start (``imitation.*``, both trainers) reads gamma for its value targets and
      vf_coef and max_grad_norm for its loss.
    """

    learning_rate: float = bounds.rate(3e-4)
    """Adam step size"""
    n_steps: int = bounds.bounded(1024, 1, bounds.ROLLOUT_HIGH)
    """env steps per env and rollout (a rollout is n_steps * num_envs transitions)"""
    batch_size: int = bounds.bounded(256, 2, bounds.ROLLOUT_HIGH)
    """minibatch size of each gradient step"""
    n_epochs: int = bounds.bounded(10, 1, 10_000)
    """passes over each rollout"""
    gamma: float = bounds.bounded(0.995, 0, 1, above=True, words="a discount in (0, 1]")
    """discount factor (the reward comes at the end of a hand)"""
    gae_lambda: float = bounds.bounded(0.95, 0, 1, words="a value in [0, 1]")
    """GAE bias/variance trade-off"""
    clip_range: float = bounds.bounded(0.2, 0, 10, above=True)
    """PPO clipping of the probability ratio"""
    ent_coef: float = bounds.bounded(0.01, 0, 1_000)
    """entropy bonus coefficient"""
    vf_coef: float = bounds.bounded(0.5, 0, 1_000)
    """value loss coefficient"""
    max_grad_norm: float = bounds.bounded(0.5, 0, 1_000_000, above=True)
    """gradient clipping norm"""


@dataclasses.dataclass
class PolicyConfig:
    """The actor-critic network."""

    net_arch: list[int] = bounds.layer_sizes([256, 256])
    """hidden layer sizes of the policy (pi) and the value (vf) network (separate weights), or DMC's Q net"""
    activation: str = bounds.word("tanh", TRAINED_ACTIVATIONS)
    """activation between layers: 'tanh' or 'relu'"""
    privileged_critic: bool = False
    """the critic (used in training only) also reads the hidden cards; the actor, the only part a bot file
    keeps, reads the learner's observation alone. trainer maskable_ppo: the critic reads the observation
    followed by the other hands and the next cards of the pile; trainer lean: every seat's observation, the
    acting seat's first, then the next seats' in turn order (every hand, not the pile's order)"""
    read_hands: float = bounds.bounded(0.0, 0, 1_000)
    """trainer lean: weight of an auxiliary loss in which the actor's last hidden layer also predicts the
    other seats' hands (cardlab.training.trainers.hand_head); 0: none. The bot file is the actor alone either
    way"""


@dataclasses.dataclass
class EvalConfig:
    """Evaluation of the learner (masked argmax) during and after training."""

    every_steps: int = bounds.step_count(50_000)
    """evaluate every this many env steps"""
    hands: int = bounds.bounded(200, 1, 10_000_000)
    """hands per opponent at each evaluation, the learner's seat rotating"""
    final_hands: int = bounds.bounded(1000, 0, 10_000_000)
    """hands per opponent of the final evaluation (0: none)"""
    matches: int = bounds.bounded(0, 0, 1_000_000)
    """matches per opponent at each evaluation along the run, besides the hands (0: none); worth setting
    with episode: match, whose objective they measure"""
    final_matches: int = bounds.bounded(0, 0, 1_000_000)
    """matches per opponent of the final evaluation, each played to the game's target score with the
    points left in hand counting (0: none; needs final_hands > 0)"""
    opponents: list[str] = dataclasses.field(default_factory=lambda: ["random"])
    """agent specs the learner is evaluated against, each filling every other seat"""


@dataclasses.dataclass
class RLlibConfig:
    """`cardlab rllib` only: how RLlib spreads the run (`cardlab.cluster.rllib`)."""

    num_env_runners: int = bounds.bounded(1, 0, 1_024)
    """Ray actors that play games (each runs num_envs envs); 0: sample in the driver process"""


@dataclasses.dataclass
class RayConfig:
    """trainer lean with actors > 0: the actors as Ray actors (`cardlab.training.ray_actors`)."""

    address: str = ""
    """'' (actor processes beside the trainer), 'local' (a Ray started by the run), 'auto' (the Ray running
    where the trainer runs) or a cluster's HOST:PORT (`ray start --head` prints it); --ray-address sets it"""


@dataclasses.dataclass
class TrainConfig(RunHeader):
    """One training run of a PPO learner in a card game, against a league (the header keys, `RunHeader`'s,
    first: the learner takes one of the num_players seats)."""

    name: str = header_default("name", "cardlab")
    trainer: str = bounds.word("maskable_ppo", TRAINERS)
    """'maskable_ppo' (sb3-contrib's MaskablePPO, one learner seat per single-seat env) or 'lean'
    (`cardlab.training.trainers.lean`: PPO or DMC over the batched self-play engine, num_envs games)"""
    algorithm: str = bounds.word("ppo", ALGORITHMS)
    """trainer lean's learner, 'ppo' (masked PPO) or 'dmc' (deep Monte Carlo: ``dmc.*``, docs/training.md)"""
    reward: str = bounds.word("win", (*REWARDS, MATCH))
    """the game env's reward: 'win' (+1 / -1/(n-1) per episode), 'points' (-points/100 per hand; hand
    episodes only) or 'match' (the seat's change of match equity at each hand's end, from the table's
    shipped equity model or `equity`'s: potential-based shaping of the match's win; episode match, trainer
    lean only)"""
    equity: str = ""
    """reward 'match': the match equity it pays the changes of, an equity's NAME.json (`cardlab match-equity`
    writes runs/NAME__SEED__TIME/equity.json and prints its path; a relative path is from where the run
    starts), refused unless fitted for this table and its rules of play; '': the table's shipped one"""
    episode: str = bounds.word("hand", EPISODES)
    """what one training game is: 'hand' or 'match' (trainer lean only): hands follow each other with running
    totals (which the observation holds) and the win reward comes at the match's end, the lowest total
    winning; the seats are drawn again per match. A match is many moves: consider ppo.gamma closer to 1"""
    skip_forced_moves: bool = False
    """play the learner's moves that have a single legal action for it, so that PPO's steps (and
    total_timesteps) count real decisions only"""
    opponents: list[OpponentConfig] = dataclasses.field(default_factory=lambda: [OpponentConfig()])
    """the league's fixed opponents, with weights"""
    self_play: SelfPlayConfig = dataclasses.field(default_factory=SelfPlayConfig)
    """frozen snapshots of the learner in the league"""
    population: PopulationConfig = dataclasses.field(default_factory=PopulationConfig)
    """other learners' snapshots in the league (needs self_play.enabled: its snapshots are what is shared)"""
    imitation: ImitationConfig = dataclasses.field(default_factory=ImitationConfig)
    """optional warm start by copying a teacher agent before PPO"""
    ppo: PPOConfig = dataclasses.field(default_factory=PPOConfig)
    """MaskablePPO hyper-parameters"""
    dmc: DMCConfig = dataclasses.field(default_factory=DMCConfig)
    """deep Monte Carlo's hyper-parameters (algorithm: dmc)"""
    policy: PolicyConfig = dataclasses.field(default_factory=PolicyConfig)
    """the network"""
    num_envs: int = bounds.bounded(2, 1, 4_096)
    """parallel envs (processes with vec_env 'subproc')"""
    vec_env: str = bounds.word("subproc", VEC_ENVS)
    """'subproc' (SB3's SubprocVecEnv, one process per env) or 'dummy' (all in the trainer's process)"""
    total_timesteps: int = bounds.step_count(500_000)
    """env steps (learner decisions) to train for"""
    max_minutes: float = bounds.bounded(0.0, 0, bounds.MINUTES)
    """stop PPO training after this many minutes of wall clock even short of total_timesteps (0: no
    limit), counted from the start of PPO training (after imitation, and again from a resume); the
    final checkpoint, evaluation and bot file follow as at total_timesteps"""
    eval: EvalConfig = dataclasses.field(default_factory=EvalConfig)
    """evaluation during and after training"""
    checkpoint_every: int = bounds.step_count(100_000)
    """save a checkpoint every this many env steps (and at the end, and when interrupted)"""
    checkpoint_minutes: float = bounds.bounded(5.0, 0, bounds.MINUTES)
    """also save one this many minutes of training after the last (0: by checkpoint_every alone)"""
    device: str = bounds.word("cpu", DEVICES)
    """the learner's torch device: 'cpu', 'cuda' (a GPU; refused where torch sees none; trainer lean only)
    or 'auto' (a GPU where there is one, else the CPU). Actors and bots play on the CPU"""
    actors: int = bounds.elsewhere(0, "the machine's range: cardlab.training.harness.placement")
    """trainer lean: actor processes that play the games (num_envs each) with a recent copy of the policy
    while the learner updates (`cardlab.training.trainers.actors`); 0: rollouts and updates in turn, in one
    process"""
    max_policy_lag: int = bounds.bounded(4, 0, 1_000_000)
    """actors > 0: a rollout played by a policy more than this many updates older than the learner's is
    dropped (the rest are corrected by PPO's ratio against the policy that played them)"""
    torch_threads: int = bounds.bounded(1, 1, 1_024)
    """torch threads of the trainer process (more than 1 only helps on an otherwise idle machine)"""
    rllib: RLlibConfig = dataclasses.field(default_factory=RLlibConfig)
    """settings of `cardlab rllib` (RLlib's multi-agent PPO); the other trainers ignore them"""
    ray: RayConfig = dataclasses.field(default_factory=RayConfig)
    """where the lean trainer's actors run (a Ray cluster, or processes on this machine)"""


# ---------------------------------------------------------------- loading
OTHER_FILES = (
    (("teacher", "labels", "check_hands"), "a teach config", "cardlab teach"),
    (("base", "search", "scheduler", "num_samples"), "a sweep file", "cardlab sweep"),
    (("positions", "field"), "a hand reader's config", "cardlab read-hands"),
    (("holdout_hands", "holdout_matches"), "a match equity config", "cardlab match-equity"),
)
"""(keys no training config has, what a file with one of them is, the command that reads it), in the order
they are tried: a teach config has a `base` too"""


def other_command(path: str | Path, data: dict[str, Any]) -> str | None:
    """The refusal of a file another command reads (by a key only its kind has); None for any other file."""
    for keys, what, command in OTHER_FILES:
        found = next((key for key in keys if key in data), None)
        if found is not None:
            return (f"config file {path} is {what} (key {found}), not a training config: run it with "
                    f"`{command} {path}`; a training config is e.g. configs/huit_ppo.yaml")
    return None


def load_config(path: str | Path) -> TrainConfig:
    """Read and validate a YAML training config; it must at least name its game.

    An empty file is refused rather than read as every default (a 500k-step
    run nobody asked for); so is a file without ``game``.
    """
    data = read_extended(Path(path))
    example = f"e.g. `game: huit` (games: {', '.join(games())}); configs/huit_quick.yaml is a small example"
    if data is None:
        raise ValueError(f"config file {path} is empty: a config must at least name its game, {example}")
    if isinstance(data, dict) and (other := other_command(path, data)) is not None:
        raise ValueError(other)
    if isinstance(data, dict) and "game" not in data:
        raise ValueError(f"config file {path} does not name its game: add the key game, {example}")
    try:
        return config_from_dict(data)
    except ValueError as err:  # the message names the key; the file is named here
        raise ValueError(f"config file {path}: {err}") from None


def parse_dataclass(cls: type[T], data: Any, path: str = "") -> T:
    """A dataclass from plain data, every key and type checked as a config's (sweep files use it too)."""
    return _parse(cls, data, path)


def config_from_dict(data: Any) -> TrainConfig:
    """Build and validate a config from plain data (what the YAML holds)."""
    cfg = _parse(TrainConfig, data, "")
    _validate(cfg)
    return cfg


def config_to_dict(cfg: TrainConfig) -> dict[str, Any]:
    """Plain data (YAML-ready) of a config; `config_from_dict` reads it back."""
    return dataclasses.asdict(cfg)


def validate_config(cfg: TrainConfig) -> TrainConfig:
    """Check a config built in Python (types and values) as strictly as a loaded one."""
    return config_from_dict(config_to_dict(cfg))


def save_config(cfg: TrainConfig, path: Path) -> None:
    path.write_text(yaml.safe_dump(config_to_dict(cfg), sort_keys=False), encoding="utf-8")


# ---------------------------------------------------------------- types
def _name(path: str) -> str:
    return path or "the config"


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _parse(cls: type[T], data: Any, path: str) -> T:
    """A dataclass from a mapping, checking every key against the fields' type hints."""
    if cls is OpponentConfig and isinstance(data, str):
        data = {"spec": data}
    if not isinstance(data, dict):
        raise ValueError(f"{_name(path)} must be a mapping of keys to values, got {excerpt(data)}")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    given = [_join(path, str(k)) for k in data if k not in names]
    if given:
        raise unknown("config key", given, ", ".join(names) + (f" (the keys of {path})" if path else ""))
    values = {k: _value(hints[k], v, _join(path, k)) for k, v in data.items()}
    return cls(**values)


KINDS: dict[Any, tuple[Callable[[Any], bool], str]] = {
    bool: (lambda v: isinstance(v, bool), "true or false"),
    int: (lambda v: isinstance(v, int) and not isinstance(v, bool), "a whole number"),
    float: (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "a number"),
    str: (lambda v: isinstance(v, str), "a string"),
}
"""a plain field's type: (whether a value is of it, what the refusal says is accepted)"""


def _value(hint: Any, value: Any, path: str) -> Any:
    origin = typing.get_origin(hint)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _parse(hint, value, path)
    if origin is list:
        (item,) = typing.get_args(hint)
        if not isinstance(value, (list, tuple)):
            raise ValueError(refusal(path, value, KIND, "a list"))
        return [_value(item, v, f"{path}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            raise ValueError(refusal(path, value, KIND, "a mapping with string keys"))
        return dict(value)
    if hint not in KINDS:
        raise TypeError(f"config field {path} has an unsupported type {hint}")  # a bug in this module
    ok, accepted = KINDS[hint]
    if not ok(value):
        raise ValueError(refusal(path, value, KIND, accepted))
    if hint is float:
        try:
            return float(value)
        except OverflowError:  # an int past float's range: 10**400
            raise ValueError(refusal(path, value, RANGE, "a number within a float's range (about 1.8e308)")
                             ) from None
    return value


# ---------------------------------------------------------------- values
def _validate(cfg: TrainConfig) -> None:
    game = check_header(cfg)
    bounds.check_declared(cfg)
    bounds.check_rollout(cfg)
    check_reward_episode(cfg.reward, cfg.episode)
    check_placement(cfg)
    if not cfg.opponents:
        raise ValueError(refusal("opponents", cfg.opponents, "empty", "a list of at least one agent spec"))
    for i, opp in enumerate(cfg.opponents):  # weight 0 never plays: refused here (a reader field takes it)
        if not opp.weight > 0:
            raise ValueError(refusal(f"opponents[{i}].weight", opp.weight, "out of range",
                                     "a value > 0 and <= 1,000,000"))
        _check_spec(opp.spec, f"opponents[{i}].spec", game, cfg.trainer == "lean")

    with_trainer = f"not accepted with trainer: {cfg.trainer}"
    check_that(cfg.trainer == "lean" or cfg.reward != MATCH, "reward", cfg.reward, with_trainer,
               "'win' or 'points', or trainer: lean (with episode: match)")
    check_reward_equity(cfg.reward, cfg.equity)
    if cfg.reward == MATCH:
        table_equity(game, cfg.equity)
    if cfg.trainer == "lean":
        _check_lean(cfg)
    else:
        for key, value, default in (
                ("episode", cfg.episode, "hand"), ("policy.read_hands", cfg.policy.read_hands, 0),
                ("actors", cfg.actors, 0), ("device", cfg.device, "cpu"),
                ("ray.address", cfg.ray.address, ""), ("algorithm", cfg.algorithm, "ppo")):
            check_that(value == default, key, value, with_trainer, f"{default!r}, or trainer: lean")
    pop = cfg.population
    check_that(not pop.dir or cfg.self_play.enabled, "population.dir", pop.dir,
               "not accepted without self-play", "'' (no population), or set self_play.enabled: true as well "
               "(a population shares self-play snapshots)")

    if cfg.imitation.enabled:
        _check_spec(cfg.imitation.teacher, "imitation.teacher", game, cfg.trainer == "lean")

    ppo = cfg.ppo
    rollout = ppo.n_steps * cfg.num_envs
    if not 2 <= ppo.batch_size <= rollout:
        raise ValueError(refusal("ppo.batch_size", ppo.batch_size, "out of range",
                                 f"2 to ppo.n_steps * num_envs = {rollout}"))

    bounds.check_network(cfg.policy.net_arch, game.layout.size, game.num_actions)

    ev = cfg.eval
    check_that(ev.final_hands > 0 or ev.final_matches == 0, "eval.final_matches", ev.final_matches,
               "not accepted with eval.final_hands: 0", "0, or eval.final_hands > 0 as well (the matches are "
               "played in the final evaluation)")
    if not ev.opponents:
        raise ValueError(refusal("eval.opponents", ev.opponents, "empty",
                                 "a list of at least one agent spec"))
    for i, spec in enumerate(ev.opponents):
        _check_spec(spec, f"eval.opponents[{i}]", game)


def _check_lean(cfg: TrainConfig) -> None:
    """What the lean trainer does not do (yet): refused by name rather than silently ignored."""
    try:
        batched = get_spec(cfg.game).batched_engine() is not None
    except ValueError:
        batched = False
    check_that(batched, "game", cfg.game, "not accepted with trainer: lean",
               "a game with a batched engine (GameSpec.batched), or trainer: maskable_ppo")
    check_that(not cfg.skip_forced_moves, "skip_forced_moves", cfg.skip_forced_moves,
               "not accepted with trainer: lean", "false, or trainer: maskable_ppo")
    check_dmc(cfg)


def _check_spec(spec: str, path: str, game: Game, batched: bool = False) -> None:
    """An agent spec that plays `game` (`batched`: in the lean trainer's batched games, which show it nothing
    beyond its observation)."""
    try:
        agent = make_agent(spec, game, seed=0)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None
    if batched:
        check_unshown(path, spec, agent, "the lean trainer's batched play", "trainer: maskable_ppo")
