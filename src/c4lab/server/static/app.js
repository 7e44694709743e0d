// c4lab: the page. One script for every address (the server sends the same
// index.html for /, /r/<code>, /games and /games/<code>); it routes by
// location.pathname. The contract with the server is docs/protocol.md.
//
// Everything that comes from the server or from a person is inserted with
// textContent or setAttribute, never as HTML.

import {
  Board, LETTERS, cellName, el, landingRow, miniBoard, moveTokens, pieceShape, replay,
} from "./board.js";

const $ = (id) => document.getElementById(id);
const COLOUR = { A: "White", B: "Black" };
const OTHER = { A: "B", B: "A" };
const GAP_MS = 360; // least time between two moves on screen (agents move fast)
const NAME_KEY = "c4lab.name";
const RECENT_KEY = "c4lab.recent";
const WATCH_KEY = "c4lab.watch:";

// ---------------------------------------------------------------- helpers

function setText(node, value) {
  node.textContent = value === null || value === undefined ? "" : String(value);
}

function show(viewId) {
  for (const view of document.querySelectorAll(".view")) view.hidden = view.id !== viewId;
  document.body.dataset.view = viewId.replace("view-", "");
  for (const link of document.querySelectorAll(".topbar nav a")) {
    const here = (viewId === "view-home" && link.id === "nav-new") ||
      ((viewId === "view-games" || viewId === "view-replay") && link.id === "nav-games");
    link.classList.toggle("current", here);
  }
}

/** Plain words for an HTTP error body ({"detail": ...}). */
function detailText(detail, status) {
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    return detail.map((d) => {
      const where = (d.loc || []).filter((p) => p !== "body").join(".");
      return where ? `${where}: ${d.msg}` : d.msg;
    }).join("; ");
  }
  return `the server answered ${status}`;
}

class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

async function api(method, path, body) {
  let response;
  try {
    response = await fetch(path, {
      method,
      headers: body === undefined ? {} : { "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new ApiError("Cannot reach the server: is it still running?", 0);
  }
  let data = null;
  try {
    data = await response.json();
  } catch (err) {
    data = null;
  }
  if (!response.ok) {
    throw new ApiError(detailText(data && data.detail, response.status), response.status);
  }
  return data;
}

let toastTimer = null;
function toast(message) {
  const node = $("toast");
  setText(node, message);
  node.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { node.hidden = true; }, 2200);
}

async function copyText(value, what) {
  let done = false;
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(value);
      done = true;
    } catch (err) {
      done = false;
    }
  }
  if (!done) {
    const area = document.createElement("textarea");
    area.value = value;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    try {
      done = document.execCommand("copy");
    } catch (err) {
      done = false;
    }
    area.remove();
  }
  toast(done ? `${what} copied` : `Select the ${what.toLowerCase()} and copy it by hand`);
}

// tokens: localStorage "c4lab:<code>" holds the token of that room
function tokenFor(code) {
  try {
    return localStorage.getItem(`c4lab:${code}`);
  } catch (err) {
    return null;
  }
}

function saveToken(code, token) {
  try {
    localStorage.setItem(`c4lab:${code}`, token);
    const recent = JSON.parse(localStorage.getItem(RECENT_KEY) || "[]").filter((r) => r.code !== code);
    recent.unshift({ code, t: Date.now() });
    localStorage.setItem(RECENT_KEY, JSON.stringify(recent.slice(0, 12)));
  } catch (err) {
    /* private mode: the game still works until the page is closed */
  }
}

function forgetToken(code) {
  try {
    localStorage.removeItem(`c4lab:${code}`);
  } catch (err) {
    /* nothing to do */
  }
}

function savedName() {
  try {
    return localStorage.getItem(NAME_KEY) || "";
  } catch (err) {
    return "";
  }
}

function saveName(name) {
  try {
    if (name) localStorage.setItem(NAME_KEY, name);
  } catch (err) {
    /* nothing to do */
  }
}

function seatLabel(room, side) {
  const seat = room.seats[side];
  const name = seat && seat.taken ? (seat.name || `Player ${side}`) : "free seat";
  return `${COLOUR[side]} (${name})`;
}

const REASONS = {
  four: "four in a row",
  full: "the board is full",
  resign: "resigned",
  forfeit: "forfeited (away too long)",
};

/** "White (Ann) wins: four in a row" and the like. */
function resultText(room) {
  if (room.result === "draw") return "Draw: the board is full";
  if (room.result === "A" || room.result === "B") {
    const winner = seatLabel(room, room.result);
    if (room.reason === "resign" || room.reason === "forfeit") {
      return `${winner} wins: ${COLOUR[OTHER[room.result]]} ${REASONS[room.reason]}`;
    }
    return `${winner} wins: ${REASONS[room.reason] || "four in a row"}`;
  }
  return "The game is over";
}

function positionHeader(position) {
  const colon = position.indexOf(":");
  return colon < 0 ? position : position.slice(0, colon);
}

function geometryOf(room) {
  return { width: room.width, height: room.height, forbidden: room.forbidden || [], bonus: room.bonus || null };
}

/** The move list: one <li> per move pair, one .mv per move (data-ply). */
function renderMoves(list, tokens, { startPly = 0, current = tokens.length, onPick = null } = {}) {
  list.replaceChildren();
  for (let i = 0; i < tokens.length; i += 2) {
    const li = document.createElement("li");
    const num = document.createElement("span");
    num.className = "num";
    setText(num, `${i / 2 + 1}.`);
    li.appendChild(num);
    for (const ply of [i, i + 1]) {
      if (ply >= tokens.length) break;
      const mv = document.createElement(onPick ? "button" : "span");
      mv.className = "mv";
      if (onPick) mv.type = "button";
      mv.dataset.ply = String(ply + 1);
      mv.dataset.side = ply % 2 === 0 ? "A" : "B";
      setText(mv, tokens[ply]);
      if (ply < startPly) {
        mv.classList.add("pre");
        mv.title = "part of the starting position";
      }
      if (ply + 1 === current) mv.classList.add("current");
      if (onPick) mv.addEventListener("click", () => onPick(ply + 1));
      li.appendChild(mv);
    }
    list.appendChild(li);
  }
  const cur = list.querySelector(".current");
  if (cur) {
    const box = list;
    const top = cur.offsetTop - box.offsetTop;
    if (top < box.scrollTop || top > box.scrollTop + box.clientHeight - 30) box.scrollTop = top - box.clientHeight / 2;
  }
}

function drawSwatch(svg, owner) {
  svg.replaceChildren();
  pieceShape(owner, svg, 26);
}

// ---------------------------------------------------------------- home

async function showHome() {
  show("view-home");
  document.title = "c4lab: new game";
  const params = new URLSearchParams(location.search);
  const form = $("new-game-form");
  for (const id of ["width", "height"]) {
    const select = $(id);
    for (let n = 4; n <= 12; n++) {
      const option = document.createElement("option");
      option.value = String(n);
      setText(option, String(n));
      select.appendChild(option);
    }
  }
  $("width").value = "9";
  $("height").value = "8";
  $("forbidden").value = "d3";
  $("name").value = savedName();

  const boardChoice = () => form.querySelector("input[name=board]:checked").value;
  const modeChoice = () => form.querySelector("input[name=mode]:checked").value;

  function forbiddenCell() {
    const text = $("forbidden").value.trim();
    return text === "" ? null : text;
  }

  let drawnPicker = "";
  function drawPicker() {
    const width = Number($("width").value);
    const height = Number($("height").value);
    const f = forbiddenCell();
    const key = `${width}x${height}/${f}`;
    if (key === drawnPicker) return; // redrawing under a click would swallow it
    drawnPicker = key;
    miniBoard($("forbidden-picker"), { width, height, forbidden: f ? [f] : [] }, {
      onCell: (name) => {
        $("forbidden").value = forbiddenCell() === name ? "" : name;
        drawPicker();
      },
    });
  }

  function sync() {
    $("custom-board").hidden = boardChoice() !== "custom";
    $("paste-board").hidden = boardChoice() !== "paste";
    $("local-options").hidden = modeChoice() !== "local";
    $("online-options").hidden = modeChoice() !== "online";
    for (const n of [1, 2]) {
      const value = $(`player${n}`).value;
      const human = value === "human";
      $(`player${n}-options`).hidden = human;
      const agent = agents.find((a) => a.name === value);
      setText($(`player${n}-help`), human ? "a person at this screen" : agent ? agent.help : "");
    }
    if (boardChoice() === "custom") drawPicker();
    for (const label of form.querySelectorAll(".choice")) {
      label.classList.toggle("checked", label.querySelector("input").checked);
    }
  }

  let agents = [];
  for (const n of [1, 2]) {
    const select = $(`player${n}`);
    const human = document.createElement("option");
    human.value = "human";
    setText(human, "Human (at this screen)");
    select.appendChild(human);
  }
  form.addEventListener("change", sync);
  $("forbidden").addEventListener("input", () => { if (boardChoice() === "custom") drawPicker(); });

  // prefill from the address: /?board=...&bonus=1&mode=online&p1=human&p2=master&first=B&seat=A
  const board = params.get("board");
  if (board) {
    if (board === "7x6") $("board-classic").checked = true;
    else if (board === "random") $("board-random").checked = true;
    else {
      $("board-paste").checked = true;
      $("paste-position").value = board;
    }
  }
  if (params.get("bonus") === "1") $("bonus").checked = true;
  if (params.get("mode") === "online") $("mode-online").checked = true;
  for (const key of ["first", "seat"]) {
    const value = params.get(key);
    if (value && ["A", "B", "random"].includes(value)) $(key).value = value;
  }
  sync();

  try {
    agents = await api("GET", "/api/agents");
  } catch (err) {
    setText($("form-error"), `The list of computer players is not available: ${err.message}`);
  }
  for (const n of [1, 2]) {
    const select = $(`player${n}`);
    const group = document.createElement("optgroup");
    group.label = "Computer";
    for (const agent of agents) {
      const option = document.createElement("option");
      option.value = agent.name;
      setText(option, agent.name);
      option.title = agent.help;
      group.appendChild(option);
    }
    select.appendChild(group);
  }
  const names = agents.map((a) => a.name);
  const defaults = { 1: "human", 2: names.includes("hard") ? "hard" : names[0] || "human" };
  for (const n of [1, 2]) {
    const wanted = params.get(`p${n}`);
    let value = defaults[n];
    let options = "";
    if (wanted) {
      const [name, ...rest] = wanted.split(":");
      if (name === "human" || names.includes(name)) {
        value = name;
        options = rest.join(":");
      }
    }
    $(`player${n}`).value = value;
    $(`player${n}-options`).value = options;
  }
  sync();

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    setText($("form-error"), "");
    const body = { mode: modeChoice(), bonus: $("bonus").checked };
    const choice = boardChoice();
    if (choice === "classic") body.board = "7x6";
    else if (choice === "random") body.board = "random";
    else if (choice === "custom") {
      body.width = Number($("width").value);
      body.height = Number($("height").value);
      const f = forbiddenCell();
      if (f) body.forbidden = f;
    } else {
      const text = $("paste-position").value.trim();
      if (!text) {
        setText($("form-error"), "Paste a position string first (for example 9x8/Xd3:dd).");
        $("paste-position").focus();
        return;
      }
      body.board = text;
    }
    const name = $("name").value.trim();
    if (name) body.name = name;
    if (body.mode === "local") {
      const spec = (n) => {
        const value = $(`player${n}`).value;
        const extra = $(`player${n}-options`).value.trim();
        return value === "human" || !extra ? value : `${value}:${extra}`;
      };
      body.players = { A: spec(1), B: spec(2) };
      body.first = $("first").value;
    } else {
      body.seat = $("seat").value;
      body.public = $("public").checked;
    }
    const button = $("start");
    button.disabled = true;
    try {
      const ticket = await api("POST", "/api/rooms", body);
      saveName(name);
      saveToken(ticket.code, ticket.token);
      if (body.mode === "local" && body.players.A !== "human" && body.players.B !== "human") {
        try {
          sessionStorage.setItem(WATCH_KEY + ticket.code, "1");
        } catch (err) {
          /* the game is then shown as it is */
        }
      }
      location.assign(ticket.url);
    } catch (err) {
      setText($("form-error"), `The game could not start: ${err.message}`);
      button.disabled = false;
    }
  });

  showRecent();
}

async function showRecent() {
  let recent = [];
  try {
    recent = JSON.parse(localStorage.getItem(RECENT_KEY) || "[]");
  } catch (err) {
    recent = [];
  }
  recent = recent.filter((r) => tokenFor(r.code)).slice(0, 6);
  if (!recent.length) return;
  const rooms = await Promise.all(recent.map((r) => api("GET", `/api/rooms/${encodeURIComponent(r.code)}`).catch(() => null)));
  const list = $("recent");
  list.replaceChildren();
  rooms.forEach((room) => {
    if (!room) return;
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.href = `/r/${encodeURIComponent(room.code)}`;
    setText(a, `${room.seats.A.name || "free seat"} vs ${room.seats.B.name || "free seat"}`);
    const meta = document.createElement("span");
    meta.className = "hint-text";
    const state = room.status === "over" ? resultText(room) : room.status === "waiting" ? "waiting for a player" : `${COLOUR[room.to_move]} to move`;
    setText(meta, ` · ${positionHeader(room.position)} · ${room.mode} · ${state}`);
    li.append(a, meta);
    list.appendChild(li);
  });
  $("recent-panel").hidden = !list.children.length;
}

// ---------------------------------------------------------------- room

const R = {
  code: null,
  token: null,
  ws: null,
  retries: 0,
  reconnectTimer: null,
  pingTimer: null,
  state: null, // the room object on screen
  you: [],
  board: null,
  queue: [],
  pumpTimer: null,
  lastChange: 0,
  hover: null,
  cursor: null,
  pending: null, // {col, row, letter, owner}: a move on the bonus cell, ban not chosen yet
  hint: null, // {token, position, evaluation}
  hintWaiting: false,
  evaluation: null, // {value, position}
  awaiting: false,
  awaitTimer: null,
  watching: false,
  gone: false,
  everConnected: false,
  catchUp: false,
  resignArmed: null,
};

function showRoom(code) {
  show("view-room");
  R.code = code;
  R.token = tokenFor(code);
  try {
    R.catchUp = sessionStorage.getItem(WATCH_KEY + code) === "1";
    sessionStorage.removeItem(WATCH_KEY + code);
  } catch (err) {
    R.catchUp = false;
  }
  R.board = new Board($("board"), {
    onColumn: (col) => {
      R.cursor = null;
      tryColumn(col);
    },
    onHover: (col) => {
      R.hover = col;
      renderPreview();
    },
  });
  $("join-name").value = savedName();
  bindRoomControls();
  document.addEventListener("keydown", roomKey);
  window.addEventListener("online", () => { if (!R.ws && !R.gone) connectNow(); });
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible" && !R.ws && !R.gone) connectNow();
  });
  setText($("status"), "Connecting…");
  openSocket();
  R.pingTimer = setInterval(() => send({ type: "ping" }, { quiet: true }), 25000);
}

// -- the WebSocket

function openSocket() {
  R.reconnectTimer = null;
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  let ws;
  try {
    ws = new WebSocket(`${proto}//${location.host}/ws/${encodeURIComponent(R.code)}`);
  } catch (err) {
    scheduleReconnect();
    return;
  }
  R.ws = ws;
  ws.addEventListener("open", () => {
    if (R.ws !== ws) return;
    R.retries = 0;
    R.everConnected = true;
    setBanner(null);
    ws.send(JSON.stringify(R.token ? { type: "hello", token: R.token } : { type: "hello" }));
  });
  ws.addEventListener("message", (event) => {
    if (R.ws !== ws) return;
    let message;
    try {
      message = JSON.parse(event.data);
    } catch (err) {
      return;
    }
    onMessage(message);
  });
  ws.addEventListener("close", (event) => {
    if (R.ws !== ws) return;
    R.ws = null;
    R.awaiting = false;
    if (event.code === 4404) {
      R.gone = true;
      return;
    }
    scheduleReconnect();
  });
}

function scheduleReconnect() {
  if (R.reconnectTimer || R.gone) return;
  const delay = Math.min(5000, 250 * 2 ** R.retries);
  R.retries += 1;
  setBanner(R.everConnected ? "Connection lost: reconnecting…" : "Cannot reach the server: retrying…");
  R.reconnectTimer = setTimeout(openSocket, delay);
}

function connectNow() {
  clearTimeout(R.reconnectTimer);
  R.reconnectTimer = null;
  openSocket();
}

function setBanner(text) {
  const banner = $("conn-banner");
  banner.hidden = !text;
  setText(banner, text || "");
  document.body.classList.toggle("offline", Boolean(text));
}

function send(message, { quiet = false } = {}) {
  if (!R.ws || R.ws.readyState !== WebSocket.OPEN) {
    if (!quiet) say("Not connected to the server right now: reconnecting, try again in a moment.", "error");
    return false;
  }
  R.ws.send(JSON.stringify(message));
  return true;
}

const ERROR_WORDS = {
  "not-your-turn": "Not your turn",
  "not-your-seat": "You cannot move here",
  "illegal-move": "That move is not allowed",
  "game-over": "The game is over",
  "not-allowed": "Not available in this game",
  "bad-token": "Your saved seat for this room is not valid",
  "rate-limited": "Too many actions at once",
  "unknown-room": "This room does not exist",
};

function onMessage(message) {
  switch (message.type) {
    case "state":
    case "thinking":
      R.queue.push(message);
      pump();
      break;
    case "hint":
      onHint(message);
      break;
    case "error":
      onError(message);
      break;
    default:
      break;
  }
}

function onError(message) {
  R.awaiting = false;
  if (message.code === "bad-token") {
    forgetToken(R.code);
    R.token = null;
  }
  if (message.code === "unknown-room") {
    R.gone = true;
    show("view-missing");
    setText($("missing-text"), `There is no room ${R.code}: check the link, or start a new game.`);
    return;
  }
  if (R.hintWaiting) {
    R.hintWaiting = false;
    renderControls();
  }
  const lead = ERROR_WORDS[message.code] || "The server refused";
  say(`${lead}: ${message.message}`, "error");
  if (R.state) render();
}

let sayTimer = null;
function say(text, kind = "info") {
  const node = $("message");
  setText(node, text);
  node.dataset.kind = kind;
  clearTimeout(sayTimer);
  if (text && kind !== "sticky") sayTimer = setTimeout(() => { setText(node, ""); }, kind === "error" ? 6000 : 4000);
}

// -- pacing: several agent moves in a row are shown one by one

function pump() {
  if (R.pumpTimer) return;
  while (R.queue.length) {
    const message = R.queue[0];
    if (message.type === "thinking") {
      R.queue.shift();
      if (R.state && R.state.status === "playing") {
        R.state = { ...R.state, thinking: message.seat };
        render();
      }
      continue;
    }
    const frames = catchUpFrames(message.room);
    if (frames.length) {
      R.queue.splice(0, 0, ...frames.map((room) => ({ type: "state", room, you: message.you, frame: true })));
      continue;
    }
    const changed = R.state && message.room.position !== R.state.position;
    const backlog = R.queue.filter((m) => m.type === "state").length;
    const wait = changed && backlog < 40 ? R.lastChange + GAP_MS - performance.now() : 0;
    if (wait > 0) {
      R.pumpTimer = setTimeout(() => {
        R.pumpTimer = null;
        pump();
      }, wait);
      return;
    }
    R.queue.shift();
    applyState(message.room, message.you, message.frame);
    if (changed) R.lastChange = performance.now();
  }
}

/** When agents made several moves at once (a game between agents), the
 * positions in between, so that they can be watched. */
function catchUpFrames(room) {
  const allAgents = room.seats.A.kind === "agent" && room.seats.B.kind === "agent";
  if (!R.catchUp && !(allAgents && R.state)) return [];
  const first = !R.state;
  R.catchUp = false;
  const tokens = moveTokens(room.position);
  const shown = first ? tokens.slice(0, room.start_ply) : moveTokens(R.state.position);
  if (!first && (R.state.position.split(":")[0] !== room.position.split(":")[0])) return [];
  if (shown.some((t, i) => tokens[i] !== t) || tokens.length - shown.length < 2) return [];
  const { boards } = replay(geometryOf(room), tokens);
  const header = positionHeader(room.position);
  const frames = [];
  for (let ply = shown.length; ply < tokens.length; ply++) {
    frames.push({
      ...room,
      position: ply ? `${header}:${tokens.slice(0, ply).join("")}` : header,
      cells: boards[ply],
      to_move: ply % 2 === 0 ? "A" : "B",
      legal_moves: [],
      win_line: [],
      status: "playing",
      result: null,
      reason: null,
      thinking: ply % 2 === 0 ? "A" : "B",
      evaluation: null,
    });
  }
  return frames;
}

function applyState(room, you, isFrame = false) {
  const prev = R.state;
  R.state = room;
  R.you = you || [];
  const fresh = R.board.setup(geometryOf(room));
  const positionChanged = !prev || prev.position !== room.position;
  const tokens = moveTokens(room.position);
  const { order } = replay(geometryOf(room), tokens);
  R.board.setCells(room.cells, { animate: Boolean(prev) && !fresh, order });
  if (positionChanged) {
    R.pending = null;
    R.awaiting = false;
    clearTimeout(R.awaitTimer);
    if (R.hint && R.hint.position !== room.position) R.hint = null;
  }
  if (room.evaluation !== null && room.evaluation !== undefined) {
    R.evaluation = { value: room.evaluation, position: room.position };
  }
  if (!isFrame) $("board").dataset.live = "1";
  render();
}

function myTurn(room = R.state) {
  return Boolean(room) && room.status === "playing" && room.to_move &&
    R.you.includes(room.to_move) && room.seats[room.to_move].kind === "human";
}

/** Why the person at this page cannot move now (null: they can). */
function whyNot(room) {
  if (room.status === "over") return `The game is over: ${resultText(room)}.`;
  if (room.status === "waiting") {
    return R.you.length ? "Wait for your opponent to open the link and take the free seat." : "The game has not started: a seat is still free.";
  }
  if (!R.you.length) return "You are watching this game.";
  const side = room.to_move;
  if (room.thinking || room.seats[side].kind === "agent") return `${seatLabel(room, side)} is thinking: wait for its move.`;
  if (!R.you.includes(side)) return `It is ${seatLabel(room, side)}'s turn.`;
  return null;
}

function tryColumn(col) {
  const room = R.state;
  if (!room || col >= room.width) return;
  const letter = LETTERS[col];
  if (R.pending) {
    const token = `${R.pending.letter}+${letter}`;
    if (!room.legal_moves.includes(token)) {
      refuse(col, `Column ${letter} is full: the ban piece cannot go there. Choose another column, or decline.`);
      return;
    }
    sendMove(token);
    return;
  }
  if (R.awaiting) return;
  if (room.status === "over" || (room.status === "playing" && !R.you.length)) {
    refuse(col, whyNot(room));
    return;
  }
  const geometry = geometryOf(room);
  if (landingRow(geometry, room.cells, col) === null) {
    refuse(col, `Column ${letter} is full: choose another column.`);
    return;
  }
  const why = whyNot(room);
  if (why) {
    refuse(col, why);
    return;
  }
  const options = room.legal_moves.filter((m) => m[0] === letter);
  if (!options.length) {
    refuse(col, `Column ${letter} cannot take a piece now.`);
    return;
  }
  if (options.some((m) => m.length === 3)) {
    const row = landingRow(geometry, room.cells, col);
    R.pending = { col, row, letter, owner: room.to_move };
    const targets = options.filter((m) => m.length === 3).map((m) => m[2]);
    const where = targets.length === room.width ? "any column" : `a column (${targets.join(", ")})`;
    setText($("ban-text"), `Your piece takes the bonus cell ${cellName(col, row)}: pick ${where} for a neutral ban piece, or decline.`);
    render();
    $("decline-ban").focus({ preventScroll: true });
    return;
  }
  sendMove(letter);
}

function sendMove(token) {
  if (!send({ type: "move", move: token })) return;
  R.awaiting = true;
  R.pending = null;
  clearTimeout(R.awaitTimer);
  R.awaitTimer = setTimeout(() => { R.awaiting = false; }, 5000);
  say("");
  render();
}

function refuse(col, message) {
  R.board.refuse(col);
  say(message, "error");
}

function roomKey(event) {
  if (document.body.dataset.view !== "room" || !R.state) return;
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target;
  if (target.closest && target.closest("input, textarea, select")) return;
  const key = event.key;
  const width = R.state.width;
  let col = null;
  if (/^[a-l]$/.test(key) && LETTERS.indexOf(key) < width) col = LETTERS.indexOf(key);
  else if (/^[1-9]$/.test(key) && Number(key) <= width) col = Number(key) - 1;
  if (col !== null) {
    event.preventDefault();
    R.cursor = col;
    tryColumn(col);
    renderPreview();
    return;
  }
  if (key === "ArrowLeft" || key === "ArrowRight") {
    event.preventDefault();
    const start = R.cursor ?? R.hover ?? Math.floor((width - 1) / 2);
    R.cursor = R.cursor === null && R.hover === null ? start : (start + (key === "ArrowLeft" ? width - 1 : 1)) % width;
    renderPreview();
    return;
  }
  const onControl = target.closest && target.closest("button, a");
  if ((key === "Enter" || key === " ") && !onControl && R.cursor !== null) {
    event.preventDefault();
    tryColumn(R.cursor);
    return;
  }
  if (key === "Escape" && R.pending) {
    event.preventDefault();
    cancelBan();
    return;
  }
  if ((key === "n" || key === "N") && R.pending) {
    event.preventDefault();
    sendMove(R.pending.letter);
  }
}

function cancelBan() {
  R.pending = null;
  say("");
  render();
}

function onHint(message) {
  R.hintWaiting = false;
  if (!R.state) return;
  R.hint = { token: message.move, position: R.state.position, evaluation: message.evaluation };
  if (typeof message.evaluation === "number") R.evaluation = { value: message.evaluation, position: R.state.position };
  const token = message.move;
  let words = `Hint: drop in column ${token[0]}`;
  const landing = landingRow(geometryOf(R.state), R.state.cells, LETTERS.indexOf(token[0]));
  if (token.length === 3) words += ` and put the ban piece in column ${token[2]}`;
  else if (R.state.bonus && landing !== null && cellName(LETTERS.indexOf(token[0]), landing) === R.state.bonus) {
    words += " and decline the ban";
  }
  say(`${words}.`, "hint");
  render();
}

function bindRoomControls() {
  $("undo").addEventListener("click", () => {
    R.pending = null;
    send({ type: "undo" });
  });
  $("hint").addEventListener("click", () => {
    if (R.hintWaiting) return;
    if (send({ type: "hint" })) {
      R.hintWaiting = true;
      say("Looking for a good move…", "info");
      renderControls();
    }
  });
  $("resign").addEventListener("click", () => {
    const button = $("resign");
    if (R.resignArmed) {
      clearTimeout(R.resignArmed);
      R.resignArmed = null;
      setText(button, "Resign");
      send({ type: "resign" });
      return;
    }
    setText(button, "Really resign?");
    button.classList.add("armed");
    R.resignArmed = setTimeout(() => {
      R.resignArmed = null;
      setText(button, "Resign");
      button.classList.remove("armed");
    }, 3500);
  });
  $("decline-ban").addEventListener("click", () => { if (R.pending) sendMove(R.pending.letter); });
  $("cancel-ban").addEventListener("click", cancelBan);
  $("copy-link").addEventListener("click", () => copyText($("share-link").value, "Link"));
  $("copy-position").addEventListener("click", () => copyText($("position").value, "Position"));
  $("share-link").addEventListener("focus", (e) => e.target.select());
  $("position").addEventListener("focus", (e) => e.target.select());
  $("join-seat").addEventListener("click", joinSeat);
  $("watch").addEventListener("click", () => {
    R.watching = true;
    render();
  });
  $("paste-start").addEventListener("click", pasteStart);
  $("paste-here").addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      pasteStart();
    }
  });
  $("board").addEventListener("focus", () => {
    if (R.cursor === null && R.state) {
      R.cursor = R.hover ?? Math.floor((R.state.width - 1) / 2);
      renderPreview();
    }
  });
  $("board").addEventListener("blur", () => {
    R.cursor = null;
    renderPreview();
  });
}

async function joinSeat() {
  const name = $("join-name").value.trim();
  const button = $("join-seat");
  button.disabled = true;
  try {
    const ticket = await api("POST", `/api/rooms/${encodeURIComponent(R.code)}/join`, name ? { name } : {});
    saveName(name);
    saveToken(R.code, ticket.token);
    R.token = ticket.token;
    send({ type: "hello", token: ticket.token });
    say(`You took seat ${ticket.seats.join(", ")} (${ticket.seats.map((s) => COLOUR[s].toLowerCase()).join(", ")}).`, "info");
  } catch (err) {
    say(`You could not take the seat: ${err.message}`, "error");
    R.watching = true;
    render();
  } finally {
    button.disabled = false;
  }
}

async function pasteStart() {
  const text = $("paste-here").value.trim();
  setText($("paste-error"), "");
  if (!text) {
    setText($("paste-error"), "Paste a position string first (for example 7x6:dd).");
    return;
  }
  const room = R.state;
  const players = room && room.mode === "local"
    ? { A: room.seats.A.kind === "agent" ? room.seats.A.spec : "human", B: room.seats.B.kind === "agent" ? room.seats.B.spec : "human" }
    : { A: "human", B: "hard" };
  try {
    const ticket = await api("POST", "/api/rooms", { mode: "local", board: text, players });
    saveToken(ticket.code, ticket.token);
    location.assign(ticket.url);
  } catch (err) {
    setText($("paste-error"), `That position cannot start a game: ${err.message}`);
  }
}

// -- drawing the room

function render() {
  const room = R.state;
  if (!room) return;
  const board = $("board");
  board.dataset.position = room.position;
  board.dataset.status = room.status;
  board.dataset.toMove = room.to_move || "";
  board.dataset.result = room.result || "";
  board.dataset.you = R.you.join("");
  board.dataset.thinking = room.thinking || "";
  board.classList.toggle("my-turn", myTurn(room));
  renderStatus();
  renderOverlays();
  renderPreview();
  renderSeats();
  renderEval();
  renderControls();
  renderPanels();
  const tokens = moveTokens(room.position);
  renderMoves($("moves"), tokens, { startPly: room.start_ply });
  $("position").value = room.position;
  setText($("last-key"), LETTERS[room.width - 1]);
  $("ban-panel").hidden = !R.pending;
  $("evalbar").hidden = Boolean(R.pending);
  $("moves-note").hidden = !room.start_ply;
  if (R.pending) {
    $("message").dataset.kind = "info";
  }
}

function renderStatus() {
  const room = R.state;
  const status = $("status");
  let text;
  let kind = "wait";
  if (room.status === "over") {
    text = resultText(room);
    if (room.result && R.you.length === 1) {
      if (room.result === R.you[0]) text = `You win! ${text}`;
      else if (room.result !== "draw") text = `You lose. ${text}`;
    }
    kind = "over";
  } else if (room.status === "waiting") {
    const free = ["A", "B"].filter((s) => !room.seats[s].taken);
    text = R.you.length
      ? `Waiting for an opponent to take seat ${free.join(", ")}: share the link.`
      : `Waiting for a second player to take seat ${free.join(", ")}.`;
  } else if (room.thinking) {
    text = `${seatLabel(room, room.thinking)} is thinking`;
    kind = "thinking";
  } else if (myTurn(room)) {
    text = R.you.length > 1 ? `${seatLabel(room, room.to_move)} to move` : `Your move (${COLOUR[room.to_move].toLowerCase()})`;
    if (R.pending) text = "Bonus! Choose where the ban piece goes";
    kind = "turn";
  } else {
    text = `${seatLabel(room, room.to_move)} to move`;
  }
  const words = document.createElement("span");
  words.className = "status-text";
  setText(words, text);
  status.replaceChildren(words);
  status.dataset.kind = kind;
  if (kind === "thinking") {
    const dots = document.createElement("span");
    dots.className = "dots";
    dots.setAttribute("aria-hidden", "true");
    for (let i = 0; i < 3; i++) dots.appendChild(document.createElement("i"));
    words.appendChild(dots);
  }
  if (kind === "turn" || kind === "over" || kind === "thinking") {
    const piece = room.status === "over" ? (room.result === "draw" ? null : room.result) : room.to_move;
    if (piece) {
      const svg = el("svg", { viewBox: "-30 -30 60 60", class: "status-piece", "aria-hidden": "true" });
      pieceShape(piece, svg, 26);
      status.prepend(svg);
    }
  }
  document.title = `${text} · c4lab`;
}

function renderOverlays() {
  const room = R.state;
  const tokens = moveTokens(room.position);
  const { boards } = replay(geometryOf(room), tokens);
  const n = tokens.length;
  let last = [];
  if (n > room.start_ply || n > 0) {
    const before = boards[n - 1] || {};
    last = Object.keys(boards[n] || {}).filter((name) => !before[name]);
  }
  let hint = null;
  if (R.hint && R.hint.position === room.position && room.status === "playing") {
    const token = R.hint.token;
    const col = LETTERS.indexOf(token[0]);
    const row = landingRow(geometryOf(room), room.cells, col);
    if (row !== null) {
      hint = { token, col, row, owner: room.to_move, banCol: null, banRow: null };
      if (token.length === 3) {
        const banCol = LETTERS.indexOf(token[2]);
        const after = { ...room.cells, [cellName(col, row)]: room.to_move };
        hint.banCol = banCol;
        hint.banRow = landingRow(geometryOf(room), after, banCol);
      }
    }
  }
  let banTargets = null;
  if (R.pending) {
    banTargets = room.legal_moves.filter((m) => m[0] === R.pending.letter && m.length === 3).map((m) => LETTERS.indexOf(m[2]));
  }
  R.board.setOverlays({ last, winLine: room.win_line || [], hint, pending: R.pending, banTargets });
}

function renderPreview() {
  const room = R.state;
  if (!room) return;
  const col = R.cursor ?? R.hover;
  let owner = null;
  if (R.pending) owner = "ban";
  else if (myTurn(room) && !R.awaiting) owner = room.to_move;
  let landing = null;
  if (col !== null && col !== undefined && owner) {
    const cells = R.pending ? { ...room.cells, [cellName(R.pending.col, R.pending.row)]: R.pending.owner } : room.cells;
    landing = landingRow(geometryOf(room), cells, col);
    if (landing === null) owner = null;
  }
  R.board.setPreview(col, owner, { focus: R.cursor !== null, landing });
}

function renderSeats() {
  const room = R.state;
  for (const side of ["A", "B"]) {
    const seat = room.seats[side];
    const card = $(`seat-${side}`);
    const swatch = card.querySelector(".swatch");
    if (!swatch.firstChild) drawSwatch(swatch, side);
    setText(card.querySelector(".seat-name"), seat.taken ? (seat.name || `Player ${side}`) : "free seat");
    const kind = seat.kind === "agent" ? `computer · ${seat.spec}` : seat.taken ? "person" : "nobody yet";
    setText(card.querySelector(".seat-kind"), `${COLOUR[side]} (${side}) · ${kind}`);
    const conn = card.querySelector(".seat-conn");
    if (seat.kind === "human" && seat.taken) {
      setText(conn, seat.connected ? "online" : "away");
      conn.dataset.state = seat.connected ? "online" : "away";
    } else {
      setText(conn, "");
      conn.dataset.state = "";
    }
    const badge = card.querySelector(".seat-badge");
    const thinking = room.thinking === side && room.status === "playing";
    setText(badge, thinking ? "thinking…" : R.you.includes(side) ? "you" : room.status === "over" && room.result === side ? "winner" : "");
    badge.dataset.kind = thinking ? "thinking" : R.you.includes(side) ? "you" : room.result === side ? "winner" : "";
    card.classList.toggle("turn", room.status === "playing" && room.to_move === side);
    card.classList.toggle("winner", room.status === "over" && room.result === side);
    card.dataset.connected = seat.connected ? "1" : "0";
    card.dataset.taken = seat.taken ? "1" : "0";
  }
}

function renderEval() {
  const room = R.state;
  let value = null;
  let stale = false;
  if (room.status === "over") {
    value = room.result === "A" ? 1 : room.result === "B" ? -1 : room.result === "draw" ? 0 : null;
  } else if (R.evaluation) {
    value = R.evaluation.value;
    stale = R.evaluation.position !== room.position;
  }
  const bar = $("evalbar");
  const fill = $("eval-fill");
  const label = $("eval-label");
  bar.classList.toggle("stale", stale);
  bar.classList.toggle("empty", value === null);
  if (value === null) {
    fill.style.width = "50%";
    bar.setAttribute("aria-valuenow", "0");
    bar.dataset.value = "";
    setText(label, room.mode === "local" ? "No evaluation yet: ask for a hint" : "No evaluation");
    return;
  }
  const v = Math.max(-1, Math.min(1, value));
  fill.style.width = `${((v + 1) / 2) * 100}%`;
  bar.setAttribute("aria-valuenow", v.toFixed(2));
  bar.dataset.value = v.toFixed(2);
  let words;
  if (room.status === "over") words = room.result === "draw" ? "Draw" : `${COLOUR[room.result]} won`;
  else if (Math.abs(v) < 0.08) words = "About even";
  else {
    const who = v > 0 ? "White" : "Black";
    words = Math.abs(v) > 0.9 ? `${who} is winning` : Math.abs(v) > 0.4 ? `${who} is clearly better` : `${who} is better`;
  }
  setText(label, `${words} (${v > 0 ? "+" : ""}${v.toFixed(2)})${stale ? " · before the last move" : ""}`);
}

function renderControls() {
  const room = R.state;
  const local = room.mode === "local";
  const tokens = moveTokens(room.position);
  $("undo").hidden = !local;
  $("hint").hidden = !local;
  $("undo").disabled = !R.you.length || tokens.length <= room.start_ply ||
    !tokens.some((_, ply) => ply >= room.start_ply && room.seats[ply % 2 === 0 ? "A" : "B"].kind === "human");
  $("hint").disabled = room.status !== "playing" || R.hintWaiting;
  setText($("hint").querySelector(".label"), R.hintWaiting ? "Thinking…" : "Hint");
  const resign = $("resign");
  resign.hidden = !R.you.length || room.status !== "playing";
  resign.disabled = room.status !== "playing";
  if (!R.resignArmed) resign.classList.remove("armed");
  const rematch = $("rematch");
  rematch.hidden = room.status !== "over";
  const params = new URLSearchParams({ board: positionHeader(room.position), mode: room.mode });
  if (local) {
    params.set("p1", room.seats.A.kind === "agent" ? room.seats.A.spec : "human");
    params.set("p2", room.seats.B.kind === "agent" ? room.seats.B.spec : "human");
  }
  rematch.href = `/?${params}`;
}

function renderPanels() {
  const room = R.state;
  const online = room.mode === "online";
  const share = $("share-panel");
  share.hidden = !online;
  $("share-link").value = `${location.origin}/r/${R.code}`;
  setText($("share-text"), room.status === "waiting" && R.you.length
    ? "Send this link to your opponent: the first to open it takes the free seat. Anyone else watches."
    : "Anyone who opens this link watches the game.");
  const free = ["A", "B"].filter((s) => !room.seats[s].taken);
  const join = $("join-panel");
  const canJoin = online && !R.you.length && !R.token && !R.watching && free.length > 0 && room.status !== "over";
  join.hidden = !canJoin;
  if (canJoin) {
    const host = ["A", "B"].find((s) => room.seats[s].taken);
    const side = free[0];
    const who = host ? `${room.seats[host].name || "Your host"} (${COLOUR[host].toLowerCase()})` : "Nobody";
    setText($("join-text"), `${who} is waiting for an opponent. Take seat ${side} (${COLOUR[side].toLowerCase()}, ` +
      `${side === "A" ? "moves first" : "moves second"}) to play, or just watch.`);
    setText($("join-seat"), `Take seat ${side}`);
  }
  $("view-room").classList.toggle("aside-first", canJoin || (room.status === "waiting" && R.you.length > 0));
  const watching = !R.you.length && !canJoin;
  document.body.classList.toggle("watching", watching);
  $("board").dataset.role = R.you.length ? "player" : "spectator";
}

// ---------------------------------------------------------------- finished games

async function showGames() {
  show("view-games");
  document.title = "c4lab: finished games";
  let games = [];
  try {
    games = await api("GET", "/api/games");
  } catch (err) {
    setText($("games-error"), `The list of games is not available: ${err.message}`);
    return;
  }
  const body = $("games-list");
  body.replaceChildren();
  $("games-empty").hidden = games.length > 0;
  $("games-table").hidden = games.length === 0;
  for (const game of games) {
    const tr = document.createElement("tr");
    tr.dataset.code = game.code;
    const cells = [
      `${game.names.A || "?"} vs ${game.names.B || "?"}`,
      resultText({ result: game.result, reason: game.reason, seats: { A: { taken: true, name: game.names.A }, B: { taken: true, name: game.names.B } } }),
      positionHeader(game.position),
      String(moveTokens(game.position).length),
      game.finished ? new Date(game.finished * 1000).toLocaleString() : "",
    ];
    const labels = ["Players", "Result", "Board", "Moves", "Finished"];
    for (const [i, value] of cells.entries()) {
      const td = document.createElement("td");
      td.dataset.label = labels[i];
      setText(td, value);
      tr.appendChild(td);
    }
    const td = document.createElement("td");
    const a = document.createElement("a");
    a.href = `/games/${encodeURIComponent(game.code)}`;
    a.className = "button quiet replay-link";
    setText(a, "Replay");
    td.appendChild(a);
    tr.appendChild(td);
    body.appendChild(tr);
  }
}

async function showReplay(code) {
  show("view-replay");
  document.title = "c4lab: replay";
  let game;
  try {
    game = await api("GET", `/api/games/${encodeURIComponent(code)}`);
  } catch (err) {
    if (err.status === 404) {
      show("view-missing");
      setText($("missing-text"), `There is no game ${code}.`);
    } else {
      setText($("replay-error"), `The game could not be loaded: ${err.message}`);
    }
    return;
  }
  const geometry = geometryOf(game);
  const tokens = moveTokens(game.position);
  const { boards, order } = replay(geometry, tokens);
  const header = positionHeader(game.position);
  const board = new Board($("replay-board"));
  board.setup(geometry);
  setText($("replay-title"), `${header} · ${tokens.length} moves`);
  const slider = $("replay-slider");
  slider.max = String(tokens.length);
  slider.addEventListener("input", () => go(Number(slider.value), false));
  setText($("replay-names"), `White (A): ${game.seats.A.name || "?"} · Black (B): ${game.seats.B.name || "?"}`);
  setText($("replay-result"), game.status === "over" ? resultText(game) : "This game is still going on.");
  let ply = -1;

  function go(target, animate) {
    const next = Math.max(0, Math.min(tokens.length, target));
    const forward = next === ply + 1;
    ply = next;
    board.setCells(boards[ply], { animate: animate && forward, order });
    const before = boards[ply - 1] || {};
    const last = ply ? Object.keys(boards[ply]).filter((n) => !before[n]) : [];
    const end = ply === tokens.length;
    board.setOverlays({ last, winLine: end ? game.win_line || [] : [] });
    const position = ply ? `${header}:${tokens.slice(0, ply).join("")}` : header;
    $("replay-position").value = position;
    $("replay-from-here").href = `/?board=${encodeURIComponent(position)}`;
    $("replay-board").dataset.ply = String(ply);
    $("replay-board").dataset.position = position;
    setText($("replay-ply"), `${ply} / ${tokens.length}`);
    $("replay-slider").value = String(ply);
    let status;
    if (ply === 0) status = "Start position";
    else {
      const side = (ply - 1) % 2 === 0 ? "A" : "B";
      const token = tokens[ply - 1];
      status = `Move ${ply}: ${COLOUR[side]} plays ${token[0]}${token.length === 3 ? `, ban in ${token[2]}` : ""}`;
    }
    if (end && game.status === "over") status += ` · ${resultText(game)}`;
    setText($("replay-status"), status);
    $("replay-first").disabled = ply === 0;
    $("replay-prev").disabled = ply === 0;
    $("replay-next").disabled = end;
    $("replay-last").disabled = end;
    renderMoves($("replay-moves"), tokens, { startPly: game.start_ply, current: ply, onPick: (p) => go(p, false) });
  }

  $("replay-first").addEventListener("click", () => go(0, false));
  $("replay-prev").addEventListener("click", () => go(ply - 1, false));
  $("replay-next").addEventListener("click", () => go(ply + 1, true));
  $("replay-last").addEventListener("click", () => go(tokens.length, false));
  $("replay-copy").addEventListener("click", () => copyText($("replay-position").value, "Position"));
  document.addEventListener("keydown", (event) => {
    if (event.target.closest && event.target.closest("input, textarea, select")) return;
    const moves = { ArrowLeft: ply - 1, ArrowRight: ply + 1, Home: 0, End: tokens.length };
    if (event.key in moves) {
      event.preventDefault();
      go(moves[event.key], event.key === "ArrowRight");
    }
  });
  go(tokens.length, false);
}

// ---------------------------------------------------------------- routing

function route() {
  const path = location.pathname.replace(/\/+$/, "") || "/";
  let match;
  if (path === "/") return showHome();
  if ((match = path.match(/^\/r\/([^/]+)$/))) return showRoom(decodeURIComponent(match[1]));
  if (path === "/games") return showGames();
  if ((match = path.match(/^\/games\/([^/]+)$/))) return showReplay(decodeURIComponent(match[1]));
  show("view-missing");
  return null;
}

// for the browser tests and for curious people
window.c4lab = { R, get ws() { return R.ws; } };

route();
