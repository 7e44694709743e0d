// The finished games: the list of public games (/games) and the replay of
// one game move by move (/games/<code>), with its own read-only board.
//
// May import: util.js, describe.js, notation.js, board.js, review.js. Only
// app.js imports it.
//
// Everything that comes from the server or from a person is inserted with
// textContent or setAttribute, never as HTML.

import { Board } from "./board.js";
import { SIDE, endedOnBoard, geometryOf, moveWords, onColourChange, positionHeader, renderMoves, resultText } from "./describe.js";
import { moveTokens, replay } from "./notation.js";
import { bestMoveGhost, drawColumnNotes, markMoves, renderReview, reviewNotes } from "./review.js";
import { $, api, boardIntoView, copyText, keepFocus, readable, setText, show } from "./util.js";

export async function showGames() {
  show("view-games");
  document.title = "c4lab: finished games";
  let games = [];
  try {
    games = await api("GET", "/api/games");
  } catch (err) {
    setText($("games-error"), `The list of games is not available: ${err.message}`);
    return;
  }
  const body = $("games-list");
  body.replaceChildren();
  $("games-empty").hidden = games.length > 0;
  $("games-table").hidden = games.length === 0;
  for (const game of games) {
    const tr = document.createElement("tr");
    tr.dataset.code = game.code;
    const cells = [
      `${game.names.A || "?"} vs ${game.names.B || "?"}`,
      resultText({ result: game.result, reason: game.reason, seats: { A: { taken: true, name: game.names.A }, B: { taken: true, name: game.names.B } } }),
      positionHeader(game.position),
      String(moveTokens(game.position).length),
      game.finished ? new Date(game.finished * 1000).toLocaleString() : "",
    ];
    const labels = ["Players", "Result", "Board", "Moves", "Finished"];
    for (const [i, value] of cells.entries()) {
      const td = document.createElement("td");
      td.dataset.label = labels[i];
      setText(td, value);
      tr.appendChild(td);
    }
    const td = document.createElement("td");
    const a = document.createElement("a");
    a.href = `/games/${encodeURIComponent(game.code)}`;
    a.className = "button quiet replay-link";
    setText(a, "Replay");
    td.appendChild(a);
    tr.appendChild(td);
    body.appendChild(tr);
  }
}

export async function showReplay(code) {
  show("view-replay");
  document.title = "c4lab: replay";
  let game;
  try {
    game = await api("GET", `/api/games/${encodeURIComponent(code)}`);
  } catch (err) {
    if (err.status === 404) {
      show("view-missing");
      setText($("missing-text"), `There is no game ${readable(code)}.`);
    } else {
      setText($("replay-error"), `The game could not be loaded: ${err.message}`);
    }
    return;
  }
  const geometry = geometryOf(game);
  const tokens = moveTokens(game.position);
  const { boards, order } = replay(geometry, tokens);
  const header = positionHeader(game.position);
  const board = new Board($("replay-board"));
  board.setup(geometry);
  setText($("replay-title"), `${header} · ${tokens.length} move${tokens.length === 1 ? "" : "s"}`);
  const slider = $("replay-slider");
  slider.max = String(tokens.length);
  slider.addEventListener("input", () => go(Number(slider.value), false));
  const describeGame = () => {
    setText($("replay-names"), `${SIDE.A}: ${game.seats.A.name || "?"} · ${SIDE.B}: ${game.seats.B.name || "?"}`);
    setText($("replay-result"), game.status === "over" ? resultText(game) : "This game is still going on.");
  };
  describeGame();
  let ply = -1;
  let review = null; // the exact solver's verdicts, once asked for
  $("replay-review-panel").hidden = game.status !== "over";
  $("replay-review").addEventListener("click", async () => {
    const button = $("replay-review");
    if (button.getAttribute("aria-disabled") === "true") return; // asked already: not disabled, which would drop the focus
    button.setAttribute("aria-disabled", "true");
    setText(button, "Reviewing…");
    try {
      review = await api("GET", `/api/games/${encodeURIComponent(code)}/review`);
      go(ply, false);
      button.hidden = true;
      keepFocus($("replay-review-list").querySelector(".current") || $("replay-review-list").querySelector("button"));
    } catch (err) {
      setText($("replay-error"), `The review is not available: ${err.message}`);
      button.setAttribute("aria-disabled", "false");
      setText(button, "Review");
    }
  });

  function go(target, animate) {
    const next = Math.max(0, Math.min(tokens.length, target));
    const forward = next === ply + 1;
    ply = next;
    board.setCells(boards[ply], { animate: animate && forward, order });
    const before = boards[ply - 1] || {};
    const last = ply ? Object.keys(boards[ply]).filter((n) => !before[n]) : [];
    const end = ply === tokens.length;
    const hint = review ? bestMoveGhost(review, ply, geometry, boards[ply]) : null;
    board.setOverlays({ last, winLine: end ? game.win_line || [] : [], winLines: end ? game.win_lines : null, hint });
    const position = ply ? `${header}:${tokens.slice(0, ply).join("")}` : header;
    $("replay-position").value = position;
    $("replay-from-here").href = `/?board=${encodeURIComponent(position)}`;
    // no game starts where this one ended on the board (the form would refuse it); after a resignation it can
    $("replay-from-here").hidden = end && (game.reason === "four" || game.reason === "full");
    $("replay-analyse").href = `/analyse?position=${encodeURIComponent(position)}`;
    $("replay-board").dataset.ply = String(ply);
    $("replay-board").dataset.position = position;
    setText($("replay-ply"), `${ply} / ${tokens.length}`);
    $("replay-slider").value = String(ply);
    let status;
    if (ply === 0) status = "Start position";
    else {
      const side = (ply - 1) % 2 === 0 ? "A" : "B";
      status = `Move ${ply}: ${SIDE[side]} played ${moveWords(geometry, boards, tokens, ply - 1, endedOnBoard(game))}`; // as the list names it
    }
    if (end && game.status === "over") status += ` · ${resultText(game)}`;
    setText($("replay-status"), status);
    $("replay-first").disabled = ply === 0;
    $("replay-prev").disabled = ply === 0;
    $("replay-next").disabled = end;
    $("replay-last").disabled = end;
    renderMoves($("replay-moves"), tokens, { startPly: game.start_ply, current: ply, onPick: (p) => go(p, false), geometry, ended: endedOnBoard(game) });
    if (review) {
      const parts = { summary: $("replay-review-summary"), list: $("replay-review-list"), at: $("replay-review-at") };
      renderReview(parts, review, { current: ply, onPick: (p) => { go(p, false); boardIntoView($("replay-board")); } });
      markMoves($("replay-moves"), review);
      drawColumnNotes(board, reviewNotes(review, ply));
    }
    keepFocus($("replay-slider")); // Prev at the start, Next at the end, a list entry rebuilt
  }

  $("replay-first").addEventListener("click", () => go(0, false));
  $("replay-prev").addEventListener("click", () => go(ply - 1, false));
  $("replay-next").addEventListener("click", () => go(ply + 1, true));
  $("replay-last").addEventListener("click", () => go(tokens.length, false));
  $("replay-copy").addEventListener("click", (e) => copyText($("replay-position").value, "Position", e.currentTarget));
  document.addEventListener("keydown", (event) => {
    if (event.target.closest && event.target.closest("input, textarea, select")) return;
    const moves = { ArrowLeft: ply - 1, ArrowRight: ply + 1, Home: 0, End: tokens.length };
    if (event.key in moves) {
      event.preventDefault();
      go(moves[event.key], event.key === "ArrowRight");
    }
  });
  go(tokens.length, false);
  onColourChange(() => { // the colour names follow a new theme
    describeGame();
    go(ply, false);
  });
}
