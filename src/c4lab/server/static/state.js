// The game state of the room page and its rules calls: the room state `R`
// (each field with one owner module: the connection's, the page's, the
// game's own -- the room object on screen, this page's seats, the pending
// bonus choice, the stepping view -- and analysis's), the named updates of
// the fields this module owns, the frames that show several agent moves one
// by one, applying a state from the server, whose turn it is, and what a
// click on a column means (or why it is refused). The server decides
// what is legal (room.legal_moves); nothing here draws beyond the board's
// own calls, and nothing here sends.
//
// May import: notation.js, describe.js, util.js (never the client or views).
//
// Everything that comes from the server or from a person is inserted with
// textContent or setAttribute, never as HTML.

import { LETTERS, cellName, landingRow, moveTokens, replay } from "./notation.js";
import { geometryOf, positionHeader, resultText, subjectLabel } from "./describe.js";
import { $ } from "./util.js";

// Every field has one owner module, the only one that assigns it; the
// others read it, and change it through the owner's named updates (state.js's
// below, client.js's useToken, analysis.js's refused).
// tests/test_architecture.py checks that each field is assigned in its
// owner alone.
export const R = {
  // owner client.js: the connection
  token: null,
  ws: null,
  retries: 0,
  reconnectTimer: null,
  pingTimer: null,
  queue: [],
  pumpTimer: null,
  lastChange: 0,
  gone: false,
  everConnected: false,
  connected: false, // the state on screen is live: a socket is open and its state came (else who is online is not known)
  greeted: false, // this socket's hello is answered: a page with a seat token shows no state before (it would be a spectator's)
  // owner room.js: the page
  code: null,
  board: null,
  hover: null,
  watching: false,
  drawn: null, // "plain" or "bonus": the form here drew this room's board at random (New game draws again)
  resignArmed: null,
  tapped: false, // the last rematch button was pressed with a finger: the rematch puts no focus on the board
  // owner state.js: the game on screen and this page's part in it
  state: null, // the room object on screen
  you: [],
  cursor: null, // the column the keyboard points at
  pending: null, // {col, row, letter, owner, text}: a move on the bonus cell, ban not chosen yet (text: the panel's)
  awaiting: false, // a move sent, its answer not come yet
  awaitTimer: null,
  catchUp: false,
  view: null, // null: the live game; else the number of moves shown (history.js)
  // owner history.js
  viewSince: 0, // the live game's length when the stepping began
  // owner analysis.js: hints and the review (each for the position it names)
  hint: null, // {token, position, evaluation, columns, best}
  hintWaiting: false,
  hintPreparing: null, // the seconds the hint asked has waited for numba's compiler (a first start), else null
  hintWanted: false, // Hint pressed while the other side moves: asked once it is this page's turn
  jumpUntil: 0, // a jump along the line sends its last paced message before this time (Date.now())
  jumpTarget: null, // the number of moves such a jump goes to, until its state comes (null: none under way)
  review: null, // the review message of this game
  reviewWaiting: false,
  analysing: false, // the analysis board: every column's score after every move (the switch)
  line: [], // the analysis board's line: the moves played, then those undone that redo plays again
  // owner evalbar.js
  evaluation: null, // {value, position}: the last known, a hint's or an agent's
};

// -- state.js's named updates ----------------------------------------------------

/** A piece on its way to the bonus cell: the ban column is to choose. */
export function holdBan(pending) {
  R.pending = pending;
}

/** No ban to choose any more (declined, undone, played). */
export function dropBan() {
  R.pending = null;
}

/** A move was sent: ignore clicks until the answer comes (at most 5 s). */
export function awaitAnswer() {
  R.awaiting = true;
  R.pending = null;
  clearTimeout(R.awaitTimer);
  R.awaitTimer = setTimeout(() => { R.awaiting = false; }, 5000);
}

/** The answer came (a state, an error) or the connection closed. */
export function answered() {
  R.awaiting = false;
  clearTimeout(R.awaitTimer);
}

/** Whether the next state should be shown from the start, move by move. */
export function watchFromStart(on) {
  R.catchUp = Boolean(on);
}

/** The board shows `plies` moves of the game (null: the live game). */
export function showPly(plies) {
  R.view = plies;
  R.cursor = null;
}

/** The keyboard's column (null: none). */
export function moveCursor(col) {
  R.cursor = col;
}

/** A side is thinking about its move (a "thinking" message). */
export function showThinking(seat) {
  R.state = { ...R.state, thinking: seat };
}

/** When agents made several moves at once (a game between agents), the
 * positions in between, so that they can be watched. */
export function catchUpFrames(room) {
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
      win_lines: [],
      status: "playing",
      result: null,
      reason: null,
      thinking: ply % 2 === 0 ? "A" : "B",
      evaluation: null,
    });
  }
  return frames;
}

/** Show `room` (a state message's room) on the board; the caller renders
 * the rest of the page. A frame (isFrame) is an in-between position. */
export function applyState(room, you, isFrame = false) {
  const prev = R.state;
  R.state = room;
  R.you = you || [];
  const fresh = R.board.setup(geometryOf(room));
  const positionChanged = !prev || prev.position !== room.position;
  const tokens = moveTokens(room.position);
  const { order } = replay(geometryOf(room), tokens);
  if (R.view !== null && (fresh || R.view >= tokens.length)) R.view = null; // an undo went past the view
  // while an earlier position is viewed the board keeps it (history.js)
  if (R.view === null) R.board.setCells(room.cells, { animate: Boolean(prev) && !fresh, order });
  if (positionChanged) {
    R.pending = null;
    answered();
  }
  // a hint, an evaluation or a review names its position: analysis.js shows
  // only those of the position on screen
  if (!isFrame) $("board").dataset.live = "1";
}

/** Milliseconds after a jump's last message (along the analysis board's
 * line: Home, End, a move far along the list) that the page waits for its
 * state before it shows and says the position it has: a message was lost. */
export const JUMP_GRACE = 5000;

/** How long to wait (ms) for the rest of a jump under way before `room`, a
 * state on its way, is put in words (the status, the moves said): 0 when no
 * jump is under way or `room` is where it goes. Its states come one a move,
 * further apart on a loaded machine or a slow line. */
export function jumpWait(room) {
  if (R.jumpTarget === null || moveTokens(room.position).length === R.jumpTarget) return 0;
  return Math.max(0, R.jumpUntil + JUMP_GRACE - Date.now());
}

/** Who plays each side of a local room, as /api/rooms takes it. */
export function roomPlayers(room) {
  const spec = (side) => (room.seats[side].kind === "agent" ? room.seats[side].spec : "human");
  return { A: spec("A"), B: spec("B") };
}

/** The name the person at this page plays under in `room` (a seat of theirs; undefined if they hold
 * none): a room they start from this one (a rematch, swapped sides, a pasted position) keeps it. */
export function ownName(room) {
  const side = room ? R.you.find((s) => room.seats[s] && room.seats[s].kind === "human") : undefined;
  return side ? room.seats[side].name : undefined;
}

/** Whether this page can make moves in the game at all (it is under way and the page holds a seat),
 * now or on a later turn: if not, the arrows step through the game and the keyboard's box is not drawn. */
export function canPlay(room = R.state) {
  return Boolean(room) && room.status === "playing" && R.you.length > 0;
}

export function myTurn(room = R.state) {
  return Boolean(room) && room.status === "playing" && room.to_move &&
    R.you.includes(room.to_move) && room.seats[room.to_move].kind === "human";
}

/** Why the person at this page cannot move now (null: they can). */
export function whyNot(room) {
  if (room.status === "over") return `The game is over: ${resultText(room)}.`;
  if (room.status === "waiting") {
    return R.you.length ? "Wait for your opponent to open the link and take the free seat." : "The game has not started: a seat is still free.";
  }
  if (!R.you.length) return "You are watching this game.";
  const side = room.to_move;
  if (room.thinking || room.seats[side].kind === "agent") return `${subjectLabel(room, side)} is thinking: wait for its move.`;
  if (!R.you.includes(side)) return `Not your move: ${subjectLabel(room, side)} to move.`;
  return null;
}

/** What a click (or key) on column `col` means now, without doing it:
 * null (ignore it), {refuse: why}, {move: token} to send, or
 * {pending, text}: the piece lands on the bonus cell and the ban column is
 * still to choose (pending = {col, row, letter, owner}). */
export function columnAction(col) {
  const room = R.state;
  if (!room || col >= room.width) return null;
  const letter = LETTERS[col];
  if (R.pending) {
    const token = `${R.pending.letter}+${letter}`;
    if (!room.legal_moves.includes(token)) {
      return { refuse: `Column ${letter} is full: the ban piece cannot go there. Choose another column, or decline.` };
    }
    return { move: token };
  }
  if (R.awaiting) return null;
  if (room.status === "over" || (room.status === "playing" && !R.you.length)) {
    return { refuse: whyNot(room) };
  }
  const geometry = geometryOf(room);
  if (landingRow(geometry, room.cells, col) === null) {
    return { refuse: `Column ${letter} is full: choose another column.` };
  }
  const why = whyNot(room);
  if (why) return { refuse: why };
  const options = room.legal_moves.filter((m) => m[0] === letter);
  if (!options.length) return { refuse: `Column ${letter} cannot take a piece now.` };
  if (options.some((m) => m.length === 3)) {
    const row = landingRow(geometry, room.cells, col);
    const targets = options.filter((m) => m.length === 3).map((m) => m[2]);
    const full = [...LETTERS.slice(0, room.width)].filter((l) => !targets.includes(l));
    // the shorter list: the full columns when fewer ("any column but a"), so that the panel's text keeps
    // within its place on a 320-px phone
    const where = !full.length ? "any column"
      : full.length < targets.length ? `any column but ${listed(full)}` : `a column (${targets.join(", ")})`;
    return {
      pending: { col, row, letter, owner: room.to_move },
      text: `Your piece takes the bonus cell ${cellName(col, row)}: pick ${where} for a neutral ban piece, or decline.`,
    };
  }
  return { move: letter };
}

/** "a", "a and b", "a, b and c". */
function listed(words) {
  return words.length < 2 ? words.join("") : `${words.slice(0, -1).join(", ")} and ${words[words.length - 1]}`;
}
