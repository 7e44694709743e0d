// Settings kept in the browser: the player's name, the token of each room
// this browser holds a seat in, the list of recent rooms (localStorage) and
// the "watch a game between agents from its first move" flag a new game
// leaves for its room page (sessionStorage). Storage can be missing (private
// mode): then the page still works until it is closed. Themes will live here.
//
// May import: nothing (browser globals only).

const NAME_KEY = "c4lab.name";
const RECENT_KEY = "c4lab.recent";
const WATCH_KEY = "c4lab.watch:";

// tokens: localStorage "c4lab:<code>" holds the token of that room
export function tokenFor(code) {
  try {
    return localStorage.getItem(`c4lab:${code}`);
  } catch (err) {
    return null;
  }
}

export function saveToken(code, token) {
  try {
    localStorage.setItem(`c4lab:${code}`, token);
    const recent = JSON.parse(localStorage.getItem(RECENT_KEY) || "[]").filter((r) => r.code !== code);
    recent.unshift({ code, t: Date.now() });
    localStorage.setItem(RECENT_KEY, JSON.stringify(recent.slice(0, 12)));
  } catch (err) {
    /* private mode: the game still works until the page is closed */
  }
}

export function forgetToken(code) {
  try {
    localStorage.removeItem(`c4lab:${code}`);
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

/** Ask the room page of `code` to show a game between agents from its start. */
export function watchFromStart(code) {
  try {
    sessionStorage.setItem(WATCH_KEY + code, "1");
  } catch (err) {
    /* the game is then shown as it is */
  }
}

/** Whether the room page of `code` was asked to (the flag is used up). */
export function takeWatchFromStart(code) {
  try {
    const asked = sessionStorage.getItem(WATCH_KEY + code) === "1";
    sessionStorage.removeItem(WATCH_KEY + code);
    return asked;
  } catch (err) {
    return false;
  }
}
