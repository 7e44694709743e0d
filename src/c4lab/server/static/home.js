// The home page (/): the new-game form (board choice with the forbidden-cell
// picker, the player picker filled from /api/agents, who moves first, online
// seat and listing), prefilled from the address, and the list of this
// browser's recent games.
//
// May import: util.js, settings.js, describe.js, miniboard.js, notation.js.
// Only app.js imports it.
//
// Everything that comes from the server or from a person is inserted with
// textContent or setAttribute, never as HTML.

import { miniBoard } from "./miniboard.js";
import { SIDE, onColourChange, positionHeader, resultText } from "./describe.js";
import {
  focusBoardOnArrival, recentRooms, saveAnalysing, saveDrawn, saveMode, saveName, savePlayers, saveTicket, savedMode, savedName,
  savedPlayers, tokenFor, watchFromStart,
} from "./settings.js";
import { LETTERS, parseCell, positionParam } from "./notation.js";
import { $, api, setText, show } from "./util.js";

/** The picker's groups, in order: [group key of /api/agents, label]. */
const PICKER_GROUPS = [
  ["level", "Levels (weakest first)"],
  ["agent", "Game-AI agents"],
  ["experimental", "Experimental"],
];

/** The forbidden cell the form proposes for a chosen size: on every board
 * (both sides have 4 to 12 cells), the one of RULES.md's example 9x8/Xd3. */
const PROPOSED_FORBIDDEN = "d3";

/** Whether the cell named `name` ("d3") is on a `width` x `height` board;
 * null for a name that is no cell ("d", "3d": the server says why). */
function onBoard(name, width, height) {
  if (!/^[a-z][0-9]+$/.test(name)) return null;
  const { col, row } = parseCell(name);
  return col >= 0 && col < width && row >= 1 && row <= height;
}

export async function showHome() {
  show("view-home");
  document.title = "c4lab: new game";
  const params = new URLSearchParams(location.search);
  const form = $("new-game-form");
  // Start waits for the list of computer players (and the form's own handler, bound once it is in):
  // pressed before, the browser sent the form itself: the page loaded again and no game started
  $("start").disabled = true;
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
  $("forbidden").value = PROPOSED_FORBIDDEN;
  $("name").value = savedName();

  const boardChoice = () => form.querySelector("input[name=board]:checked").value;
  const modeChoice = () => form.querySelector("input[name=mode]:checked").value;

  function forbiddenCell() {
    const text = $("forbidden").value.trim().toLowerCase(); // "D3" is the cell d3, as a person means it
    return text === "" ? null : text;
  }

  /** The forbidden cell in the field when it is a cell off the board chosen, else null. */
  function offBoard() {
    const f = forbiddenCell();
    return f !== null && onBoard(f, Number($("width").value), Number($("height").value)) === false ? f : null;
  }

  let replaced = null; // the cell the form replaced by its own (off the size chosen), until the cell is changed

  /** A size chosen that leaves the forbidden cell off the board (k10, then
   *  5 x 4): the form's own proposal instead, and a line that says so (the
   *  field kept the cell, the picture showed none, and Start was refused);
   *  the line follows the size, and a size the cell fits again brings the
   *  cell back (it said "5 × 12" on a 5 × 4 board, and k10 was lost). */
  function fitForbidden() {
    const width = Number($("width").value);
    const height = Number($("height").value);
    if (replaced !== null && forbiddenCell() === PROPOSED_FORBIDDEN && onBoard(replaced, width, height)) {
      $("forbidden").value = replaced;
      replaced = null;
    }
    const f = offBoard();
    if (f !== null) {
      $("forbidden").value = PROPOSED_FORBIDDEN;
      replaced = f;
    }
    setText($("forbidden-note"), replaced === null ? ""
      : `${replaced} is not on a ${width} × ${height} board: the forbidden cell is ${PROPOSED_FORBIDDEN} now.`);
  }

  /** A cell typed or picked: one off the board chosen is said at once, not at Start. */
  function checkForbidden() {
    replaced = null;
    const f = offBoard();
    const width = Number($("width").value);
    setText($("forbidden-note"), f === null ? ""
      : `${f} is not on a ${width} × ${$("height").value} board: columns a to ${LETTERS[width - 1]}, rows 1 to ${$("height").value}.`);
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
        checkForbidden();
        drawPicker();
      },
    });
  }

  function sync() {
    $("custom-board").hidden = boardChoice() !== "custom";
    $("paste-board").hidden = boardChoice() !== "paste";
    $("local-options").hidden = modeChoice() !== "local";
    $("analysis-options").hidden = modeChoice() !== "analysis";
    setText($("start"), modeChoice() === "analysis" ? "Open the analysis board" : "Start the game");
    $("online-options").hidden = modeChoice() !== "online";
    for (const n of [1, 2]) {
      const value = $(`player${n}`).value;
      const human = value === "human";
      $(`player${n}-options`).hidden = human;
      const agent = agents.find((a) => a.name === value);
      setText($(`player${n}-help`), human ? "a person at this screen" : agent ? agent.help + limitsText(agent) : "");
    }
    sayFirst();
    if (boardChoice() === "custom") drawPicker();
    for (const label of form.querySelectorAll(".choice")) {
      label.classList.toggle("checked", label.querySelector("input").checked);
    }
  }

  /** The line under "Who moves first": the side each player gets, named
   *  as every screen names it (player 1 and 2 are the rows above, as
   *  `c4lab play --player1 --player2` and the terminal game call them). */
  function sayFirst() {
    const first = $("first").value;
    setText($("first-help"), first === "random"
      ? `Drawn at the start: one player plays ${SIDE.A} and moves first, the other ${SIDE.B}.`
      : `Player ${first === "A" ? 1 : 2} plays ${SIDE.A} and moves first; player ${first === "A" ? 2 : 1} plays ${SIDE.B}.`);
  }
  onColourChange(sayFirst);

  /** This server's bounds on an agent's options, for its help text (a
   *  room asking for more is refused: /api/agents gives them), and the
   *  n-tuple networks (serve --network FILE) and Q-tables (--qtable FILE)
   *  it offers, for weights= and table=. */
  function limitsText(agent) {
    const limits = agent.limits || {};
    const parts = [];
    if (limits.time !== undefined) parts.push(`${limits.time} s a move`);
    if (limits.iterations !== undefined) parts.push(`${limits.iterations.toLocaleString("en")} iterations`);
    if (limits.depth !== undefined) parts.push(`depth ${limits.depth}`);
    const bounds = parts.length ? ` (This server allows at most ${parts.join(", ")}.)` : "";
    const networks = (agent.networks || []).map((n) => `weights=${n.name} (${n.board})`);
    const tables = (agent.tables || []).map((t) => `table=${t.name} (${t.board})`);
    return bounds + (networks.length ? ` Networks on this server, as options: ${networks.join(", ")}.` : "")
      + (tables.length ? ` Q-tables on this server, as options: ${tables.join(", ")}.` : "");
  }

  let agents = [];
  for (const n of [1, 2]) {
    const select = $(`player${n}`);
    const people = document.createElement("optgroup");
    people.label = "People";
    people.dataset.group = "people";
    const human = document.createElement("option");
    human.value = "human";
    setText(human, "Human (at this screen)");
    people.appendChild(human);
    select.appendChild(people);
  }
  form.addEventListener("change", sync);
  // a player chosen before the list of computer players comes stays chosen (it was set back to the default)
  const chosen = new Set();
  for (const n of [1, 2]) {
    for (const id of [`player${n}`, `player${n}-options`]) $(id).addEventListener("input", () => chosen.add(n));
  }
  $("forbidden").addEventListener("input", () => {
    checkForbidden();
    if (boardChoice() === "custom") drawPicker();
  });
  // before the form's own listener (sync) draws the picture of the new size
  for (const id of ["width", "height"]) $(id).addEventListener("change", fitForbidden);

  // prefill from the address: /?board=...&bonus=1&mode=online&p1=human&p2=master&first=B&seat=A
  const board = positionParam(location.search, "board");
  if (board) {
    if (board === "7x6") $("board-classic").checked = true;
    else if (board === "random") $("board-random").checked = true;
    else {
      $("board-paste").checked = true;
      $("paste-position").value = board;
    }
  }
  if (params.get("bonus") === "1") $("bonus").checked = true;
  // the mode the address names, else the one last started here (a person back from an online game wants Online again)
  const mode = params.get("mode") || savedMode();
  if (["local", "online", "analysis"].includes(mode)) $(`mode-${mode}`).checked = true;
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
  // The server lists them in the picker's order: levels weakest first,
  // then the research agents, then the experimental ones.
  for (const n of [1, 2]) {
    const select = $(`player${n}`);
    for (const [key, label] of PICKER_GROUPS) {
      const members = agents.filter((a) => (a.group || "experimental") === key);
      if (!members.length) continue;
      const group = document.createElement("optgroup");
      group.label = label;
      group.dataset.group = key;
      for (const agent of members) {
        const option = document.createElement("option");
        option.value = agent.name;
        setText(option, `${agent.name} - ${agent.summary || agent.help}`);
        option.title = agent.help;
        group.appendChild(option);
      }
      select.appendChild(group);
    }
  }
  const names = agents.map((a) => a.name);
  const defaults = { 1: "human", 2: names.includes("hard") ? "hard" : names[0] || "human" };
  const kept = savedPlayers(); // the last game's players, unless the address names others
  for (const n of [1, 2]) {
    if (chosen.has(n)) continue;
    const wanted = params.get(`p${n}`) || (kept ? kept[n] : null);
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

  // how Start was last pressed: a finger (a phone) gets no focus on the board it opens, which would
  // show a piece hovering over a column; a mouse or a key does, so that the keys play at once
  let touched = false;
  form.addEventListener("pointerdown", (event) => { touched = event.pointerType === "touch"; });
  form.addEventListener("keydown", () => { touched = false; });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    setText($("form-error"), "");
    const analysis = modeChoice() === "analysis"; // a local room of two people at this screen, shown as an analysis board
    const body = { mode: analysis ? "local" : modeChoice(), bonus: $("bonus").checked };
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
    if (analysis) {
      body.players = { A: "human", B: "human" };
      body.analysis = true;
    } else if (body.mode === "local") {
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
      saveMode(modeChoice());
      if (!touched) focusBoardOnArrival(ticket.code);
      // offered again when the person comes back to the form; a refused start is no game's (its bad option was kept)
      if (body.mode === "local" && !analysis) savePlayers(body.players.A, body.players.B);
      saveTicket(ticket);
      if (analysis) saveAnalysing(ticket.code, true);
      if (choice === "random") saveDrawn(ticket.code, body.bonus);
      if (body.mode === "local" && body.players.A !== "human" && body.players.B !== "human") {
        watchFromStart(ticket.code);
      }
      location.assign(ticket.url);
    } catch (err) {
      setText($("form-error"), `The game could not start: ${err.message}`);
      button.disabled = false;
    }
  });
  $("start").disabled = false;

  showRecent();
}

/** "Your games": this browser's last rooms, read once; their colour words
 * follow a theme change at once, as the rest of the page's do. */
async function showRecent() {
  const recent = recentRooms().filter((r) => tokenFor(r.code)).slice(0, 6);
  if (!recent.length) return;
  const rooms = await Promise.all(recent.map((r) => api("GET", `/api/rooms/${encodeURIComponent(r.code)}`).catch(() => null)));
  drawRecent(rooms);
  onColourChange(() => drawRecent(rooms));
}

function drawRecent(rooms) {
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
    const state = room.status === "over" ? resultText(room) : room.status === "waiting" ? "waiting for a player" : `${SIDE[room.to_move]} to move`;
    setText(meta, ` · ${positionHeader(room.position)} · ${room.mode} · ${state}`);
    li.append(a, meta);
    list.appendChild(li);
  });
  $("recent-panel").hidden = !list.children.length;
}
