// Small helpers shared by every view: DOM shortcuts, the JSON API client
// (api, ApiError, detailText), the toast, copying to the clipboard, the
// room's message line (say) and the keyboard focus kept through a redraw
// (keepFocus).
//
// May import: nothing (browser globals only).
//
// Everything that comes from the server or from a person is inserted with
// textContent or setAttribute, never as HTML.

export const $ = (id) => document.getElementById(id);

function textOf(value) {
  return value === null || value === undefined ? "" : String(value);
}

/** Text from the address as the page says it back: a character nobody can
 * read there (a control, a NUL: "/games/%00" showed a gap) as its \u escape. */
export function readable(text) {
  return String(text).replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

export function setText(node, value) {
  node.textContent = textOf(value);
}

/** The words of a live region that says a state (who watches, the
 * position viewed, an offer): replaced only when they change, since a
 * screen reader says a region again each time its text is replaced, even
 * by the same words. */
export function setLive(node, value) {
  const text = textOf(value);
  if (node.textContent !== text) node.textContent = text;
}

export function show(viewId) {
  for (const view of document.querySelectorAll(".view")) view.hidden = view.id !== viewId;
  document.body.dataset.view = viewId.replace("view-", "");
  for (const link of document.querySelectorAll(".topbar nav a")) {
    const here = (viewId === "view-home" && link.id === "nav-new") ||
      ((viewId === "view-games" || viewId === "view-replay") && link.id === "nav-games");
    link.classList.toggle("current", here);
    // the page the reader is on: said, not only drawn underlined
    if (here) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

/** Plain words for an HTTP error body ({"detail": ...}). */
export function detailText(detail, status) {
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    return detail.map((d) => {
      const where = (d.loc || []).filter((p) => p !== "body").join(".");
      return where ? `${where}: ${d.msg}` : d.msg;
    }).join("; ");
  }
  return `the server answered ${status}`;
}

export class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

export async function api(method, path, body) {
  let response;
  try {
    response = await fetch(path, {
      method,
      headers: body === undefined ? {} : { "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new ApiError("Cannot reach the server: is it still running?", 0);
  }
  let data = null;
  try {
    data = await response.json();
  } catch (err) {
    data = null;
  }
  if (!response.ok) {
    throw new ApiError(detailText(data && data.detail, response.status), response.status);
  }
  return data;
}

let toastTimer = null;
/** A short notice that goes by itself. With `anchor` (the button pressed),
 * it shows just under that button, where the person is looking (at the
 * bottom of the window it was far from a Copy button at the top of a phone's
 * page or in the side panel); else at the bottom of the window. */
export function toast(message, anchor = null) {
  const node = $("toast");
  setText(node, message);
  node.hidden = false;
  node.classList.toggle("anchored", Boolean(anchor));
  node.style.left = node.style.top = "";
  if (anchor) {
    const box = anchor.getBoundingClientRect();
    const room = document.documentElement.clientWidth - node.offsetWidth - 8; // kept inside the window
    const left = Math.max(8, Math.min(box.left + box.width / 2 - node.offsetWidth / 2, room));
    node.style.left = `${left + window.scrollX}px`;
    node.style.top = `${box.bottom + window.scrollY + 6}px`;
  }
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { node.hidden = true; }, 2200);
}

/** Copy `value` to the clipboard and say so under `button` (see toast). */
export async function copyText(value, what, button = null) {
  let done = false;
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(value);
      done = true;
    } catch (err) {
      done = false;
    }
  }
  if (!done) {
    const area = document.createElement("textarea");
    area.value = value;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    try {
      done = document.execCommand("copy");
    } catch (err) {
      done = false;
    }
    area.remove();
  }
  toast(done ? `${what} copied` : `Select the ${what.toLowerCase()} and copy it by hand`, button);
}

/** The message line under the room board: kind "info", "error", "hint" or
 * "sticky" (stays); the others fade after a few seconds. With ``short``, a
 * phone shows it instead of ``text`` (one line, where ``text`` took three
 * and pushed the controls below the window), and so does a wider screen
 * where ``text`` would wrap (the controls moved down a line, and back when
 * it faded), with ``text`` as its tooltip; a screen reader says ``text``. */
let sayTimer = null;
export function say(text, kind = "info", short = null) {
  const node = $("message");
  if (short) {
    const [full, brief] = [document.createElement("span"), document.createElement("span")];
    [full.className, brief.className] = ["message-full", "message-short"];
    brief.setAttribute("aria-hidden", "true");
    setText(full, text);
    setText(brief, short);
    node.classList.remove("wraps");
    node.replaceChildren(full, brief);
    const wraps = full.getClientRects().length > 1; // an inline span: a box a line
    node.classList.toggle("wraps", wraps);
    node.title = wraps ? text : ""; // the long words on hovering the short ones
  } else {
    setText(node, text);
    node.title = "";
  }
  node.dataset.kind = kind;
  clearTimeout(sayTimer);
  if (text && kind !== "sticky") sayTimer = setTimeout(() => { setText(node, ""); }, kind === "error" ? 6000 : 4000);
}

/** On a narrow screen (the board above the panels), bring ``board`` into
 * view: a review row or move clicked far below it shows its position. The
 * board's scroll margin (style.css) keeps the scores above it clear of the
 * sticky top bar. */
export function boardIntoView(board) {
  if (window.innerWidth <= 900 && board.scrollIntoView) board.scrollIntoView({ block: "nearest" });
}

/** Scroll `node` up into view if it lies below the window's bottom (on a
 * phone's short screen, under the board); never when it is above, where
 * the person has scrolled past it. */
export function revealBelow(node) {
  if (node.getBoundingClientRect().bottom > window.innerHeight && node.scrollIntoView) node.scrollIntoView({ block: "nearest" });
}

/** The link to give an opponent: the room on the address this page was
 * reached on (location.origin: the host and port typed or followed, never
 * an address the server was started with). */
export function inviteLink(code) {
  return `${location.origin}/r/${encodeURIComponent(code)}`;
}

/** Whether that address only works on this computer (127.x, localhost,
 * ::1, or 0.0.0.0, which a server listening on every interface prints). */
export function reachedLocally() {
  const host = location.hostname.replace(/^\[|\]$/g, "");
  return host === "localhost" || host.endsWith(".localhost") || host === "::1" || host === "0.0.0.0" ||
    /^127\./.test(host);
}

// The control last focused from the keyboard (focus shown: :focus-visible)
// and the list it is an entry of (a move list or a review list, rebuilt on
// every redraw). A focus given by a mouse is left alone.
let keyboardFocus = null;
let keyboardList = null;
document.addEventListener("focusin", (event) => {
  const target = event.target;
  keyboardFocus = target.matches && target.matches(":focus-visible") ? target : null;
  keyboardList = keyboardFocus && keyboardFocus.closest(".moves, .review-list");
});

function usable(node) {
  return Boolean(node) && node.isConnected && !node.disabled && node.getClientRects().length > 0;
}

/** Whether a new game's board may take the keyboard's focus: it is on
 * nothing in particular (the page itself), on the board already, or on a
 * control matched by `within` (which the new game takes away); never from
 * a field or control the person has gone to meanwhile. */
export function focusIsFree(within) {
  const now = document.activeElement;
  return !now || now === document.body || now.id === "board" || Boolean(now.closest && now.closest(within));
}

// The kind of pointer that last went down on the page (a mouse, a pen, a finger): some browsers give a
// click no pointerType of its own (Safari before 17), and then the pointer pressed just before it tells.
let lastPointer = "";
document.addEventListener("pointerdown", (event) => { lastPointer = event.pointerType; }, true);

/** Whether `click` came from a finger (a phone), which should put no focus
 * on a board (a piece would hover over a column): its own pointerType where
 * the browser gives one, else the last pointer pressed; a click made with a
 * key (Enter, Space: no pointer, `detail` 0) never. */
export function byFinger(click) {
  return click.detail !== 0 && (click.pointerType || lastPointer) === "touch";
}

/** After a redraw: if the control the keyboard was on has been hidden,
 * disabled or rebuilt (the browser then drops the focus on the page itself,
 * and the next Tab starts again from the top), put the focus on its
 * rebuilt twin (the entry of the same list with the same data-ply) or else
 * on `fallback`. Nothing changes for a focus that still stands or for one
 * a mouse gave. */
export function keepFocus(fallback) {
  const lost = keyboardFocus;
  const now = document.activeElement;
  if (!lost || (now && now !== document.body && usable(now)) || usable(lost)) return;
  const ply = lost.dataset && lost.dataset.ply;
  const twin = ply && keyboardList && keyboardList.isConnected && keyboardList.querySelector(`[data-ply="${ply}"]`);
  const next = usable(twin) ? twin : fallback;
  if (usable(next)) next.focus({ preventScroll: true });
}
