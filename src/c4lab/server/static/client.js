// The room client: one WebSocket to /ws/<code> (docs/protocol.md) for every
// room, local games included (the page plays local games through server
// rooms too). Opens it, says hello with the saved token, reconnects with
// backoff, sends, and receives: state and thinking messages go through a
// queue (pump) that shows agent moves one by one, at least GAP_MS apart;
// hints and errors go to their handlers.
//
// May import: state.js, settings.js, util.js. It never imports a view: the
// room page passes its drawing functions to startClient (render,
// renderControls, onHint, onReview), so that nothing imports in a circle.
//
// Everything that comes from the server or from a person is inserted with
// textContent or setAttribute, never as HTML.

import { R, answered, applyState, catchUpFrames, showThinking } from "./state.js";
import { forgetToken } from "./settings.js";
import { $, readable, say, setText, show } from "./util.js";

const GAP_MS = 360; // least time between two moves on screen (agents move fast)

// what the room page draws with (set by startClient)
let hooks = {
  render() {}, renderControls() {}, onState() {}, onHint() {}, onPreparing() {}, onReview() {}, onRematch() {},
  onRefused: () => false,
};

/** The seat token this page says hello with (null: watch). */
export function useToken(token) {
  R.token = token;
}

/** Connect the room R.code: `given` = {render, renderControls, onState(room)
 * (a state applied), onHint(message), onPreparing(message) (a hint waits
 * for numba's compiler), onReview(message), onRematch(message)
 * (an offer of a rematch, its answer), onRefused() (an
 * error: true if a hint or review was awaited)}. */
export function startClient(given) {
  hooks = { ...hooks, ...given };
  window.addEventListener("online", () => { if (!R.ws && !R.gone) connectNow(); });
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible" && !R.ws && !R.gone) connectNow();
  });
  setText($("status"), "Connecting…");
  openSocket();
  R.pingTimer = setInterval(() => send({ type: "ping" }, { quiet: true }), 25000);
}

function openSocket() {
  R.reconnectTimer = null;
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  let ws;
  try {
    ws = new WebSocket(`${proto}//${location.host}/ws/${encodeURIComponent(R.code)}`);
  } catch (err) {
    scheduleReconnect();
    return;
  }
  R.ws = ws;
  R.greeted = false;
  ws.addEventListener("open", () => {
    if (R.ws !== ws) return;
    R.retries = 0;
    R.everConnected = true;
    setBanner(null);
    ws.send(JSON.stringify(R.token ? { type: "hello", token: R.token } : { type: "hello" }));
  });
  ws.addEventListener("message", (event) => {
    if (R.ws !== ws) return;
    let message;
    try {
      message = JSON.parse(event.data);
    } catch (err) {
      return;
    }
    onMessage(message);
  });
  ws.addEventListener("close", (event) => {
    if (R.ws !== ws) return;
    R.ws = null;
    R.connected = false; // who is online, as the last state said, is not known any more: shown so
    if (R.state) hooks.render();
    answered();
    hooks.onRefused(); // a hint or review asked on this socket will not come: the next state asks again
    if (event.code === 4404) {
      R.gone = true;
      return;
    }
    scheduleReconnect();
  });
}

function scheduleReconnect() {
  if (R.reconnectTimer || R.gone) return;
  const delay = Math.min(5000, 250 * 2 ** R.retries);
  R.retries += 1;
  setBanner(R.everConnected ? "Connection lost: reconnecting…" : "Cannot reach the server: retrying…");
  R.reconnectTimer = setTimeout(openSocket, delay);
}

function connectNow() {
  clearTimeout(R.reconnectTimer);
  R.reconnectTimer = null;
  openSocket();
}

function setBanner(text) {
  const banner = $("conn-banner");
  banner.hidden = !text;
  setText(banner, text || "");
  document.body.classList.toggle("offline", Boolean(text));
}

export function send(message, { quiet = false } = {}) {
  if (!R.ws || R.ws.readyState !== WebSocket.OPEN) {
    if (!quiet) say("Not connected to the server right now: reconnecting, try again in a moment.", "error");
    return false;
  }
  R.ws.send(JSON.stringify(message));
  return true;
}

const ERROR_WORDS = {
  "not-your-turn": "Not your turn",
  "not-your-seat": "You cannot move here",
  "illegal-move": "That move is not allowed",
  "game-over": "The game is over",
  "not-allowed": "Not available in this game",
  "bad-token": "Your saved seat for this room is not valid",
  "rate-limited": "Too many actions at once",
  "unknown-room": "This room does not exist",
  "review-failed": "No review",
};

function onMessage(message) {
  switch (message.type) {
    case "state":
      // the server sends a socket's state at once, before it reads the hello: a page that holds a
      // seat would show itself a moment as a spectator (a phone's panels folded away under the
      // finger); the hello's answer follows at once, with the seats (a refused token: an error first)
      if (R.token && !R.greeted && !(message.you && message.you.length)) break;
      R.greeted = true;
      R.connected = true;
      R.queue.push(message);
      pump();
      break;
    case "thinking":
      R.queue.push(message);
      pump();
      break;
    case "hint":
      hooks.onHint(message);
      break;
    case "preparing":
      hooks.onPreparing(message);
      break;
    case "review":
      hooks.onReview(message);
      break;
    case "rematch":
      hooks.onRematch(message);
      break;
    case "error":
      onError(message);
      break;
    default:
      break;
  }
}

function onError(message) {
  answered();
  if (message.code === "bad-token") {
    forgetToken(R.code);
    R.token = null; // the state that follows is this page's, a spectator's
  }
  if (message.code === "unknown-room") {
    R.gone = true;
    show("view-missing");
    setText($("missing-text"), `There is no room ${readable(R.code)}: check the link, or start a new game.`);
    return;
  }
  if (hooks.onRefused()) hooks.renderControls(); // a hint or review asked for will not come
  const lead = ERROR_WORDS[message.code] || "The server refused";
  say(`${lead}: ${message.message}`, "error");
  if (R.state) hooks.render();
}

// -- pacing: several agent moves in a row are shown one by one

function pump() {
  if (R.pumpTimer) return;
  while (R.queue.length) {
    const message = R.queue[0];
    if (message.type === "thinking") {
      R.queue.shift();
      if (R.state && R.state.status === "playing") {
        showThinking(message.seat);
        hooks.render();
      }
      continue;
    }
    const frames = catchUpFrames(message.room);
    if (frames.length) {
      R.queue.splice(0, 0, ...frames.map((room) => ({ type: "state", room, you: message.you, frame: true })));
      continue;
    }
    const changed = R.state && message.room.position !== R.state.position;
    const backlog = R.queue.filter((m) => m.type === "state").length;
    // the analysis board's steps are a person's: shown at once (a jump along the line too)
    const wait = changed && backlog < 40 && !R.analysing ? R.lastChange + GAP_MS - performance.now() : 0;
    if (wait > 0) {
      R.pumpTimer = setTimeout(() => {
        R.pumpTimer = null;
        pump();
      }, wait);
      return;
    }
    R.queue.shift();
    applyState(message.room, message.you, message.frame);
    hooks.onState(message.room);
    hooks.render();
    if (changed) R.lastChange = performance.now();
  }
}
