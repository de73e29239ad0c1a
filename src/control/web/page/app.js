// The controller page: follows one session's push stream, shows whose turn it is, the
// countdown, the board of a board game and the hand of a card game (the legal moves on them
// clickable), the other legal moves of the open decision window (generated from its schema),
// the agent's intended move in hybrid control, the score and the event log, and submits
// moves; for a room, its table when its hooks draw one (table.js) with a button per legal
// action, its members and seats, this side's view, the last step's events, and forms that
// queue an action (a JSON object, or a line of text in a conversational room).
// All text from the session goes through textContent, never HTML.
"use strict";

const hash = new URLSearchParams(location.hash.slice(1));
const listToken = hash.get("token") || "";
const $ = (id) => document.getElementById(id);
let current = null;
let view = null;
let skew = 0;
let source = null;
let lastTurn = "";
let listed = [];
let windowKey = "";
// The window (its seq) the page answered last: one answer per window.
let answered = null;
// The legal values the board and the hand offer (they get no button of their own).
let drawn = [];
// What the board and the hand were last drawn from, and the legal values each offered: an
// unchanged board is not redrawn (a focused cell keeps its focus).
const shown = { board: { key: "", offered: [] }, hand: { key: "", offered: [] } };

// Bounds on what a snapshot may ask the page to draw.
const MAX_SIDE = 26;
const MAX_HAND = 60;
const COLOURS = ["red", "yellow", "black", "white"];

async function api(path, token, body) {
  const headers = { "X-Aigenora-Token": token };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method: body === undefined ? "GET" : "POST",
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = null;
  try { data = await response.json(); } catch (_) { data = null; }
  return { ok: response.ok, status: response.status, data };
}

function text(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

// Whether the open window accepts `value` (a window that lists no values lets the desk judge).
function accepts(window_, value) {
  if (!window_) return false;
  const choices = window_.choices || {};
  return choices.kind !== "one_of" || (choices.values || []).some((legal) => same(legal, value));
}

// The session list, refreshed every few seconds (new sessions appear; the one followed stays).
async function loadSessions() {
  const answer = await api("/api/sessions", listToken);
  if (!answer.ok) {
    setTurn("This page needs the link printed when the controller started (it carries the token).", false);
    return;
  }
  const select = $("sessions");
  const chosen = current && current.id;
  select.replaceChildren();
  for (const session of answer.data) {
    const option = document.createElement("option");
    option.value = session.id;
    option.textContent = `${session.id} (${session.role || "?"}, ${session.control_mode || "?"}, ${session.status || "?"})`;
    option.dataset.token = session.token;
    option.selected = session.id === chosen;
    select.append(option);
  }
  select.onchange = () => follow(select.selectedOptions[0]);
  if (!chosen && select.options.length) follow(select.options[0]);
  else if (!select.options.length) setTurn("No sessions yet.", false);
}

function follow(option) {
  if (source) source.close();
  current = { id: option.value, token: option.dataset.token };
  roomKey = null;
  $("log").replaceChildren();
  source = new EventSource(`/api/sessions/${encodeURIComponent(current.id)}/stream?token=${encodeURIComponent(current.token)}`);
  source.addEventListener("state", (message) => {
    view = JSON.parse(message.data);
    skew = view.now - Date.now() / 1000;
    render();
  });
  source.addEventListener("event", (message) => addEvent(JSON.parse(message.data)));
}

function setTurn(words, mine) {
  const turn = $("turn");
  turn.classList.toggle("mine", mine);
  if (words !== lastTurn) {
    turn.textContent = words;
    lastTurn = words;
    document.title = (mine ? "(!) " : "") + "aigenora controller";
  }
}

function render() {
  const snapshot = view.snapshot || {};
  const window_ = view.window;
  $("badge").textContent = `${view.role || "?"} · ${view.control_mode || "?"} control · ${view.status || "?"}`;
  const score = snapshot.score || {};
  $("score").textContent = Object.keys(score).length
    ? Object.entries(score).map(([who, n]) => `${who} ${n}`).join(" – ")
    : "–";
  $("last").textContent = labelsAsFaces((snapshot.last_event && snapshot.last_event.summary) || "");
  // The hooks' text of the table (a card game), where no board is drawn, card labels as faces;
  // a card game's running count, stock and the opponent's cards.
  const tableLines = [];
  if (!Array.isArray(snapshot.board) && typeof snapshot.board_text === "string") tableLines.push(labelsAsFaces(snapshot.board_text));
  if (Number.isInteger(snapshot.count) && Number.isInteger(snapshot.target)) {
    tableLines.push(`Running count: ${snapshot.count} (${snapshot.target} is the most; reaching it resets the count)`);
  }
  if (typeof snapshot.board_text !== "string" && Number.isInteger(snapshot.stock_count)) {
    tableLines.push(`Stock: ${snapshot.stock_count} cards · opponent holds ${snapshot.opponent_hand_count || 0}`);
  }
  $("table").textContent = tableLines.join("\n");
  const over = ["closed", "aborted", "crashed", "failed"].includes(view.status);
  if (over && source) {
    source.close(); // the end is final: no reconnects
  }
  if (over) {
    const winner = view.winner ? `winner: ${view.winner}` : (view.end_reason || view.status);
    setTurn(`Game over (${winner})`, false);
  } else if (window_ && tableWindow(window_) && view.room && view.room.table) {
    setTurn(tableWindowWords(window_, view.room.table), true);
  } else if (window_ && window_.mode === "human") {
    setTurn(`Your move: ${windowWords(window_)} — ${askedWords(window_, snapshot)}`, true);
  } else if (window_) {
    setTurn(`Your agent is about to play ${labelsAsFaces(text(window_.intended))} (${windowWords(window_)}): override?`, true);
  } else if (view.room && view.room.table) {
    const table = view.room.table;
    setTurn(table.turn || `${table.title}: ${table.phase}`, /^Your turn/.test(table.turn || ""));
  } else if (view.room && view.room.members) {
    const present = view.room.members.filter((m) => m.status === "active").length;
    setTurn(`In the room: ${present} members present, step ${view.room.seq}`, false);
  } else if (view.status === "running") {
    setTurn("Waiting for the opponent (thinking)…", false);
  } else {
    setTurn(`Session ${view.status || "starting"}…`, false);
  }
  const open = over ? null : window_;
  drawn = [];
  renderBoard(snapshot, open);
  renderHand(snapshot, open);
  const key = window_ ? `${window_.match_key}:${JSON.stringify(window_.match_value)}:${window_.opened_at}:${JSON.stringify(drawn)}:${JSON.stringify(legalKinds(snapshot))}` : "";
  if (key !== windowKey) {
    windowKey = key;
    renderMoves(over ? null : window_);
  }

  renderRoom();
  tick();
}

// Bounds on what a room may ask the page to draw.
const MAX_MEMBERS = 64;
const MAX_LINES = 200;
let roomKey = null;

function renderRoom() {
  const room = view.room;
  $("room").hidden = !room;
  $("room-say").hidden = !(room && view.room_talk);
  const key = JSON.stringify([room, view.room_talk]);
  if (!room || key === roomKey) return;
  roomKey = key;
  const you = room.view && room.view.you && room.view.you.public_key;
  const leader = (room.members || []).find((m) => m.public_key === room.leader_public_key);
  $("room-status").textContent = `Step ${room.seq}, epoch ${room.leader_epoch}` +
    (leader ? `, led by seat ${leader.seat}` : "") + (room.completed ? ` (ended: ${room.outcome || "no outcome"})` : "");
  const members = $("room-members");
  members.replaceChildren();
  for (const member of (room.members || []).slice(0, MAX_MEMBERS)) {
    const item = document.createElement("li");
    const notes = [member.status];
    if (member.public_key === room.leader_public_key) notes.push("leads");
    if (member.public_key === you) notes.push("you");
    item.textContent = `seat ${member.seat} · ${String(member.public_key).slice(0, 8)} · ${notes.join(" · ")}`;
    item.classList.toggle("left", member.status !== "active");
    members.append(item);
  }
  // A table the hooks draw (table.js) puts the raw view and events behind "details".
  const drawn = drawTable($("room-table"), room);
  $("room-raw").open = !drawn;
  if (room.table_error) $("room-status").textContent += ` (no table: ${room.table_error})`;
  drawChoices($("room-choices"), room.choices, (action) => act({ action }, null));
  $("room-view").replaceChildren(readable(room.view));
  const events = $("room-events");
  events.replaceChildren();
  for (const event of (room.events || []).slice(0, MAX_LINES)) {
    const item = document.createElement("li");
    item.textContent = eventLine(event);
    events.append(item);
  }
}

// A message or event as one line: "seat 1: hello", else its kind and JSON.
function eventLine(event) {
  const message = event && typeof event.message === "object" && event.message ? event.message : event;
  const kind = (event && (event.kind || event.type)) || "event";
  if (message && typeof message.text === "string") {
    return Number.isInteger(message.seat) && message.seat >= 0 ? `seat ${message.seat}: ${message.text}` : `${kind}: ${message.text}`;
  }
  return `${kind}: ${JSON.stringify(event)}`;
}

// A view readably: its fields as a list — text and numbers as they are, lists of messages
// as lines, anything else as JSON.
function readable(value) {
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    const pre = document.createElement("pre");
    pre.textContent = JSON.stringify(value, null, 2);
    return pre;
  }
  const list = document.createElement("dl");
  for (const [name, field] of Object.entries(value)) {
    const term = document.createElement("dt");
    term.textContent = name;
    const detail = document.createElement("dd");
    if (field === null || typeof field !== "object") {
      detail.textContent = String(field);
    } else if (Array.isArray(field) && field.every((item) => item && typeof item.text === "string")) {
      const lines = document.createElement("ol");
      for (const item of field.slice(-MAX_LINES)) {
        const line = document.createElement("li");
        line.textContent = eventLine(item);
        lines.append(line);
      }
      detail.append(lines);
    } else {
      const pre = document.createElement("pre");
      pre.textContent = JSON.stringify(field, null, 2);
      detail.append(pre);
    }
    list.append(term, detail);
  }
  return list;
}

// Queues a room action the way `session action` does; the input is kept when it is refused.
async function act(body, input) {
  const feedback = $("room-feedback");
  if (!current) return;
  feedback.classList.remove("refused");
  feedback.textContent = "Sending…";
  const answer = await api(`/api/sessions/${encodeURIComponent(current.id)}/action`, current.token, body);
  const data = answer.data || {};
  feedback.classList.toggle("refused", !answer.ok);
  if (answer.ok) {
    feedback.textContent = "Sent to the room.";
    if (input) input.value = "";
  } else {
    feedback.textContent = `Not sent: ${data.reason || data.error || answer.status}`;
  }
}

$("room-say").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = $("room-text");
  if (input.value.trim()) act({ text: input.value }, input);
});

$("room-act").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = $("room-json");
  let action;
  try { action = JSON.parse(input.value); } catch (error) {
    $("room-feedback").classList.add("refused");
    $("room-feedback").textContent = `Not sent: not JSON (${error.message})`;
    return;
  }
  act({ action }, input);
});

function renderMoves(window_) {
  const moves = $("moves");
  moves.replaceChildren();
  listed = [];
  $("intended").textContent = "";
  // A table seat's window is answered by the room's choice buttons (renderRoom).
  if (!window_ || tableWindow(window_)) return;
  const choices = window_.choices || { kind: "any" };
  if (choices.kind === "one_of") {
    // Where the hooks publish the turn's legal actions, only those kinds are offered.
    const kinds = legalActions(view.snapshot || {}) && legalKinds(view.snapshot || {});
    listed = choices.values.filter((value) => !drawn.some((shown) => same(shown, value)) &&
      (!kinds || kinds.includes(value)));
    listed.forEach((value, index) => {
      const button = document.createElement("button");
      button.type = "button";
      const key = document.createElement("span");
      key.className = "key";
      key.textContent = index < 9 ? String(index + 1) : "";
      button.append(key, document.createTextNode(labelsAsFaces(text(value))));
      button.setAttribute("aria-keyshortcuts", index < 9 ? String(index + 1) : "");
      if (window_.intended !== undefined && JSON.stringify(window_.intended) === JSON.stringify(value)) {
        button.classList.add("intended");
      }
      button.onclick = (event) => clicked(event, value);
      moves.append(button);
    });
  } else {
    // The other legal actions the hooks published (a draw, a pass) as buttons of their own.
    for (const kind of legalKinds(view.snapshot || {})) {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = kind;
      button.className = "legal-kind";
      button.onclick = (event) => clicked(event, kind);
      moves.append(button);
    }
    const input = document.createElement("input");
    input.id = "move-input";
    input.setAttribute("aria-label", window_.value_field);
    if (choices.kind === "integer") {
      input.type = "number";
      if (choices.min !== undefined) input.min = choices.min;
      if (choices.max !== undefined) input.max = choices.max;
    }
    const play = document.createElement("button");
    play.type = "button";
    play.textContent = "Play";
    play.onclick = (event) => clicked(event, readInput(input, choices));
    moves.append(input, play);
  }
  if (window_.mode === "hybrid" && window_.intended !== undefined) {
    $("intended").textContent = `Agent's move: ${labelsAsFaces(text(window_.intended))} (Enter or the timeout plays it).`;
    const accept = document.createElement("button");
    accept.type = "button";
    accept.textContent = "Play agent's move";
    accept.onclick = (event) => clicked(event, window_.intended);
    moves.append(accept);
  }
}

// The board of a board game, as boards.py publishes it: `board` (rows of marks, top row
// first), `board_layout` ({columns, rows, pieces, moves_by}), `legal_cells` ({move, row, col})
// and `last_move` ({row, col}). Legal cells (a whole column when moves name columns) are
// buttons while a window is open.
function renderBoard(snapshot, window_) {
  const key = JSON.stringify([snapshot.board, snapshot.board_layout, snapshot.legal_cells, snapshot.last_move, windowInputs(window_)]);
  if (key === shown.board.key) {
    drawn.push(...shown.board.offered);
    return;
  }
  const before = drawn.length;
  drawBoard(snapshot, window_);
  shown.board = { key, offered: drawn.slice(before) };
}

// What of a window decides what the board and the hand offer.
function windowInputs(window_) {
  return window_ ? [window_.match_key, window_.match_value, window_.opened_at, window_.choices, window_.intended] : null;
}

function drawBoard(snapshot, window_) {
  const holder = $("board");
  const rows = (Array.isArray(snapshot.board) ? snapshot.board : []).slice(0, MAX_SIDE).map((row) =>
    Array.isArray(row) ? row.slice(0, MAX_SIDE).map(text) : String(row).trim().split(/\s+/).slice(0, MAX_SIDE));
  holder.hidden = rows.length === 0;
  holder.replaceChildren();
  if (!rows.length) return;
  const layout = snapshot.board_layout && typeof snapshot.board_layout === "object" ? snapshot.board_layout : {};
  const width = Math.max(...rows.map((row) => row.length));
  const name = (labels, index, fallback) =>
    Array.isArray(labels) && labels[index] !== undefined ? text(labels[index]).slice(0, 4) : fallback;
  const columns = Array.from({ length: width }, (_, c) => name(layout.columns, c, String(c)));
  const pieces = layout.pieces && typeof layout.pieces === "object" ? layout.pieces : {};
  const byColumn = layout.moves_by === "column";
  const moves = new Map();
  const targets = new Set();
  for (const cell of (window_ && Array.isArray(snapshot.legal_cells) ? snapshot.legal_cells : []).slice(0, MAX_SIDE * MAX_SIDE)) {
    if (!cell || !Number.isInteger(cell.row) || !Number.isInteger(cell.col) || !accepts(window_, cell.move)) continue;
    drawn.push(cell.move);
    targets.add(`${cell.row},${cell.col}`);
    moves.set(byColumn ? `${cell.col}` : `${cell.row},${cell.col}`, cell.move);
  }
  const last = snapshot.last_move || {};
  const grid = document.createElement("div");
  grid.className = byColumn ? "grid drop" : "grid";
  grid.style.setProperty("--columns", String(width));
  const label = (words, className) => {
    const item = document.createElement("span");
    item.className = className;
    item.textContent = words;
    return item;
  };
  grid.append(label("", "corner"), ...columns.map((words) => label(words, "col-label")));
  rows.forEach((row, r) => {
    const rowName = name(layout.rows, r, String(r + 1));
    grid.append(label(rowName, "row-label"));
    for (let c = 0; c < width; c++) {
      const mark = (row[c] || ".").slice(0, 3);
      const move = moves.get(byColumn ? `${c}` : `${r},${c}`);
      const cell = document.createElement(move === undefined ? "span" : "button");
      cell.className = "cell";
      cell.dataset.row = String(r);
      cell.dataset.col = String(c);
      const where = `${columns[c]}${rowName}`;
      let says = mark === "." ? `${where} empty` : `${where} ${mark}`;
      if (mark !== ".") {
        const colour = COLOURS.includes(pieces[mark]) ? pieces[mark] : "other";
        cell.append(label(mark, `piece piece-${colour}`));
      }
      if (last.row === r && last.col === c) {
        cell.classList.add("last");
        says += ", last move";
      }
      if (targets.has(`${r},${c}`)) cell.classList.add("target");
      if (move !== undefined) {
        cell.type = "button";
        cell.classList.add("legal");
        if (window_.intended !== undefined && same(window_.intended, move)) cell.classList.add("intended");
        says = byColumn ? `play column ${columns[c]} (${says})` : `play ${where}`;
        cell.onclick = (event) => clicked(event, move);
      }
      cell.setAttribute("aria-label", says);
      cell.title = says;
      grid.append(cell);
    }
  });
  holder.append(grid);
}

// The hand of a card game: `hand`, a list of card labels (or of objects with a `label`); the
// cards the window accepts are
// buttons that play them.
function renderHand(snapshot, window_) {
  const key = JSON.stringify([snapshot.hand, snapshot.legal_actions, snapshot.action_seq, windowInputs(window_)]);
  if (key === shown.hand.key) {
    drawn.push(...shown.hand.offered);
    return;
  }
  const before = drawn.length;
  drawHand(snapshot, window_);
  shown.hand = { key, offered: drawn.slice(before) };
}

function drawHand(snapshot, window_) {
  const holder = $("hand");
  // Each card is a label, or an object naming its label (the card games: {id_b, rank, suit,
  // label}); cards without one are not drawn.
  const hand = (Array.isArray(snapshot.hand) ? snapshot.hand : [])
    .map((entry) => (entry && typeof entry === "object" ? { card: entry.label, id: entry.id_b } : { card: entry }))
    .filter(({ card }) => typeof card === "string")
    .slice(0, MAX_HAND);
  const allowed = legalCardIds(snapshot);
  holder.hidden = hand.length === 0;
  holder.replaceChildren();
  for (const { card, id } of hand) {
    // A card the hooks' legal actions allow is played as `play` with its id when the window
    // takes `play`; else a card is played by its label.
    const byId = Boolean(allowed) && id !== undefined && allowed.has(String(id)) && accepts(window_, "play");
    const playable = byId || (accepts(window_, card) && (!allowed || allowed.has(String(id))));
    const move = byId ? { [window_.value_field]: "play", id_b: id } : card;
    const item = document.createElement(playable ? "button" : "span");
    item.className = playable ? "card legal" : "card";
    item.textContent = labelFace(text(card).slice(0, 16));
    if (/[♥♦]/.test(item.textContent) || isRedLabel(card)) item.classList.add("red");
    if (playable) {
      drawn.push(byId ? "play" : card);
      item.type = "button";
      item.setAttribute("aria-label", `play ${item.textContent}`);
      if (window_.intended !== undefined && same(window_.intended, card)) item.classList.add("intended");
      item.onclick = (event) => clicked(event, move, item.textContent);
    }
    holder.append(item);
  }
}

// The hooks' legal actions of the turn, when they publish them (`legal_actions`, as the
// SDK's mental-poker games do): null when there are none to go by, none at all while the
// snapshot still shows an earlier turn (hooks write it a moment after the window opens).
function legalActions(snapshot) {
  const legal = (Array.isArray(snapshot.legal_actions) ? snapshot.legal_actions.slice(0, MAX_HAND) : [])
    .filter((action) => action && typeof action === "object");
  if (!legal.length) return null;
  const window_ = view && view.window;
  const earlier = window_ && window_.match_key === "action_seq" && snapshot.action_seq !== undefined &&
    snapshot.action_seq !== window_.match_value;
  return earlier ? [] : legal;
}

// The ids of the cards the legal actions allow to be played (null: any the window accepts).
function legalCardIds(snapshot) {
  const legal = legalActions(snapshot);
  return legal && new Set(legal.filter((action) => action.id_b !== undefined).map((action) => String(action.id_b)));
}

// The legal actions that play no card (a draw, a pass).
function legalKinds(snapshot) {
  const legal = legalActions(snapshot) || [];
  return [...new Set(legal.filter((action) => action.id_b === undefined && typeof action.kind === "string")
    .map((action) => action.kind))];
}

function readInput(input, choices) {
  if (choices.kind === "integer") return Number(input.value);
  try { return JSON.parse(input.value); } catch (_) { return input.value; }
}

// A click on a move: the second click of a double click (or the third...) is not a move of
// its own, whatever window it lands on.
function clicked(event, value, shown) {
  if (event.detail > 1) return;
  decide(value, shown);
}

// Plays `value`: a move (the window's value), or a whole decision object (a card played by
// its id); `shown` is how the feedback names it.
async function decide(value, shown) {
  if (!current || !view || !view.window) return;
  const window_ = view.window;
  if (answered === window_.seq) return;
  answered = window_.seq;
  const feedback = $("feedback");
  const where = windowWords(window_);
  // The answer names the window the person saw: if it closed meanwhile, it is refused as
  // too late instead of counting for the next one.
  const body = value && typeof value === "object" ? { decision: value } : { move: value };
  const answer = await api(`/api/sessions/${encodeURIComponent(current.id)}/decide`, current.token, { ...body, window: window_.seq });
  const data = answer.data || {};
  if (data.status === "refused") answered = null; // the window stays open: try again
  feedback.classList.toggle("refused", !answer.ok);
  const said = shown || labelsAsFaces(text(value));
  if (data.status === "played") feedback.textContent = `Played ${said} (${where}).`;
  else if (data.status === "queued") feedback.textContent = `Sent ${said}; it counts when its window opens.`;
  else feedback.textContent = `Not played (${where}): ${data.reason || data.error || answer.status}`;
}

// One event of the session in the log: in words (table.js), its raw data behind "details".
function addEvent(line) {
  const item = document.createElement("li");
  const time = (line.ts || "").slice(11, 19);
  item.append(document.createTextNode(`[${time}] ${eventWords(line)}`));
  if (line.data && typeof line.data === "object" && Object.keys(line.data).length) {
    const raw = document.createElement("details");
    const label = document.createElement("summary");
    label.textContent = "details";
    const data = document.createElement("pre");
    data.textContent = JSON.stringify(line.data, null, 1).slice(0, 4000);
    raw.append(label, data);
    item.append(raw);
  }
  const log = $("log");
  log.prepend(item);
  while (log.children.length > 300) log.lastChild.remove();
}

function tick() {
  const countdown = $("countdown");
  const window_ = view && view.window;
  if (!view) return;
  if (!window_ || ["closed", "aborted", "crashed", "failed"].includes(view.status)) {
    countdown.textContent = "";
    return;
  }
  const left = Math.max(0, window_.deadline_at - (Date.now() / 1000 + skew));
  countdown.textContent = `${Math.ceil(left)} s left`;
  countdown.classList.toggle("urgent", left <= 10);
}

document.addEventListener("keydown", (event) => {
  const window_ = view && view.window;
  // A key held down repeats: only its first press counts.
  if (!window_ || event.repeat || event.altKey || event.ctrlKey || event.metaKey) return;
  const typing = document.activeElement && document.activeElement.tagName === "INPUT";
  if (!typing && /^[1-9]$/.test(event.key) && listed.length >= Number(event.key)) {
    event.preventDefault();
    decide(listed[Number(event.key) - 1]);
  } else if (event.key === "Enter") {
    const input = $("move-input");
    if (typing && input) decide(readInput(input, window_.choices));
    else if (!typing && window_.mode === "hybrid" && window_.intended !== undefined) decide(window_.intended);
  }
});

setInterval(tick, 200);
setInterval(loadSessions, 5000);
loadSessions();
