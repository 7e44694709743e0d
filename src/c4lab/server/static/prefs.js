// The settings panel of the top bar: the theme (the pieces' colours), light
// or dark, and the sound of a drop. Each choice takes effect at once and is
// remembered (settings.js); theme.js shows the look, sound.js plays.
//
// May import: theme.js, sound.js, settings.js, util.js.

import { savedLook, saveSound, soundWanted } from "./settings.js";
import { listenForDrops, playDrop } from "./sound.js";
import { chooseLook, startLook } from "./theme.js";
import { $ } from "./util.js";

function setOpen(open) {
  $("settings-panel").hidden = !open;
  $("settings-button").setAttribute("aria-expanded", String(open));
}

/** Start the look, the sound and the panel (once, from app.js). */
export function startPrefs() {
  startLook();
  listenForDrops();
  const button = $("settings-button");
  const panel = $("settings-panel");
  if (!button || !panel) return;
  const look = savedLook();
  $("theme-pieces").value = look.pieces;
  $("theme-mode").value = look.mode;
  $("sound-toggle").checked = soundWanted();
  button.addEventListener("click", () => setOpen(panel.hidden));
  $("settings-close").addEventListener("click", () => {
    setOpen(false);
    button.focus();
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !panel.hidden) {
      setOpen(false);
      button.focus();
    }
  });
  document.addEventListener("pointerdown", (event) => {
    if (!panel.hidden && !panel.contains(event.target) && !button.contains(event.target)) setOpen(false);
  });
  $("theme-pieces").addEventListener("change", (event) => chooseLook({ pieces: event.target.value }));
  $("theme-mode").addEventListener("change", (event) => chooseLook({ mode: event.target.value }));
  $("sound-toggle").addEventListener("change", (event) => {
    saveSound(event.target.checked);
    if (event.target.checked) playDrop("A"); // a sample, and the gesture that lets audio start
  });
}
