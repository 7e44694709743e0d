// Analysis on the room page: the hint (asking the server's engine for a
// move, saying it, and the ghost piece it draws) and the evaluation bar.
// A post-game review will live here too.
//
// May import: state.js, client.js (send), describe.js, notation.js, util.js.
// Never a view: the room page passes render / renderControls in.
//
// Everything that comes from the server or from a person is inserted with
// textContent or setAttribute, never as HTML.

import { R } from "./state.js";
import { send } from "./client.js";
import { COLOUR, geometryOf } from "./describe.js";
import { LETTERS, cellName, landingRow } from "./notation.js";
import { $, say, setText } from "./util.js";

/** The Hint button: ask the server (one question at a time). */
export function askHint(renderControls) {
  if (R.hintWaiting) return;
  if (send({ type: "hint" })) {
    R.hintWaiting = true;
    say("Looking for a good move…", "info");
    renderControls();
  }
}

/** A "hint" message from the server: keep it, say it, redraw. */
export function onHint(message, render) {
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

/** The hint's ghost pieces for Board.setOverlays (null: no hint to show). */
export function hintOverlay(room) {
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
  return hint;
}

/** The evaluation bar: the last evaluation known (stale after a move), or
 * the result once the game is over. */
export function renderEval() {
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
