// The page's look: the pieces' colours ("contrast": white and black with
// ring markers, safe for colour-blind players, the default; "classic": red
// and yellow with the same markers) and light or dark ("auto" follows the
// system's prefers-color-scheme, and follows it when it changes).
//
// The look is three attributes of <html>, which style.css and themes.css
// read: data-pieces, data-mode (the choice) and data-scheme ("light" or
// "dark", what is shown). index.html's <head> sets them from the saved
// choice before the first paint (no flash of the wrong look); this module
// keeps them up to date afterwards.
//
// May import: settings.js only.

import { MODES, PIECE_COLOURS, PIECES, saveLook, savedLook } from "./settings.js";

const DARK_QUERY = "(prefers-color-scheme: dark)";

function systemDark() {
  try {
    return Boolean(window.matchMedia && window.matchMedia(DARK_QUERY).matches);
  } catch (err) {
    return false;
  }
}

/** Show `look` ({pieces, mode}) on the page. */
export function applyLook(look) {
  const root = document.documentElement;
  const pieces = PIECES.includes(look.pieces) ? look.pieces : PIECES[0];
  const mode = MODES.includes(look.mode) ? look.mode : MODES[0];
  const dark = mode === "dark" || (mode === "auto" && systemDark());
  root.dataset.pieces = pieces;
  root.dataset.mode = mode;
  root.dataset.scheme = dark ? "dark" : "light";
  // the page's fixed words for the pieces' colours
  const words = PIECE_COLOURS[pieces];
  for (const node of document.querySelectorAll("[data-colour]")) node.textContent = words[node.dataset.colour] || "";
  for (const node of document.querySelectorAll("[data-colour-label]")) {
    node.textContent = node.dataset.colourLabel.replace(/\{([AB])\}/g, (_, side) => words[side]);
  }
}

/** Save and show a new choice (only the fields given change). */
export function chooseLook(change) {
  const look = { ...savedLook(), ...change };
  saveLook(look);
  applyLook(look);
  return look;
}

/** Show the saved look and follow the system's light or dark from now on. */
export function startLook() {
  applyLook(savedLook());
  try {
    const query = window.matchMedia && window.matchMedia(DARK_QUERY);
    if (query && query.addEventListener) query.addEventListener("change", () => applyLook(savedLook()));
  } catch (err) {
    /* an old browser: the look is fixed until the next load */
  }
}
