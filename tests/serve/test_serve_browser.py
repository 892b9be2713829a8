"""End to end in a real browser: `cardlab serve` on a free port, headless Chromium (Debian's package)
driven by Playwright, a whole hand of each game played by clicking, the hint turned on, a screenshot.

Never skipped: without Chromium the test fails and says how to install it (`.ci/setup` does).
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

pytestmark = pytest.mark.browser
CHROMIUM = os.environ.get("CARDLAB_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
TURN_TIMEOUT_MS = 60_000  # generous: CI shares two cores with other work


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """`cardlab serve` in its own process, on a free port of 127.0.0.1."""
    port = free_port()
    script = pathlib.Path(sys.executable).with_name("cardlab")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "cardlab"]
    process = subprocess.Popen([*command, "serve", "--port", str(port), "--delay-ms", "20"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/options", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    output = process.stdout.read() if process.stdout else ""
                    raise RuntimeError(f"cardlab serve did not start: {output}") from None
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not pathlib.Path(CHROMIUM).exists():
        pytest.fail(f"no Chromium at {CHROMIUM}: install Debian's package (apt-get install -y chromium, "
                    "or run .ci/setup)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


def wait_for_turn(page: Any) -> str:
    """Wait until the person is to move or the hand is over; returns the page's phase."""
    page.wait_for_selector("body[data-phase='your-turn'], body[data-phase='hand-over'], "
                           "body[data-phase='match-over']", timeout=TURN_TIMEOUT_MS)
    return str(page.get_attribute("body", "data-phase"))


def play_a_turn(page: Any) -> None:
    """Click a move: cards (a group that a bigger one contains goes by the Play button, a complete group
    goes at once), or draw, or pass; then a suit when the page asks for one."""
    moves = page.eval_on_selector_all("#moves .move", "els => els.map(e => e.textContent)")
    groups = [m.split()[1:] for m in moves if m.startswith("play")]
    groups = [words[: words.index("declare")] if "declare" in words else words for words in groups]
    if groups:
        inside = [g for g in groups if any(set(g) < set(other) for other in groups)]
        cards = inside[0] if inside else max(groups, key=len)
        for card in cards:
            page.click(f"#hand .card[data-card='{card}'] >> nth=0")
        if inside:
            page.click("#play")
    elif "draw" in moves:
        page.click("#draw")
    elif "pass" in moves:
        page.click("#pass")
    if page.is_visible("#suits"):  # 8s and Jacks announce a suit; so does a Switch Jack starter
        page.click("#suits .suit-choice >> nth=0")


def play_hand(page: Any, game: str, players: int, seat: int, opponent: str, shot: pathlib.Path) -> int:
    """Set up a table, play the person's turns by clicking until the hand ends; a screenshot, hint on."""
    page.select_option("#game", game)
    page.fill("#num-players", str(players))
    page.dispatch_event("#num-players", "change")
    page.select_option("#seat", str(seat))
    for select in page.query_selector_all("#opponents select"):
        select.select_option(opponent)
    page.click("#start")
    turns = 0
    hinted = False
    while True:
        if wait_for_turn(page) != "your-turn":
            if hinted:
                break
            page.click("#next")  # the opponents went out before the person's first turn: deal again
            continue
        if not hinted:
            page.check("#hint")
            page.wait_for_selector("#advice li", timeout=TURN_TIMEOUT_MS)
            assert "%" in page.inner_text("#advice")
            hinted = True
            page.screenshot(path=str(shot), full_page=True)
        assert page.query_selector_all("#hand .card.legal, #draw.legal, #pass.legal, .suit-choice.legal")
        before = page.inner_text("#log")
        play_a_turn(page)
        page.wait_for_function("before => document.querySelector('#log').innerText !== before "
                               "|| document.body.dataset.phase !== 'your-turn'", arg=before,
                               timeout=TURN_TIMEOUT_MS)
        turns += 1
        assert turns < 400, "the hand does not end"
    result = page.inner_text("#result")
    assert page.is_visible("#result") and re.search(r"(You win|player_\d wins) the hand|turn limit", result)
    # One hand at a time: points, change and total would be one number thrice; the table shows it once.
    assert re.search(r"points this hand\s+hands won", result) and "change" not in result, result
    assert page.is_visible("#replay-link")
    return turns


def step_through_the_replay(page: Any, tmp_path: pathlib.Path) -> None:
    """Download the finished hand, load it back, step to a decision of the person's with its advice."""
    with page.expect_download() as download:
        page.click("#replay-link")
    replay = tmp_path / "replay.json"
    download.value.save_as(str(replay))
    page.set_input_files("#replay-file", str(replay))
    page.wait_for_selector("body[data-phase='replay']")
    page.wait_for_function("document.querySelector('#step').textContent.startsWith('step 0 of')")
    assert "Replay of hand 1" in page.inner_text("#message")
    for button in ("first", "back", "forward", "last"):  # drawn in SVG: no font has the step signs
        box = page.eval_on_selector(f"#{button} svg path", "p => { const r = p.getBoundingClientRect(); "
                                    "return [r.width, r.height]; }")
        assert box[0] > 4 and box[1] > 4, (button, box)
        assert page.inner_text(f"#{button}").strip() == "", button
    for _ in range(40):
        if page.inner_text("#next-move").startswith("next: you"):
            break
        before = page.inner_text("#step")
        page.keyboard.press("ArrowRight")
        page.wait_for_function("b => document.querySelector('#step').textContent !== b", arg=before)
    assert page.inner_text("#next-move").startswith("next: you")
    page.wait_for_selector("#advice li")
    assert "%" in page.inner_text("#advice")
    page.click("#last")
    page.wait_for_selector("#result:not([hidden])")


def test_play_both_games_by_clicking(server: str, browser: Any, tmp_path: pathlib.Path) -> None:
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.goto(f"{server}/?delay=20")
    shot = tmp_path / "huit.png"
    huit_turns = play_hand(page, "huit", 2, 1, "bot:huit-2p", shot)
    assert shot.stat().st_size > 10_000
    if os.environ.get("CARDLAB_SCREENSHOT"):  # docs/screenshot.png is taken this way
        shutil.copyfile(shot, os.environ["CARDLAB_SCREENSHOT"])
    page.screenshot(path=str(tmp_path / "huit-end.png"), full_page=True)
    step_through_the_replay(page, tmp_path)
    page.click("#new-game")
    switch_turns = play_hand(page, "switch", 4, 0, "random", tmp_path / "switch.png")
    page.screenshot(path=str(tmp_path / "switch-end.png"), full_page=True)
    assert huit_turns > 0 and switch_turns > 0 and not errors


def test_phone_width_and_keyboard(server: str, browser: Any, tmp_path: pathlib.Path) -> None:
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(f"{server}/?delay=20&game=huit")
    page.fill("#num-players", "2")
    page.dispatch_event("#num-players", "change")
    page.click("#start")
    assert wait_for_turn(page) == "your-turn"
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing wider than the phone
    before = page.inner_text("#log")
    page.keyboard.press("d")  # drawing is always legal at the start of a Huit turn
    page.wait_for_function("before => document.querySelector('#log').innerText !== before", arg=before)
    assert "you: draw" in page.inner_text("#log")
    page.keyboard.press("a")
    assert page.is_checked("#hint")
    page.screenshot(path=str(tmp_path / "phone.png"), full_page=True)


def test_the_page_opens_on_the_readme_table_and_offers_only_fitting_bots(server: str, browser: Any) -> None:
    """Huit, 2 players, against bot:huit-2p (the README's table); rules a bot was not trained with drop it."""
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(f"{server}/?delay=20")
    page.wait_for_selector("#opponents select")
    assert page.input_value("#game") == "huit" and page.input_value("#num-players") == "2"
    assert page.input_value("#opponents select") == "bot:huit-2p"
    page.select_option("#game", "switch")
    page.wait_for_function("document.querySelector('#opponents select').value === 'bot:switch-4p'")
    page.click("details:has(#rules) > summary")
    page.fill("[data-rule='hand_size']", "20")
    page.dispatch_event("[data-rule='hand_size']", "change")
    offered = page.eval_on_selector_all("#opponents option, #advisor option", "els => els.map(e => e.value)")
    assert offered and not [name for name in offered if name.startswith("bot:")], offered
    page.click("#start")
    assert wait_for_turn(page) in ("your-turn", "hand-over")
    assert page.is_hidden("#error") and "/" not in page.inner_text("#error")


@pytest.fixture
def table_server(table_bots: pathlib.Path) -> Iterator[str]:
    """The app in this process (so that it sees the stand-in table bots, `tests.fakebots`), on a free port."""
    import threading

    import uvicorn

    from cardlab.serve.app import Settings, create_app

    port = free_port()
    app = create_app(Settings(delay_ms=20, game="huit"))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the app did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


TABLE_BOTS = [("huit", 2, "bot:huit-2p"), ("huit", 3, "bot:huit-3p"), ("huit", 4, "bot:huit-4p"),
              ("huit", 5, "expert"), ("switch", 4, "bot:switch-4p"), ("switch", 5, "bot:switch-5p")]
"""(game, players, the default opponent the page should seat) with the `table_bots` fixture's bots"""


def test_every_table_size_seats_its_own_bot(table_server: str, browser: Any) -> None:
    """At each size the table's shipped bot is the default opponent and only bots of that size are offered;
    none at a size without one (the expert then)."""
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(f"{table_server}/?delay=20")
    page.wait_for_selector("#opponents select")
    assert page.input_value("#num-players") == "2"
    for game, players, bot in TABLE_BOTS:
        if page.input_value("#game") != game:
            page.select_option("#game", game)
        page.fill("#num-players", str(players))
        page.dispatch_event("#num-players", "change")
        chosen = page.eval_on_selector_all("#opponents select", "els => els.map(e => e.value)")
        assert chosen == [bot] * (players - 1), (game, players, chosen)
        offered = page.eval_on_selector_all("#opponents option, #advisor option",
                                            "els => els.map(e => e.value)")
        bots = {name for name in offered if name.startswith("bot:")}
        assert all(name.startswith(f"bot:{game}-{players}p") for name in bots), (game, players, bots)
        assert bot in bots or not bot.startswith("bot:")
    page.click("#start")
    assert wait_for_turn(page) in ("your-turn", "hand-over")
    assert "player_1 · bot:switch-5p" in page.inner_text("#table")


def test_the_set_up_form_reads_on_a_phone(server: str, browser: Any) -> None:
    """Rule options by readable names with their help as text (no hover on a phone), no option cut off."""
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(f"{server}/?game=huit")
    page.click("#setup summary")
    label = page.inner_text("#rules label:has([data-rule='target_score'])")
    assert "target score" in label and "target_score" not in label
    assert page.is_visible("#rules label:has([data-rule='target_score']) .rule-help")
    page.select_option("#mode", "match")
    # The select is at least as wide as its chosen option's text (plus its arrow), and within the phone.
    text, width = page.evaluate("""() => { const s = document.querySelector('#mode');
        const c = document.createElement('canvas').getContext('2d'); c.font = getComputedStyle(s).font;
        return [c.measureText(s.options[s.selectedIndex].text).width, s.clientWidth]; }""")
    assert width >= text + 16, (text, width)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def crafted_deal(hand: list[str]) -> dict[str, Any]:
    """Huit, 2 players, player_0 to move on 9C (clubs) with `hand`; the other cards elsewhere."""
    from cardlab.envs import env_class

    env = env_class("huit")(num_players=2)
    env.reset(seed=1)
    state = env.state_dict()
    cards = [c for pile in (*state["hands"], state["bank"]) for c in pile if c not in (*hand, "9C")]
    state["hands"] = [list(hand), cards[:5]]
    state["bank"], state["table"], state["current_suit"] = cards[5:], ["9C"], "C"
    return state


@contextlib.contextmanager
def app_server(settings: Any) -> Iterator[str]:
    """The app in this process (so that a test may change what it deals or loads), on a free port."""
    import threading

    import uvicorn

    from cardlab.serve.app import create_app

    port = free_port()
    config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the app did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def crafted_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The app in this process, whose deals are `crafted_deal`s: AC AD, then AC AD AH."""
    from cardlab.serve import table
    from cardlab.serve.app import Settings

    deals = iter([crafted_deal(["AC", "AD"]), crafted_deal(["AC", "AD", "AH"])])
    monkeypatch.setattr(table, "first_deal", lambda game, seed: next(deals))
    with app_server(Settings(delay_ms=20, game="huit")) as url:
        yield url


def test_a_seat_whose_bot_fails_says_so_above_the_table(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, browser: Any) -> None:
    """The overflowing bot (load check off) at a Huit table: the page shows who failed and who plays on."""
    from cardlab.serve.app import Settings, named_bots
    from tests.agents.test_bot import unchecked_overflowing_bot

    bots = named_bots([unchecked_overflowing_bot(tmp_path, monkeypatch)])
    with app_server(Settings(delay_ms=20, game="huit", bots=bots, opponent="bot:huit-over")) as url:
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        page.goto(f"{url}/?delay=20")
        page.wait_for_selector("#opponents select")
        assert page.input_value("#opponents select") == "bot:huit-over"
        page.select_option("#seat", "1")  # the bot moves first
        page.click("#start")
        for _ in range(300):  # the bot fails where its observation's first two numbers differ: soon
            phase = wait_for_turn(page)
            if page.is_visible("#notices"):
                break
            if phase != "your-turn":
                page.click("#next")
                continue
            before = page.inner_text("#log")
            play_a_turn(page)
            page.wait_for_function("before => document.querySelector('#log').innerText !== before "
                                   "|| document.body.dataset.phase !== 'your-turn'", arg=before,
                                   timeout=TURN_TIMEOUT_MS)
        assert page.is_visible("#notices")
        assert page.inner_text("#notices") == ("player_0 (bot:huit-over) failed: its logits are not finite "
                                               "on this observation; random plays its seat from now on")
        assert "player_0 · random (for bot:huit-over)" in page.inner_text("#seats")


def test_a_card_that_cannot_go_first_is_laid_in_the_legal_order_or_explained(crafted_server: str,
                                                                             browser: Any) -> None:
    """On 9C with AC AD only, a click on AD lays AC AD (the one legal order) and goes out; with AH too, the
    page says that AD needs AC under it. At the hand's end the hint box says so in a note, not a list."""
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(f"{crafted_server}/?delay=20")
    page.wait_for_selector("#opponents select")
    page.select_option("#opponents select", "random")
    page.click("#start")
    assert wait_for_turn(page) == "your-turn"
    page.check("#hint")
    page.wait_for_selector("#advice li", timeout=TURN_TIMEOUT_MS)
    page.click("#hand .card[data-card='AD']")
    assert wait_for_turn(page) == "hand-over"
    assert "you: play AC AD" in page.inner_text("#log")
    page.wait_for_function("document.querySelector('#advice-note').textContent.length > 0")
    assert page.query_selector_all("#advice li") == []
    assert page.inner_text("#advice-note") == "Advice shows on your turns."
    page.click("#next")
    page.wait_for_selector("#hand .card[data-card='AH']")
    assert wait_for_turn(page) == "your-turn"
    page.click("#hand .card[data-card='AD']")
    assert page.inner_text("#pick-note").startswith("AD needs AC under it: the first card laid must match "
                                                    "the top card.")
    assert page.is_disabled("#play")
    page.click("#hand .card[data-card='AC']")
    assert page.is_enabled("#play") and page.inner_text("#pick-note") == ""


def test_five_players_sit_in_balanced_rows_and_seven_is_no_huit_table(server: str, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(f"{server}/?delay=20&game=huit")
    page.wait_for_selector("#opponents select")
    page.fill("#num-players", "7")
    page.dispatch_event("#num-players", "change")
    assert page.input_value("#num-players") == "6"
    assert len(page.query_selector_all("#opponents select")) == 5
    assert "Huit américain seats 2 to 6 players, not 7: set to 6" in page.inner_text("#error")
    page.fill("#num-players", "5")
    page.dispatch_event("#num-players", "change")
    for select in page.query_selector_all("#opponents select"):
        select.select_option("random")
    page.click("#start")
    wait_for_turn(page)
    rows = page.eval_on_selector_all("#seats .seat",
                                     "els => els.map(e => Math.round(e.getBoundingClientRect().top))")
    assert len(rows) == 4 and sorted(rows.count(top) for top in set(rows)) == [2, 2], rows


def search_tables_admitted(url: str) -> None:
    """Wait out the start-up's warm-up (a search table is refused with 503 while it compiles)."""
    import json

    body = json.dumps({"game": "huit", "num_players": 4, "seat": 0, "mode": "match", "seed": 1,
                       "opponents": ["search-quick"] * 3}).encode()
    deadline = time.monotonic() + 240
    while True:
        request = urllib.request.Request(f"{url}/api/games", body, {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as reply:
                key = json.load(reply)["id"]
            delete = urllib.request.Request(f"{url}/api/games/{key}", method="DELETE")
            urllib.request.urlopen(delete, timeout=10).close()
            return
        except urllib.error.HTTPError as error:
            assert error.code == 503 and time.monotonic() < deadline, error.read()
            time.sleep(float(error.headers.get("Retry-After", "1")))


def test_match_play_at_four_seats_seats_searches_that_play_for_the_match(server: str, browser: Any) -> None:
    """B13: at Huit 4p in match play the offered search values its play-outs by the shipped match equity,
    and the page says so on each of its seats (not in hand play); a hand of the match plays through by
    clicking, the totals go on, and the next hand of the match is dealt."""
    search_tables_admitted(server)
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.goto(f"{server}/?game=huit&delay=20")
    page.fill("#num-players", "4")
    page.dispatch_event("#num-players", "change")
    page.select_option("#seat", "0")
    for select in page.query_selector_all("#opponents select"):
        select.select_option("search-quick")
    titles = "els => els.map(e => e.getAttribute('title') || '')"
    for mode, plays_match in (("hand", False), ("match", True)):
        if mode == "match":
            page.click("#new-game")
        page.select_option("#mode", mode)
        page.click("#start")
        phase = wait_for_turn(page)
        about = page.eval_on_selector_all("#seats .seat .name", titles)
        assert len(about) == 3 and all(("playing for the match" in a) == plays_match for a in about), about
    while phase == "your-turn":
        before = page.inner_text("#log")
        play_a_turn(page)
        page.wait_for_function("before => document.querySelector('#log').innerText !== before "
                               "|| document.body.dataset.phase !== 'your-turn'", arg=before,
                               timeout=TURN_TIMEOUT_MS)
        phase = wait_for_turn(page)
    assert phase == "hand-over", phase
    scores = "els => els.map(e => e.textContent.match(/score (-?\\d+)/)[1])"
    totals = page.eval_on_selector_all("#seats .seat .muted", scores)
    page.click("#next")
    assert wait_for_turn(page) in ("your-turn", "hand-over")
    assert "Hand 2," in page.inner_text("#status"), page.inner_text("#status")
    if page.get_attribute("body", "data-phase") == "your-turn":  # nobody has played in the new hand
        assert page.eval_on_selector_all("#seats .seat .muted", scores) == totals, totals
