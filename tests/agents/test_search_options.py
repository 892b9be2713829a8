"""The search's options, each declared once (`cardlab.agents.search_options`): the parser, the checks, the
error text and the docs table all come from the declarations, and every number is bounded and written in the
digits 0-9."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest

from cardlab.agents.search_options import (
    ACCEPTED,
    DECLARED,
    MOST_MS,
    MOST_TEXT,
    MOST_WORLDS,
    READ_WITH,
    WEIGHING,
    SearchOption,
    SearchOptions,
    declared_of,
    options_markdown,
    parse_spec,
    search_spec,
)
from cardlab.envs.checked_json import excerpt
from cardlab.envs.declared import option


def test_every_field_is_declared_and_reaches_the_accepted_list_and_the_docs_table() -> None:
    names = [field.name for field in dataclasses.fields(SearchOptions)]
    assert list(DECLARED) == names
    table = options_markdown().splitlines()
    assert len(table) == 2 + len(names)
    for name, row in zip(names, table[2:], strict=True):
        declared = DECLARED[name]
        assert row.startswith(f"| `{name}` | {declared.shown} | ") and declared.doc in row
        assert f"{name}=" in ACCEPTED
        for word in declared.choices:
            assert f"`{word}`" in row


@pytest.mark.parametrize("name", list(DECLARED))
def test_each_option_parses_its_declared_values_and_refuses_others(name: str) -> None:
    declared = DECLARED[name]
    other, values = READ_WITH.get(name, ("", ()))
    beside = f"{other}={values[0]}:" if values else ""  # the option it is read with
    if declared.choices:
        for word in declared.choices:
            assert getattr(parse_spec(f"search:{beside}{name}={word}:expert")[0], name) == word
        bad = "nonesuch"
    elif declared.text:
        assert getattr(parse_spec(f"search:{beside}{name}=runs/r/x.json:expert")[0], name) == "runs/r/x.json"
        bad = "x" * (MOST_TEXT + 1)
    else:
        assert declared.high is not None  # every search number is bounded (`SearchOption.of`)
        top = int(declared.high) if declared.whole else declared.high
        assert getattr(parse_spec(f"search:{beside}{name}={top}:expert")[0], name) == top
        bad = str(int(declared.high) + 1)
    problem = "(out of range|not one of the choices|not printable text of the accepted length)"
    with pytest.raises(ValueError, match=re.escape(f"{name}=") + f".* is {problem}; accepted: "
                                         + re.escape(declared.accepted())):
        parse_spec(f"search:{name}={bad}:expert")


@pytest.mark.parametrize("spec, says", [
    ("search:ms=1e29:expert", "ms='1e29' is of the wrong type; accepted: a whole number 0 to 600000, in the "
                              "digits 0-9"),
    ("search:ms=100000000000000000000000000000:expert", "ms='100000000000000000000000000000' is of the "
                                                        "wrong type"),
    (f"search:ms={MOST_MS + 1}:expert",
     f"ms={MOST_MS + 1} is out of range; accepted: a whole number 0 to {MOST_MS}"),
    ("search:worlds=\uff16\uff14:expert", "worlds='\uff16\uff14' is of the wrong type"),
    ("search:worlds=\u0664:expert", "is of the wrong type"),  # an Arabic-Indic 4: int() would take it
    ("search:worlds=1_000:expert", "worlds='1_000' is of the wrong type"),
    ("search:worlds=+8:expert", "is of the wrong type"),
    ("search:z=nan:expert", "z='nan' is of the wrong type; accepted: a number from 0 to 10"),
    ("search:z=inf:expert", "z='inf' is of the wrong type"),
    ("search:z=\uff10.5:expert", "is of the wrong type"),
    ("search:ess=1e-3:expert", "ess='1e-3' is of the wrong type"),
    (f"search:worlds={MOST_WORLDS}.0:expert", "is of the wrong type"),
])
def test_numbers_are_bounded_ascii_and_refused_in_one_line(spec: str, says: str) -> None:
    with pytest.raises(ValueError, match=re.escape(says)) as caught:
        parse_spec(spec)
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 300


@pytest.mark.parametrize("name", list(DECLARED))
@pytest.mark.parametrize("given", ["{name}", "{name}=", " {name} = "])
def test_a_known_option_without_a_value_is_refused_as_needing_one(name: str, given: str) -> None:
    """``worlds`` or ``worlds=`` names a known option with its value left out: the refusal says that, and the
    values the option accepts, not that the option is unknown (nor that an empty value is of the wrong type,
    nor, for a text option, takes its default)."""
    spec = f"search:{given.format(name=name)}:expert"
    with pytest.raises(ValueError) as caught:
        parse_spec(spec)
    assert str(caught.value) == (f"agent spec {excerpt(spec)}: search option {name} needs a value "
                                 f"({name}=VALUE); accepted: {DECLARED[name].accepted()}")


def test_numbers_in_ascii_digits_parse() -> None:
    options = parse_spec("search:worlds=64:ms=0:z=.5:belief=expert:ess=0.25:expert")[0]
    assert (options.worlds, options.ms, options.z, options.ess) == (64, 0, 0.5, 0.25)


@pytest.mark.parametrize("belief", ["uniform", "learned", "posterior"])
@pytest.mark.parametrize("given", ["weigh=weights", "ess=0.25"])
def test_a_weighing_option_beside_a_belief_that_weighs_none_is_refused_in_one_line(belief: str,
                                                                                    given: str) -> None:
    """``weigh=`` and ``ess=`` say what a belief does with its weights: beside a belief that weighs no world
    they would do nothing, so they are refused, in a spec and in code alike; beside one that weighs, taken."""
    name, text = given.split("=")
    shown = "'weights'" if name == "weigh" else text
    says = (f"search option {name}={shown} is read only with "
            + " or ".join(f"belief={weighing}" for weighing in WEIGHING)
            + f", not belief={belief}; accepted: {name} beside one of them, or none")
    with pytest.raises(ValueError) as caught:
        parse_spec(f"search:belief={belief}:{given}:expert")
    assert str(caught.value).endswith(says) and "\n" not in str(caught.value), str(caught.value)
    value = DECLARED[name].parse(text)
    with pytest.raises(ValueError, match=f"^{re.escape(says)}$"):
        SearchOptions(belief=belief, **{name: value})
    for weighing in WEIGHING:
        assert getattr(SearchOptions(belief=weighing, **{name: value}), name) == value


@pytest.mark.parametrize(("spec", "says"), [
    ("search:level=strong:worlds=64:ms=0:expert",
     "search option level='strong' is read only with worlds or ms left out, not both given; accepted: level "
     "beside one of them, or none"),
    ("search:worlds=8:level=quick:ms=0:expert", "search option level='quick' is read only with worlds or ms"),
    ("search:worlds=0:z=2:expert", "search option z=2.0 is read only with worlds of 1 or more, not worlds=0 "
                                   "(played as BASE); accepted: z beside one of them, or none"),
    ("search:ms=0:worlds=0:expert", "search option ms=0 is read only with worlds of 1 or more, not worlds=0"),
    ("search:worlds=0:belief=expert:expert", "search option belief='expert' is read only with worlds of 1"),
])
def test_an_option_another_given_one_leaves_unread_is_refused_in_one_line(spec: str, says: str) -> None:
    """A level beside both worlds and ms sets nothing, and at ``worlds=0`` the search plays as BASE and reads
    no other option: given, such an option would do nothing, so a spec and `search_spec` refuse it."""
    with pytest.raises(ValueError) as caught:
        parse_spec(spec)
    said = str(caught.value)
    assert said.startswith(f"agent spec {excerpt(spec)}: {says}") and "\n" not in said, said
    parts = (part.split("=") for part in spec.split(":")[1:-1])
    given = {key: DECLARED[key].parse(text) for key, text in parts}
    with pytest.raises(ValueError, match=f"^{re.escape(says)}"):
        search_spec("expert", **given)
    for kept in ("search:level=strong:worlds=64:expert", "search:level=strong:ms=0:expert",
                 "search:worlds=0:expert", "search:worlds=0:bot:huit-2p"):
        parse_spec(kept)


@pytest.mark.parametrize("values", [{"ms": 10**29}, {"ms": 1e3}, {"worlds": True}, {"z": float("nan")},
                                    {"z": float("inf")}, {"belief": 3}, {"ess": -0.1}])
def test_options_given_in_code_are_checked_as_parsed_ones_are(values: dict[str, Any]) -> None:
    (name,) = values
    accepted = re.escape(DECLARED[name].accepted())
    with pytest.raises(ValueError, match=f"search option {name}=.* is .*; accepted: {accepted}"):
        SearchOptions(**values)


def test_a_text_option_takes_printable_text_of_bounded_length() -> None:
    """`option(..., text=...)` declares one (a reader file's path, say): no colon (a spec's parts are split at
    them) and no space at either end (they are trimmed)."""
    reader = SearchOption("", "the reader file", shown="none", text="a reader file's path", name="reader")
    assert reader.parse("runs/reader.json") == "runs/reader.json" and reader.brief() == "reader=TEXT"
    reader.check("runs/reader.json")
    reader.check("")  # the default: none given
    for bad in ("x" * (MOST_TEXT + 1), "a\nb", 3, "C:/runs/reader.json", " runs/reader.json", "reader.json "):
        with pytest.raises(ValueError, match=re.escape(f"; accepted: {reader.accepted()}")):
            reader.check(bad)


@pytest.mark.parametrize("name", [name for name, declared in DECLARED.items() if declared.text])
@pytest.mark.parametrize("path", ["C:/runs/x.json", "runs/a:b/x.json", " x.json"])
def test_a_text_option_a_spec_cannot_carry_is_refused_where_written(name: str, path: str) -> None:
    """A spec's parts are split at colons and trimmed: `search_spec` refuses a value it could not write back,
    saying why, rather than write a spec that reads as other options or another base."""
    other, values = READ_WITH[name]
    with pytest.raises(ValueError, match=rf"^search option {name}=.* is not printable text of the accepted "
                                         r"length; accepted: .* without ':' or a space at either end \(a "
                                         r"spec could not carry them\)$"):
        search_spec("expert", **{other: values[0], name: path})


@pytest.mark.parametrize("name", [name for name, declared in DECLARED.items() if declared.text])
@pytest.mark.parametrize(("path", "rest"), [("C", "/runs/x.json"), ("runs/a", "b/x.json"), ("C", "\\x.json")])
def test_a_path_with_a_colon_in_a_spec_is_refused_naming_it(name: str, path: str, rest: str) -> None:
    """Split at its colon, such a path would leave its tail to be read as the base agent."""
    other, values = READ_WITH[name]
    spec = f"search:{other}={values[0]}:{name}={path}:{rest}:worlds=4:expert"
    with pytest.raises(ValueError) as caught:
        parse_spec(spec)
    assert str(caught.value) == (
        f"agent spec {excerpt(spec)}: search option {name}={path!r} is followed by "
        f"{excerpt(rest + ':worlds=4:expert')}, which is no agent: a path with ':' cannot be given in a spec "
        "(its parts are split at ':'); give the file a path without one")
    assert parse_spec(f"search:{other}={values[0]}:{name}=runs/a=b/x.json:bot:huit-2p") == (
        SearchOptions(**{other: values[0], name: "runs/a=b/x.json"}), "bot:huit-2p")


@pytest.mark.parametrize("value", [1e-20, 5e-324, 2.2250738585072014e-308, 0.1, 1 / 3, 99.99999999999999,
                                   100.0, 0.0, 12.5e-7])
def test_a_float_reads_back_from_its_spec_exactly(value: float) -> None:
    """A spec keeps a float's shortest exact digits in plain decimals, no exponent (a fixed count of places
    would write 1e-20 as 0)."""
    spec = search_spec("expert", points_weight=value)
    assert re.fullmatch(r"search:points_weight=[0-9]+(\.[0-9]+)?:expert", spec), spec
    assert parse_spec(spec)[0].points_weight == value
    assert parse_spec(search_spec("expert", z=value / 10))[0].z == value / 10


def test_typed_values_become_a_spec_checked_once_and_read_back_the_same() -> None:
    """`search_spec` (`cardlab exploit`'s responder) writes what `parse_spec` reads, in plain digits."""
    spec = search_spec("expert", worlds=64, ms=0, z=0.00001)
    assert spec == "search:worlds=64:ms=0:z=0.00001:expert"
    assert parse_spec(spec) == (SearchOptions(worlds=64, ms=0, z=0.00001), "expert")


@pytest.mark.parametrize(("values", "said"), [
    ({"worlds": MOST_WORLDS + 1}, f"search option worlds={MOST_WORLDS + 1} is out of range; accepted: a "
                                  "whole number 0 to"),
    ({"worlds": True}, "search option worlds=True is of the wrong type; accepted: a whole number"),
    ({"worlds": "64"}, "search option worlds='64' is of the wrong type; accepted: a whole "),
    ({"wrlds": 64}, "unknown search option(s) wrlds; accepted: level="),
])
def test_typed_values_are_checked_by_the_declarations(values: dict[str, object], said: str) -> None:
    with pytest.raises(ValueError, match=re.escape(said)):
        search_spec("expert", **values)


@dataclasses.dataclass(frozen=True)
class MadeUpOptions(SearchOptions):
    """The search options with one made-up option, declared once (`cardlab.envs.declared.option`)."""

    made_up: int = option(3, "a made-up count of candidates", low=1, high=8)


def test_a_made_up_search_option_is_in_the_docs_table_and_its_bounds_are_refused_in_one_line() -> None:
    declared = declared_of(MadeUpOptions)
    assert "| `made_up` | 3 | 1..8 | a made-up count of candidates |" in options_markdown(declared)
    assert declared["made_up"].parse("8") == 8 and MadeUpOptions(made_up=8).made_up == 8
    bads: tuple[tuple[Any, str], ...] = ((0, "out of range"), (9, "out of range"), (2.5, "of the wrong type"))
    for bad, problem in bads:
        with pytest.raises(ValueError, match=f"^search option made_up={bad} is {problem}; accepted: a whole "
                                             "number 1 to 8$"):
            MadeUpOptions(made_up=bad)


def test_a_search_number_without_both_bounds_is_refused_where_declared() -> None:
    @dataclasses.dataclass(frozen=True)
    class Unbounded(SearchOptions):
        endless: int = option(3, "a count without a high bound", low=1)

    with pytest.raises(TypeError, match=r"^search option endless declares neither choices, text nor both"):
        declared_of(Unbounded)
