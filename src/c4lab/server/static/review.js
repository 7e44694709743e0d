// The exact solver's verdicts, drawn: the scores above the columns (for the
// hint and for a reviewed position) and the review of a finished game (a
// summary, one row a move, marks in the move list). Used by the room page
// and by the replay of a finished game; it asks nothing of the server
// itself (analysis.js and games.js do, and pass the answer in).
//
// A score is RULES.md's, for the player to move: positive a win (the
// larger, the sooner), 0 a draw, negative a loss. Verdicts: "best" (keeps
// the exact score), "inaccuracy" (keeps the result, but wins later or loses
// sooner), "blunder" (changes the result: a win into a draw or a loss, a
// draw into a loss), "unknown" (not solved in time).
//
// May import: board.js (el), describe.js, notation.js, util.js.
//
// Everything that comes from the server or from a person is inserted with
// textContent or setAttribute, never as HTML.

import { TOP, WIDE, el } from "./board.js";
import { COLOUR, SIDE } from "./describe.js";
import { LETTERS, cellName, landingRow } from "./notation.js";
import { setLive, setText } from "./util.js";

const MINUS = "\u2212";

/** "+3", "0", "−2" (null: "?"). */
export function scoreText(score) {
  if (score === null || score === undefined) return "?";
  if (score > 0) return `+${score}`;
  if (score < 0) return `${MINUS}${-score}`;
  return "0";
}

/** What a score means, in words. */
export function scoreWords(score) {
  if (score === null || score === undefined) return "not solved in time";
  if (score > 0) return "a win";
  if (score < 0) return "a loss";
  return "a draw";
}

function kindOf(score) {
  if (score === null || score === undefined) return "unknown";
  return score > 0 ? "win" : score < 0 ? "loss" : "draw";
}

/** One label above column `letter`: an exact score, else an estimate
 * (0..1, the engine's expected result for the player to move), else "?";
 * `solving`: the solver is still at it (the key below says the same). */
export function columnNote(letter, { score = null, estimate = null, best = false, solving = false } = {}) {
  const col = LETTERS.indexOf(letter);
  const later = solving ? "still being solved" : "not solved in time";
  if (score !== null && score !== undefined) {
    return { col, text: scoreText(score), kind: kindOf(score), best, title: `${letter}: ${scoreText(score)}, ${scoreWords(score)}` };
  }
  if (estimate !== null && estimate !== undefined) {
    const pct = `${Math.round(estimate * 100)}%`;
    // marked as an estimate: a percentage, not a score; in italics, its pill dashed (review.css)
    return { col, text: pct, kind: "estimate", best, title: `${letter}: about ${pct} (the engine's estimate, ${later})` };
  }
  return { col, text: "?", kind: "unknown", best, title: `${letter}: ${later}` };
}

/** While the ban piece of a drop in column `letter` (on the bonus cell) is
 * chosen: above each column the ban may go to, the score of that choice
 * (from per-move scores {token: score|null}), else the engine's estimate
 * of it ({token: 0..1}, the hint's `estimates`), else ?; the best ones
 * marked when every choice, declining too, is solved. */
export function banNotes(scores, letter, estimates = {}, solving = false) {
  const bans = Object.entries(scores).filter(([token]) => token.length === 3 && token[0] === letter);
  const choices = [...bans.map(([, score]) => score), scores[letter]];
  const top = choices.every((s) => s !== null && s !== undefined) ? Math.max(...choices) : null;
  return bans.map(([token, score]) => columnNote(token[2], {
    score, estimate: estimates[token], best: top !== null && score === top, solving,
  }));
}

/** Column labels from per-move scores {token: score|null} (with the bonus a
 * column has a move per ban choice: the column shows its best one). */
export function notesFromScores(scores) {
  const byColumn = {};
  for (const [token, score] of Object.entries(scores)) {
    const letter = token[0];
    const old = byColumn[letter];
    if (old === undefined) byColumn[letter] = score;
    else if (old !== null) byColumn[letter] = score === null ? null : Math.max(old, score);
  }
  const known = Object.values(byColumn);
  const top = known.every((s) => s !== null) && known.length ? Math.max(...known) : null;
  return Object.entries(byColumn).map(([letter, score]) => columnNote(letter, { score, best: top !== null && score === top }));
}

/** The review's entry for the move played from the position after `ply`
 * moves (null: none, e.g. the last position). */
export function entryFrom(review, ply) {
  if (!review) return null;
  return review.entries.find((e) => e.ply === ply + 1) || null;
}

/** The column labels of the position after `ply` moves, from a review:
 * the scores of the player to move there (the mover of the next move), the
 * best marked, and the column of the move played from there (`played`). */
export function reviewNotes(review, ply) {
  const entry = entryFrom(review, ply);
  if (!entry) return [];
  return notesFromScores(entry.scores).map((note) => {
    const played = LETTERS[note.col] === entry.move[0];
    return { ...note, played, title: played ? `${note.title} (the move played)` : note.title };
  });
}

/** The ghost piece of the review's best move from the position after `ply`
 * moves (`cells` that position's), for Board.setOverlays' `hint`; null if
 * the review knows no best move there. */
export function bestMoveGhost(review, ply, geometry, cells) {
  const entry = entryFrom(review, ply);
  const marked = entry ? (entry.best.length ? entry.best : entry.better || []) : []; // better: best not known
  if (!marked.length) return null;
  const token = marked.includes(entry.move) ? entry.move : marked[0];
  const col = LETTERS.indexOf(token[0]);
  const row = landingRow(geometry, cells, col);
  if (row === null) return null;
  const ghost = { token, col, row, owner: entry.side, banCol: null, banRow: null, mark: "\u2713" };
  if (token.length === 3) {
    ghost.banCol = LETTERS.indexOf(token[2]);
    ghost.banRow = landingRow(geometry, { ...cells, [cellName(col, row)]: entry.side }, ghost.banCol);
  }
  return ghost;
}

/** In words, the move played from the position after `ply` moves and what
 * the review says of it ("" if the review has no entry there). */
export function reviewLine(review, ply) {
  const entry = entryFrom(review, ply);
  if (!entry) return "";
  const who = SIDE[entry.side];
  let text = `Before move ${entry.ply}: ${who} to move, ${scoreWords(entry.before)} (${scoreText(entry.before)}). ` +
    `${who} played ${entry.move} (${scoreText(entry.played)}): ${verdictWords(entry)}.`;
  if (scored(entry)) text = `${text.slice(0, -1)}, as not every move from there was solved in time.`;
  text += columnAside(entry);
  if (entry.verdict !== "best" && entry.best.length) {
    // the board marks one of them with a ghost piece (bestMoveGhost), every one with a gold ring above its column
    const marked = entry.best.length > 1 ? `${entry.best[0]} marked on the board, each ringed in gold above its column`
      : "marked on the board";
    text += ` Best: ${entry.best.join(", ")} (${marked}).`;
  } else if (entry.verdict === "blunder" && entry.better && entry.better.length) {
    // the position's score is not known (moves left unsolved), but these keep a better result than the move played
    text += ` Better: ${entry.better.join(", ")} (${entry.better[0]} marked on the board; not every move was solved in time).`;
  }
  return text;
}

/** With the bonus, the note above the played move's column is the column's best ban choice
 * (notesFromScores), which need not be the move played: " Column a shows +2, the score of its best
 * ban choice: a+e." ("" where it shows the move's own score). */
function columnAside(entry) {
  const letter = entry.move[0];
  const note = notesFromScores(entry.scores).find((n) => LETTERS[n.col] === letter);
  if (!note || note.text === scoreText(entry.played)) return "";
  if (note.kind === "unknown") return ` Column ${letter} shows ?: not every ban choice there was solved in time.`;
  const named = (token) => (token.length === 3 ? token : `${token} (no ban)`);
  const best = Object.keys(entry.scores).filter((t) => t[0] === letter && scoreText(entry.scores[t]) === note.text);
  return ` Column ${letter} shows ${note.text}, the score of its best ban choice: ${best.map(named).join(", ")}.`;
}

const VERDICT_WORDS = { best: "best", inaccuracy: "inaccuracy", blunder: "blunder", unknown: "not solved" };

/** The review's word on the move played after `ply` moves, for the bar above a phone's board (its two
 * lines): the panel's line lies below the screen once the board is in view. "" if none. */
export function reviewBrief(review, ply) {
  const entry = entryFrom(review, ply);
  if (!entry) return "";
  const best = entry.verdict !== "best" && entry.best.length ? `; best ${entry.best.join(", ")}` : "";
  return `Move ${entry.ply}: ${SIDE[entry.side]} played ${entry.move} (${scoreText(entry.played)}), ${verdictWords(entry)}${best}.`;
}

/** A move with a score but no verdict: the position's score is not known (some of its other moves
 * were not solved in time), and no move is known to do better. */
function scored(entry) {
  return entry.verdict === "unknown" && entry.played !== null && entry.played !== undefined;
}

/** A verdict in words: "no verdict" for a move the solver scored but could not judge ("c+a (+1):
 * not solved" read as a contradiction), "not solved" for one it did not score. */
function verdictWords(entry) {
  return scored(entry) ? "no verdict" : VERDICT_WORDS[entry.verdict];
}
const VERDICT_MARK = { best: "\u2713", inaccuracy: "?!", blunder: "??", unknown: "\u00b7" };

/** "75%": a share of moves (0..1; null: "?"). */
export function percent(share) {
  return share === null || share === undefined ? "?" : `${Math.round(share * 100)}%`;
}

/** What the page says when a review comes: its blunders, counted only
 * among the moves the solver settled ("0 blunders" of a game it solved no
 * move of read as a clean game) and played in this game (not those of a
 * pasted start, as the summary counts them), or that it has nothing to say. */
export function readyText(review) {
  const start = review.start_ply || 0;
  const entries = review.entries.filter((e) => e.ply > start);
  const given = review.entries.length - entries.length;
  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const moves = entries.length;
  if (!moves) {
    return given ? `Review ready: no move was played after the starting position (its ${plural(given, "move")} listed, not counted).`
      : "Review ready: no moves to review.";
  }
  const known = entries.filter((e) => e.verdict !== "unknown").length;
  if (!known) return `Review ready: none of the ${moves === 1 ? "move" : `${moves} moves`} solved in time, so no verdicts.`;
  const blunders = entries.filter((e) => e.verdict === "blunder").length;
  const among = known < moves ? ` among the ${known} of ${moves} moves solved in time` : "";
  const apart = given ? ` (the starting position's ${plural(given, "move")} not counted)` : "";
  return `Review ready: ${plural(blunders, "blunder")}${among}${apart}. `
    + "Click a move to see the position it was played from, with every column's score.";
}

function summary(review) {
  const parts = [];
  for (const side of ["A", "B"]) {
    // the moves played in this game: not those of a pasted start (the server's summary counts the same)
    const mine = review.entries.filter((e) => e.side === side && e.ply > (review.start_ply || 0));
    if (!mine.length) continue;
    const count = (v) => mine.filter((e) => e.verdict === v).length;
    const blunders = count("blunder");
    const inaccuracies = count("inaccuracy");
    // the accuracy: the share of the side's solved moves that kept the exact result (the server's summary);
    // an inaccuracy kept it: the figure says what it counts ("accuracy 100%" beside 3 inaccuracies read as wrong)
    const tally = review.summary ? review.summary[side] : null;
    const counts = `${blunders} blunder${blunders === 1 ? "" : "s"}, `
      + `${inaccuracies} inaccurac${inaccuracies === 1 ? "y" : "ies"}, ${count("best")} best`;
    if (tally && tally.known === 0) {
      // none of its moves solved in time: nothing to count ("0 blunders, 0 best of 5" read as a clean, poor game)
      parts.push(`${SIDE[side]}: none of ${mine.length === 1 ? "its move" : `its ${mine.length} moves`} solved in time`);
    } else if (tally && tally.known < tally.moves) {
      // some of them: every count is of those only, and says so (100% of one solved move is not a perfect game)
      parts.push(`${SIDE[side]}: ${tally.known} of ${tally.moves} moves solved in time: accuracy ${percent(tally.accuracy)} (${tally.kept} of them kept the result), ${counts}`);
    } else if (tally) {
      parts.push(`${SIDE[side]}: accuracy ${percent(tally.accuracy)} (${tally.kept} of ${tally.known} move${tally.known === 1 ? "" : "s"} kept the result), ${counts}`);
    } else {
      parts.push(`${SIDE[side]}: ${counts} of ${mine.length}`);
    }
  }
  // one line a player, each saying how many of its moves were solved
  return parts.join("\n") || "No moves to review.";
}

function cell(className, text) {
  const span = document.createElement("span");
  span.className = className;
  setText(span, text);
  return span;
}

/** A row's side: its letter, the colour read out only (the list's column is
 * narrow: "A (white)" took two lines a row; the summary and the title say it whole). */
function sideCell(side) {
  const span = cell(`rv-side side-${side}`, side);
  span.append(cell("sr-only", ` (${COLOUR[side]})`));
  return span;
}

/** Fill a review panel: `parts` = {summary, list, at (optional)} elements;
 * `current` the number of moves on the board (its row: the move played from
 * there); `onPick(moves)` shows the position after `moves` moves -- a row
 * gives the position its move was played from, where the mover's scores
 * and the best move are. */
export function renderReview(parts, review, { current = null, onPick = null } = {}) {
  setText(parts.summary, summary(review));
  parts.summary.title = "Accuracy: the share of a player's solved moves that kept the exact result (a win, a draw " +
    "or a loss). A blunder (??) changed it; an inaccuracy (?!) kept it, but wins later or loses sooner; best kept the " +
    "exact score.";
  if (parts.at) {
    const line = current === null ? "" : reviewLine(review, current);
    setLive(parts.at, line);
    parts.at.hidden = !line;
  }
  parts.list.replaceChildren();
  for (const entry of review.entries) {
    const row = document.createElement(onPick ? "button" : "div");
    row.className = "review-row";
    if (onPick) {
      row.type = "button";
      row.addEventListener("click", () => onPick(entry.ply - 1));
    }
    row.dataset.ply = String(entry.ply);
    row.dataset.verdict = entry.verdict;
    row.dataset.side = entry.side;
    if (current !== null && entry.ply === current + 1) {
      row.classList.add("current");
      row.setAttribute("aria-current", "step");
    }
    const given = entry.ply <= (review.start_ply || 0); // part of the pasted starting position
    if (given) row.classList.add("given");
    const before = scoreText(entry.before);
    const played = scoreText(entry.played);
    const better = entry.verdict === "blunder" && entry.better && entry.better.length ? `better ${entry.better.join(", ")}` : "";
    const best = entry.verdict !== "best" && entry.best.length ? `best ${entry.best.join(", ")}` : better;
    row.append(
      cell("rv-num", `${entry.ply}.`),
      sideCell(entry.side),
      cell("rv-move", entry.move),
      cell("rv-scores", `${before} \u2192 ${played}`),
      cell("rv-verdict", `${VERDICT_MARK[entry.verdict]} ${verdictWords(entry)}`),
      cell("rv-best", best),
    );
    row.title = `Move ${entry.ply}, ${SIDE[entry.side]} ${entry.move}: the position was ${scoreWords(entry.before)} ` +
      `(${before}), the move is ${scoreWords(entry.played)} (${played}) for ${SIDE[entry.side]}` +
      (best ? `; ${best}` : "") + (given ? " (part of the starting position: not counted in the accuracy)" : "");
    parts.list.appendChild(row);
  }
  const cur = parts.list.querySelector(".current");
  if (cur && cur.scrollIntoView) cur.scrollIntoView({ block: "nearest" });
}

/** Mark the moves of a move list (.mv[data-ply]) with their verdicts: the
 * list draws ?? and ?! after a blunder and an inaccuracy, which its buttons'
 * names (renderMoves) say in words. */
export function markMoves(list, review) {
  for (const mv of list.querySelectorAll(".mv")) {
    const entry = review ? review.entries.find((e) => e.ply === Number(mv.dataset.ply)) : null;
    if (entry) mv.dataset.verdict = entry.verdict;
    else delete mv.dataset.verdict;
    const marked = entry && (entry.verdict === "blunder" || entry.verdict === "inaccuracy");
    if (mv.dataset.words) mv.setAttribute("aria-label", mv.dataset.words + (marked ? `; ${VERDICT_WORDS[entry.verdict]}` : ""));
  }
}

/** Draw `notes` ([{col, text, kind, best, title}]) in the row above the
 * columns of `board` (a Board), under its click targets; [] clears them.
 * The places come from the board's own drawing: each column's click target
 * (x, width) and the frame (its top is the bottom of that row).
 *
 * From WIDE columns on (9x8 to 12x12) a column is too narrow for a score in
 * large type, so the notes take two staggered rows, each pill two columns
 * wide (cut at the frame's sides): a, c, e... above, b, d, f... below, each
 * with an arrow down to its column (the upper row's through the gap
 * between the pills of the row below). */
export function drawColumnNotes(board, notes) {
  const svg = board.svg;
  let layer = svg.querySelector(":scope > g.column-notes");
  if (!notes.length) {
    if (layer) layer.replaceChildren();
    return;
  }
  if (!layer || layer.nextSibling !== board.hits) {
    if (layer) layer.remove();
    layer = el("g", { class: "column-notes" });
    svg.insertBefore(layer, board.hits);
  }
  layer.replaceChildren();
  const frame = svg.querySelector("rect.frame");
  const top = frame ? Number(frame.getAttribute("y")) : TOP;
  const staggered = Boolean(board.geometry) && board.geometry.width >= WIDE;
  layer.classList.toggle("two-rows", staggered);
  // the pills stay over the board: a two-column pill at its edge is cut at the frame's side
  const edgeLeft = frame ? Number(frame.getAttribute("x")) : -Infinity;
  const edgeRight = frame ? edgeLeft + Number(frame.getAttribute("width")) : Infinity;
  for (const note of notes) {
    const hit = board.columns && board.columns[note.col] ? board.columns[note.col].querySelector(".col-hit") : null;
    if (!hit) continue;
    const width = Number(hit.getAttribute("width"));
    const x = Number(hit.getAttribute("x")) + width / 2;
    const upper = staggered && note.col % 2 === 0;
    const y = !staggered ? top / 2 : upper ? (top - TOP) / 2 : top - TOP / 2 - 4;
    const cursor = board.cursor === note.col ? " at-cursor" : ""; // the keyboard's column (Board.setPreview)
    const g = el("g", {
      class: `col-note note-${note.kind}${note.best ? " best" : ""}${note.played ? " played" : ""}${cursor}`,
      transform: `translate(${x} ${y})`, "data-note": LETTERS[note.col], "data-score": note.text,
      "data-kind": note.kind, "data-best": note.best ? "1" : "0", "data-played": note.played ? "1" : "0",
    }, layer);
    // a pill its column wide, or in two rows two columns wide (cut at the frame's sides)
    const half = staggered ? width - 6 : width / 2 - 4;
    const left = staggered ? Math.max(-half, edgeLeft - x) : -half;
    const span = (staggered ? Math.min(half, edgeRight - x) : half) - left;
    const tall = staggered ? 25 : 21; // half the pill's height
    if (staggered) {
      // a pointer down to its column: a line (through the gap between the lower row's pills), then an arrowhead
      const tip = top - y - 2;
      const head = upper ? tip - 9 : tall + 1;
      if (upper) el("line", { x1: 0, x2: 0, y1: tall, y2: head, class: "note-tick" }, g);
      el("path", { d: `M-7,${head} L7,${head} L0,${Math.min(tip, head + 9)} Z`, class: "note-pointer" }, g);
    }
    el("rect", { x: left, y: -tall, width: span, height: 2 * tall, rx: 10, class: "note-pill" }, g);
    // the keyboard cursor's box around the pill, shown on its column's (review.css), clear of a best pill's
    // gold ring and of the other pills
    const gap = staggered ? 4 : 5;
    el("rect", { x: left - gap, y: -tall - gap, width: span + 2 * gap, height: 2 * tall + 2 * gap, rx: 13, class: "note-cursor" }, g);
    // centred on the pill (review.css), which the frame's side may have cut
    const text = el("text", { x: left + span / 2, y: 0, class: "note-text" }, g);
    text.textContent = note.text;
    // never wider than its pill: a long score is narrowed, its sign never cut or covered; an estimate's italic
    // leans right past the box that centres it (its "%" touched the border): moved left, into the room it has
    const room = span - 4;
    const natural = text.getComputedTextLength ? text.getComputedTextLength() : 0;
    const lean = note.kind === "estimate" ? Math.min(0.07 * parseFloat(getComputedStyle(text).fontSize), (room - natural) / 2) : 0;
    if (natural > room) for (const [k, v] of [["textLength", room], ["lengthAdjust", "spacingAndGlyphs"]]) text.setAttribute(k, String(v));
    else if (lean > 0) text.setAttribute("x", String(left + span / 2 - lean));
    if (note.title) el("title", {}, g).textContent = note.title;
  }
}
