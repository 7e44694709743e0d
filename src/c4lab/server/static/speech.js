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

import { R, myTurn } from "./state.js";
import { COLOUR, geometryOf } from "./describe.js";
import { LETTERS, cellName, landingRow, moveTokens, replay } from "./notation.js";
import { $, setText } from "./util.js";

const OWNER_WORDS = { ban: "ban piece" };

function announce(text) {
  setText($("announce"), text);
}

let heard = null; // the position last said (null: none yet)
let heardGame = 0; // how many earlier games the room had then (a rematch adds one)

/** A state was shown: say the moves that led to it from the one said
 * before (a move, a few agent moves, a move taken back); a rematch's new
 * game is no move taken back (its own message says it). */
export function noteMoves(room) {
  const before = heard;
  const game = (room.earlier || []).length;
  const sameGame = game === heardGame;
  heard = room.position;
  heardGame = game;
  if (before === null || before === room.position || !sameGame) return;
  const old = moveTokens(before);
  const now = moveTokens(room.position);
  const same = (k) => old.slice(0, k).every((t, i) => t === now[i]);
  if (now.length > old.length && same(old.length)) {
    const { boards } = replay(geometryOf(room), now);
    const said = [];
    for (let ply = old.length; ply < now.length; ply++) {
      const token = now[ply];
      const landed = Object.keys(boards[ply + 1]).filter((name) => !boards[ply][name] && boards[ply + 1][name] !== "ban");
      const ban = token.length === 3 ? `, ban piece in column ${token[2]}` : "";
      said.push(`${COLOUR[ply % 2 === 0 ? "A" : "B"]} played ${token[0]}${landed.length ? ` (${landed[0]})` : ""}${ban}.`);
    }
    announce(said.slice(-4).join(" "));
  } else if (now.length < old.length && same(now.length)) {
    const back = old.length - now.length;
    announce(`${back === 1 ? "One move" : `${back} moves`} taken back.`);
  }
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
    else if (R.board.drawn[name]) parts.push(`${name} ${OWNER_WORDS[R.board.drawn[name]] || COLOUR[R.board.drawn[name]].toLowerCase()}`);
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
