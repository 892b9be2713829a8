"""The page's help for each rule option speaks to players: no rule ids, field names, formulas or developer
ranges ("adds the observation field drew_on", "1 to 1,000,000", "(B2)")."""

from __future__ import annotations

import re

from cardlab.envs.game_spec import games, get_spec
from cardlab.serve.view import player_help, rule_fields

from .helpers import client


def test_every_option_s_help_is_in_words_for_a_player() -> None:
    for game_id in games():
        for field in rule_fields(get_spec(game_id)):
            words = field["help"]
            assert words and not words[0].islower() and words.endswith("."), (game_id, field["name"], words)
            assert not re.search(r"\([A-Z]\d+[;)]|\b\w+_\w+\b|//|1,000,000|observation field", words), (
                game_id, field["name"], words)


def test_the_help_keeps_a_rule_s_note_and_says_what_only_bots_see() -> None:
    assert player_help("players at the table (A1; 2 and 3 are a training extension)", "2 to 10", 2, 10) == (
        "Players at the table (2 and 3 are a training extension) (2 to 10).")
    assert player_help("points (B12)", "0 to 1,000,000", 0, 10**6) == "Points (a whole number from 0)."
    memory = "not a rule of play (play is unchanged): adds the observation field x_y"
    said = player_help(memory, "true or false", None, None)
    assert said.startswith("Not a rule of play: the game is the same")


def test_the_options_answer_carries_the_help_the_page_shows() -> None:
    games_ = client().get("/api/options").json()["games"]
    assert all(rule["help"] for game in games_ for rule in game["rules"])
