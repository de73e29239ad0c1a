// Cards and tables as a person sees them, for the controller page (app.js calls it): a card
// by its face and suit (A♠ in black, 10♥ in red, a joker, a Mahjong tile by its suit and
// number, a named card with its numbers); and a room's table as its hooks' display model
// gives it (room.json's `table`): the other seats across the top, the centre, this seat's
// own hand below, whose turn highlighted, the table's facts and score, a log in words kept
// across steps, and one button per legal action of this seat (room.json's `choices`), with
// the cards a choice leaves to pick to select first. All text goes through textContent, never
// HTML.
"use strict";

const SUIT_SYMBOLS = { spades: "♠", hearts: "♥", diamonds: "♦", clubs: "♣" };
const RED_SUITS = ["hearts", "diamonds"];
const TILE_SUITS = ["characters", "dots", "bamboo", "wind", "dragon"];
// Bounds on what a table may ask the page to draw.
const MOST_SEATS = 16;
const MOST_CARDS = 160;
const MOST_PILES = 24;
const MOST_LOG = 60;
const MOST_CHOICES = 64;
const MOST_PICK_ITEMS = 64;

const tableLog = { room: null, seq: null, lines: [] };
// The cards selected for a pick, kept while a new step of the room still offers them.
const picked = [];

function element(tag, className, words) {
  const made = document.createElement(tag);
  if (className) made.className = className;
  if (words !== undefined) made.textContent = words;
  return made;
}

function list(value, most) {
  return Array.isArray(value) ? value.slice(0, most) : [];
}

// A card of the display model ({suit, face, note?}) as text: A♠, Big joker, 3 bamboo.
function cardText(card) {
  const suit = String(card.suit);
  const face = String(card.face).slice(0, 40);
  if (SUIT_SYMBOLS[suit]) return face + SUIT_SYMBOLS[suit];
  if (suit === "plain") return face;
  return `${face} ${suit}`;
}

// A card of the display model drawn: a playing card with its suit's colour, a joker, a tile.
function drawCard(card) {
  const suit = String(card.suit);
  if (SUIT_SYMBOLS[suit]) {
    const drawn = element("span", `card suit-${suit}${RED_SUITS.includes(suit) ? " red" : ""}`, cardText(card));
    drawn.setAttribute("aria-label", cardText(card));
    return drawn;
  }
  if (suit === "joker") {
    const drawn = element("span", `card joker${card.face === "Big" ? " red" : ""}`, `🃏 ${String(card.face).slice(0, 8)}`);
    drawn.setAttribute("aria-label", `${card.face} joker`);
    return drawn;
  }
  if (TILE_SUITS.includes(suit)) {
    const drawn = element("span", `tile tile-${suit}`);
    drawn.append(element("b", "", String(card.face).slice(0, 8)), element("small", "", suit));
    drawn.setAttribute("aria-label", cardText(card));
    return drawn;
  }
  const drawn = element("span", "card named");
  drawn.append(element("b", "", String(card.face).slice(0, 40)));
  if (card.note) drawn.append(element("small", "", String(card.note).slice(0, 60)));
  drawn.setAttribute("aria-label", cardText(card));
  return drawn;
}

function drawCards(cards, className) {
  const row = element("div", className || "cards");
  for (const card of list(cards, MOST_CARDS)) {
    if (card && typeof card === "object") row.append(drawCard(card));
  }
  return row;
}

function factsText(facts) {
  return list(facts, MOST_SEATS).map((fact) => `${fact.label} ${fact.value}`).join(" · ");
}

function drawSeat(seat) {
  const box = element("div", "seat");
  box.classList.toggle("you", seat.you === true);
  box.classList.toggle("to-act", seat.to_act === true);
  box.dataset.seat = String(seat.seat);
  const name = element("p", "seat-name", String(seat.name) + (seat.you ? " (you)" : "") + (seat.to_act ? " — to act" : ""));
  box.append(name, element("p", "seat-facts", factsText(seat.facts)));
  if (list(seat.cards, 1).length) box.append(drawCards(seat.cards, seat.you ? "cards hand" : "cards"));
  if (Number.isInteger(seat.hidden) && seat.hidden > 0) {
    box.append(element("p", "hidden-cards", `${seat.hidden} card${seat.hidden === 1 ? "" : "s"} face down`));
  }
  return box;
}

// The log in words, kept across the steps this page saw of one room.
function keepLog(room, table) {
  if (tableLog.room !== room.group_id) {
    tableLog.room = room.group_id;
    tableLog.seq = null;
    tableLog.lines = [];
  }
  const step = `${room.leader_epoch}:${room.seq}`;
  if (tableLog.seq !== step) {
    tableLog.seq = step;
    tableLog.lines.push(...list(table.log, MOST_LOG).map(String));
    tableLog.lines = tableLog.lines.slice(-MOST_LOG);
  }
  return tableLog.lines;
}

// The room's table into `holder`; false when the room draws none.
function drawTable(holder, room) {
  const table = room && room.table;
  holder.hidden = !table;
  holder.replaceChildren();
  if (!table) return false;
  holder.append(element("h3", "table-title", `${table.title} — ${table.phase}`));
  const turn = element("p", "table-turn", table.turn || "Nobody is to act.");
  const mine = list(table.seats, MOST_SEATS).some((seat) => seat.you && seat.to_act) || /^Your turn/.test(table.turn);
  turn.classList.toggle("mine", mine);
  holder.append(turn);
  const seats = list(table.seats, MOST_SEATS);
  const others = element("div", "seats others");
  for (const seat of seats.filter((seat) => !seat.you)) others.append(drawSeat(seat));
  const centre = element("div", "centre");
  for (const pile of list(table.centre, MOST_PILES)) {
    const laid = element("div", "pile");
    laid.append(element("p", "pile-label", String(pile.label)));
    if (list(pile.cards, 1).length) laid.append(drawCards(pile.cards));
    if (pile.text) laid.append(element("p", "pile-text", String(pile.text)));
    if (!list(pile.cards, 1).length && !pile.text) laid.append(element("p", "pile-text", "–"));
    centre.append(laid);
  }
  if (list(table.facts, 1).length) centre.append(element("p", "table-facts", factsText(table.facts)));
  const own = element("div", "seats own");
  for (const seat of seats.filter((seat) => seat.you)) own.append(drawSeat(seat));
  holder.append(others, centre, own);
  if (list(table.score, 1).length) holder.append(element("p", "table-score", `Score: ${factsText(table.score)}`));
  const log = element("ol", "log table-log");
  for (const line of keepLog(room, table).slice().reverse()) log.append(element("li", "", line));
  holder.append(element("h4", "", "What happened"), log);
  return true;
}

// One button per legal action of this seat (`choices`: {label, action, amount?, pick?}); an
// amount asks for a number within its range, put into the action's field; a pick's cards are
// selected from a row of every card the choices offer, then its button puts the selected ones
// (if the pick offers them all, and as many as it takes) into the action's field. `send`
// posts the action.
function drawChoices(holder, choices, send) {
  holder.replaceChildren();
  const offered = list(choices, MOST_CHOICES).filter((choice) =>
    choice && typeof choice.label === "string" && choice.action && typeof choice.action === "object");
  holder.hidden = offered.length === 0;
  const picking = offered.some((choice) => pickOf(choice));
  const selection = picking ? drawPickRow(holder, offered) : null;
  for (const choice of offered) {
    const amount = choice.amount && typeof choice.amount === "object" ? choice.amount : null;
    const button = element("button", "choice", choice.label.slice(0, 80));
    button.type = "button";
    const pick = pickOf(choice);
    if (pick) {
      button.classList.add("pick");
      button.onclick = () => {
        const chosen = selection.chosen();
        const known = new Set(pick.from.map((item) => JSON.stringify(item.value)));
        const count = pick.min === pick.max ? `${pick.min}` : `${pick.min} to ${pick.max}`;
        if (chosen.some((value) => !known.has(JSON.stringify(value))) || chosen.length < pick.min || chosen.length > pick.max) {
          selection.note(`${choice.label.slice(0, 80)}: select ${count} of its cards above (${chosen.length} selected)`);
          return;
        }
        picked.length = 0;
        send({ ...choice.action, [pick.field]: chosen });
      };
      holder.append(button);
      continue;
    }
    if (!amount) {
      button.onclick = () => send({ ...choice.action });
      holder.append(button);
      continue;
    }
    const input = element("input", "amount");
    input.type = "number";
    input.min = String(amount.min);
    input.max = String(amount.max);
    input.value = String(amount.min);
    input.setAttribute("aria-label", `${choice.label}: ${amount.field} from ${amount.min} to ${amount.max}`);
    button.onclick = () => {
      const value = Number(input.value);
      if (!Number.isInteger(value) || value < amount.min || value > amount.max) {
        input.setCustomValidity(`from ${amount.min} to ${amount.max}`);
        input.reportValidity();
        return;
      }
      input.setCustomValidity("");
      send({ ...choice.action, [amount.field]: value });
    };
    const group = element("span", "choice-amount");
    group.append(input, button);
    holder.append(group);
  }
}

// A choice's pick ({field, from: [{value, label}], min, max}) when it has a well-formed one.
function pickOf(choice) {
  const pick = choice.pick;
  if (!pick || typeof pick !== "object" || typeof pick.field !== "string" || !Array.isArray(pick.from)) return null;
  if (!Number.isInteger(pick.min) || !Number.isInteger(pick.max)) return null;
  return { field: pick.field, min: pick.min, max: pick.max, from: list(pick.from, MOST_PICK_ITEMS).filter((item) => item && typeof item === "object") };
}

// A row of every card the choices' picks offer (once each, by value), each selected or not
// with a click, and a line for what a pick still needs; returns the selection.
function drawPickRow(holder, offered) {
  const row = element("div", "pick-row");
  row.setAttribute("role", "group");
  row.setAttribute("aria-label", "Cards to pick");
  const note = element("p", "pick-note", "Select cards, then press what to do with them.");
  const selected = picked;
  const seen = new Set();
  for (const choice of offered) {
    const pick = pickOf(choice);
    for (const item of pick ? pick.from : []) {
      const key = JSON.stringify(item.value);
      if (seen.has(key) || seen.size >= MOST_PICK_ITEMS) continue;
      seen.add(key);
      const label = String(item.label).slice(0, 40);
      const card = element("button", `pick-card${/[♥♦]$/.test(label) ? " red" : ""}`, label);
      card.type = "button";
      card.dataset.value = key;
      card.setAttribute("aria-pressed", String(selected.some((value) => JSON.stringify(value) === key)));
      card.onclick = () => {
        const at = selected.findIndex((value) => JSON.stringify(value) === key);
        if (at >= 0) selected.splice(at, 1);
        else selected.push(item.value);
        card.setAttribute("aria-pressed", String(at < 0));
        note.textContent = `${selected.length} selected`;
      };
      row.append(card);
    }
  }
  const stale = selected.filter((value) => !seen.has(JSON.stringify(value)));
  for (const value of stale) selected.splice(selected.indexOf(value), 1);
  holder.append(row, note);
  return {
    chosen: () => selected.slice(),
    note: (words) => { note.textContent = words; },
  };
}

// The one-to-one card games name a card by a label ("7H", "10S", "1D" — an ace in
// Thirty-One —, "8S:C" for an eight calling clubs): the page shows its face instead (7♥, 10♠,
// A♦, 8♠ calling ♣) and keeps the label as the move it plays.
const LABEL = /^(10|[1-9AJQK])([CDHS])(?::([CDHS]))?$/;
const LABELS_IN_TEXT = /\b(10|[1-9AJQK])([CDHS])(?::([CDHS]))?\b/g;
const LETTER_SUITS = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };

function labelFace(label) {
  const parts = LABEL.exec(String(label));
  if (!parts) return String(label);
  return faceOfParts(parts);
}

function faceOfParts([, rank, suit, called]) {
  const face = `${rank === "1" ? "A" : rank}${SUIT_SYMBOLS[LETTER_SUITS[suit]]}`;
  return called ? `${face} calling ${SUIT_SYMBOLS[LETTER_SUITS[called]]}` : face;
}

// `text` with every card label in it shown as its face.
function labelsAsFaces(text) {
  return String(text).replace(LABELS_IN_TEXT, (...parts) => faceOfParts(parts));
}

function isRedLabel(label) {
  const parts = LABEL.exec(String(label));
  return Boolean(parts) && RED_SUITS.includes(LETTER_SUITS[parts[2]]);
}

// What a window asks of the person, in words: "play a card, draw or pass" (from the legal
// actions the hooks published, else the window's values), or "choose <field>".
function askedWords(window_, snapshot) {
  const legal = Array.isArray(snapshot.legal_actions) && snapshot.legal_actions.length ? snapshot.legal_actions
    : Array.isArray(snapshot.legal) && snapshot.legal.length ? snapshot.legal
      : window_.choices && window_.choices.kind === "one_of" ? window_.choices.values || [] : [];
  const named = [];
  for (const move of legal.slice(0, MOST_CHOICES)) {
    const kind = move && typeof move === "object" ? String(move.kind || "") : String(move);
    const words = kind === "play" || LABEL.test(kind) ? "play a card" : kind.replace(/_/g, " ");
    if (words && !named.includes(words)) named.push(words);
  }
  if (!named.length) return `choose your ${String(window_.value_field || "move").replace(/_/g, " ")}`;
  if (named.length > 6) return `choose one of ${named.length} moves`;
  return named.length === 1 ? named[0] : `${named.slice(0, -1).join(", ")} or ${named[named.length - 1]}`;
}

// Whether a window asks for a table seat's move (its values are the seat's choices, which
// the room's buttons play).
function tableWindow(window_) {
  return Boolean(window_.choices) && window_.choices.kind === "table";
}

// A table seat's window in words: the table's own turn line, and in hybrid control the
// agent's move by its choice's label.
function tableWindowWords(window_, table) {
  const turn = table.turn || `${table.title}: ${table.phase}`;
  if (window_.mode === "human") return `${turn} — choose a move below`;
  const options = Array.isArray(window_.choices.options) ? window_.choices.options : [];
  const intended = window_.intended;
  const index = Number.isInteger(intended) ? intended
    : intended && typeof intended === "object" && Number.isInteger(intended.index) ? intended.index : -1;
  const chosen = options[index];
  const move = chosen ? `${chosen.label}${intended && intended.amount !== undefined ? ` ${intended.amount}` : ""}` : "its move";
  return `${turn} — your agent is about to play ${move}: override below?`;
}

// Where a window is, in words: "turn 3" for the hooks' own action counter, else its key.
function windowWords(window_) {
  if (window_.match_key === "action_seq" && Number.isInteger(window_.match_value)) {
    return `turn ${window_.match_value + 1}`;
  }
  return `${window_.match_key} ${typeof window_.match_value === "string" ? window_.match_value : JSON.stringify(window_.match_value)}`;
}

// The fields of an event that name the machinery rather than what happened.
const MACHINERY = ["match_key", "match_value", "value_field", "deadline_at", "opened_at", "id_b", "seq", "mode"];

// A session event as words: its summary (card labels as faces), else its kind and its short
// plain facts — never long identifiers, hashes, nested data or the decision machinery's keys
// (those stay in its details).
function eventWords(line) {
  if (typeof line.summary === "string" && line.summary) return labelsAsFaces(line.summary);
  const words = [String(line.type || "event").replace(/_/g, " ")];
  const data = line.data && typeof line.data === "object" ? line.data : {};
  for (const [name, value] of Object.entries(data).slice(0, 12)) {
    const plain = typeof value === "number" || typeof value === "boolean" ||
      (typeof value === "string" && value.length <= 24 && !/^[0-9a-f]{12,}$/i.test(value));
    if (plain && !MACHINERY.includes(name)) words.push(`${name.replace(/_/g, " ")} ${labelsAsFaces(String(value))}`);
  }
  return words.join(", ");
}
