// Drawing the room page from the state R: the status line, the board's
// overlays and preview, the seat cards, the controls, the side panels and
// the move list. Reads R; changes nothing in it; sends nothing.
//
// May import: state.js, analysis.js (hint overlay, review), evalbar.js,
// history.js (a viewed earlier position), review.js (column scores),
// describe.js, notation.js, board.js, util.js. Never room.js or app.js.
//
// Everything that comes from the server or from a person is inserted with
// textContent or setAttribute, never as HTML.

import { R, canPlay, jumpWait, myTurn, roomPlayers } from "./state.js";
import {
  columnNotes, declineScore, hintOverlay, lineTo, onLine, renderAnalysis, renderRoomReview, reviewGhost,
} from "./analysis.js";
import { renderEval } from "./evalbar.js";
import { goTo, renderHistory, viewOverlays } from "./history.js";
import { drawColumnNotes } from "./review.js";
import {
  OTHER, SIDE, describeKeys, endedOnBoard, geometryOf, plainText, positionHeader, renderMoves, resultParts, seatLabel,
  showParts, subjectLabel, subjectParts,
} from "./describe.js";
import { LETTERS, cellName, landingRow, moveTokens, replay } from "./notation.js";
import { el, pieceShape } from "./board.js";
import { $, inviteLink, keepFocus, reachedLocally, revealBelow, setLive, setText } from "./util.js";

/** Redraw the whole room page (nothing before the first state). */
export function render() {
  const room = R.state;
  if (!room) return;
  const board = $("board");
  board.dataset.position = room.position;
  board.dataset.status = room.status;
  board.dataset.toMove = room.to_move || "";
  board.dataset.result = room.result || "";
  board.dataset.you = R.you.join("");
  board.dataset.thinking = room.thinking || "";
  board.classList.toggle("my-turn", myTurn(room));
  renderStatus();
  renderOverlays();
  renderPreview();
  renderSeats();
  renderEval();
  renderControls();
  renderPanels();
  const tokens = moveTokens(room.position);
  if (onLine(room)) {
    // the analysis board's list: its whole line, the moves undone after the one on the board
    renderMoves($("moves"), R.line, { startPly: room.start_ply, current: tokens.length, onPick: lineTo, geometry: geometryOf(room), ended: endedOnBoard(room) });
  } else {
    renderMoves($("moves"), tokens, { startPly: room.start_ply, current: R.view ?? tokens.length, onPick: goTo, geometry: geometryOf(room), ended: endedOnBoard(room) });
  }
  renderHistory();
  renderRoomReview();
  renderAnalysis();
  $("position").value = room.position;
  describeKeys(room, board);
  $("ban-panel").hidden = !R.pending;
  if (R.pending) setText($("ban-text"), R.pending.text + declineScore(room)); // as the hint stands now: exact once solved
  $("evalbar").hidden = Boolean(R.pending) || R.view !== null;
  $("moves-note").hidden = !room.start_ply;
  if (R.pending) {
    $("message").dataset.kind = "info";
  }
  keepFocus($("board")); // a control the keyboard was on went away (Resign at the end, a list entry rebuilt)
}

// A jump along the analysis board's line (Home, End, a click far along the
// list) brings one state a move: the status, a live region, waits for the
// last one rather than say each position on the way (and lay the line out
// again each time); if a message of the jump is lost, it shows the state on
// screen once the jump's time is up (jumpWait).
let statusLater = null;

function jumpUnderWay(room) {
  const left = jumpWait(room);
  if (left <= 0) return false;
  clearTimeout(statusLater);
  statusLater = setTimeout(() => { if (R.state) renderStatus(); }, left + 10);
  return true;
}

function renderStatus() {
  const room = R.state;
  if (jumpUnderWay(room)) return;
  const status = $("status");
  let parts;
  let kind = "wait";
  if (room.status === "over") {
    parts = resultParts(room);
    if (room.result && R.you.length === 1) {
      if (room.result === R.you[0]) parts = ["You win! ", ...parts];
      else if (room.result !== "draw") parts = ["You lose. ", ...parts];
    }
    kind = "over";
  } else if (room.status === "waiting") {
    const free = ["A", "B"].filter((s) => !room.seats[s].taken);
    parts = [R.you.length
      ? `Waiting for an opponent to take seat ${free.map((s) => SIDE[s]).join(", ")}: share the link.`
      : `Waiting for a second player to take seat ${free.map((s) => SIDE[s]).join(", ")}.`];
  } else if (room.thinking) {
    parts = [...subjectParts(room, room.thinking), " is thinking"];
    kind = "thinking";
  } else if (myTurn(room)) {
    parts = R.you.length > 1 ? [...subjectParts(room, room.to_move), " to move"] : [`Your move, ${SIDE[room.to_move]}`];
    if (R.pending) parts = ["Bonus! Choose where the ban piece goes"];
    kind = "turn";
  } else {
    parts = [...subjectParts(room, room.to_move), " to move"];
  }
  const text = plainText(parts);
  document.title = `${text} · c4lab`;
  // a live region: rebuilt only when it says something new (each rebuild is heard again)
  const said = `${kind} ${room.status} ${room.result} ${room.to_move} ${room.preparing != null} ${text}`;
  if (status.dataset.said === said && room.preparing == null) return;
  status.dataset.said = said;
  // its count of seconds changes every second while the engine compiles: a screen reader waits for the end
  status.setAttribute("aria-busy", room.preparing != null ? "true" : "false");
  const words = document.createElement("span");
  words.className = "status-text";
  showParts(words, parts); // the names cut short on a narrow line, the whole text read out
  status.replaceChildren(words);
  status.dataset.kind = kind;
  if (kind === "thinking") {
    const dots = document.createElement("span");
    dots.className = "dots";
    dots.setAttribute("aria-hidden", "true");
    for (let i = 0; i < 3; i++) dots.appendChild(document.createElement("i"));
    words.appendChild(dots);
    if (room.preparing != null) {
      // numba compiles the engine on its first start after an install: say so (the server resends every second)
      const note = document.createElement("span");
      note.id = "preparing";
      note.className = "preparing";
      setText(note, `preparing the engine, first start only — ${Math.round(room.preparing)} s`);
      words.appendChild(note); // a line of its own under the words (style.css)
    }
  }
  if (room.status !== "waiting") { // whoever is to move (a phone hides "(white)": a spectator saw no colour)
    const piece = room.status === "over" ? (room.result === "draw" ? null : room.result) : room.to_move;
    if (piece) {
      const svg = el("svg", { viewBox: "-30 -30 60 60", class: "status-piece", "aria-hidden": "true" });
      pieceShape(piece, svg, 26);
      status.prepend(svg);
    }
  }
}

function renderOverlays() {
  const room = R.state;
  drawColumnNotes(R.board, columnNotes(room));
  if (R.view !== null) {
    // an earlier position: its last move, and after a review the best move from there
    R.board.setOverlays({ ...viewOverlays(room), hint: reviewGhost(room) });
    return;
  }
  const tokens = moveTokens(room.position);
  const { boards } = replay(geometryOf(room), tokens);
  const n = tokens.length;
  let last = [];
  if (n > room.start_ply || n > 0) {
    const before = boards[n - 1] || {};
    last = Object.keys(boards[n] || {}).filter((name) => !before[name]);
  }
  const hint = hintOverlay(room);
  let banTargets = null;
  if (R.pending) {
    banTargets = room.legal_moves.filter((m) => m[0] === R.pending.letter && m.length === 3).map((m) => LETTERS.indexOf(m[2]));
  }
  R.board.setOverlays({ last, winLine: room.win_line || [], winLines: room.win_lines, hint, pending: R.pending, banTargets });
}

export function renderPreview() {
  const room = R.state;
  if (!room) return;
  const col = R.cursor ?? R.hover;
  let owner = null;
  if (R.pending) owner = "ban";
  else if (myTurn(room) && !R.awaiting && R.view === null) owner = room.to_move;
  let landing = null;
  if (col !== null && col !== undefined && owner) {
    const cells = R.pending ? { ...room.cells, [cellName(R.pending.col, R.pending.row)]: R.pending.owner } : room.cells;
    landing = landingRow(geometryOf(room), cells, col);
    if (landing === null) owner = null;
  }
  R.board.setPreview(col, owner, { focus: R.cursor !== null && canPlay(room), landing }); // no box where no move can be made
}

// An absent player's forfeit countdown: the server says how many seconds
// were left when it sent the state; the page counts down from when it got it.
const deadlines = new WeakMap();
let countdown = null;

function forfeitLeft(room, side) {
  const seat = room.seats[side];
  if (seat.forfeit_in === undefined || seat.forfeit_in === null || room.status !== "playing") return null;
  if (!deadlines.has(seat)) deadlines.set(seat, performance.now() + seat.forfeit_in * 1000);
  if (countdown === null) {
    countdown = setInterval(() => {
      const seats = R.state && R.state.seats;
      const ticking = seats && ["A", "B"].some((s) => forfeitLeft(R.state, s) !== null);
      if (ticking) renderSeats();
      else {
        clearInterval(countdown);
        countdown = null;
      }
    }, 1000);
  }
  return Math.max(0, (deadlines.get(seat) - performance.now()) / 1000);
}

function clock(seconds) {
  const s = Math.ceil(seconds);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

function renderSeats() {
  const room = R.state;
  for (const side of ["A", "B"]) {
    const seat = room.seats[side];
    const card = $(`seat-${side}`);
    const swatch = card.querySelector(".swatch");
    if (!swatch.firstChild) drawSwatch(swatch, side);
    setText(card.querySelector(".seat-name"), seat.taken ? (seat.name || "no name") : "free seat");
    // a local room's people are at this screen ("online" would say nothing to them), not a watcher's elsewhere
    const here = room.mode === "local" && seat.kind === "human" && R.you.length > 0;
    // an agent that cannot play its own moves on this board says whose it plays (ntuple with no network for it)
    const instead = seat.plays_instead ? `, ${seat.plays_instead.split(":")[0]}'s moves on this board` : "";
    const kind = seat.kind === "agent" ? `computer · ${seat.spec}${instead}` : here ? "at this screen" : seat.taken ? "person" : "nobody yet";
    setText(card.querySelector(".seat-kind"), `${SIDE[side]} · ${kind}`);
    const conn = card.querySelector(".seat-conn");
    // an earlier game a rematch kept is a record: no one can connect to its seats, so no one is online or away
    const present = seat.kind === "human" && seat.taken && !here && !room.kept;
    if (present && !R.connected) {
      // the server is out of reach: the last state's "online" may be stale (the server may be restarting)
      setText(conn, "not known: no connection");
      conn.dataset.state = "unknown";
    } else if (present) {
      const left = forfeitLeft(room, side);
      setText(conn, seat.connected ? "online" : left === null ? "away" : `away · forfeits in ${clock(left)}`);
      conn.dataset.state = seat.connected ? "online" : "away";
    } else {
      // an agent's last move that another agent chose: "not solved in 0.50 s: master's move"
      const fallback = seat.kind === "agent" && seat.fallback;
      setText(conn, fallback ? `· last move ${seat.fallback}` : "");
      conn.dataset.state = fallback ? "fallback" : "";
    }
    const badge = card.querySelector(".seat-badge");
    const thinking = room.thinking === side && room.status === "playing";
    setText(badge, thinking ? "thinking…" : R.you.includes(side) ? "you" : room.status === "over" && room.result === side ? "winner" : "");
    badge.dataset.kind = thinking ? "thinking" : R.you.includes(side) ? "you" : room.result === side ? "winner" : "";
    card.classList.toggle("turn", room.status === "playing" && room.to_move === side);
    card.classList.toggle("winner", room.status === "over" && room.result === side);
    card.dataset.connected = !R.connected ? "" : seat.connected ? "1" : "0";
    card.dataset.taken = seat.taken ? "1" : "0";
  }
}

export function renderControls() {
  const room = R.state;
  const local = room.mode === "local";
  const tokens = moveTokens(room.position);
  $("undo").hidden = !local;
  // both sides one person's (the analysis board, two people at one screen): no move is more "yours" than another
  const againstComputer = Object.values(room.seats).some((seat) => seat.kind === "agent");
  $("undo").title = againstComputer ? "take back your last move" : "take back the last move";
  // the analysis board asks by itself; after the game Review takes its place (so the row keeps New game in view)
  $("hint").hidden = !local || R.analysing || room.status === "over";
  // A new game from the same start: after the end, at this screen's games.
  $("play-again").hidden = !(local && room.status === "over") || R.analysing;
  $("swap-sides").hidden = $("play-again").hidden;
  const givenUp = room.status === "over" && (room.reason === "resign" || room.reason === "forfeit");
  $("undo").disabled = !R.pending && (!R.you.length || givenUp || tokens.length <= room.start_ply ||
    !tokens.some((_, ply) => ply >= room.start_ply && room.seats[ply % 2 === 0 ? "A" : "B"].kind === "human"));
  // while it waits, Hint and Review say so and do nothing, but keep the keyboard's focus (a disabled button drops it)
  $("hint").disabled = room.status !== "playing";
  $("hint").setAttribute("aria-disabled", String(R.hintWaiting));
  setText($("hint").querySelector(".label"), R.hintWaiting ? "Thinking…" : "Hint");
  const review = $("review");
  review.hidden = room.status !== "over";
  review.setAttribute("aria-disabled", String(R.reviewWaiting));
  setText(review.querySelector(".label"), R.reviewWaiting ? "Reviewing…" : "Review");
  const resign = $("resign");
  // the analysis switch in a game against the computer keeps Resign (an analysis board, two people: none)
  resign.hidden = !R.you.length || room.status !== "playing" || (R.analysing && !againstComputer);
  resign.disabled = room.status !== "playing";
  if (!R.resignArmed) resign.classList.remove("armed");
  renderRematch(room);
  const rematch = $("rematch");
  rematch.hidden = room.status !== "over";
  const params = new URLSearchParams({ board: R.drawn ? "random" : positionHeader(room.position), mode: room.mode });
  if (R.drawn === "bonus") params.set("bonus", "1");
  if (local) {
    const players = roomPlayers(room);
    params.set("p1", players.A);
    params.set("p2", players.B);
  }
  rematch.href = `/?${params}`;
  keepFocus($("board"));
}

/** An online room after the game: the players' Rematch (the sides swapped,
 * in this room), the offer and its answer; the room's earlier games. */
function renderRematch(room) {
  const online = room.mode === "online";
  const offered = online && room.status === "over" ? room.rematch : null;
  const mine = Boolean(offered) && R.you.includes(offered);
  $("offer-rematch").hidden = !online || room.status !== "over" || !R.you.length || Boolean(offered);
  const news = $("rematch-panel").hidden && Boolean(offered) && !mine && R.you.length > 0;
  $("rematch-panel").hidden = !offered;
  $("rematch-accept").hidden = !offered || mine || !R.you.length;
  $("rematch-decline").hidden = !offered || !R.you.length;
  setText($("rematch-decline"), mine ? "Take back" : "Decline");
  if (offered) {
    const by = subjectLabel(room, offered);
    const side = R.you.length ? (R.you.includes("A") ? "B" : "A") : null; // a rematch swaps the sides
    const them = OTHER[offered];
    const away = room.seats[them].connected ? "" : ", who has left the room, to come back and";
    setLive($("rematch-text"), mine
      ? `You offered a rematch (the sides swapped): waiting for ${away ? seatLabel(room, them) + away : subjectLabel(room, them)} to accept.`
      : side
        ? `${by} offers a rematch in this room: you would play ${SIDE[side]}.`
        : `${by} offers a rematch in this room.`);
    if (news) revealBelow($("rematch-panel")); // an offer to answer: on a short phone it lay under the fold
  }
  const earlier = online ? room.earlier || [] : [];
  $("earlier-games").hidden = !earlier.length;
  const links = $("earlier-links");
  links.replaceChildren();
  earlier.forEach((code, i) => {
    const link = document.createElement("a");
    link.href = `/games/${encodeURIComponent(code)}`;
    link.className = "earlier-game";
    link.dataset.code = code;
    setText(link, `game ${i + 1}`);
    if (i) links.append(", ");
    links.append(link);
  });
}

function renderPanels() {
  const room = R.state;
  const online = room.mode === "online";
  const share = $("share-panel");
  // the invite is the players' own, while the game is to be played; its warning, about an opponent elsewhere, while a seat is free
  share.hidden = !online || !R.you.length || room.status === "over";
  $("share-link").value = inviteLink(R.code);
  const free = ["A", "B"].filter((s) => !room.seats[s].taken);
  $("share-local").hidden = !reachedLocally() || !free.length;
  setText($("share-text"), room.status === "waiting" && R.you.length
    ? "Send this link to your opponent: the first to open it takes the free seat. Anyone else watches."
    : "Anyone who opens this link watches the game.");
  const join = $("join-panel");
  const canJoin = online && !R.you.length && !R.token && !R.watching && free.length > 0 && room.status !== "over";
  join.hidden = !canJoin;
  if (canJoin) {
    const host = ["A", "B"].find((s) => room.seats[s].taken);
    const side = free[0];
    const who = host ? `${SIDE[host]}, ${room.seats[host].name || "your host"},` : "Nobody";
    // a host whose page is closed is not waiting: their seat is kept, the game would start with them away
    const hostAway = host && !room.seats[host].connected;
    setText($("join-text"), `${who} ${hostAway ? "made this room but is away just now" : "is waiting for an opponent"}. ` +
      `Take seat ${SIDE[side]} (${side === "A" ? "moves first" : "moves second"}) to play, or just watch.`);
    setText($("join-seat"), `Take seat ${side}`);
  }
  $("view-room").classList.toggle("aside-first", canJoin || (room.status === "waiting" && R.you.length > 0));
  document.body.classList.toggle("watching", !R.you.length && !canJoin);
  $("keys-help").classList.toggle("over", room.status === "over"); // no piece to drop: the stepping keys alone
  $("board").dataset.role = R.you.length ? "player" : "spectator";
  renderWatchers(room, canJoin);
}

/** Who watches: a spectator is told so from the first state (not only when
 * a key is refused); players see how many watch. A page with a saved token
 * waits for the answer to its hello before calling itself a spectator, and
 * a visitor offered the free seat (``canJoin``) has not chosen to watch yet. */
function renderWatchers(room, canJoin) {
  const badge = $("watchers");
  const count = room.watchers || 0;
  const spectator = !R.you.length && !R.token && !canJoin;
  let text = "";
  if (room.kept) text = `An earlier game of room ${room.code.replace(/-\d+$/, "")}: a record, no one plays here`;
  else if (spectator) {
    const others = Math.max(0, count - 1);
    text = others ? `You are watching (with ${others} other${others === 1 ? "" : "s"})` : "You are watching";
  } else if (R.you.length && count > 0) text = `${count} watching`;
  $("view-room").dataset.mode = room.mode; // an online room keeps a phone's row for the badge (style.css)
  setLive(badge, text); // a live region: heard when the count changes, not after every move
  badge.hidden = !text;
  badge.dataset.role = spectator ? "spectator" : "player";
  badge.dataset.count = String(count);
  badge.title = room.kept ? "A rematch kept this finished game: its players play on in the room itself."
    : spectator ? "You hold no seat: you see every move as it is played."
    : `${count} ${count === 1 ? "person is" : "people are"} watching this game (they cannot move).`;
}

function drawSwatch(svg, owner) {
  svg.replaceChildren();
  pieceShape(owner, svg, 26);
}
