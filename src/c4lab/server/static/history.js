// Stepping through the room's game without leaving it: back, forward, a
// move of the list, Home and End. R.view is null while the board shows the
// live game, else the number of moves shown (0: the start). The game goes
// on meanwhile: new states keep coming (state.js leaves the board alone
// while R.view is set) and the bar above the board says how far the live
// game is; "Back to the game", a click on the board or End come back.
//
// May import: state.js, describe.js, notation.js, review.js (its word on the
// move played from the position shown), util.js. The room page
// gives its redraw function (bindHistory) so that nothing imports a view.
//
// Everything that comes from the server or from a person is inserted with
// textContent or setAttribute, never as HTML.

import { R, showPly } from "./state.js";
import { SIDE, endedOnBoard, geometryOf, moveWords } from "./describe.js";
import { moveTokens, replay } from "./notation.js";
import { reviewBrief } from "./review.js";
import { $, setLive } from "./util.js";

let redraw = () => {};

/** The room page's redraw, called after a step. */
export function bindHistory(render) {
  redraw = render;
}

function liveLength(room = R.state) {
  return room ? moveTokens(room.position).length : 0;
}

/** The number of moves on the board now (viewed or live). */
export function shownPly() {
  return R.view === null ? liveLength() : R.view;
}

/** Show the position after `ply` moves (clamped; the last one is the live
 * game). True if the board changed. */
export function viewPly(ply) {
  const room = R.state;
  if (!room) return false;
  const tokens = moveTokens(room.position);
  const n = tokens.length;
  let next = Math.max(0, Math.min(n, ply));
  const from = shownPly();
  if (next === n) next = null;
  if (next === R.view) return false;
  if (R.view === null) R.viewSince = n;
  showPly(next);
  const { boards, order } = replay(geometryOf(room), tokens);
  const target = next === null ? n : next;
  R.board.setCells(next === null ? room.cells : boards[next], { animate: target === from + 1, order });
  return true;
}

/** Step to `ply` and redraw. */
export function goTo(ply) {
  if (viewPly(ply)) redraw();
}

export function stepBy(delta) {
  goTo(shownPly() + delta);
}

export function goLive() {
  goTo(Infinity);
}

/** The overlays of a viewed position (the last move, nothing live). */
export function viewOverlays(room) {
  const tokens = moveTokens(room.position);
  const { boards } = replay(geometryOf(room), tokens.slice(0, R.view));
  const k = R.view;
  const before = boards[k - 1] || {};
  const last = k ? Object.keys(boards[k]).filter((name) => !before[name]) : [];
  return { last, winLine: [], hint: null, pending: null, banTargets: null };
}

/** The bar above the board, the step buttons and the board's marks. */
export function renderHistory() {
  const room = R.state;
  const tokens = moveTokens(room.position);
  const n = tokens.length;
  const k = shownPly();
  const viewing = R.view !== null;
  const board = $("board");
  board.classList.toggle("viewing", viewing);
  if (viewing) {
    board.dataset.view = String(k);
    board.dataset.viewPosition = k ? `${room.position.split(":")[0]}:${tokens.slice(0, k).join("")}` : room.position.split(":")[0];
  } else {
    delete board.dataset.view;
    delete board.dataset.viewPosition;
  }
  $("history-bar").hidden = !viewing;
  $("step-back").disabled = k === 0;
  $("step-forward").disabled = !viewing;
  if (!viewing) return;
  let what = "the start position";
  if (k > 0) {
    const { boards } = replay(geometryOf(room), tokens.slice(0, k));
    what = `${SIDE[k % 2 === 1 ? "A" : "B"]} played ${moveWords(geometryOf(room), boards, tokens, k - 1, endedOnBoard(room))}`;
  }
  const moved = n > R.viewSince;
  const review = R.review && R.review.position === room.position ? R.review : null;
  // with a review, the verdict on the move played from here (a review row tapped on a phone: its line in the
  // panel lies below the screen), else what was played to get here
  const text = (reviewBrief(review, k) || `Viewing move ${k} of ${n}: ${what}.`)
    + (moved ? " The game went on meanwhile." : "");
  setLive($("history-text"), text);
  $("history-text").title = text;
  $("history-bar").dataset.moved = moved ? "1" : "";
  $("back-to-live").classList.toggle("primary", moved);
}
