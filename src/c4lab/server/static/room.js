// The room page (/r/<code>): a local game or an online room, both played
// through a server room; /analyse?position=... makes a local room of two
// people at this screen on that position and shows it as an analysis board. Sets up the board, binds the buttons and keys,
// turns a column click into a move (or a refusal, or the bonus ban choice),
// joins a free seat, starts a new game from a pasted position, and starts
// the client with this page's drawing functions.
//
// May import: state.js, client.js, analysis.js, evalbar.js, history.js, roomview.js,
// describe.js, notation.js, board.js, settings.js, speech.js, util.js. Only app.js
// imports it.
//
// Everything that comes from the server or from a person is inserted with
// textContent or setAttribute, never as HTML.

import {
  R, awaitAnswer, canPlay, columnAction, dropBan, holdBan, moveCursor, ownName, roomPlayers, watchFromStart,
} from "./state.js";
import { send, startClient, useToken } from "./client.js";
import {
  askHint, askReview, autoHint, lineTo, noteLine, onHint, onLine, onPreparing, onReview, refused,
  followRoom, setAnalysing, stepLine, wantedHint,
} from "./analysis.js";
import { noteState } from "./evalbar.js";
import { bindHistory, goLive, goTo, stepBy } from "./history.js";
import { render, renderControls, renderPreview } from "./roomview.js";
import { SIDE, onColourChange, positionHeader, subjectLabel } from "./describe.js";
import { LETTERS, moveTokens, positionParam } from "./notation.js";
import { Board } from "./board.js";
import { describeColumn, noteMoves } from "./speech.js";
import {
  analysing, drawnBoard, focusBoardOnArrival, saveAnalysing, saveDrawn, saveName, saveTicket, savedName, takeFocusBoard,
  takeWatchFromStart, tokenFor,
} from "./settings.js";
import { $, api, byFinger, copyText, focusIsFree, say, setText, show } from "./util.js";

/** This page's join request id (random, sent with every try of a join). */
const JOIN_ID = Array.from(crypto.getRandomValues(new Uint8Array(18)), (b) => b.toString(16).padStart(2, "0")).join("");

export function showRoom(code) {
  show("view-room");
  R.code = code;
  useToken(tokenFor(code));
  watchFromStart(takeWatchFromStart(code));
  setAnalysing(analysing(code), false);
  R.drawn = drawnBoard(code);
  R.board = new Board($("board"), {
    onColumn: (col) => { moveCursor(null); tryColumn(col); },
    onHover: (col) => { R.hover = col; renderPreview(); },
  });
  $("join-name").value = savedName();
  bindRoomControls();
  bindHistory(render);
  document.addEventListener("keydown", roomKey);
  onColourChange(render);
  if (takeFocusBoard(code)) $("board").focus({ preventScroll: true }); // started from the form: its keys play at once
  startClient({
    render, renderControls,
    onState: (room) => {
      noteState(room);
      followRoom(room);
      noteLine(room);
      noteMoves(room);
      autoHint();
      wantedHint(renderControls);
      outdatedErrors(room);
      if (R.resignArmed && room.status !== "playing") disarmResign(); // a rematch's Resign asks again
    },
    onHint: (message) => onHint(message, render),
    onPreparing: (message) => onPreparing(message, render),
    onReview: (message) => onReview(message, render),
    onRematch,
    onRefused: refused,
  });
}

let lastSeen = ""; // the position and the status, as last shown

/** An error line about a moment that has passed ("B (black), hard, is thinking: wait
 * for its move" once it has moved; a pasted position's refusal once the
 * game has gone on) is taken away when the position or the turn changes. */
function outdatedErrors(room) {
  const now = `${room.position} ${room.status}`;
  if (now === lastSeen) return;
  const changed = lastSeen !== "";
  lastSeen = now;
  if (!changed) return;
  if ($("message").dataset.kind === "error") say("", "info");
  setText($("paste-error"), "");
}

/** Resign again, not "Really resign?": after 3.5 s, once confirmed, or when
 * the game it was asked in ends (the question is for that game alone). */
function disarmResign() {
  clearTimeout(R.resignArmed);
  R.resignArmed = null;
  setText($("resign"), "Resign");
  $("resign").classList.remove("armed");
}

/** A click or key on column `col`: play it, refuse it, or ask for the ban. */
function tryColumn(col) {
  if (R.view !== null) {
    // an earlier position is on the board: a click there comes back to the game
    goLive();
    say("Back to the game: the board shows the live position again.", "info");
    return;
  }
  const action = columnAction(col);
  if (!action) return;
  if ("refuse" in action) {
    refuse(col, action.refuse);
    return;
  }
  if (action.pending) {
    holdBan({ ...action.pending, text: action.text }); // the panel says it (render), with what declining scores
    render();
    $("decline-ban").focus({ preventScroll: true });
    return;
  }
  sendMove(action.move);
}

function sendMove(token) {
  if (!send({ type: "move", move: token })) return;
  awaitAnswer();
  say("");
  render();
}

function refuse(col, message) {
  R.board.refuse(col);
  say(message, "error");
}

function roomKey(event) {
  if (document.body.dataset.view !== "room") return;
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target;
  if (target.closest && target.closest("input, textarea, select")) return;
  const key = event.key;
  if (!R.state) { // still connecting: a column's key was lost without a word
    if (/^[a-l1-9]$/.test(key)) say("Still connecting to the game: that key was not taken; press it again once the board is there.", "info");
    return;
  }
  const width = R.state.width;
  let col = null;
  if (/^[a-l]$/.test(key) && LETTERS.indexOf(key) < width) col = LETTERS.indexOf(key);
  else if (/^[1-9]$/.test(key) && Number(key) <= width) col = Number(key) - 1;
  else if (/^[0-9]$/.test(key)) {
    // a digit that is no column (0, or past the board): say which keys reach the columns
    const digits = Math.min(9, width);
    const after = width > 9 ? `; the columns after them: ${[...LETTERS.slice(9, width)].join(", ")}` : "";
    say(`${key} is no column here: the digits 1 to ${digits} are the columns a to ${LETTERS[digits - 1]}${after}.`, "error");
    return;
  }
  if (col !== null) {
    event.preventDefault();
    moveCursor(col);
    tryColumn(col);
    renderPreview();
    return;
  }
  if (historyKey(event)) return;
  if (key === "ArrowLeft" || key === "ArrowRight") {
    event.preventDefault();
    const start = R.cursor ?? R.hover ?? Math.floor((width - 1) / 2);
    moveCursor(R.cursor === null && R.hover === null ? start : (start + (key === "ArrowLeft" ? width - 1 : 1)) % width);
    renderPreview();
    describeColumn(R.cursor);
    return;
  }
  const onControl = target.closest && target.closest("button, a");
  if ((key === "Enter" || key === " ") && !onControl && R.cursor !== null) {
    event.preventDefault();
    tryColumn(R.cursor);
    return;
  }
  if (key === "Escape" && R.pending) {
    event.preventDefault();
    cancelBan();
    return;
  }
  if ((key === "n" || key === "N") && R.pending) {
    event.preventDefault();
    sendMove(R.pending.letter);
  }
}

/** Stepping through the game by keys: Shift+arrows always; plain arrows
 * while an earlier position is shown or when this page cannot move (the game
 * is over, or it watches); Home and End: the start and the live game. */
function historyKey(event) {
  const key = event.key;
  const room = R.state;
  const playing = canPlay(room);
  if (onLine() && R.view === null && !R.pending && (key === "ArrowLeft" || key === "ArrowRight") && (event.shiftKey || !playing)) {
    event.preventDefault();
    stepLine(key === "ArrowLeft" ? -1 : 1); // along the analysis board's line: undo, redo
    return true;
  }
  if ((key === "ArrowLeft" || key === "ArrowRight") && (event.shiftKey || R.view !== null || !playing) && !R.pending) {
    event.preventDefault();
    stepBy(key === "ArrowLeft" ? -1 : 1);
    return true;
  }
  if ((key === "Home" || key === "End") && onLine() && R.view === null && !R.pending) {
    event.preventDefault();
    lineTo(key === "Home" ? 0 : Infinity); // the analysis board's line: its start, its end
    return true;
  }
  if ((key === "Home" || key === "End" || (key === "Escape" && R.view !== null)) && !R.pending) {
    event.preventDefault();
    if (key === "Home") goTo(0);
    else goLive();
    return true;
  }
  return false;
}

function cancelBan() {
  dropBan();
  say("");
  render();
}

function bindRoomControls() {
  // a drop on the bonus cell whose ban is being chosen is not played yet: Undo (or a step back) takes it back alone
  $("undo").addEventListener("click", () => (R.pending ? cancelBan() : send({ type: "undo" })));
  $("hint").addEventListener("click", () => {
    goLive(); // the hint is for the live position
    askHint(renderControls);
  });
  $("review").addEventListener("click", () => askReview(renderControls));
  $("step-back").addEventListener("click", () => (R.pending ? cancelBan() : onLine() && R.view === null ? stepLine(-1) : stepBy(-1)));
  $("step-forward").addEventListener("click", () => (onLine() && R.view === null ? stepLine(1) : stepBy(1)));
  $("redo").addEventListener("click", () => stepLine(1));
  $("analysis-toggle").addEventListener("change", (e) => { setAnalysing(e.target.checked); render(); });
  $("copy-analysis").addEventListener("click", (e) => copyText($("analysis-link").value, "Link", e.currentTarget));
  $("back-to-live").addEventListener("click", goLive);
  $("play-again").addEventListener("click", (e) => playAgain(false, e));
  $("swap-sides").addEventListener("click", (e) => playAgain(true, e));
  for (const [id, action] of [["offer-rematch", "offer"], ["rematch-accept", "accept"], ["rematch-decline", "decline"]]) {
    $(id).addEventListener("click", (e) => { R.tapped = byFinger(e); send({ type: "rematch", action }); });
  }
  $("resign").addEventListener("click", () => {
    const button = $("resign");
    if (R.resignArmed) {
      disarmResign();
      say("");
      send({ type: "resign" });
      return;
    }
    setText(button, "Really resign?");
    button.classList.add("armed");
    say("Press Resign again to resign: you lose the game. It turns back by itself in a few seconds.", "info"); // heard, not only seen
    R.resignArmed = setTimeout(disarmResign, 3500);
  });
  $("decline-ban").addEventListener("click", () => { if (R.pending) sendMove(R.pending.letter); });
  $("cancel-ban").addEventListener("click", cancelBan);
  $("copy-link").addEventListener("click", (e) => copyText($("share-link").value, "Link", e.currentTarget));
  $("copy-position").addEventListener("click", (e) => copyText($("position").value, "Position", e.currentTarget));
  for (const id of ["share-link", "position", "analysis-link"]) $(id).addEventListener("focus", (e) => e.target.select());
  $("join-seat").addEventListener("click", joinSeat);
  $("watch").addEventListener("click", () => { R.watching = true; render(); });
  $("paste-start").addEventListener("click", pasteStart);
  $("paste-here").addEventListener("input", () => setText($("paste-error"), "")); // an error about the old text
  $("paste-here").addEventListener("keydown", (e) => {
    if (e.key !== "Enter") return;
    e.preventDefault();
    pasteStart();
  });
  $("board").addEventListener("focus", () => {
    if (R.cursor === null && R.state) {
      moveCursor(R.hover ?? Math.floor((R.state.width - 1) / 2));
      renderPreview();
      describeColumn(R.cursor);
    }
  });
  $("board").addEventListener("blur", () => {
    moveCursor(null);
    renderPreview();
  });
}

/** A rematch's news (the room's state, which follows, shows the offer). */
function onRematch(message) {
  const room = R.state;
  const who = room ? subjectLabel(room, message.seat) : SIDE[message.seat];
  const me = R.you.includes(message.seat);
  if (message.event === "declined" && !me) say(`${who} declined the rematch.`, "info");
  if (message.event === "withdrawn" && !me) {
    say(message.left ? `${who} left the room: no rematch unless they come back.`
      : `${who} took back the offer of a rematch.`, "info");
  }
  if (message.event === "accepted") {
    say("Rematch: a new game in this room, the sides swapped. The last game stays under \"Earlier games\".", "info");
    // as a local Rematch: a player's keys play on the new board, unless a finger pressed the button or the focus is elsewhere
    if (R.you.length && !R.tapped && focusIsFree("#rematch-panel, #offer-rematch")) $("board").focus({ preventScroll: true });
  }
}

async function joinSeat() {
  const name = $("join-name").value.trim();
  const button = $("join-seat");
  button.disabled = true;
  try {
    // The same request id on every try: a join whose answer was lost gets the same seat again.
    const ticket = await api("POST", `/api/rooms/${encodeURIComponent(R.code)}/join`, { ...(name ? { name } : {}), request_id: JOIN_ID });
    saveName(name);
    saveTicket(ticket);
    useToken(ticket.token);
    send({ type: "hello", token: ticket.token });
    say(`You took seat ${ticket.seats.map((s) => SIDE[s]).join(" and ")}.`, "info");
  } catch (err) {
    say(`You could not take the seat: ${err.message}`, "error");
    R.watching = true;
    render();
  } finally {
    button.disabled = false;
  }
}

async function pasteStart() {
  const text = $("paste-here").value.trim();
  setText($("paste-error"), "");
  if (!text) {
    setText($("paste-error"), "Paste a position string first (for example 7x6:dd).");
    return;
  }
  const room = R.state;
  let players = room && room.mode === "local" ? roomPlayers(room) : { A: "human", B: "hard" };
  if (R.analysing) players = { A: "human", B: "human" }; // the analysis board goes on from the position
  try {
    await startLocal(text, players, R.analysing);
  } catch (err) {
    setText($("paste-error"), `That position cannot ${R.analysing ? "be analysed" : "start a game"}: ${err.message}`);
  }
}

/** The position this room's game started from (its first start_ply moves). */
function startPosition(room) {
  const tokens = moveTokens(room.position).slice(0, room.start_ply);
  const header = positionHeader(room.position);
  return tokens.length ? `${header}:${tokens.join("")}` : header;
}

/** A new local room on `board` with `players` and this page's name, opened here (`focus`: its board takes the keys). */
async function startLocal(board, players, analysis = false, drawn = null, focus = false) {
  const body = { mode: "local", board, players, name: ownName(R.state), ...(analysis ? { analysis } : {}) };
  const ticket = await api("POST", "/api/rooms", body);
  saveTicket(ticket);
  if (focus) focusBoardOnArrival(ticket.code);
  if (analysis) saveAnalysing(ticket.code, true);
  if (drawn) saveDrawn(ticket.code, drawn === "bonus"); // a rematch on a drawn board: its New game draws again
  location.assign(ticket.url);
}

/** /analyse?position=P: a local room of two people at this screen on P,
 * shown as an analysis board at its own address (/r/<code>); a bad
 * position is one line that says where, and no room is made. */
export async function showAnalyse() {
  const position = positionParam(location.search, "position");
  const fail = (text) => {
    show("view-missing");
    setText($("missing-title"), "No analysis board");
    setText($("missing-text"), text);
    document.title = "c4lab: no analysis board";
  };
  if (!position) {
    fail("The link names no position: /analyse?position=7x6:dd (the notation of the rules: size, cells, moves).");
    return;
  }
  try {
    const ticket = await api("POST", "/api/rooms", {
      mode: "local", board: position, players: { A: "human", B: "human" }, analysis: true,
    });
    saveTicket(ticket);
    saveAnalysing(ticket.code, true);
    history.replaceState(null, "", ticket.url);
    showRoom(ticket.code);
  } catch (err) {
    // a refusal of the server's (too many boards, full) is not the position's fault
    const busy = err.status === 429 || err.status === 503;
    fail(busy ? `No new analysis board for now: ${err.message}` : `That position cannot be analysed: ${err.message}`);
  }
}

/** Rematch (same start and players) or swap sides; the new board takes the keys unless tapped with a finger. */
async function playAgain(swap, click) {
  const room = R.state;
  const players = roomPlayers(room);
  try {
    await startLocal(startPosition(room), swap ? { A: players.B, B: players.A } : players, false, R.drawn,
      !byFinger(click));
  } catch (err) {
    say(`A new game could not start: ${err.message}`, "error");
  }
}
