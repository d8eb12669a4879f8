// The page of patchwork-play --web: draws each state the server sends, and sends the
// person's moves. The rules are the server's: the page reads the legal actions from the
// state, and a placement it does not find there goes to the server, which says why not.
// It plays Patchwork and Patchwork Draft: both buy a patch of a row of three slots with the
// same actions, and the state's "game" says which of the rest to draw (the time track and
// circle of Patchwork, or the stars, full lines, face-up row and deck of the draft).
"use strict";

const SLOT_STRIDE = 648, N_CELLS = 81, ADVANCE = 1944, LEATHER_BASE = 1945, BOARD = 9;
const DISCARD_BASE = 1944;  // the draft's discards take the place of advance
const EMPTY = -1, UNKNOWN = -2, CELL = 10;
const SVG_NS = "http://www.w3.org/2000/svg";
const COLORS = { empty: "#fffdf7", unknown: "#a8a296", line: "#d8cfbd", seam: "#4a3b2c",
  button: "#f3e4b8", buttonEdge: "#6b5640", space: "#ece2cc", spaceEdge: "#c4b28f",
  legal: "#2e7d32", illegal: "#c0392b", latest: "#ffb300", star: "#c98a00", fullLine: "#2e7d32" };
const $ = (id) => document.getElementById(id);

const ui = {
  config: null, catalogue: null, state: null, legal: new Set(),
  slot: null, orientation: 0, pointer: null, sending: false, generation: 0, agentLoop: false,
};

// ----- talking to the server -------------------------------------------------------------

async function api(method, path, body) {
  const options = { method, headers: {} };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  let data;
  try { data = await response.json(); } catch (e) { data = { error: response.statusText }; }
  if (!response.ok) {
    const error = new Error(data.error || `${response.status} ${response.statusText}`);
    error.status = response.status;
    throw error;
  }
  return data;
}

function gamePath(suffix) { return `/api/games/${encodeURIComponent(ui.state.id)}${suffix}`; }

async function newGame(settings) {
  ui.generation += 1;
  try {
    setMessage("");
    update(await api("POST", "/api/games", settings));
  } catch (e) { setMessage(e.message, true); }
}

async function sendMove(body) {
  if (ui.sending || !humanToMove()) return;
  ui.sending = true;
  try {
    const state = await api("POST", gamePath("/move"), body);
    ui.slot = null; ui.orientation = 0;
    setMessage("");
    update(state);
  } catch (e) {
    setMessage(e.status === 422 ? `Refused: ${e.message}` : e.message, true);
  } finally { ui.sending = false; }
}

async function undo() {
  if (!ui.state || !ui.state.can_undo || ui.state.thinking) return;
  ui.generation += 1;
  try {
    ui.slot = null; ui.orientation = 0;
    setMessage("");
    update(await api("POST", gamePath("/undo")));
  } catch (e) { setMessage(e.message, true); }
}

async function runAgent() {
  if (ui.agentLoop) return;
  ui.agentLoop = true;
  const generation = ui.generation;
  try {
    while (ui.state && ui.state.agent_to_move && generation === ui.generation) {
      let state;
      try {
        state = await api("POST", gamePath("/agent"));
      } catch (e) {
        if (e.status !== 409) { setMessage(e.message, true); return; }
        await new Promise((resolve) => setTimeout(resolve, 300));  // it is already thinking
        state = await api("GET", gamePath(""));
      }
      if (generation !== ui.generation) return;
      const last = state.moves[state.moves.length - 1];
      if (last && last.by_agent) setMessage(`${state.opponent} played ${last.text}`);
      render(state);
    }
  } catch (e) {
    setMessage(e.message, true);
  } finally {
    ui.agentLoop = false;
    if (generation !== ui.generation && ui.state && ui.state.agent_to_move) runAgent();
  }
}

function update(state) {
  const fresh = !ui.state || ui.state.id !== state.id || !ui.state.game;
  if (fresh && $("game").value !== state.game) {  // the form's choices follow the game shown
    $("game").value = state.game;
    fillGameChoices();
    $("rules").value = state.rules;
  }
  render(state);
  history.replaceState(null, "", `#game=${encodeURIComponent(state.id)}`);
  if (state.agent_to_move) runAgent();
}

// ----- what the state says ---------------------------------------------------------------

function humanToMove() {
  const s = ui.state;
  return Boolean(s && !s.over && !s.agent_to_move);
}

function isDraft() { return ui.state.game === "draft"; }

// The patch in each of the three slots a buy names (null: none).
function offer() { return isDraft() ? ui.state.face_up : ui.state.circle.slice(0, 3); }

function patchAt(slot) { return ui.catalogue.patches[offer()[slot]]; }

function starred(patchId) { return isDraft() && ui.state.stars.patches.includes(patchId); }

function cellName(cell) { return `${"abcdefghi"[cell % BOARD]}${Math.floor(cell / BOARD) + 1}`; }

function canDiscard(slot) { return isDraft() && ui.legal.has(DISCARD_BASE + slot); }

function slotBuyable(slot) {
  for (const a of ui.legal) if (a < ADVANCE && Math.floor(a / SLOT_STRIDE) === slot) return true;
  return false;
}

function shapeSize(cells) {
  return [1 + Math.max(...cells.map((rc) => rc[0])), 1 + Math.max(...cells.map((rc) => rc[1]))];
}

// The placement under the pointer: the shape centred on the cell, kept on the board.
function placement(cell) {
  if (cell === null) return null;
  const [r, c] = [Math.floor(cell / BOARD), cell % BOARD];
  if (ui.state.pending_leather) {
    const action = LEATHER_BASE + cell;
    return { cells: [cell], anchor: cell, action, legal: ui.legal.has(action) };
  }
  if (ui.slot === null) return null;
  const oriented = patchAt(ui.slot).orientations[ui.orientation];
  const [h, w] = shapeSize(oriented.cells);
  const row = Math.min(Math.max(r - Math.floor((h - 1) / 2), 0), BOARD - h);
  const col = Math.min(Math.max(c - Math.floor((w - 1) / 2), 0), BOARD - w);
  const anchor = row * BOARD + col;
  const action = ui.slot * SLOT_STRIDE + oriented.canonical * N_CELLS + anchor;
  const cells = oriented.cells.map(([dr, dc]) => (row + dr) * BOARD + col + dc);
  return { cells, anchor, action, legal: ui.legal.has(action) };
}

// Where the pointer goes to place the selection at each legal anchor.
function legalPointerCells() {
  const out = [];
  if (ui.state.pending_leather) {
    for (const a of ui.legal) if (a >= LEATHER_BASE) out.push(a - LEATHER_BASE);
    return out;
  }
  if (ui.slot === null) return out;
  const oriented = patchAt(ui.slot).orientations[ui.orientation];
  const [h, w] = shapeSize(oriented.cells);
  const base = ui.slot * SLOT_STRIDE + oriented.canonical * N_CELLS;
  for (let anchor = 0; anchor < N_CELLS; anchor++) {
    if (!ui.legal.has(base + anchor)) continue;
    const r = Math.floor(anchor / BOARD) + Math.floor((h - 1) / 2);
    const c = (anchor % BOARD) + Math.floor((w - 1) / 2);
    out.push(r * BOARD + c);
  }
  return out;
}

// The moves since the person's last one: the agent's reply, highlighted.
function latestAgentMoves() {
  const moves = ui.state.moves;
  let i = moves.length;
  while (i > 0 && moves[i - 1].by_agent) i--;
  return new Set(Array.from({ length: moves.length - i }, (_, k) => i + k));
}

// ----- drawing ---------------------------------------------------------------------------

function svg(tag, attrs, parent) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  if (parent) parent.appendChild(el);
  return el;
}

function el(tag, attrs, parent, text) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

function cellColor(id) {
  if (id === EMPTY) return COLORS.empty;
  if (id === UNKNOWN) return COLORS.unknown;
  if (id === ui.catalogue.leather.id) return ui.catalogue.leather.color;
  return ui.catalogue.patches[id].color;
}

function drawButton(parent, x, y, r) {
  svg("circle", { cx: x, cy: y, r, fill: COLORS.button, stroke: COLORS.buttonEdge,
    "stroke-width": r / 4 }, parent);
  for (const dx of [-r / 3, r / 3]) svg("circle", { cx: x + dx, cy: y, r: r / 5, fill: COLORS.buttonEdge }, parent);
}

// Which cells of a patch carry its income buttons (as the picture of render_rgb spreads them).
function buttonCells(cells, income) {
  return Array.from({ length: income }, (_, j) => cells[Math.floor((j * cells.length) / income)]);
}

function drawCells(parent, ids, rows, cols, size, grid = true) {
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) {
    if (!grid && ids[r * cols + c] === EMPTY) continue;
    svg("rect", { x: c * size, y: r * size, width: size, height: size,
      fill: cellColor(ids[r * cols + c]), stroke: COLORS.line, "stroke-width": size / 30 }, parent);
  }
  const byPatch = new Map();
  ids.forEach((id, i) => { if (id >= 0 && id < ui.catalogue.patches.length) (byPatch.get(id) || byPatch.set(id, []).get(id)).push(i); });
  for (const [id, cells] of byPatch) {
    for (const i of buttonCells(cells, ui.catalogue.patches[id].income)) {
      drawButton(parent, (i % cols + 0.5) * size, (Math.floor(i / cols) + 0.5) * size, size / 5);
    }
  }
  const at = (r, c) => (r < 0 || c < 0 || r >= rows || c >= cols ? EMPTY : ids[r * cols + c]);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) {
    const id = at(r, c);
    for (const [dr, dc, x1, y1, x2, y2] of [[0, 1, 1, 0, 1, 1], [1, 0, 0, 1, 1, 1], [0, -1, 0, 0, 0, 1], [-1, 0, 0, 0, 1, 0]]) {
      const other = at(r + dr, c + dc);
      if (Math.max(id, other) !== EMPTY && (id !== other || id === UNKNOWN)) {
        svg("line", { x1: (c + x1) * size, y1: (r + y1) * size, x2: (c + x2) * size, y2: (r + y2) * size,
          stroke: COLORS.seam, "stroke-width": size / 12, "stroke-linecap": "square" }, parent);
      }
    }
  }
}

function drawPanel(panel, player) {
  const s = ui.state, p = s.players[player];
  panel.replaceChildren();
  panel.classList.toggle("to-move", s.to_move === player);
  panel.dataset.player = player;
  const name = el("div", { class: "name" }, panel);
  el("span", { class: "swatch" }, name).style.background = ui.catalogue.player_colors[player];
  el("span", {}, name, `${p.human ? "You" : p.name} — player ${player}`);
  if (s.to_move === player) el("span", { class: "turn" }, name, "· to move");
  const figures = el("div", { class: "figures" }, panel);
  el("span", { title: "buttons to spend" }, figures, `buttons ${p.buttons}`);
  if (isDraft()) {
    el("span", { title: "a point for each full row and column, and for each starred patch on a star square" }, figures, `points ${p.points}`);
    el("span", { title: "points + buttons" }, figures, `score ${p.score}`);
    if (s.first_player === player) el("span", { class: "first", title: "a tie goes to the other player" }, figures, "moved first");
  } else {
    el("span", { title: "buttons paid at each income space" }, figures, `income ${p.income}`);
    el("span", { title: "buttons − 2 × empty cells (+ bonus)" }, figures, `score ${p.score}`);
    el("span", { title: "time track" }, figures, `time ${p.position}/${s.track.end}`);
    if (s.bonus_owner === player) el("span", { class: "bonus", title: `the ${s.bonus_size}×${s.bonus_size} bonus tile, worth ${s.bonus_points}` }, figures, `${s.bonus_size}×${s.bonus_size} bonus`);
  }
  const quilt = svg("svg", { class: "quilt", viewBox: `-8 -8 ${BOARD * CELL + 9} ${BOARD * CELL + 9}`,
    role: "img", "aria-label": `quilt of player ${player}` }, panel);
  quilt.dataset.player = player;
  for (let i = 0; i < BOARD; i++) {
    svg("text", { x: (i + 0.5) * CELL, y: -2, "font-size": 5, "text-anchor": "middle" }, quilt).textContent = "abcdefghi"[i];
    svg("text", { x: -4, y: (i + 0.5) * CELL + 2, "font-size": 5, "text-anchor": "middle" }, quilt).textContent = i + 1;
  }
  drawCells(svg("g", {}, quilt), p.quilt, BOARD, BOARD, CELL);
  if (isDraft()) drawDraftMarks(quilt, p);
  const latest = latestAgentMoves();
  s.moves.forEach((m, i) => {
    if (!latest.has(i) || m.player !== player) return;
    for (const cell of m.cells) {
      svg("rect", { class: "mark latest", x: (cell % BOARD) * CELL + 0.8, y: Math.floor(cell / BOARD) * CELL + 0.8,
        width: CELL - 1.6, height: CELL - 1.6, fill: "none", stroke: COLORS.latest, "stroke-width": 1.6 }, quilt);
    }
  });
  if (p.human) {
    quilt.id = "my-quilt";
    svg("g", { id: "overlay" }, quilt);
    quilt.classList.toggle("active", humanToMove());
    quilt.addEventListener("pointermove", (e) => { ui.pointer = cellAt(quilt, e); drawOverlay(); });
    quilt.addEventListener("pointerleave", () => { ui.pointer = null; drawOverlay(); });
    quilt.addEventListener("click", (e) => { ui.pointer = cellAt(quilt, e); place(); });
  }
}

// The draft's star squares and a player's full rows and columns, over the quilt.
function drawDraftMarks(quilt, p) {
  for (const cell of ui.state.stars.squares) {
    const star = svg("text", { class: "star", x: (cell % BOARD + 0.5) * CELL, y: (Math.floor(cell / BOARD) + 0.5) * CELL + 2.6,
      "font-size": 7.5, "text-anchor": "middle", fill: COLORS.star, opacity: p.quilt[cell] === EMPTY ? 0.9 : 0.55 }, quilt);
    star.textContent = "★";
    svg("title", {}, star).textContent = `star square ${cellName(cell)}`;
  }
  const band = (x, y, width, height, label) => {
    const mark = svg("rect", { class: "mark full-line", x, y, width, height, fill: "none", stroke: COLORS.fullLine, "stroke-width": 1.2 }, quilt);
    svg("title", {}, mark).textContent = label;
  };
  for (const r of p.full_rows) band(0.3, r * CELL + 0.3, BOARD * CELL - 0.6, CELL - 0.6, `row ${r + 1} full: 1 point`);
  for (const c of p.full_cols) band(c * CELL + 0.3, 0.3, CELL - 0.6, BOARD * CELL - 0.6, `column ${"abcdefghi"[c]} full: 1 point`);
}

function cellAt(quilt, event) {
  const point = quilt.createSVGPoint();
  point.x = event.clientX; point.y = event.clientY;
  const local = point.matrixTransform(quilt.getScreenCTM().inverse());
  const r = Math.floor(local.y / CELL), c = Math.floor(local.x / CELL);
  return r >= 0 && c >= 0 && r < BOARD && c < BOARD ? r * BOARD + c : null;
}

function drawOverlay() {
  const overlay = $("overlay");
  if (!overlay) return;
  overlay.replaceChildren();
  if (!humanToMove()) return;
  for (const cell of legalPointerCells()) {
    svg("circle", { class: "dot", cx: (cell % BOARD + 0.5) * CELL, cy: (Math.floor(cell / BOARD) + 0.5) * CELL,
      r: 1.3, fill: COLORS.legal, opacity: 0.7 }, overlay);
  }
  const ghost = placement(ui.pointer);
  if (!ghost) return;
  const g = svg("g", { class: "ghost", "data-anchor": ghost.anchor, "data-legal": ghost.legal }, overlay);
  const fill = ui.state.pending_leather ? ui.catalogue.leather.color : patchAt(ui.slot).color;
  for (const cell of ghost.cells) {
    svg("rect", { x: (cell % BOARD) * CELL + 0.6, y: Math.floor(cell / BOARD) * CELL + 0.6, width: CELL - 1.2,
      height: CELL - 1.2, fill, "fill-opacity": 0.75, stroke: ghost.legal ? COLORS.legal : COLORS.illegal,
      "stroke-width": 1.2 }, g);
  }
}

function place() {
  const ghost = placement(ui.pointer);
  if (!ghost || !humanToMove()) return;
  if (ghost.legal || ui.state.pending_leather) sendMove({ action: ghost.action });
  else sendMove({ slot: ui.slot, orientation: ui.orientation, anchor: ghost.anchor });
}

function drawTrack() {
  const s = ui.state, track = $("track"), w = 18;
  track.replaceChildren();
  track.style.display = isDraft() ? "none" : "";
  if (isDraft()) return;
  const end = s.track.end;
  track.setAttribute("viewBox", `0 0 ${(end + 1) * w + 4} 46`);
  for (let i = 0; i <= end; i++) {
    const x = i * w + 2;
    svg("rect", { x, y: 12, width: w - 2, height: 20, rx: 2, fill: COLORS.space, stroke: COLORS.spaceEdge, "stroke-width": 0.8 }, track);
    if (s.track.income.includes(i)) {
      drawButton(track, x + w - 1, 8, 4);
      svg("title", {}, track).textContent = `space ${i}: pays income`;
    }
    if (s.track.leather.includes(i)) {
      const leather = svg("rect", { x: x + 3, y: 16, width: 10, height: 10, fill: ui.catalogue.leather.color, class: "leather" }, track);
      svg("title", {}, leather).textContent = `space ${i}: a leather patch for the first to pass`;
    }
    if (i % 5 === 0 || i === end) svg("text", { x: x + (w - 2) / 2, y: 43, "font-size": 8, "text-anchor": "middle" }, track).textContent = i;
  }
  const [a, b] = s.players.map((p) => p.position);
  s.players.forEach((p, player) => {
    const shift = a === b ? (player === 0 ? -4 : 4) : 0;
    const token = svg("circle", { cx: p.position * w + 2 + (w - 2) / 2 + shift, cy: 22 + shift, r: 6,
      fill: ui.catalogue.player_colors[player], stroke: "#fff", "stroke-width": 1.2, class: `token token-${player}` }, track);
    svg("title", {}, token).textContent = `${p.human ? "your" : `${p.name}'s`} time token: space ${p.position}`;
  });
}

function drawPatch(parent, patchId, orientation, box) {
  const patch = ui.catalogue.patches[patchId];
  const cells = patch.orientations[orientation].cells;
  const [h, w] = shapeSize(cells);
  const pic = svg("svg", { viewBox: `0 0 ${box * CELL} ${box * CELL}` }, parent);
  const g = svg("g", { transform: `translate(${((box - w) * CELL) / 2} ${((box - h) * CELL) / 2})` }, pic);
  const ids = new Array(h * w).fill(EMPTY);
  for (const [r, c] of cells) ids[r * w + c] = patchId;
  drawCells(g, ids, h, w, CELL, false);
  return pic;
}

function figures(parent, patch, short) {
  if (isDraft()) {
    const star = starred(patch.id) ? " ★" : "";
    el("div", { class: "figures", title: `cost ${patch.cost} buttons${star ? "; starred: a point when it covers a star square" : ""}` },
      parent, short ? `${patch.cost}${star}` : `cost ${patch.cost}${star}`);
    return;
  }
  const text = short ? `${patch.cost}/${patch.time}/${patch.income}`
    : `cost ${patch.cost} · time ${patch.time} · income ${patch.income}`;
  el("div", { class: "figures", title: `cost ${patch.cost} buttons, ${patch.time} time, income ${patch.income}` }, parent, text);
}

// The three patches a buy takes from: the circle's next three, or the draft's face-up row;
// then the rest of the circle in order, or the patches still in the deck (never its order).
function drawCircle() {
  const s = ui.state, row = $("offer"), rest = $("rest");
  row.replaceChildren(); rest.replaceChildren();
  if (isDraft()) el("div", { class: "neutral", title: "the face-up row: buy one of these" }, row, "face up");
  else el("div", { class: "neutral", title: "the neutral token: the three patches after it are on offer" }, row, "◆ neutral token");
  offer().forEach((patchId, slot) => {
    if (patchId === null) { el("div", { class: "card empty", "data-slot": slot }, row, "empty"); return; }
    const patch = ui.catalogue.patches[patchId];
    const card = el("div", { class: "card", "data-slot": slot, role: "button", tabindex: 0,
      title: `slot ${slot}: patch ${patchId} (key ${slot + 1})` }, row);
    card.classList.toggle("selected", ui.slot === slot);
    card.classList.toggle("unbuyable", !(humanToMove() && (slotBuyable(slot) || canDiscard(slot))));
    card.classList.toggle("starred", starred(patchId));
    drawPatch(card, patchId, ui.slot === slot ? ui.orientation : 0, 5);
    figures(card, patch, false);
    card.addEventListener("click", () => select(slot));
    if (humanToMove() && canDiscard(slot)) {
      const discard = el("button", { type: "button", class: "discard", "data-slot": slot,
        title: "no face-up patch can be bought: discard this one from the game" }, card, "Discard");
      discard.addEventListener("click", (e) => { e.stopPropagation(); sendMove({ action: DISCARD_BASE + slot }); });
    }
  });
  const others = isDraft() ? s.deck_patches : s.circle.slice(3);
  if (isDraft()) {
    rest.title = "the patches still in the deck, by number: their order is hidden";
    el("div", { class: "neutral deck" }, rest, `deck: ${s.deck_size} face down`);
  } else rest.title = "the rest of the circle, clockwise after the three on offer";
  for (const patchId of others) {
    const mini = el("div", { class: "mini", title: `patch ${patchId}` }, rest);
    drawPatch(mini, patchId, 0, 5);
    figures(mini, ui.catalogue.patches[patchId], true);
  }
}

function drawMoves() {
  const list = $("moves"), s = ui.state, latest = latestAgentMoves();
  list.replaceChildren();
  s.moves.forEach((m, i) => {
    const who = m.by_agent ? s.opponent : "you";
    const item = el("li", { class: m.by_agent ? "agent" : "human", title: `action ${m.action}` }, list, `${who}: ${m.text}`);
    if (latest.has(i)) item.classList.add("latest");
  });
  list.parentElement.scrollTop = list.parentElement.scrollHeight;
}

function drawFinal() {
  const box = $("final"), s = ui.state;
  box.hidden = !s.over;
  box.replaceChildren();
  if (!s.over) return;
  const names = s.players.map((p) => (p.human ? "you" : p.name));
  el("h2", {}, box, s.winner === s.seat ? "You win" : `${s.opponent} wins`);
  const table = el("table", {}, box);
  const head = el("tr", {}, table);
  for (const text of ["", ...names]) el("th", {}, head, text);
  const parts = isDraft()
    ? [["rows and columns", "line_points"], ["star points", "star_points"], ["buttons", "buttons"], ["score", "total"]]
    : [["buttons", "buttons"], ["empty cells", "empty_cells"], ["−2 × empty", "empty_penalty"],
      [`${s.bonus_size}×${s.bonus_size} bonus`, "bonus"], ["score", "total"]];
  for (const [label, key] of parts) {
    const row = el("tr", {}, table);
    el("td", {}, row, label);
    for (const part of s.final) el("td", { class: key }, row, String(part[key]));
  }
  if (isDraft()) {
    const second = 1 - s.first_player;
    el("p", { class: "help tie" }, box, `A tie goes to the player who moved second: ${second === s.seat ? "you" : s.opponent}.`);
  }
}

function statusText() {
  const s = ui.state;
  if (s.over) {
    return s.status.replace(`player ${s.seat} wins`, "you win").replace(`player ${s.seat}`, "you")
      .replace(`player ${1 - s.seat}`, s.opponent);
  }
  if (s.agent_to_move) return `${s.opponent} is thinking…`;
  if (s.pending_leather) return "Your turn: sew the leather patch onto an empty cell of your quilt";
  if (ui.slot !== null) return `Your turn: place patch ${offer()[ui.slot]} on your quilt (R rotate, F mirror, Esc cancel)`;
  if (isDraft()) {
    return [0, 1, 2].some(canDiscard) ? "Your turn: no face-up patch can be bought — discard one"
      : "Your turn: pick a face-up patch to buy";
  }
  return "Your turn: pick a patch to buy, or advance";
}

function render(state) {
  ui.state = state;
  ui.legal = new Set(state.legal);
  if (ui.slot !== null && !(humanToMove() && slotBuyable(ui.slot))) { ui.slot = null; ui.orientation = 0; }
  document.body.dataset.turn = state.over ? "over" : state.agent_to_move ? "agent" : "human";
  document.body.dataset.ply = state.moves.length;
  drawPanel($("panel-human"), state.seat);
  drawPanel($("panel-agent"), 1 - state.seat);
  drawTrack();
  drawMoves();
  drawFinal();
  const title = ui.config.games[state.game].title;
  $("title").textContent = title; document.title = title;
  $("game-info").textContent = `seed ${state.seed}, ${state.rules} rules`;
  const advance = $("advance");
  advance.hidden = isDraft();
  if (isDraft()) {
    const squares = state.stars.squares.map(cellName).join(" ") || "none";
    $("bonus-info").textContent = `★ squares: ${squares} (a starred patch covering one scores a point)`;
    advance.disabled = true;
  } else {
    const bonus = state.bonus_owner === null ? "not yet won"
      : `won by ${state.players[state.bonus_owner].human ? "you" : state.opponent}`;
    $("bonus-info").textContent = `${state.bonus_size}×${state.bonus_size} bonus (${state.bonus_points} points): ${bonus}`;
    advance.disabled = !(humanToMove() && ui.legal.has(ADVANCE));
    advance.firstChild.textContent = state.advance_gain !== null ? `Advance +${state.advance_gain} ` : "Advance ";
  }
  $("undo").disabled = !state.can_undo || state.agent_to_move;
  renderChoice();
}

// What changes with the patch chosen and its orientation: the offer, the ghost, the buttons.
function renderChoice() {
  drawOverlay();
  drawCircle();
  $("status").textContent = statusText();
  const selecting = humanToMove() && ui.slot !== null;
  for (const id of ["rotate", "mirror", "cancel"]) $(id).disabled = !selecting;
  $("my-quilt").dataset.orientation = ui.orientation;
}

// ----- choosing -------------------------------------------------------------------------

function select(slot) {
  if (!humanToMove() || ui.state.pending_leather) return;
  if (!slotBuyable(slot)) {
    const patch = patchAt(slot);
    setMessage(`Patch ${patch.id} costs ${patch.cost} buttons and must fit on your quilt: you cannot buy it now`, true);
    return;
  }
  ui.orientation = ui.slot === slot ? ui.orientation : 0;
  ui.slot = slot;
  setMessage("");
  renderChoice();
}

function turn(step) {
  if (ui.slot === null) return;
  const mirror = ui.orientation >> 2, rotation = ui.orientation & 3;
  ui.orientation = mirror * 4 + ((rotation + step + 4) % 4);
  renderChoice();
}

function mirror() {
  if (ui.slot === null) return;
  const mirrored = ui.orientation >> 2, rotation = ui.orientation & 3;
  ui.orientation = (1 - mirrored) * 4 + ((4 - rotation) % 4);  // flips the shape as it is drawn
  renderChoice();
}

function cancel() {
  ui.slot = null; ui.orientation = 0;
  if (ui.state) renderChoice();
}

function setMessage(text, error = false) {
  const box = $("message");
  box.textContent = text;
  box.classList.toggle("error", error);
}

function onKey(event) {
  if (event.target.closest("input, select, textarea") || event.altKey || event.metaKey) return;
  const key = event.key.toLowerCase();
  const actions = { r: () => turn(1), e: () => turn(-1), f: mirror, escape: cancel,
    a: () => { if (!isDraft() && ui.legal.has(ADVANCE) && humanToMove()) sendMove({ action: ADVANCE }); },
    u: undo, 1: () => select(0), 2: () => select(1), 3: () => select(2) };
  if (event.ctrlKey) { if (key === "z") { event.preventDefault(); undo(); } return; }
  if (actions[key]) { event.preventDefault(); actions[key](); }
}

// ----- start ----------------------------------------------------------------------------

function formSettings() {
  const seed = $("seed").value.trim();
  return { game: $("game").value, seed: seed === "" ? null : Number(seed), seat: Number($("seat").value),
    opponent: $("opponent").value.trim() || ui.config.opponent, rules: $("rules").value };
}

// The rules presets and agents the form offers follow its game.
function fillGameChoices() {
  const game = ui.config.games[$("game").value], rules = $("rules").value;
  $("agents").replaceChildren(); $("rules").replaceChildren();
  for (const spec of game.agents) el("option", { value: spec }, $("agents"));
  for (const name of game.presets) el("option", { value: name }, $("rules"), name);
  $("rules").value = game.presets.includes(rules) ? rules : game.presets[0];
  const name = $("opponent").value.trim().split(":")[0];
  if (!game.agents.some((spec) => spec.split(":")[0] === name)) $("opponent").value = game.agents.includes("greedy") ? "greedy" : game.agents[0];
}

async function start() {
  try {
    [ui.config, ui.catalogue] = await Promise.all([api("GET", "/api/config"), api("GET", "/api/catalogue")]);
  } catch (e) { setMessage(`cannot reach the server: ${e.message}`, true); return; }
  const c = ui.config;
  for (const [name, game] of Object.entries(c.games)) el("option", { value: name }, $("game"), game.title);
  $("game").value = c.game;
  $("seed").value = c.seed ?? ""; $("seat").value = String(c.seat);
  $("opponent").value = c.opponent;
  fillGameChoices();
  $("rules").value = c.rules;
  $("game").addEventListener("change", fillGameChoices);
  $("new-game").addEventListener("submit", (e) => { e.preventDefault(); ui.slot = null; newGame(formSettings()); });
  $("rotate").addEventListener("click", () => turn(1));
  $("mirror").addEventListener("click", mirror);
  $("cancel").addEventListener("click", cancel);
  $("advance").addEventListener("click", () => sendMove({ action: ADVANCE }));
  $("undo").addEventListener("click", undo);
  document.addEventListener("keydown", onKey);
  const id = new URLSearchParams(location.hash.slice(1)).get("game");
  if (id) {
    try { ui.state = { id }; update(await api("GET", gamePath(""))); return; } catch (e) { ui.state = null; }
  }
  newGame({ game: c.game, seed: c.seed, seat: c.seat, opponent: c.opponent, rules: c.rules });
}

start();
