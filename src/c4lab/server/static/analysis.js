// Analysis on the room page: the hint (asking the server's engine for a
// move, saying it, the ghost piece it draws and every column's score), the
// evaluation bar, and the review after the game (asked of the server, drawn
// by review.js).
//
// May import: state.js, client.js (send), history.js, review.js,
// describe.js, notation.js, util.js.
// Never a view: the room page passes render / renderControls in.
//
// Everything that comes from the server or from a person is inserted with
// textContent or setAttribute, never as HTML.

import { R } from "./state.js";
import { send } from "./client.js";
import { COLOUR, geometryOf } from "./describe.js";
import { LETTERS, cellName, landingRow, moveTokens, replay } from "./notation.js";
import { goTo } from "./history.js";
import { bestMoveGhost, columnNote, markMoves, renderReview, reviewNotes } from "./review.js";
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
  R.hint = {
    token: message.move, position: R.state.position, evaluation: message.evaluation,
    columns: message.columns || [], best: message.best || [],
  };
  if (typeof message.evaluation === "number") R.evaluation = { value: message.evaluation, position: R.state.position };
  const token = message.move;
  let words = `Hint: drop in column ${token[0]}`;
  const landing = landingRow(geometryOf(R.state), R.state.cells, LETTERS.indexOf(token[0]));
  if (token.length === 3) words += ` and put the ban piece in column ${token[2]}`;
  else if (R.state.bonus && landing !== null && cellName(LETTERS.indexOf(token[0]), landing) === R.state.bonus) {
    words += " and decline the ban";
  }
  const exact = R.hint.columns.length && R.hint.columns.every((c) => c.exact);
  const key = exact
    ? "Above each column: its exact score (+ a win, the larger the sooner; 0 a draw; \u2212 a loss)"
    : "Above each column: its exact score where the solver answered in time, else the engine's estimate (%)";
  say(`${words}. ${key}.`, "hint");
  render();
}

/** A state from the server was applied: keep its evaluation, if it has
 * one (shown stale after the next move, until another comes). */
export function noteState(room) {
  if (room.evaluation !== null && room.evaluation !== undefined) {
    R.evaluation = { value: room.evaluation, position: room.position };
  }
}

/** An error answered the page: a hint or review it waited for will not
 * come (true if one was awaited). */
export function refused() {
  const waited = R.hintWaiting || R.reviewWaiting;
  R.hintWaiting = false;
  R.reviewWaiting = false;
  return waited;
}

/** The labels above the columns: the hint's scores while the hint stands,
 * the review's for a viewed position ([] for none). */
export function columnNotes(room) {
  if (R.view !== null) return reviewNotes(R.review && R.review.position === room.position ? R.review : null, R.view);
  if (!R.hint || R.hint.position !== room.position || room.status !== "playing") return [];
  return R.hint.columns.map((c) => columnNote(c.column, {
    score: c.exact ? c.score : null, estimate: c.estimate, best: R.hint.best.includes(c.column),
  }));
}

/** The Review button: ask the server for the exact verdict on every move. */
export function askReview(renderControls) {
  if (R.reviewWaiting) return;
  if (R.review && R.review.position === R.state.position) {
    $("review-panel").hidden = false;
    $("review-panel").scrollIntoView({ block: "nearest" });
    return;
  }
  if (send({ type: "review" })) {
    R.reviewWaiting = true;
    say("Reviewing the game with the exact solver\u2026", "info");
    renderControls();
  }
}

/** A "review" message from the server. */
export function onReview(message, render) {
  R.reviewWaiting = false;
  if (!R.state || message.position !== R.state.position) {
    render();
    return;
  }
  R.review = message;
  const blunders = message.entries.filter((e) => e.verdict === "blunder").length;
  say(`Review ready: ${blunders} blunder${blunders === 1 ? "" : "s"}. Click a move to see the position it was played from, with every column's score.`, "info");
  render();
  const panel = $("review-panel");
  if (panel.scrollIntoView && window.innerWidth <= 900) panel.scrollIntoView({ block: "nearest" });
}

/** The review panel of the room page, and the verdicts in the move list. */
export function renderRoomReview() {
  const room = R.state;
  const review = R.review && R.review.position === room.position ? R.review : null;
  $("review-panel").hidden = !review;
  markMoves($("moves"), review);
  if (!review) return;
  renderReview({ summary: $("review-summary"), list: $("review-list"), at: $("review-at") }, review, {
    current: R.view,
    onPick: (ply) => {
      goTo(ply);
      // on a narrow screen the board is above the panel: bring it into view
      const board = $("board");
      if (window.innerWidth <= 900 && board.scrollIntoView) board.scrollIntoView({ block: "nearest" });
    },
  });
}

/** The review's best move from the viewed position, as a ghost piece
 * (Board.setOverlays' hint); null live or without a review. */
export function reviewGhost(room) {
  if (R.view === null || !R.review || R.review.position !== room.position) return null;
  const geometry = geometryOf(room);
  const { boards } = replay(geometry, moveTokens(room.position).slice(0, R.view));
  return bestMoveGhost(R.review, R.view, geometry, boards[R.view]);
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
    const who = v > 0 ? COLOUR.A : COLOUR.B;
    words = Math.abs(v) > 0.9 ? `${who} is winning` : Math.abs(v) > 0.4 ? `${who} is clearly better` : `${who} is better`;
  }
  setText(label, `${words} (${v > 0 ? "+" : ""}${v.toFixed(2)})${stale ? " · before the last move" : ""}`);
}
