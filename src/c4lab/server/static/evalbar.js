// The evaluation bar of the room page: who is better, from the last
// evaluation known (an agent's move's, from the room's state, or a hint's),
// stale after a move, or the result once the game is over. The last one is
// kept for the room in this tab (settings.js, sessionStorage) and shown
// again after a reload while its position is on the board: the server
// keeps a hint's score for nobody (a room leaves its memory when its last
// page goes; the next page got "No evaluation yet: ask for a hint").
//
// May import: state.js, describe.js, settings.js, util.js.
//
// Everything that comes from the server or from a person is inserted with
// textContent or setAttribute, never as HTML.

import { R } from "./state.js";
import { SIDE } from "./describe.js";
import { saveEvaluation, savedEvaluation } from "./settings.js";
import { $, setText } from "./util.js";

/** `value` (-1..1 for A) is the evaluation of `position` (`exact`: the
 * result with best play, every column solved): shown on the bar, and kept
 * for this room in this tab. */
export function keepEvaluation(value, position, exact = false) {
  R.evaluation = { value, position, exact };
  saveEvaluation(R.code, R.evaluation);
}

/** A state from the server was applied: keep its evaluation, if it has
 * one (shown stale after the next move, until another comes); a page
 * that has none yet (just loaded) takes the one this tab kept for the
 * position on the board. */
export function noteState(room) {
  if (typeof room.evaluation === "number") {
    keepEvaluation(room.evaluation, room.position);
  } else if (!R.evaluation) {
    const kept = savedEvaluation(R.code);
    if (kept && kept.position === room.position) R.evaluation = kept;
  }
}

/** The evaluation bar: the last evaluation known (stale after a move), or
 * the result once the game is over. An exact one is said as the result,
 * without a number: beside the column scores (+5, -1, for the side to
 * move) its +1.00 for A read as one more score. */
export function renderEval() {
  const room = R.state;
  let value = null;
  let stale = false;
  let exact = false;
  // a hint that stands for the position on the board (one asked before, back after an undo) says more
  // than an evaluation of another position: the bar said "about even · before the last move" beside
  // the exact scores of the columns
  const hint = R.hint && R.hint.position === room.position && typeof R.hint.evaluation === "number" ? R.hint : null;
  if (room.status === "over") {
    value = room.result === "A" ? 1 : room.result === "B" ? -1 : room.result === "draw" ? 0 : null;
    exact = true;
  } else if (hint && (!R.evaluation || R.evaluation.position !== room.position)) {
    value = hint.evaluation;
    exact = hint.columns.length > 0 && hint.columns.every((c) => c.exact);
  } else if (R.evaluation) {
    value = R.evaluation.value;
    stale = R.evaluation.position !== room.position;
    exact = R.evaluation.exact === true;
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
    // the analysis board has no Hint button: its scores come by themselves
    setText(label, room.mode !== "local" ? "No evaluation" : R.analysing ? "No evaluation yet" : "No evaluation yet: ask for a hint");
    return;
  }
  const v = Math.max(-1, Math.min(1, value));
  fill.style.width = `${((v + 1) / 2) * 100}%`;
  bar.setAttribute("aria-valuenow", v.toFixed(2));
  bar.dataset.value = v.toFixed(2);
  let words;
  // an estimate's number: the expected score (a win 1, a draw a half) of the side it names, the one ahead
  // (it was "+0.26", 2 x 63 % - 1, which nobody could read)
  const ahead = v >= 0 ? "A" : "B";
  const expected = Math.round(((Math.abs(v) + 1) / 2) * 100);
  const even = Math.abs(v) < 0.08;
  if (room.status === "over") words = room.result === "draw" ? "Draw" : `${SIDE[room.result]} wins`;
  else if (exact) words = v > 0 ? `${SIDE.A} wins with best play` : v < 0 ? `${SIDE.B} wins with best play` : "Draw with best play";
  else if (even) words = "About even";
  else {
    const who = SIDE[ahead];
    words = Math.abs(v) > 0.9 ? `${who} is winning` : Math.abs(v) > 0.4 ? `${who} is clearly better` : `${who} is better`;
  }
  const estimate = !exact && room.status !== "over";
  const number = !estimate ? "" : even ? ` (${expected} % for ${ahead})` : ` (${expected} %)`;
  setText(label, `${words}${number}${stale ? " · before the last move" : ""}`);
  if (estimate) label.title = `${SIDE[ahead]}'s expected score in the engine's estimate: ${expected} % (a win counts 1, a draw a half)`;
  else label.removeAttribute("title");
}
