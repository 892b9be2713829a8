// The page of `cardlab serve`. No build step, no library: it asks the server for views of the
// table (what the person may know) and sends moves as text. Every server string goes in as text.
"use strict";

const SUIT_SIGNS = { S: "♠", H: "♥", D: "♦", C: "♣" };
const SUIT_NAMES = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };
const $ = (id) => document.getElementById(id);
const state = {
  options: null, gameId: null, view: null, picks: [], pending: null, busy: false,
  replay: null, step: 0, delay: 600, advice: [],
};

// ------------------------------------------------------------------ helpers
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (value !== false && value !== null && value !== undefined) node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const data = await response.json().catch(() => ({ detail: `${response.status} ${response.statusText}` }));
  if (!response.ok) throw new Error(typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail));
  return data;
}

function showError(err) {
  const box = $("error");
  box.textContent = err ? String(err.message || err) : "";
  box.hidden = !err;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const playerName = (view, seat) => (seat === view.seat ? "you" : `player_${seat} (${view.players[seat].label})`);

function cardFace(card, extra = {}) {
  const joker = card === "JOKER";
  const suit = joker ? "" : card.slice(-1);
  const rank = joker ? "★" : card.slice(0, -1);
  const red = suit === "H" || suit === "D";
  const label = joker ? "Joker" : `${rank} of ${SUIT_NAMES[suit]}`;
  return el(extra.tag || "div", { class: `card${red ? " red" : ""}${joker ? " joker" : ""} ${extra.class || ""}`,
    "data-card": card, "aria-label": label, title: label, type: extra.tag === "button" ? "button" : null,
    onclick: extra.onclick },
  el("span", { class: "rank", text: joker ? "Joker" : rank }), el("span", { class: "suit", text: joker ? "★" : SUIT_SIGNS[suit] }));
}

// ------------------------------------------------------------------ setup form
function gameOptions() { return state.options.games.find((g) => g.id === $("game").value); }
function ruleField(name) { return gameOptions().rules.find((r) => r.name === name); }

// the agents that may sit at this table: a bot only with the rule options it was trained with
function agentsFor(gameId, players, rules) {
  const fits = (a) => a.rules === null || Object.entries(a.rules).every(([name, value]) =>
    (name === "num_players" ? players : rules[name]) === value);
  return state.options.agents.filter((a) => (a.game === null || a.game === gameId)
    && (a.num_players === null || a.num_players === players) && fits(a));
}

// the shipped bot of a table of this size (the server's choice, bot:GAME-Np), if there is one
function tableBot(gameId, players) { return (state.options.table_bots[gameId] || {})[players]; }

// the opponent the page seats: the server's default when it fits (bot:GAME: the table's bot), else the
// table's shipped bot, else the first bot, the expert, any
function preferred(agents, gameId, players) {
  const table = tableBot(gameId, players);
  const asked = state.options.default.opponent;
  const wanted = asked === `bot:${gameId}` ? table : asked;
  return agents.find((a) => a.name === wanted) || agents.find((a) => a.name === table)
    || agents.find((a) => a.name.startsWith("bot:")) || agents.find((a) => a.name === "expert") || agents[0];
}

function fillSetup() {
  const game = gameOptions();
  $("game-summary").textContent = game.summary;
  const players = ruleField("num_players");
  const count = $("num-players");
  count.min = players.low; count.max = players.high;
  // a new game starts at the table of its preferred bot, else the smallest table with a shipped bot
  const bots = state.options.agents.filter((a) => a.game === game.id && a.name.startsWith("bot:"));
  const asked = bots.find((a) => a.name === state.options.default.opponent);
  const sizes = Object.keys(state.options.table_bots[game.id] || {}).map(Number);
  if (!count.value || +count.value < players.low || +count.value > players.high) {
    count.value = asked ? asked.num_players : sizes.length ? Math.min(...sizes) : bots.length ? bots[0].num_players
      : players.default;
  }
  const rules = $("rules");
  rules.replaceChildren();
  for (const rule of game.rules) {
    if (rule.name === "num_players") continue;
    const input = rule.kind === "bool"
      ? el("input", { type: "checkbox", "data-rule": rule.name, checked: rule.default ? "" : null })
      : el("input", { type: rule.kind === "int" ? "number" : "text", "data-rule": rule.name, value: String(rule.default),
        min: rule.low ?? null, max: rule.high ?? null });
    input.dataset.kind = rule.kind;
    input.addEventListener("change", fillSeats);
    // A readable name, and the help as text (a phone has no hover for a title).
    rules.append(el("label", { title: rule.help }, `${rule.name.replaceAll("_", " ")} `, input,
      el("small", { class: "rule-help", text: rule.help })));
  }
  fillSeats();
}

function formRules() {
  const rules = {};
  for (const input of $("rules").querySelectorAll("[data-rule]")) {
    const rule = input.dataset.rule;
    if (input.dataset.kind === "bool") rules[rule] = input.checked;
    else if (input.dataset.kind === "int") rules[rule] = Number(input.value);
    else rules[rule] = /^\d+$/.test(input.value) ? Number(input.value) : input.value;
  }
  return rules;
}

function fillSeats() {
  const game = $("game").value;
  const limits = ruleField("num_players");
  let n = +$("num-players").value;
  if (!(Number.isInteger(n) && n >= limits.low && n <= limits.high)) {  // a size the game does not seat
    const typed = $("num-players").value;
    n = Math.min(Math.max(Math.round(n) || limits.default, limits.low), limits.high);
    $("num-players").value = n;
    showError(`${gameOptions().title} seats ${limits.accepted} players, not ${typed}: set to ${n}`);
  }
  const seat = $("seat");
  const chosen = Math.min(+seat.value || 0, n - 1);
  seat.replaceChildren(...Array.from({ length: n }, (_, i) => el("option", { value: i, text: `player_${i}${i === 0 ? " (plays first)" : ""}` })));
  seat.value = chosen;
  const agents = agentsFor(game, n, formRules());
  const strongest = preferred(agents, game, n);
  const box = $("opponents");
  // what the person picked stays where it fits; a default follows the table (its own bot at every size)
  const kept = Object.fromEntries([...box.querySelectorAll("select[data-picked]")].map((s) => [s.dataset.seat, s.value]));
  box.replaceChildren();
  for (let i = 0; i < n; i++) {
    if (i === chosen) continue;
    const keep = agents.some((a) => a.name === kept[i]);
    const select = el("select", { "data-seat": i, "data-picked": keep ? "" : null, onchange: picked });
    for (const a of agents) select.append(el("option", { value: a.name, text: a.name, title: a.about }));
    select.value = keep ? kept[i] : strongest.name;
    box.append(el("label", {}, `player_${i} `, select));
  }
  const advisor = $("advisor");
  const keep = "picked" in advisor.dataset && agents.some((a) => a.name === advisor.value) ? advisor.value : null;
  advisor.replaceChildren(...agents.filter((a) => a.name !== "random").map((a) => el("option", { value: a.name, text: a.name, title: a.about })));
  advisor.value = keep || strongest.name;
  if (!keep) delete advisor.dataset.picked;
}

function picked(event) { event.target.dataset.picked = ""; }

function setupRequest() {
  const rules = formRules();
  return {
    game: $("game").value, num_players: +$("num-players").value, seat: +$("seat").value, mode: $("mode").value,
    opponents: [...$("opponents").querySelectorAll("select")].map((s) => s.value), rules,
  };
}

// ------------------------------------------------------------------ play
async function startGame(event) {
  event.preventDefault();
  showError(null);
  try {
    const { id, frames } = await api("POST", "/api/games", setupRequest());
    closeReplay();
    closeGame();
    state.gameId = id;
    $("setup").hidden = true; $("table").hidden = false;
    await showFrames(frames);
  } catch (err) { showError(err); }
}

async function showFrames(frames) {
  state.busy = true;
  document.body.dataset.phase = "busy";
  for (let i = 0; i < frames.length; i++) {
    render(frames[i]);
    if (i < frames.length - 1) await sleep(state.delay);
  }
  state.busy = false;
  render(frames[frames.length - 1]);
  await refreshAdvice();
}

async function sendMove(text) {
  if (state.busy || state.replay) return;
  showError(null);
  state.picks = []; state.pending = null; state.advice = [];
  state.busy = true;  // nothing is clickable until the answer is shown
  render(state.view);
  try {
    const { frames } = await api("POST", `/api/games/${state.gameId}/move`, { move: text, turn: state.view.turn });
    await showFrames(frames);
  } catch (err) { state.busy = false; showError(err); render(state.view); }
}

async function nextHand() {
  if (state.busy || !state.view || !state.view.can_deal || state.replay) return;
  state.busy = true;  // as for a move: the button goes until the new hand is shown, so one click deals once
  render(state.view);
  try { await showFrames((await api("POST", `/api/games/${state.gameId}/next`)).frames); }
  catch (err) { state.busy = false; showError(err); render(state.view); }
}

const myTurn = () => !state.busy && !state.replay && state.view && state.view.legal.length > 0;
const plays = () => state.view.legal.filter((m) => m.kind === "play");
const withCards = (cards) => plays().filter((m) => cards.every((c) => m.cards.includes(c)));
const exactly = (cards) => withCards(cards).filter((m) => m.cards.length === cards.length);

function pickCard(card) {
  if (!myTurn()) return;
  const picks = state.picks;
  state.pending = null;
  if (picks.includes(card)) picks.splice(picks.indexOf(card), 1);
  else if (withCards([...picks, card]).length) picks.push(card);
  else if (withCards([card]).length) state.picks = [card];
  else { showError(`${card} cannot be played now`); return; }
  showError(null);
  const exact = exactly(state.picks);
  const containing = withCards(state.picks);
  const bigger = containing.some((m) => m.cards.length > state.picks.length);
  if (exact.length && !bigger) { commit(exact); return; }
  // the only play these cards are part of (AD on 9C with AC in hand: AC AD): laid in its legal order
  if (!exact.length && new Set(containing.map((m) => [...m.cards].sort().join(" "))).size === 1) {
    state.picks = [...containing[0].cards.filter((c) => !state.picks.includes(c)), ...state.picks];
    commit(containing); return;
  }
  render(state.view);
}

// What a pick still needs, in words: the cards every play with it holds, and the rule of the first card.
function pickNote() {
  if (!myTurn() || !state.picks.length || exactly(state.picks).length) return "";
  const containing = withCards(state.picks);
  const needed = containing[0].cards.filter((c) => !state.picks.includes(c) && containing.every((m) => m.cards.includes(c)));
  const picked = state.picks.join(" ");
  return needed.length
    ? `${picked} needs ${needed.join(" ")} under it: the first card laid must match the top card. Click ${needed.join(" ")} too; the last card clicked goes on top.`
    : `${picked} cannot be laid alone: click more cards of that rank (the first laid must match the top card, the last clicked goes on top).`;
}

function commit(moves) {
  const last = state.picks[state.picks.length - 1];
  const onTop = moves.filter((m) => m.cards[m.cards.length - 1] === last);
  const chosen = onTop.length ? onTop : moves;
  if (chosen.some((m) => m.declare)) { state.pending = chosen; render(state.view); return; }
  sendMove(chosen[0].text);
}

function playPicked() { const exact = state.picks.length ? exactly(state.picks) : []; if (exact.length) commit(exact); }
function legalOf(kind) { return state.view ? state.view.legal.filter((m) => m.kind === kind) : []; }
function chooseSuit(suit) {
  const move = (state.pending || legalOf("declare")).find((m) => m.declare === suit);
  if (move && myTurn()) sendMove(move.text);
}

// ------------------------------------------------------------------ drawing the table
function render(view) {
  state.view = view;
  const over = view.hand_over;
  document.body.dataset.phase = state.replay ? "replay" : state.busy ? "busy"
    : view.legal.length ? "your-turn" : over && view.result && view.result.match_over && view.mode === "match" ? "match-over"
      : over ? "hand-over" : "waiting";
  document.body.dataset.game = view.game;
  const notices = [...(view.notices || [])];  // a seat whose agent failed, and who plays it now
  // the time the search opponents' moves waited for a free search worker (not counted in their own time)
  if (view.search_wait_ms >= 500) notices.push(`The search opponents waited ${(view.search_wait_ms / 1000).toFixed(1)} s for a free search worker: the server is busy.`);
  $("notices").hidden = !notices.length;
  $("notices").textContent = notices.join(" ");
  renderSeats(view);
  renderCentre(view);
  renderHand(view);
  renderActions(view);
  renderLog(view);
  renderResult(view);
}

function renderSeats(view) {
  const seats = $("seats");
  seats.replaceChildren();
  const others = view.players.length - 1;
  seats.style.setProperty("--cols", String(others <= 3 ? others : Math.ceil(others / 2)));
  seats.style.setProperty("--phone-cols", String(Math.min(others, 2)));
  view.players.forEach((p, seat) => {
    if (seat === view.seat) return;
    const size = view.hand_sizes[seat];
    const backs = el("div", { class: "backs", "aria-hidden": "true" });
    for (let i = 0; i < Math.min(size, 10); i++) backs.append(el("div", { class: "card back small" }));
    const marks = [seat === view.current_player && !view.hand_over ? "to move" : "", seat === view.dealer ? "dealer" : ""].filter(Boolean);
    seats.append(el("div", { class: `seat${seat === view.current_player && !view.hand_over ? " active" : ""}`, "data-seat": seat },
      el("div", { class: "name", text: `player_${seat} · ${p.label}`, title: p.about || null }), backs,
      el("div", { class: "muted", text: `${size} card${size === 1 ? "" : "s"} · score ${view.scores[seat]}${marks.length ? " · " + marks.join(", ") : ""}` })));
  });
}

function renderCentre(view) {
  $("pile-size").textContent = `${view.pile.name}: ${view.pile.size}`;
  $("played-size").textContent = `${view.played.name}: ${view.played.cards.length}`;
  $("top").replaceChildren(view.top ? cardFace(view.top, { class: "top" }) : el("div", { class: "card empty", text: "empty" }));
  // the game's own status lines, as the server words them (GameSpec.status)
  const lines = view.status.map(([label, text]) => `${label.charAt(0).toUpperCase()}${label.slice(1)}: ${text}`);
  lines.push(`Hand ${view.hand_number}, turn ${view.turn}${view.mode ? ` · ${view.mode} play` : ""}`);
  $("status").replaceChildren(...lines.map((line) => el("li", { text: line })));
  const last = view.log[view.log.length - 1];
  let message = state.replay ? `Replay of hand ${view.hand_number}, seen by player_${view.seat}` : "";
  if (!state.replay) {
    if (view.hand_over) message = "Hand over.";
    else if (view.legal.length && !state.busy) message = state.pending ? "Choose the suit." : "Your turn.";
    else message = `Waiting for player_${view.current_player}…`;
  }
  if (last) message = `${playerName(view, last.seat)}: ${last.move}. ${message}`;
  $("message").textContent = message;
}

function renderHand(view) {
  const legalCards = new Set(plays().flatMap((m) => m.cards));
  const advised = new Set(state.advice && state.advice.length ? (state.advice[0].text.split(" ").slice(1)) : []);
  const hand = $("hand");
  hand.replaceChildren();
  view.hand.forEach((card, i) => {
    const classes = [legalCards.has(card) && myTurn() ? "legal" : "", state.picks.includes(card) ? "picked" : "",
      advised.has(card) ? "advised" : ""].join(" ");
    const face = cardFace(card, { tag: "button", class: classes, onclick: () => pickCard(card) });
    face.dataset.index = String(i + 1);
    hand.append(face);
  });
}

function renderActions(view) {
  const turn = myTurn();
  $("draw").disabled = !(turn && legalOf("draw").length);
  $("pass").disabled = !(turn && legalOf("pass").length);
  $("draw").classList.toggle("legal", !$("draw").disabled);
  $("pass").classList.toggle("legal", !$("pass").disabled);
  const exact = turn && state.picks.length ? exactly(state.picks) : [];
  $("play").disabled = !exact.length;
  $("play").textContent = state.picks.length ? `Play ${state.picks.join(" ")}` : "Play";
  $("pick-note").textContent = pickNote();
  const suitMoves = turn ? (state.pending || legalOf("declare")) : [];
  const suits = $("suits");
  suits.hidden = !suitMoves.length;
  suits.replaceChildren(el("span", { text: "Suit: " }), ...[...new Set(suitMoves.map((m) => m.declare))].map((s) =>
    el("button", { type: "button", class: `suit-choice legal${s === "H" || s === "D" ? " red" : ""}`, "data-suit": s,
      "aria-label": SUIT_NAMES[s], text: `${SUIT_SIGNS[s]} ${SUIT_NAMES[s]}`, onclick: () => chooseSuit(s) })));
  $("next").hidden = state.replay || !view.can_deal || state.busy;
  const finished = !state.replay && view.hands_finished > 0 && view.hand_over;
  $("replay-link").hidden = !finished;
  if (finished) $("replay-link").href = `/api/games/${state.gameId}/hands/${view.hands_finished}/replay`;
  $("position-link").hidden = !turn;
  if (turn) $("position-link").href = `/api/games/${state.gameId}/position`;
  $("moves").replaceChildren(...(turn ? view.legal : []).map((m) => el("button", { type: "button", class: "move", text: m.text, onclick: () => sendMove(m.text) })));
  $("replay-controls").hidden = !state.replay;
  if (state.replay) {
    $("step").textContent = `step ${view.step} of ${view.steps}`;
    $("next-move").textContent = view.next_move ? `next: ${playerName(view, view.next_move.seat)} ${view.next_move.move}` : "end of the hand";
  }
}

function renderLog(view) {
  $("log").replaceChildren(...view.log.map((entry) => el("li", { class: entry.seat === view.seat ? "mine" : "", text: `${playerName(view, entry.seat)}: ${entry.move}` })));
  $("log").lastElementChild?.scrollIntoView({ block: "nearest" });
}

function renderResult(view) {
  const box = $("result");
  const result = view.result;
  box.hidden = !result;
  if (!result) return;
  const head = result.truncated ? "The hand ran past the turn limit: no winner, no points."
    : `${result.winner === view.seat ? "You win" : `player_${result.winner} wins`} the hand.`;
  // One hand at a time: points, change and total are one number, so only a match shows all three.
  const match = view.mode === "match";
  const heads = match ? ["player", "points", "change", "total", "hands won"] : ["player", "points this hand", "hands won"];
  const rows = view.players.map((p, seat) => el("tr", {}, el("td", { text: `player_${seat} · ${p.label}` }),
    el("td", { text: String(result.hand_points[seat]) }),
    ...(match ? [el("td", { text: String(result.score_changes[seat]) }), el("td", { text: String(result.scores[seat]) })] : []),
    el("td", { text: String(view.wins ? view.wins[seat] : "") })));
  const table = el("table", {}, el("thead", {}, el("tr", {}, ...heads.map((h) => el("th", { text: h })))), el("tbody", {}, ...rows));
  const parts = [el("p", { class: "big", text: head }), table];
  if (result.match_over && view.mode === "match") {
    const winners = result.match_winners.map((s) => (s === view.seat ? "you" : `player_${s}`)).join(" and ");
    parts.push(el("p", { class: "big", text: `Match over: lowest total wins — ${winners}.` }));
  }
  box.replaceChildren(...parts);
}

// ------------------------------------------------------------------ advice
async function refreshAdvice() {
  state.advice = [];
  const list = $("advice");
  list.replaceChildren();
  $("advice-note").textContent = "";
  if (!$("hint").checked || !state.view) { render(state.view); return; }
  const advisor = $("advisor").value;
  let moves = null;
  if (state.replay) moves = state.view.advice || null;
  else if (myTurn()) {
    try {
      const answer = await api("GET", `/api/games/${state.gameId}/advice?advisor=${encodeURIComponent(advisor)}`);
      // a move made while the advisor thought asks again for its own turn: this answer is for a turn gone
      if (answer.turn !== state.view.turn) return;
      moves = answer.moves;
    }
    catch (err) { showError(err); }
  }
  if (!moves) {
    const why = myTurn() || (state.replay && state.view.next_move && state.view.next_move.seat === state.view.seat)
      ? `No advice from ${advisor} here.` : "Advice shows on your turns.";
    $("advice-note").textContent = why;
    render(state.view); return;
  }
  state.advice = moves;
  for (const m of moves) list.append(el("li", { text: `${m.text} — ${(100 * m.probability).toFixed(1)}%` }));
  render(state.view);
}

// ------------------------------------------------------------------ replays
// The server keeps a few loaded replays only: the page frees the one it leaves.
function closeReplay() {
  if (!state.replay) return;
  const id = state.replay.id;
  state.replay = null;
  api("DELETE", `/api/replays/${id}`).catch(() => {});
}

// A client has a share of the server's games: the page frees the game it leaves for a new one.
function closeGame() {
  if (!state.gameId) return;
  const id = state.gameId;
  state.gameId = null;
  api("DELETE", `/api/games/${id}`).catch(() => {});
}

async function loadReplay(file) {
  showError(null);
  try {
    const loaded = await api("POST", "/api/replays", await file.text());
    closeReplay();
    closeGame();
    state.replay = loaded;
    $("setup").hidden = true; $("table").hidden = false;
    await showStep(0);
  } catch (err) { showError(err); }
  $("replay-file").value = "";
}

async function showStep(step) {
  if (!state.replay) return;
  const target = Math.max(0, Math.min(step, state.replay.steps));
  const advisor = $("hint").checked ? `?advisor=${encodeURIComponent($("advisor").value)}` : "";
  try {
    const view = await api("GET", `/api/replays/${state.replay.id}/${target}${advisor}`);
    state.step = target;
    state.picks = []; state.pending = null;
    render(view);
    await refreshAdvice();
  } catch (err) { showError(err); }
}

// ------------------------------------------------------------------ keyboard and wiring
function onKey(event) {
  if (event.target.closest("input, select, textarea") || event.ctrlKey || event.metaKey || event.altKey) return;
  const key = event.key.toLowerCase();
  if (state.replay && (key === "arrowleft" || key === "arrowright")) { showStep(state.step + (key === "arrowright" ? 1 : -1)); return; }
  if ((state.pending || legalOf("declare").length) && "shdc".includes(key) && key.length === 1) { chooseSuit(key.toUpperCase()); return; }
  if (/^[0-9]$/.test(key)) {
    const index = key === "0" ? 10 : +key;
    const card = state.view && state.view.hand[index - 1];
    if (card) pickCard(card);
  } else if (key === "enter") playPicked();
  else if (key === "d" && !$("draw").disabled) sendMove("draw");
  else if (key === "p" && !$("pass").disabled) sendMove("pass");
  else if (key === "escape") { state.picks = []; state.pending = null; if (state.view) render(state.view); }
  else if (key === "a") { $("hint").checked = !$("hint").checked; onHint(); }
  else if (key === "n") nextHand();
  else return;
  event.preventDefault();
}

function onHint() { if (state.replay) showStep(state.step); else refreshAdvice(); }

async function init() {
  const params = new URLSearchParams(location.search);
  state.options = await api("GET", "/api/options");
  state.delay = params.has("delay") ? Math.max(0, +params.get("delay")) : state.options.delay_ms;
  $("game").replaceChildren(...state.options.games.map((g) => el("option", { value: g.id, text: g.title })));
  const first = params.get("game") || state.options.default.game || state.options.games[0].id;
  if (state.options.games.some((g) => g.id === first)) $("game").value = first;
  $("game").addEventListener("change", () => { $("num-players").value = ""; fillSetup(); });
  $("num-players").addEventListener("change", fillSeats);
  $("seat").addEventListener("change", fillSeats);
  fillSetup();
  $("setup").addEventListener("submit", startGame);
  $("new-game").addEventListener("click", () => { closeReplay(); $("setup").hidden = false; $("table").hidden = true; document.body.dataset.phase = "setup"; });
  $("replay-file").addEventListener("change", (e) => { if (e.target.files.length) loadReplay(e.target.files[0]); });
  $("play").addEventListener("click", playPicked);
  $("draw").addEventListener("click", () => sendMove("draw"));
  $("pass").addEventListener("click", () => sendMove("pass"));
  $("next").addEventListener("click", nextHand);
  $("hint").addEventListener("change", onHint);
  $("advisor").addEventListener("change", onHint);
  $("advisor").addEventListener("change", picked);
  $("first").addEventListener("click", () => showStep(0));
  $("back").addEventListener("click", () => showStep(state.step - 1));
  $("forward").addEventListener("click", () => showStep(state.step + 1));
  $("last").addEventListener("click", () => showStep(Infinity));
  document.addEventListener("keydown", onKey);
}

init().catch(showError);
