"""The heuristic agents `greedy` and `expert` of both games.

They always return a legal action, see nothing but their observation (the env
they hold exposes no state), are fixed by their seed and never touch the
global RNGs, make the decisions their docstrings promise in set-up positions,
and beat weaker players over fixed seeded hands.
"""

from __future__ import annotations

import gc
import inspect
import random
from typing import Any

import numpy as np
import pytest
from pettingzoo import AECEnv

from cardlab.agents.agent_spec import make_agent
from cardlab.agents.base import RandomAgent
from cardlab.agents.heuristics import HuitExpert, HuitGreedy, SwitchExpert, SwitchGreedy
from cardlab.envs import cards as C
from cardlab.envs import huit_v1, make_game, switch_v1
from cardlab.envs.huit import rules as R
from cardlab.envs.huit.heuristics import kernels as K
from cardlab.envs.huit.heuristics import tables as T
from cardlab.envs.policy_kernels import p_lacks
from cardlab.evaluation.evaluate import evaluate
from cardlab.evaluation.request import EvalRequest

GAMES = {"switch": switch_v1, "huit": huit_v1}
SPECS = ("greedy", "expert")
CLASSES = {("greedy", "switch"): SwitchGreedy, ("expert", "switch"): SwitchExpert,
           ("greedy", "huit"): HuitGreedy, ("expert", "huit"): HuitExpert}


def reachable(root: Any, limit: int = 200_000) -> list[Any]:
    """Every object reachable from `root` through references (what an agent could get at)."""
    seen: dict[int, Any] = {}
    todo = [root]
    while todo and len(seen) < limit:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, type) or inspect.ismodule(obj):
            continue  # classes and modules hold only code and constants, never a hand in play
        seen[id(obj)] = obj
        todo.extend(gc.get_referents(obj))
    return list(seen.values())


def play_hand(env: Any, agents: list[Any], seed: int) -> list[int]:
    """Play one hand of a raw env, checking every action against the legal ones; returns the actions."""
    env.reset(seed=seed)
    actions: list[int] = []
    while True:
        name = env.agent_selection
        if env.terminations[name] or env.truncations[name]:
            return actions
        action = agents[env.agent_seat[name]].act(env.observe(name))
        assert action in env.legal_actions(), f"illegal {env.action_to_str(action)} by {name}"
        env.step(action)
        actions.append(action)


def dealt(game: str, deal: dict[str, Any], moves: tuple[str, ...] = (), **rules: Any) -> Any:
    """A raw env reset to a stacked deal, after `moves` (action texts) were played."""
    env = GAMES[game].raw_env(**rules)
    env.reset(seed=0, options={"deal": deal})
    for text in moves:
        env.step(env.str_to_action(text))
    return env


def choice(env: Any, spec: str, seed: int = 0) -> str:
    """What agent `spec` plays in the env's position, as action text."""
    agent = make_agent(spec, env.unwrapped.game, seed)
    return env.action_to_str(agent.act(env.observe(env.agent_selection)))


# ---------------------------------------------------------------- construction
@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("game", GAMES)
def test_make_agent_builds_the_class_of_the_envs_game(spec: str, game: str) -> None:
    wrapped = GAMES[game].env(num_players=3)
    agent = make_agent(spec, wrapped, seed=1)
    assert type(agent) is CLASSES[(spec, game)]
    assert agent.name == spec


def test_make_agent_names_the_specs_of_the_game() -> None:
    with pytest.raises(ValueError, match="unknown agent spec 'poker' for huit: use random, ") as err:
        make_agent("poker", huit_v1.raw_env().game, seed=0)
    assert all(name in str(err.value) for name in ("greedy", "expert", "bot:PATH"))


@pytest.mark.parametrize("spec", [*SPECS, "random"])
@pytest.mark.parametrize("game", GAMES)
def test_an_agent_cannot_reach_the_other_hands(spec: str, game: str) -> None:
    """An agent is built from the Game alone and after a whole hand still holds nothing of the table.

    No env, engine state, pile or hand array of the game in play is reachable
    from the agent: it decides from the observation dict it is given, and
    keeps nothing but what it derives from it.
    """
    env = GAMES[game].raw_env(num_players=3)
    agents = [make_agent(spec, env.game, seed=s) for s in range(3)]
    play_hand(env, agents, seed=4)
    state = env.game_state
    hidden = {id(state), id(env), *(id(h) for h in state.hands),
              *(id(getattr(state, p)) for p in state.PILES)}
    for agent in agents:
        found = reachable(agent)
        assert not [o for o in found if id(o) in hidden]
        assert not [o for o in found if isinstance(o, (AECEnv, type(state)))]


def test_ties_are_broken_by_the_agents_own_seeded_generator() -> None:
    # B4: seat 0 opens an empty table with one card; its four 9s score alike, so the seed draws one.
    env = dealt("huit", {"hands": [["9S", "9H", "9D", "9C"], ["10S", "QH", "JH", "7D"]], "dealer": 1},
                num_players=2)
    picks = {seed: choice(env, "greedy", seed) for seed in range(30)}
    assert set(picks.values()) == {"play 9S", "play 9H", "play 9D", "play 9C"}  # really drawn, not the first
    assert {seed: choice(env, "greedy", seed) for seed in range(30)} == picks


def test_p_lacks_is_the_chance_that_a_hand_misses_every_wanted_card() -> None:
    assert p_lacks(10, 2, 1) == pytest.approx(0.8)
    assert p_lacks(10, 2, 2) == pytest.approx(8 / 10 * 7 / 9)
    assert p_lacks(10, 0, 5) == 1.0
    assert p_lacks(10, 3, 8) == 0.0  # 8 cards out of 10 must include one of 3


# ---------------------------------------------------------------- legality and information
@pytest.mark.parametrize("players", [2, 4, 6])
@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("spec", SPECS)
def test_agents_play_only_legal_actions_from_their_observation(spec: str, game: str, players: int) -> None:
    env = GAMES[game].raw_env(num_players=players)
    public = env.game
    for hand in range(4):
        # Mixed tables (with random players, who make odd positions) and tables of the agent alone.
        agents = [make_agent(spec, public, seed=10 * hand + s) if s % 2 == 0 or hand % 2 else
                  RandomAgent(public, seed=10 * hand + s) for s in range(players)]
        actions = play_hand(env, agents, seed=hand)
        assert actions and env.game_state.hand_over


RULE_VARIANTS = [
    ("huit", {"num_players": 2, "hand_size": "all"}),
    ("huit", {"num_players": 3, "queen_skips_each": False, "shuffle_on_refill": True}),
    ("switch", {"num_players": 2, "match_rank": False, "voluntary_draw": True, "play_after_draw": False}),
    ("switch", {"num_players": 3, "num_decks": 1, "extra_jokers": 4, "extra_twos": 4, "hand_size": 5}),
]


@pytest.mark.parametrize(("game", "rules"), RULE_VARIANTS)
@pytest.mark.parametrize("spec", SPECS)
def test_agents_stay_legal_under_other_rule_options(spec: str, game: str, rules: dict[str, Any]) -> None:
    env = GAMES[game].raw_env(**rules, max_turns=400)
    players = rules["num_players"]
    for hand in range(3):
        agents = [make_agent(spec if s == hand % players else "greedy", env.game, seed=10 * hand + s)
                  for s in range(players)]
        assert play_hand(env, agents, seed=hand)


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("spec", SPECS)
def test_a_seed_fixes_the_play_and_the_global_rngs_are_untouched(spec: str, game: str) -> None:
    env = GAMES[game].raw_env(num_players=4)

    def run(global_seed: int) -> list[int]:
        np.random.seed(global_seed)
        random.seed(global_seed)
        np_state, py_state = np.random.get_state(), random.getstate()
        agents = [make_agent(spec, env, seed=s) for s in range(4)]
        actions = [a for hand in range(3) for a in play_hand(env, agents, seed=hand)]
        after = np.random.get_state()
        assert isinstance(after, tuple) and isinstance(np_state, tuple)
        assert after[0] == np_state[0] and np.array_equal(after[1], np_state[1]) and after[2:] == np_state[2:]
        assert random.getstate() == py_state
        return actions

    assert run(1) == run(2)


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("spec", SPECS)
def test_agents_read_each_field_where_the_layout_puts_it(spec: str, game: str) -> None:
    """`memory` adds a field to the observation and changes no play, so the fields after it move: the same
    positions, observed with and without it, get the same moves from agents of the same seed."""
    plain, remembering = make_game(game, num_players=3), make_game(game, num_players=3, memory=True)
    assert plain.layout.size < remembering.layout.size
    rng = np.random.default_rng(5)
    rows: list[tuple[dict[str, np.ndarray], dict[str, np.ndarray]]] = []
    state = remembering.new_state(rng)
    while len(rows) < 150:
        if state.hand_over:
            state = remembering.new_state(rng)
        mask = np.zeros(plain.num_actions, dtype=np.int8)
        mask[state.legal_actions()] = 1
        rows.append(tuple({"observation": g.observer.observe(state, state.current), "action_mask": mask}
                          for g in (plain, remembering)))  # type: ignore[arg-type]
        state.apply(int(rng.choice(state.legal_actions())))
    one, other = make_agent(spec, plain, 3), make_agent(spec, remembering, 3)
    assert [one.act(a) for a, _ in rows] == [other.act(b) for _, b in rows]


# ---------------------------------------------------------------- Switch decisions
FIVE = ["4C", "6D", "7D", "9D", "10D"]


def switch_deal(hands: list[list[str]], starter: str) -> dict[str, Any]:
    return {"hands": hands, "starter": starter, "stock": ["5C", "6C", "KC", "QC", "3C"]}


@pytest.mark.parametrize("spec", SPECS)
def test_switch_agents_answer_a_draw_run_with_a_2_and_keep_the_joker(spec: str) -> None:
    # A6/A4: the 2H starter makes seat 0 draw 2 unless it adds a 2 or a Joker.
    env = dealt("switch", switch_deal([["2S", "JOKER", "5D", "KH"], ["QS"], FIVE, FIVE], "2H"))
    assert choice(env, spec) == "play 2S"


def test_switch_expert_skips_a_next_player_about_to_go_out() -> None:
    env = dealt("switch", switch_deal([["8H", "5H", "KD", "9C"], ["QS"], FIVE, FIVE], "3H"))
    assert choice(env, "expert") == "play 8H"


def test_switch_expert_spends_a_2_on_a_next_player_with_one_card_only() -> None:
    close = dealt("switch", switch_deal([["2H", "5H", "KD", "9C"], ["QS"], FIVE, FIVE], "3H"))
    assert choice(close, "expert") == "play 2H"
    far = dealt("switch", switch_deal(
        [["2H", "5H", "KD", "9C"], ["QS", "QD", "4S", "4D", "5S", "6S"], FIVE, FIVE], "3H"
    ))
    assert choice(far, "expert") == "play 5H"  # the 2 is kept to answer runs
    assert choice(far, "greedy") == "play 2H"  # greedy sheds its 20 points


def test_switch_expert_keeps_a_drawn_jack_and_greedy_plays_it() -> None:
    # Seat 0 cannot play on 3H, draws the JS on top of the stock (A8): play it or pass.
    deal = {"hands": [["5C", "KD"], FIVE, FIVE, FIVE], "starter": "3H", "stock": ["JS", "6C"]}
    env = dealt("switch", deal, ("draw",))
    assert choice(env, "expert") == "pass"
    assert choice(env, "greedy").startswith("play JS")


@pytest.mark.parametrize("spec", SPECS)
def test_switch_agents_name_the_suit_they_hold_most(spec: str) -> None:
    # A4: seat 0 names it
    env = dealt("switch", switch_deal([["5D", "9D", "KD", "2C"], FIVE, FIVE, FIVE], "JH"))
    assert choice(env, spec) == "declare D"
    env = dealt("switch", switch_deal([["JS", "9D", "KD", "2C"], FIVE, FIVE, FIVE], "4H"))
    assert choice(env, spec) == "play JS declare D"


# ---------------------------------------------------------------- Huit decisions
def test_huit_greedy_lays_its_largest_group_on_the_suit_it_holds_most() -> None:
    # On 10S the 9s go down led by 9S (B5); the top is 9D since KD is left, not a heart.
    deal = {"hands": [["9S", "9H", "9D", "KD", "JC"], ["10S", "QH", "JH"]], "dealer": 0}
    env = dealt("huit", deal, ("play 10S",), num_players=2)
    assert choice(env, "greedy") == "play 9S 9H 9D"


@pytest.mark.parametrize("spec", SPECS)
def test_huit_agents_answer_a_fresh_ace_with_an_ace(spec: str) -> None:
    deal = {"hands": [["7H", "AD", "8C", "KD"], ["AS", "QH", "JH"]], "dealer": 0}
    env = dealt("huit", deal, ("play AS",), num_players=2)  # B7: seat 0 lays an Ace or an 8, or draws 2
    assert choice(env, spec) == "play AD"


@pytest.mark.parametrize("spec", SPECS)
def test_huit_agents_go_out_when_they_can(spec: str) -> None:
    deal = {"hands": [["9S", "9H", "9C"], ["9D", "QH", "JH"]], "dealer": 0}
    env = dealt("huit", deal, ("play 9D",), num_players=2)
    assert len(choice(env, spec).split()) == 4  # all three 9s at once (B5, B11)


def test_huit_expert_plays_a_queen_for_another_turn_then_goes_out() -> None:
    # Two players: QS skips the opponent (B8), and 7S then goes on QS; greedy sheds the 7 points first.
    deal = {"hands": [["QS", "7S"], ["KS", "10H", "JH", "QH"]], "dealer": 0}
    env = dealt("huit", deal, ("play KS",), num_players=2)
    assert choice(env, "expert") == "play QS"
    assert choice(env, "greedy") == "play 7S"


@pytest.mark.parametrize(("players", "queens", "each", "next_offset"), [
    (2, 1, True, 0), (2, 2, True, 0), (2, 3, True, 0), (3, 1, True, 2), (3, 2, True, 0), (3, 3, True, 0),
    (4, 4, True, 0), (4, 3, True, 0), (4, 2, True, 3), (3, 3, False, 2),
])
def test_B8_the_experts_model_never_skips_the_layer(
    players: int, queens: int, each: bool, next_offset: int
) -> None:
    """The expert reckons who moves after Queens as the engine does (B8: skips stop before the layer)."""
    plays = T.plays_for(players, each)
    groups = [a for a in range(R.DRAW) if R.ACTION_RANK[a] == C.QUEEN and R.ACTION_SIZE[a] == queens]
    assert groups and {plays[a][1].nxt for a in groups} == {next_offset}


def test_huit_expert_locks_a_next_player_about_to_go_out_with_an_ace() -> None:
    # Seat 3 lays 9S; seat 0 may lay AS (B7: seat 1 lays an Ace or 8, or draws 2) or 10S.
    hands = [["AS", "10S", "KD"], ["JH"], ["7H", "QH", "KH", "JD"], ["9S", "QS", "KS", "AD"]]
    close = dealt("huit", {"hands": hands, "dealer": 2}, ("play 9S",))
    assert choice(close, "expert") == "play AS"
    hands[1] = ["JH", "7S", "8D", "QD", "9H"]
    far = dealt("huit", {"hands": hands, "dealer": 2}, ("play 9S",))
    assert choice(far, "expert") == "play 10S"  # the Ace is kept to answer locks


def test_huit_expert_locks_a_next_player_known_to_hold_no_ace_and_no_8() -> None:
    """B7: a next player who showed they hold no Ace and no 8 (by drawing 2 on a fresh Ace, say) cannot
    answer one, and the expert, told so (`act_reading`), locks them; the cards they drew since, or or a hand
    it is told holds an 8, leave it keeping its Ace."""
    hands = [["AS", "10S", "KD"], ["JH", "7S", "9D", "QD", "9H"], ["7H", "QH", "KH", "JD"],
             ["9S", "QS", "KS", "AD"]]
    env = dealt("huit", {"hands": hands, "dealer": 2}, ("play 9S",))
    observation = env.observe(env.agent_selection)
    expert = make_agent("expert", env.unwrapped.game, 0)
    assert isinstance(expert, HuitExpert)

    def told(void: int, drawn_since: int = 0) -> str:
        voids = np.zeros((2, K.ALL_SEATS), dtype=np.int64)
        voids[:, 1] = void, drawn_since
        return env.action_to_str(expert.act_reading(observation, voids))

    assert env.action_to_str(expert.act(observation)) == told(0) == "play 10S"
    assert told(T.ACES | T.EIGHTS) == "play AS"
    assert told(T.ACES | T.EIGHTS, drawn_since=5) == "play 10S"  # all 5 cards drawn since: nothing known
    holding_8 = sum(T.BIT[C.parse_card(card)] for card in ("JH", "7S", "9D", "QD", "8D"))
    assert told((T.PLAIN | T.EIGHTS) & ~holding_8) == "play 10S"  # told their whole hand: they answer
    assert told(T.ACES | T.EIGHTS) == "play AS"
    assert env.action_to_str(expert.act(observation)) == "play 10S"  # what it was told holds for one move


# ---------------------------------------------------------------- strength
def win_rate(game: str, specs: list[str], hands: int) -> float:
    """Hand win rate of the first spec against the others, seats rotated over fixed seeded deals."""
    result = evaluate(EvalRequest(game, specs, hands=hands, seed=7, rules={"num_players": len(specs)}))
    return result.stats[0].hands.rate


def test_greedy_beats_random_clearly() -> None:
    # Measured about 0.73 (fair share 0.25) and 0.36 (0.25) with seed 7;
    # the bounds sit ~4 standard errors below.
    assert win_rate("huit", ["greedy", "random", "random", "random"], 200) > 0.55
    assert win_rate("switch", ["greedy", "random", "random", "random"], 400) > 0.28


def test_expert_beats_greedy_at_huit() -> None:
    # Measured about 0.61 over 8000 hands (fair share 0.5); 400 hands have a standard error of 0.025.
    assert win_rate("huit", ["expert", "greedy"], 400) > 0.52
