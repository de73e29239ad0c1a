// The controller page: follows one session's push stream, shows whose turn it is, the
// countdown, the legal moves of the open decision window (generated from its schema), the
// agent's intended move in hybrid control, the score, the board or table (`board_text`) and
// the event log, and submits moves.
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
  $("last").textContent = (snapshot.last_event && snapshot.last_event.summary) || "";
  $("board").textContent = typeof snapshot.board_text === "string" ? snapshot.board_text : "";
  const over = ["closed", "aborted", "crashed", "failed"].includes(view.status);
  if (over && source) {
    source.close(); // the end is final: no reconnects
  }
  if (over) {
    const winner = view.winner ? `winner: ${view.winner}` : (view.end_reason || view.status);
    setTurn(`Game over (${winner})`, false);
  } else if (window_ && window_.mode === "human") {
    setTurn(`Your move: ${window_.match_key} ${text(window_.match_value)}`, true);
  } else if (window_) {
    setTurn(`Your agent is about to play ${text(window_.intended)} (${window_.match_key} ${text(window_.match_value)}): override?`, true);
  } else if (view.status === "running") {
    setTurn("Waiting for the opponent (thinking)…", false);
  } else {
    setTurn(`Session ${view.status || "starting"}…`, false);
  }
  const key = window_ ? `${window_.match_key}:${JSON.stringify(window_.match_value)}:${window_.opened_at}` : "";
  if (key !== windowKey) {
    windowKey = key;
    renderMoves(over ? null : window_);
  }
  tick();
}

function renderMoves(window_) {
  const moves = $("moves");
  moves.replaceChildren();
  listed = [];
  $("intended").textContent = "";
  if (!window_) return;
  const choices = window_.choices || { kind: "any" };
  if (choices.kind === "one_of") {
    listed = choices.values;
    choices.values.forEach((value, index) => {
      const button = document.createElement("button");
      button.type = "button";
      const key = document.createElement("span");
      key.className = "key";
      key.textContent = index < 9 ? String(index + 1) : "";
      button.append(key, document.createTextNode(text(value)));
      button.setAttribute("aria-keyshortcuts", index < 9 ? String(index + 1) : "");
      if (window_.intended !== undefined && JSON.stringify(window_.intended) === JSON.stringify(value)) {
        button.classList.add("intended");
      }
      button.onclick = () => decide(value);
      moves.append(button);
    });
  } else {
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
    play.onclick = () => decide(readInput(input, choices));
    moves.append(input, play);
  }
  if (window_.mode === "hybrid" && window_.intended !== undefined) {
    $("intended").textContent = `Agent's move: ${text(window_.intended)} (Enter or the timeout plays it).`;
    const accept = document.createElement("button");
    accept.type = "button";
    accept.textContent = "Play agent's move";
    accept.onclick = () => decide(window_.intended);
    moves.append(accept);
  }
}

function readInput(input, choices) {
  if (choices.kind === "integer") return Number(input.value);
  try { return JSON.parse(input.value); } catch (_) { return input.value; }
}

async function decide(value) {
  if (!current || !view || !view.window) return;
  const feedback = $("feedback");
  const where = `${view.window.match_key} ${text(view.window.match_value)}`;
  const answer = await api(`/api/sessions/${encodeURIComponent(current.id)}/decide`, current.token, { move: value });
  const data = answer.data || {};
  feedback.classList.toggle("refused", !answer.ok);
  if (data.status === "played") feedback.textContent = `Played ${text(value)} (${where}).`;
  else if (data.status === "queued") feedback.textContent = `Sent ${text(value)}; it counts when its window opens.`;
  else feedback.textContent = `Not played (${where}): ${data.reason || data.error || answer.status}`;
}

function addEvent(line) {
  const item = document.createElement("li");
  const time = (line.ts || "").slice(11, 19);
  const detail = line.summary || (line.data ? JSON.stringify(line.data) : "");
  item.textContent = `[${time}] ${line.type}: ${detail}`;
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
  if (!window_ || event.altKey || event.ctrlKey || event.metaKey) return;
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
