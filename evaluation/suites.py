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
import re
import sys
from typing import Any

import numpy as np

from cardlab.envs import make_game
from cardlab.envs.checked_json import excerpt, read_json_file
from cardlab.envs.declared import missing_file, refused_file, unknown
from cardlab.envs.game_spec import games
from cardlab.evaluation.episodes import HAND, MATCH, derive_seed, plural, rotated_deals, table_rules

SUITES_DIR = pathlib.Path(__file__).resolve().parent / "suites"
"""the shipped suites, one NAME.json each"""
SUITE_SEED = 20_251_201
"""the seed every suite's own seed is derived from (with its number in `SUITE_PLAN`)"""
VERSION = 1
"""the version of the suites written now: raised with a rule or engine change that deals other cards"""
EPISODES = {"hand": HAND, "match": MATCH}
MATCH_DEALS = 500
"""the deals of a 3-6 player match suite: 500 deals x 4 rotations bound a paired interval of a 4-seat
match win rate within about +-0.02 (docs/leaderboard.md gives the variance measured), and the expert
plays a whole suite in minutes"""
MOST_DEALS = 100_000
"""the most deals a suite may hold: each is dealt again to check its hash before a suite is played (the
shipped ones hold 2,000 hands or 500 matches)"""
MOST_SEED = 2**64 - 1
MOST_VERSION = 1000
NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,39}")
"""a suite's name: it names result files and the leaderboard's tables"""
SHA256 = re.compile(r"[0-9a-f]{64}")


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
    *(SuitePlan(f"huit-{n}p-match", "huit", n, "match", MATCH_DEALS) for n in range(3, 7)),
    *(SuitePlan(f"switch-{n}p-match", "switch", n, "match", MATCH_DEALS) for n in range(4, 7)),
)
"""every shipped suite; Huit 2p is the default of `cardlab bench`. A suite's seed comes from its place in
this list, so new suites go at its end (the seeds of the others stay)"""
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

    def deals_of(self, hands: int) -> int:
        """The deals a run of `hands` hands (or matches) on this suite plays: whole seat rotations
        (`rotated_deals`), at most the suite's deals."""
        return min(rotated_deals(hands, self.num_players), self.deals)

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
    if name.endswith(".json") and not path.is_file():
        raise missing_file("suite file", path, f"a suite is NAME.json, or give one of the suites "
                                               f"{', '.join(suite_names())}")
    if not path.is_file():
        raise unknown("suite", [name], f"{', '.join(suite_names())}, or a suite's .json file")
    data = read_json_file(path)
    if not isinstance(data, dict) or set(data) != set(FIELDS):
        keys = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise refused_file("suite", path, f"expected the fields {', '.join(FIELDS)}, got {excerpt(keys)}")
    check_fields(path, data)
    suite = Suite(**data)
    try:
        rules = table_rules(suite.game, suite.rules)
    except ValueError as err:
        raise refused_file("suite", path, f"rules: {err}") from None
    suite = dataclasses.replace(suite, rules=rules)
    if path.resolve() != (SUITES_DIR / f"{suite.name}.json").resolve() and suite.name in suite_names():
        check_as_shipped(path, suite)
    if not check:
        return suite
    found = deals_hash(suite.game, rules, suite.kind, suite.seed, suite.deals)
    if found != suite.deals_sha256:
        raise ValueError(f"suite {suite.name} version {suite.version} ({path}): this cardlab deals other "
                         f"cards from its seeds (SHA-256 {found[:12]}..., the suite records "
                         f"{suite.deals_sha256[:12]}...): the rules or the engine changed since it was made, "
                         "so its results would not compare; use the suites shipped with this cardlab "
                         "(python -m cardlab.evaluation.suites --check)")
    return suite


WHOLE = {"version": (1, MOST_VERSION), "seed": (0, MOST_SEED), "deals": (1, MOST_DEALS)}


def check_fields(path: pathlib.Path, data: dict[str, Any]) -> None:
    """Each field of a suite file of its type and within its range, before any card is dealt."""
    def fail(key: str, wanted: str) -> ValueError:
        return refused_file("suite", path, f"{key} must be {wanted}, got {excerpt(data[key])}")

    if not isinstance(data["name"], str) or not NAME.fullmatch(data["name"]):
        raise fail("name", "1 to 40 lowercase letters, digits and -, starting with a letter or digit")
    if data["game"] not in games():
        raise fail("game", f"one of {', '.join(games())}")
    if not isinstance(data["episode"], str) or data["episode"] not in EPISODES:
        raise fail("episode", "hand or match")
    if not isinstance(data["rules"], dict):
        raise fail("rules", "an object of rule options")
    for key, (low, high) in WHOLE.items():
        if isinstance(data[key], bool) or not isinstance(data[key], int) or not low <= data[key] <= high:
            raise fail(key, f"a whole number from {low:,} to {high:,}")
    if not isinstance(data["deals_sha256"], str) or not SHA256.fullmatch(data["deals_sha256"]):
        raise fail("deals_sha256", "the SHA-256 of the cards, 64 lowercase hex digits")


def check_as_shipped(path: pathlib.Path, suite: Suite) -> None:
    """A suite file named as a shipped suite must be that suite: its rules, episodes, seed, deals and cards
    (a row played on it is shown under the shipped suite's name)."""
    shipped = load_suite(suite.name, check=False)
    differ = [key for key in FIELDS if getattr(suite, key) != getattr(shipped, key)]
    if differ:
        rules = [k for k in shipped.rules if suite.rules.get(k) != shipped.rules[k]]
        what = ", ".join(f"rules.{k}" for k in rules) if differ == ["rules"] else ", ".join(differ)
        raise refused_file("suite", path, f"it is named {suite.name} but differs from the shipped suite "
                                          f"{suite.name} in {what}: a suite of other rules or deals is "
                                          "another suite; give it a name of its own, or use the shipped one "
                                          f"(--suite {suite.name})")


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
