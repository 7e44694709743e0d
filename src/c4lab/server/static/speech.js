// What a screen reader hears of the room's board, which draws in SVG and
// shows nothing in words: the move just played (each one, an agent's too,
// and a move taken back), and the column under the keyboard's cursor (its
// pieces, where the next piece would land, its score when one is shown
// above it). Said in #announce, a polite live region seen by nobody else.
//
// May import: state.js, describe.js, notation.js, util.js.
//
// Everything that comes from the server or from a person is inserted with
// textContent or setAttribute, never as HTML.

import { R, jumpWait, myTurn } from "./state.js";
import { SIDE, endedOnBoard, geometryOf, moveWords } from "./describe.js";
import { LETTERS, cellName, landingRow, moveTokens, replay } from "./notation.js";
import { $, setText } from "./util.js";

const OWNER_WORDS = { ban: "ban piece" };

function announce(text) {
  setText($("announce"), text);
}

let heard = null; // the position last said (null: none yet)
let heardGame = 0; // how many earlier games the room had then (a rematch adds one)
let settling = null; // the timer that says the moves once the states stop coming
// Milliseconds in which states that follow each other (an agent's reply, a
// jump along the analysis board's line: one undo a state) are said as one.
const SETTLE = 150;

/** A state was shown: say the moves that led to it from the one said
 * before (a move, a few agent moves, moves taken back), once the states
 * stop coming for a moment, or a jump along the line lands: a jump of ten
 * moves is "10 moves taken back", not ten times "One move taken back" with
 * the status between. A rematch's new game is no move taken back (its own message
 * says it). */
export function noteMoves(room) {
  const game = (room.earlier || []).length;
  if (heard === null || game !== heardGame) {
    clearTimeout(settling);
    settling = null;
    heard = room.position;
    heardGame = game;
    return;
  }
  clearTimeout(settling);
  // a jump along the line is said where it lands: its states may come further apart than SETTLE
  settling = setTimeout(() => {
    settling = null;
    if (R.state) sayChange(R.state);
  }, Math.max(SETTLE, jumpWait(room)));
}

function sayChange(room) {
  const before = heard;
  heard = room.position;
  if ((room.earlier || []).length !== heardGame || before === room.position) return;
  const old = moveTokens(before);
  const now = moveTokens(room.position);
  let kept = 0;
  while (kept < old.length && kept < now.length && old[kept] === now[kept]) kept++;
  const said = [];
  const back = old.length - kept;
  if (back > 0) said.push(`${back === 1 ? "One move" : `${back} moves`} taken back.`);
  if (now.length > kept) {
    const { boards } = replay(geometryOf(room), now);
    const played = [];
    for (let ply = kept; ply < now.length; ply++) {
      played.push(`${SIDE[ply % 2 === 0 ? "A" : "B"]} played ${moveWords(geometryOf(room), boards, now, ply, endedOnBoard(room))}.`);
    }
    said.push(...played.slice(-4));
  }
  announce(said.join(" "));
}

/** Say what column `col` holds on the board as shown (a viewed earlier
 * position too), where a piece would land there now, and its score. */
export function describeColumn(col) {
  const room = R.state;
  if (!room || col === null || col === undefined || !R.board.geometry) return;
  const geometry = geometryOf(room);
  const letter = LETTERS[col];
  const parts = [];
  for (let row = 1; row <= room.height; row++) {
    const name = cellName(col, row);
    if (geometry.forbidden.includes(name)) parts.push(`${name} forbidden`);
    else if (R.board.drawn[name]) parts.push(`${name} ${OWNER_WORDS[R.board.drawn[name]] || SIDE[R.board.drawn[name]]}`);
    else if (name === geometry.bonus) parts.push(`${name} bonus cell`);
  }
  let text = `Column ${letter}: ${parts.length ? parts.join(", ") : "empty"}`;
  const pending = R.pending ? { [cellName(R.pending.col, R.pending.row)]: R.pending.owner } : {};
  const landing = landingRow(geometry, { ...R.board.drawn, ...pending }, col);
  if (landing === null) text += "; full";
  else if (R.view === null && (myTurn(room) || R.pending)) text += `; ${R.pending ? "the ban piece" : "your piece"} lands on ${cellName(col, landing)}`;
  const note = R.board.svg.querySelector(`.col-note[data-note="${letter}"]`);
  if (note) {
    const title = note.querySelector("title");
    text += `; score ${title ? title.textContent.replace(/^\w+: /, "") : note.dataset.score}${note.dataset.best === "1" ? ", best" : ""}`;
  }
  announce(`${text}.`);
}
