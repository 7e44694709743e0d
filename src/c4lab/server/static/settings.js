// Settings kept in the browser: the player's name, the form's last mode, the
// token of each room this browser holds a seat in, the list of recent rooms
// (localStorage) and the flags a new game leaves for its room page
// (sessionStorage): "watch a game between agents from its first move",
// "focus the board". Storage can be missing (private
// mode): then the page still works until it is closed. Also the look (theme
// and light or dark; index.html reads the same keys before the first paint)
// and whether a drop makes a sound, which rooms are analysis boards, and
// the last evaluation a room's bar showed in this tab (sessionStorage).
//
// May import: nothing (browser globals only).

const NAME_KEY = "c4lab.name";
const PLAYERS_KEY = "c4lab.players";
const RECENT_KEY = "c4lab.recent";
const WATCH_KEY = "c4lab.watch:";
const FORM_MODE_KEY = "c4lab.form-mode"; // the new-game form's mode last started: local, online or analysis
const FOCUS_KEY = "c4lab.focus:";

// tokens: localStorage "c4lab:<code>" holds the token of that room
export function tokenFor(code) {
  try {
    return localStorage.getItem(`c4lab:${code}`);
  } catch (err) {
    return null;
  }
}

/** Keep ``code`` among "Your games", with the seat token its page says
 * hello with (null: none). */
function saveToken(code, token) {
  try {
    if (token) localStorage.setItem(`c4lab:${code}`, token);
    else localStorage.removeItem(`c4lab:${code}`);
    const recent = JSON.parse(localStorage.getItem(RECENT_KEY) || "[]").filter((r) => r.code !== code);
    recent.unshift({ code, t: Date.now() });
    localStorage.setItem(RECENT_KEY, JSON.stringify(recent.slice(0, 12)));
  } catch (err) {
    /* private mode: the game still works until the page is closed */
  }
}

/** Keep a room just made or joined (an API ticket: code, token, seats)
 * among "Your games", with its token where that holds a seat: the creator
 * of a room of two computers holds none and watches (the token was kept,
 * and the page's hello with it was refused as the room opened: "Your saved
 * seat for this room is not valid"). */
export function saveTicket(ticket) {
  saveToken(ticket.code, ticket.seats.length ? ticket.token : null);
}

export function forgetToken(code) {
  try {
    localStorage.removeItem(`c4lab:${code}`);
  } catch (err) {
    /* nothing to do */
  }
}

/** The players last chosen on the new-game form ({1: spec, 2: spec}), so
 * that coming back to the form (Back, New game) offers them again. */
export function savedPlayers() {
  try {
    const kept = JSON.parse(localStorage.getItem(PLAYERS_KEY) || "null");
    return kept && typeof kept[1] === "string" && typeof kept[2] === "string" ? kept : null;
  } catch (err) {
    return null;
  }
}

export function savePlayers(first, second) {
  try {
    localStorage.setItem(PLAYERS_KEY, JSON.stringify({ 1: first, 2: second }));
  } catch (err) {
    /* nothing to do */
  }
}

export function savedName() {
  try {
    return localStorage.getItem(NAME_KEY) || "";
  } catch (err) {
    return "";
  }
}

export function saveName(name) {
  try {
    if (name) localStorage.setItem(NAME_KEY, name);
  } catch (err) {
    /* nothing to do */
  }
}

/** The recent rooms, newest first: [{code, t}] (empty if unreadable). */
export function recentRooms() {
  let recent = [];
  try {
    recent = JSON.parse(localStorage.getItem(RECENT_KEY) || "[]");
  } catch (err) {
    recent = [];
  }
  return recent;
}

// One-off requests from the form to the room page it opens
// (sessionStorage, this tab only): set once, used up when read.

function ask(key) {
  try {
    sessionStorage.setItem(key, "1");
  } catch (err) {
    /* the page then does what it does unasked */
  }
}

function take(key) {
  try {
    const asked = sessionStorage.getItem(key) === "1";
    sessionStorage.removeItem(key);
    return asked;
  } catch (err) {
    return false;
  }
}

/** Ask the room page of `code` to show a game between agents from its start. */
export function watchFromStart(code) {
  ask(WATCH_KEY + code);
}

/** Whether the room page of `code` was asked to (the flag is used up). */
export function takeWatchFromStart(code) {
  return take(WATCH_KEY + code);
}

/** Ask the room page of `code` to put the keyboard's focus on its board
 * (a game started from the form: its keys play at once). */
export function focusBoardOnArrival(code) {
  ask(FOCUS_KEY + code);
}

/** Whether the room page of `code` was asked to (the flag is used up). */
export function takeFocusBoard(code) {
  return take(FOCUS_KEY + code);
}

/** The new-game form's mode last started here ("local", "online",
 * "analysis"), null if none: the form offers it again. */
export function savedMode() {
  return read(FORM_MODE_KEY);
}

export function saveMode(mode) {
  write(FORM_MODE_KEY, mode);
}

// the analysis board: localStorage "c4lab.analyse:<code>" is "1" while that
// room shows every column's score after every move (the switch, the
// /analyse link, the form's entry)
const ANALYSE_KEY = "c4lab.analyse:";

/** true or false as last chosen here for the room, null if never. */
export function analysing(code) {
  const saved = read(ANALYSE_KEY + code);
  return saved === null ? null : saved === "1";
}

export function saveAnalysing(code, on) {
  write(ANALYSE_KEY + code, on ? "1" : "0");
}

// a board drawn at random by the form here: localStorage "c4lab.drawn:<code>"
// is "plain" or "bonus", so that the room's New game draws another one
const DRAWN_KEY = "c4lab.drawn:";

export function drawnBoard(code) {
  const saved = read(DRAWN_KEY + code);
  return saved === "plain" || saved === "bonus" ? saved : null;
}

export function saveDrawn(code, bonus) {
  write(DRAWN_KEY + code, bonus ? "bonus" : "plain");
}

// the last evaluation shown in a room: sessionStorage "c4lab.eval:<code>"
// (this tab only) is {value, position}, shown again after a reload
const EVAL_KEY = "c4lab.eval:";

/** The evaluation kept for the room `code` in this tab: {value, position}, or null. */
export function savedEvaluation(code) {
  try {
    const kept = JSON.parse(sessionStorage.getItem(EVAL_KEY + code) || "null");
    return kept && typeof kept.value === "number" && typeof kept.position === "string" ? kept : null;
  } catch (err) {
    return null;
  }
}

export function saveEvaluation(code, evaluation) {
  try {
    sessionStorage.setItem(EVAL_KEY + code, JSON.stringify(evaluation));
  } catch (err) {
    /* the bar shows it until the page is closed */
  }
}

// the analysis board's line in a local room: sessionStorage "c4lab.line:<code>"
// (this tab only) is its moves as tokens, those undone included, so that a
// reload keeps what redo plays again
const LINE_KEY = "c4lab.line:";

/** The line kept for the room `code` in this tab: its move tokens, or []. */
export function savedLine(code) {
  try {
    const kept = JSON.parse(sessionStorage.getItem(LINE_KEY + code) || "[]");
    return Array.isArray(kept) && kept.every((t) => typeof t === "string") ? kept : [];
  } catch (err) {
    return [];
  }
}

export function saveLine(code, tokens) {
  try {
    sessionStorage.setItem(LINE_KEY + code, JSON.stringify(tokens));
  } catch (err) {
    /* redo keeps it until the page is closed */
  }
}

// the look: keys also read by the script in index.html's <head>
const PIECES_KEY = "c4lab.pieces"; // "contrast" (colour-blind safe, the default) or "classic"
const MODE_KEY = "c4lab.mode"; // "auto" (follow the system, the default), "light" or "dark"
const SOUND_KEY = "c4lab.sound"; // "1": a sound when a piece lands (off by default)
export const PIECES = ["contrast", "classic"];
/** The colour of each side's pieces in each look, the one list of the page's colour words (theme.js,
 * describe.js): the colour-blind safe look shows white and black, RULES.md's; the classic one red and yellow. */
export const PIECE_COLOURS = { contrast: { A: "white", B: "black" }, classic: { A: "red", B: "yellow" } };
export const MODES = ["auto", "light", "dark"];

function read(key) {
  try {
    return localStorage.getItem(key);
  } catch (err) {
    return null;
  }
}

function write(key, value) {
  try {
    localStorage.setItem(key, value);
  } catch (err) {
    /* kept until the page is closed */
  }
}

/** The chosen look: {pieces, mode}, the defaults for anything unknown. */
export function savedLook() {
  const pieces = read(PIECES_KEY);
  const mode = read(MODE_KEY);
  return { pieces: PIECES.includes(pieces) ? pieces : PIECES[0], mode: MODES.includes(mode) ? mode : MODES[0] };
}

export function saveLook({ pieces, mode }) {
  if (PIECES.includes(pieces)) write(PIECES_KEY, pieces);
  if (MODES.includes(mode)) write(MODE_KEY, mode);
}

export function soundWanted() {
  return read(SOUND_KEY) === "1";
}

export function saveSound(on) {
  write(SOUND_KEY, on ? "1" : "0");
}
