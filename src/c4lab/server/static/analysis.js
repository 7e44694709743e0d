// Analysis on the room page: the hint (asking the server's engine for a
// move, saying it, the ghost piece it draws and every column's score; its
// evaluation goes to evalbar.js), the review after the game (asked of the
// server, drawn by review.js), and the analysis board: the same hint asked
// after every move, its scores kept above the columns, the line (undo,
// redo, a move of the list) and the link that opens the position
// (/analyse?position=...).
//
// May import: state.js, client.js (send), history.js, review.js, evalbar.js,
// describe.js, notation.js, settings.js, hintwords.js, util.js.
// Never a view: the room page passes render / renderControls in.
//
// Everything that comes from the server or from a person is inserted with
// textContent or setAttribute, never as HTML.

import { R, awaitAnswer, myTurn } from "./state.js";
import { send } from "./client.js";
import { SIDE, geometryOf } from "./describe.js";
import { LETTERS, cellName, landingRow, moveTokens, replay } from "./notation.js";
import { goTo } from "./history.js";
import { banNotes, bestMoveGhost, columnNote, markMoves, readyText, renderReview, reviewNotes, scoreText } from "./review.js";
import { analysing, saveAnalysing, saveLine, savedLine } from "./settings.js";
import { banHintWords, bestBan, hintWords } from "./hintwords.js";
import { keepEvaluation } from "./evalbar.js";
import { $, boardIntoView, say, setText } from "./util.js";

/** The Hint button: ask the server (one question at a time). Pressed while
 * the computer (or the other player) is to move, the hint is for the
 * position after its move: asked once it is this page's turn
 * (:func:`wantedHint`). */
export function askHint(renderControls) {
  if (R.hintWaiting) return;
  const room = R.state;
  if (room && room.status === "playing" && (R.awaiting || !myTurn(room))) {
    // a move just sent (its answer not back yet), or the other side to move: the hint is for the next turn
    R.hintWanted = true;
    const next = R.awaiting ? SIDE[room.to_move === "A" ? "B" : "A"] : SIDE[room.to_move];
    say(`Hint: once ${next} has moved, for your next move…`, "sticky");
    renderControls();
    return;
  }
  R.hintWanted = false;
  if (send({ type: "hint" })) {
    R.hintWaiting = true;
    say("Looking for a good move…", "info");
    renderControls();
  }
}

/** The hint asked for while the other side was to move (``R.hintWanted``),
 * asked now if it is this page's turn; called after each state. */
export function wantedHint(render) {
  if (!R.hintWanted || R.hintWaiting || !R.state) return;
  if (R.state.status !== "playing") {
    R.hintWanted = false;
    say("", "info"); // the game ended: no hint to give
    return;
  }
  if (myTurn(R.state)) askHint(render);
}

/** A "hint" message from the server: keep it, say it, redraw. */
export function onHint(message, render) {
  R.hintWaiting = false;
  R.hintPreparing = null;
  if (!R.state) return;
  const position = message.position || R.state.position; // the position asked about
  const left = message.dropped === true || position !== R.state.position; // dropped: left before worked out
  if (message.dropped !== true) { // solving: the solver goes on with the columns not solved yet
    R.hint = { token: message.move, position, evaluation: message.evaluation, columns: message.columns || [],
      best: message.best || [], moves: message.moves || {}, estimates: message.estimates || {}, solving: message.solving === true };
  }
  if (typeof message.evaluation === "number") {
    const columns = message.columns || [];
    keepEvaluation(message.evaluation, position, columns.length > 0 && columns.every((c) => c.exact)); // the result, solved
  }
  if (left || R.analysing) {
    // the analysis board says nothing: its key stays under the board; a
    // hint for a position already left asks again for the one on screen
    // (the Hint button's too: the person still wants one)
    if (!R.analysing && left) R.hintWanted = true;
    autoHint();
    wantedHint(render);
    render();
    return;
  }
  const [words, short] = R.pending ? banHintWords(bestBan(R.hint, R.pending.letter)) : hintWords(message.move, R.state);
  const exact = R.hint.columns.length && R.hint.columns.every((c) => c.exact);
  const key = R.pending // the notes drawn are the ban choices' (banNotes): exact, else the estimate, else ?
    ? "While the ban piece is chosen, above each column: the score of putting it there, exact where the solver answered in time, else the engine's estimate (%)"
    : exact
      ? "Above each column: its exact score (+ a win, the larger the sooner; 0 a draw; \u2212 a loss)"
      : "Above each column: its exact score where the solver answered in time, else the engine's estimate (%)";
  say(`${words}. ${key}.`, "hint", `${short}.`);
  render();
}

/** A "preparing" message: the hint asked waits for numba to compile the
 * engine (the first start after an install): said, with the seconds so
 * far, until the hint comes. */
export function onPreparing(message, render) {
  if (!R.hintWaiting || !R.state) return;
  R.hintPreparing = Math.round(message.seconds);
  if (!R.analysing) say(`Looking for a good move\u2026 ${preparingText()}`, "info");
  render(); // the analysis board's key under the board says it
}

function preparingText() {
  return `preparing the engine, first start only \u2014 ${R.hintPreparing} s`;
}

/** An error answered the page: a hint or review it waited for will not
 * come (true if one was awaited). */
export function refused() {
  const waited = R.hintWaiting || R.reviewWaiting;
  R.hintWaiting = false;
  R.hintPreparing = null;
  R.reviewWaiting = false;
  return waited;
}

/** The labels above the columns: the hint's scores while the hint stands,
 * the review's for a viewed position ([] for none). */
export function columnNotes(room) {
  if (R.view !== null) return reviewNotes(R.review && R.review.position === room.position ? R.review : null, R.view);
  if (!R.hint || R.hint.position !== room.position || room.status !== "playing") return [];
  // a drop on the bonus cell whose ban is being chosen: each ban column's own score, not the drops'
  if (R.pending) return banChoices();
  // the analysis board: the exact score, else the estimate (a percentage, italic, dashed), large (review.css)
  return R.hint.columns.map((c) => columnNote(c.column, {
    score: c.exact ? c.score : null, estimate: c.estimate, best: R.hint.best.includes(c.column), solving: R.hint.solving,
  }));
}

/** The notes of the ban choices while the ban piece of a drop on the
 * bonus cell is chosen (``R.pending``; a hint for the position stands). */
function banChoices() {
  const notes = banNotes(R.hint.moves, R.pending.letter, R.hint.estimates, R.hint.solving);
  if (notes.some((note) => note.best)) return notes; // every choice solved: the best ones marked
  const chosen = bestBan(R.hint, R.pending.letter); // else the hint's ban, as its words name it
  return notes.map((note) => (chosen && chosen.length === 3 && LETTERS[note.col] === chosen[2] ? { ...note, best: true } : note));
}

/** What declining the ban scores, for the ban panel's text: exact, else
 * the engine's estimate, as the ban columns' notes ("" when no hint stands
 * for this position or neither is known). */
export function declineScore(room) {
  if (!R.pending || !R.hint || R.hint.position !== room.position) return "";
  const score = R.hint.moves[R.pending.letter];
  if (score !== null && score !== undefined) return ` Declining scores ${scoreText(score)}.`;
  const estimate = R.hint.estimates[R.pending.letter];
  return typeof estimate === "number" ? ` Declining: about ${Math.round(estimate * 100)}% (the engine's estimate).` : "";
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
  say(readyText(message), "info");
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
      boardIntoView($("board")); // on a narrow screen the board is above the panel
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
  const stands = R.hint && !R.analysing && R.hint.position === room.position && room.status === "playing";
  if (stands && R.pending) {
    // the drop on the bonus cell is made: the ghost is the hint's ban piece, if it names one
    const token = bestBan(R.hint, R.pending.letter);
    if (token && token.length === 3) {
      const after = { ...room.cells, [cellName(R.pending.col, R.pending.row)]: R.pending.owner };
      const col = LETTERS.indexOf(token[2]);
      const row = landingRow(geometryOf(room), after, col);
      if (row !== null) hint = { token, col, row, owner: "ban", banCol: null, banRow: null };
    }
  } else if (stands) {
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

// -- the analysis board ------------------------------------------------------------

/** The analysis board on or off in this room (the switch; the /analyse
 * link and the form's entry turn it on): kept for the room in this browser. */
export function setAnalysing(on, remember = true) {
  if (R.analysing && !on) R.hint = null; // switched off: its scores go too
  R.analysing = Boolean(on);
  if (R.code && remember) saveAnalysing(R.code, R.analysing);
  if (R.state) noteLine(R.state);
  autoHint();
}

/** A room made as an analysis board (the form's entry, /analyse), opened
 * where no choice was ever made for it (a link from another browser): the
 * switch goes on. */
export function followRoom(room) {
  if (room.analysis && !R.analysing && analysing(R.code) === null) setAnalysing(true, false);
}

/** The hint, asked by itself on the analysis board: for the position on
 * screen, when a person at this screen is to move (one question at a time;
 * an answer for a position already left asks again). */
export function autoHint() {
  const room = R.state;
  if (!R.analysing || !room || room.status !== "playing" || room.mode !== "local" || R.hintWaiting) return;
  if (Date.now() < R.jumpUntil) return; // a jump along the line under way: asked once it is sent (lineTo)
  if (room.thinking || room.seats[room.to_move].kind !== "human" || !R.you.includes(room.to_move)) return;
  if (R.hint && R.hint.position === room.position) return;
  if (send({ type: "hint", deeper: true }, { quiet: true })) R.hintWaiting = true;
}

/** Whether the step buttons and keys go along a line (undo and redo): on
 * an analysis board, people at this screen playing both sides. In a game
 * against the computer the Analysis switch only shows the scores; stepping
 * back stays a look at an earlier position that changes nothing. */
export function onLine(room = R.state) {
  return R.analysing && Boolean(room) && !Object.values(room.seats).some((seat) => seat.kind === "agent");
}

/** A state was applied: the line goes on (a new move) or keeps the moves
 * undone, for redo, while the position is still on it; a local room's line
 * is kept in the tab (settings.js), so that a reload keeps them too. */
export function noteLine(room) {
  const tokens = moveTokens(room.position);
  const local = room.mode === "local";
  if (!R.line.length && local) R.line = savedLine(room.code); // a reload: the moves undone before it
  if (!onLine(room) || tokens.length > R.line.length || tokens.some((t, i) => R.line[i] !== t)) R.line = tokens;
  if (local) saveLine(room.code, R.line);
  if (tokens.length === R.jumpTarget) [R.jumpTarget, R.jumpUntil] = [null, 0]; // the jump is there: the next may go
}

/** Along the line to the position after `ply` moves: undo (an analysis
 * board's room can take back every move), or the line's next moves played
 * again. */
export function lineTo(ply) {
  const room = R.state;
  if (!room || R.awaiting || Date.now() < R.jumpUntil) return; // a jump still under way: its moves come first
  const n = moveTokens(room.position).length;
  const target = Math.max(room.start_ply, Math.min(R.line.length, ply));
  const messages = [];
  for (let k = n; k > target; k--) messages.push({ type: "undo" });
  for (const token of R.line.slice(n, target)) messages.push({ type: "move", move: token });
  // within the server's rate limit (a burst of 40, then 20 a second), whatever the jumps just before
  // used of it (Home then End at once): 10 at once, then 16 a second, under what the server gives back;
  // a message over the limit is dropped (the hint asked for at the end of a jump too, and no scores came)
  messages.forEach((message, i) => {
    if (i < 10) send(message);
    else setTimeout(() => send(message, { quiet: true }), (i - 9) * 60);
  });
  R.jumpTarget = messages.length > 1 ? target : null; // the status waits for it (roomview.js)
  if (messages.length > 1) {
    // no hint for the positions on the way (each would cost the budget the moves need): one at the end
    const wait = Math.max(0, messages.length - 9) * 60 + 50;
    R.jumpUntil = Date.now() + wait;
    setTimeout(autoHint, wait + 20);
  }
  if (messages.length) awaitAnswer();
}

/** One step back (an undo) or forward (redo) along the line. */
export function stepLine(delta) {
  if (R.state) lineTo(moveTokens(R.state.position).length + delta);
}

/** The link that opens the position on screen in an analysis board. */
export function analysisLink(position) {
  return `${location.origin}/analyse?position=${encodeURIComponent(position)}`;
}

/** The analysis board's parts of the page: the switch, redo, the step
 * buttons along the line, the moves ahead in the list, the key under the
 * board. After the page's own drawing. */
export function renderAnalysis() {
  const room = R.state;
  const on = R.analysing;
  const local = room.mode === "local";
  const n = moveTokens(room.position).length;
  $("analysis-switch").hidden = !local || !R.you.length;
  $("analysis-toggle").checked = on;
  $("board").classList.toggle("analysing", on);
  $("position-panel").classList.toggle("analysing", on); // its paste box analyses (index.html, style.css)
  $("board").dataset.analysing = on ? "1" : "";
  const line = onLine(room);
  $("redo").hidden = !line;
  $("keys-help").classList.toggle("on-line", line); // its keys go along the line (index.html, style.css)
  $("redo").disabled = R.line.length <= n;
  if (line) {
    $("step-back").disabled = n <= room.start_ply && !R.pending; // a drop on the bonus cell is taken back too
    $("step-forward").disabled = R.line.length <= n;
    for (const mv of $("moves").querySelectorAll(".mv")) mv.classList.toggle("ahead", Number(mv.dataset.ply) > n);
  }
  $("analysis-link").value = analysisLink(room.position);
  const key = $("analysis-key");
  key.hidden = !on;
  if (!on) return;
  let text;
  if (room.status !== "playing") {
    // what takes a move back: nothing after a resignation or a forfeit; step back only on the analysis board's line
    const givenUp = room.reason === "resign" || room.reason === "forfeit";
    text = givenUp ? "The game is over and was given up: no move can be taken back. Review scores every move."
      : `The game is over: undo${line ? ", or step back," : ""} to go on analysing.`;
  } else if (!myTurn(room)) {
    // the computer's move (or the other player's), or a page that only watches: no scores are asked (autoHint)
    text = R.you.length ? `${SIDE[room.to_move]} to move: the scores come for your next move.`
      : "You are watching: no scores here. The position panel's link opens this position on an analysis board of your own.";
  } else if (!R.hint || R.hint.position !== room.position) {
    text = `${SIDE[room.to_move]} to move: solving every column…`;
    if (R.hintWaiting && R.hintPreparing !== null) text += ` (${preparingText()})`;
  } else {
    // while a ban is chosen the notes are the ban choices' (banNotes), not the drops': the key says so
    // (the ban panel says what declining scores)
    const bans = R.pending ? banChoices() : null;
    const estimated = bans ? bans.some((note) => note.kind === "estimate")
      : R.hint.columns.some((c) => !c.exact && c.estimate !== null && c.estimate !== undefined);
    const unknown = bans ? bans.some((note) => note.kind === "unknown")
      : R.hint.columns.some((c) => !c.exact && (c.estimate === null || c.estimate === undefined));
    const later = R.hint.solving ? "still being solved" : "not solved in time";
    const what = bans ? "where the ban piece goes" : "to move";
    text = `Scores for ${SIDE[room.to_move]}, ${what}: + a win (the larger, the sooner), 0 a draw, \u2212 a loss` +
      (estimated ? `; a percentage in a dashed box: ${later}, the engine's estimate` : "") +
      (unknown ? `; ?: ${later}, and no estimate` : "") + ".";
  }
  setText(key, text);
}
