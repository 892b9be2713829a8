"""Deal suites: fixed, versioned sets of deals per table, so that anyone's results are comparable.

A suite is one JSON file in `SUITES_DIR` (``NAME.json``): the game, its rules,
whether its deals are hands or matches, a seed, the number of deals and the
SHA-256 of the dealt cards. Deal d is the one `evaluate` deals with that seed
(``derive_seed(seed, kind, d)``, the engine dealing from it: rule C2), so the
file stays a few hundred bytes while the hash pins every card: `load_suite`
deals them all again and refuses the suite, saying why, when an engine or
seeding change would deal other cards. Then the suite gets a new version
(a new file, written by ``python -m cardlab.evaluation.suites``), and results
name the version they were played on.

A suite version changes only with a rule or engine change; `SUITE_PLAN` is the
one list of suites (tables, sizes and seeds).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import pathlib
import sys
from typing import Any

import numpy as np

from cardlab.envs import make_game
from cardlab.envs.checked_json import excerpt, read_json_file
from cardlab.evaluation.episodes import HAND, MATCH, derive_seed, plural, table_rules

SUITES_DIR = pathlib.Path(__file__).resolve().parent / "suites"
"""the shipped suites, one NAME.json each"""
SUITE_SEED = 20_251_201
"""the seed every suite's own seed is derived from (with its number in `SUITE_PLAN`)"""
VERSION = 1
"""the version of the suites written now: raised with a rule or engine change that deals other cards"""
EPISODES = {"hand": HAND, "match": MATCH}


@dataclasses.dataclass(frozen=True)
class SuitePlan:
    """What a suite is made of: a table, hands or matches, how many deals."""

    name: str
    game: str
    num_players: int
    episode: str
    deals: int


SUITE_PLAN = (
    *(SuitePlan(f"huit-{n}p", "huit", n, "hand", 2000) for n in range(2, 7)),
    *(SuitePlan(f"switch-{n}p", "switch", n, "hand", 2000) for n in range(4, 7)),
    SuitePlan("huit-2p-match", "huit", 2, "match", 500),
)
"""every shipped suite; Huit 2p is the default of `cardlab bench`"""
DEFAULT_SUITE = "huit-2p"


@dataclasses.dataclass(frozen=True)
class Suite:
    """A loaded (and checked) suite: every deal `evaluate` plays with its seed and rules."""

    name: str
    version: int
    game: str
    rules: dict[str, Any]
    episode: str
    seed: int
    deals: int
    deals_sha256: str

    @property
    def num_players(self) -> int:
        return int(self.rules["num_players"])

    @property
    def kind(self) -> int:
        return EPISODES[self.episode]

    @property
    def episodes(self) -> int:
        """Episodes a run plays: every deal once per seat rotation."""
        return self.deals * self.num_players

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def deals_hash(game: str, rules: dict[str, Any], kind: int, seed: int, deals: int) -> str:
    """SHA-256 of the cards of every deal (each seat's hand, the stock, the table, who starts).

    The state's generator, rules and public record (what the deal shows, not
    which cards it deals) are left out.
    """
    table = make_game(game, rules)
    digest = hashlib.sha256()
    for deal in range(deals):
        state = table.new_state(np.random.default_rng(derive_seed(seed, kind, deal))).state_dict()
        cards = {k: v for k, v in state.items() if k not in ("rng", "rules", "record")}
        digest.update(json.dumps(cards, sort_keys=True).encode())
    return digest.hexdigest()


def make_suite(plan: SuitePlan, number: int) -> Suite:
    """The suite of `plan` (the `number`-th of `SUITE_PLAN`), its cards hashed now."""
    rules = table_rules(plan.game, {"num_players": plan.num_players})
    seed = derive_seed(SUITE_SEED, VERSION, number)
    kind = EPISODES[plan.episode]
    return Suite(plan.name, VERSION, plan.game, rules, plan.episode, seed, plan.deals,
                 deals_hash(plan.game, rules, kind, seed, plan.deals))


def suite_names() -> list[str]:
    """The shipped suites, in `SUITE_PLAN`'s order."""
    return [plan.name for plan in SUITE_PLAN if (SUITES_DIR / f"{plan.name}.json").is_file()]


FIELDS = {f.name: f.type for f in dataclasses.fields(Suite)}


def load_suite(name: str, check: bool = True) -> Suite:
    """A shipped suite by name, or a suite file by path, checked: its cards must hash as recorded.

    A ValueError says what is wrong: an unknown name (listing the suites), a
    damaged file, or cards this engine deals differently (the suite is out of
    date: rerun with the suite of this version). `check=False` skips dealing
    the cards again (for reading what a suite is, not for playing it).
    """
    path = pathlib.Path(name) if name.endswith(".json") else SUITES_DIR / f"{name}.json"
    if not path.is_file():
        raise ValueError(f"unknown suite {excerpt(name)}: the suites are {', '.join(suite_names())} "
                         "(or give a suite's .json file)")
    data = read_json_file(path)
    if not isinstance(data, dict) or set(data) != set(FIELDS):
        keys = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise ValueError(f"suite {path}: expected the fields {', '.join(FIELDS)}, got {excerpt(keys)}")
    if data["episode"] not in EPISODES or not isinstance(data["rules"], dict):
        raise ValueError(f"suite {path}: episode must be hand or match and rules an object, got "
                         f"{excerpt(data['episode'])} and {excerpt(data['rules'])}")
    for key in ("version", "seed", "deals"):
        if isinstance(data[key], bool) or not isinstance(data[key], int) or data[key] < 1:
            raise ValueError(f"suite {path}: {key} must be a whole number >= 1, got {excerpt(data[key])}")
    suite = Suite(**data)
    rules = table_rules(suite.game, suite.rules)
    if not check:
        return dataclasses.replace(suite, rules=rules)
    found = deals_hash(suite.game, rules, suite.kind, suite.seed, suite.deals)
    if found != suite.deals_sha256:
        raise ValueError(f"suite {suite.name} version {suite.version} ({path}): this cardlab deals other "
                         f"cards from its seeds (SHA-256 {found[:12]}..., the suite records "
                         f"{suite.deals_sha256[:12]}...): the rules or the engine changed since it was made, "
                         "so its results would not compare; use the suites shipped with this cardlab "
                         "(python -m cardlab.evaluation.suites --check)")
    return dataclasses.replace(suite, rules=rules)


def write_suites(folder: pathlib.Path = SUITES_DIR) -> list[pathlib.Path]:
    """Write every suite of `SUITE_PLAN` into `folder` (what a new version does)."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for number, plan in enumerate(SUITE_PLAN):
        path = folder / f"{plan.name}.json"
        path.write_text(json.dumps(make_suite(plan, number).to_dict(), indent=2) + "\n", encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    """``python -m cardlab.evaluation.suites [--check]``: write the suites, or check the shipped ones."""
    parser = argparse.ArgumentParser(prog="python -m cardlab.evaluation.suites", description=main.__doc__)
    parser.add_argument("--check", action="store_true", help="load every shipped suite (hash check) instead")
    args = parser.parse_args(argv)
    if args.check:
        for name in suite_names():
            suite = load_suite(name)
            print(f"{name} v{suite.version}: {plural(suite.deals, 'deal')}, "
                  f"{plural(suite.episodes, suite.episode)}, cards as recorded")
        return 0
    for path in write_suites():
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
