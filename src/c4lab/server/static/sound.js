// An optional sound when a piece lands (off by default; the settings panel
// turns it on and settings.js remembers it). The sound is made with WebAudio
// at play time: a short knock, a little higher for A than for B and duller
// for a ban piece, so no audio file is needed. Nothing here ever throws: a
// browser without WebAudio, or one that refuses it, stays silent.
//
// The board announces a landing with a "c4lab:land" event (detail: cell,
// owner) on its <svg>; listenForDrops() plays on each one.
// <html data-sounds="n"> counts the sounds played (for the tests).
//
// May import: settings.js only.

import { soundWanted } from "./settings.js";

let audio = null; // the AudioContext, made on first use
let broken = false; // WebAudio is missing or failed: stay silent
let played = 0;

function context() {
  if (audio || broken) return audio;
  try {
    const Context = window.AudioContext || window.webkitAudioContext;
    if (!Context) {
      broken = true;
      return null;
    }
    audio = new Context();
  } catch (err) {
    broken = true;
    audio = null;
  }
  return audio;
}

/** Browsers start audio only after a gesture: wake the context on one. */
function wake() {
  if (!soundWanted()) return;
  const ac = context();
  try {
    if (ac && ac.state === "suspended") ac.resume().catch(() => {});
  } catch (err) {
    /* silent */
  }
}

/** The knock of one piece (owner "A", "B" or "ban"); true if it played. */
export function playDrop(owner = "A") {
  if (!soundWanted()) return false;
  const ac = context();
  if (!ac) return false;
  try {
    if (ac.state === "suspended") ac.resume().catch(() => {});
    const t = ac.currentTime;
    const base = owner === "ban" ? 150 : owner === "B" ? 200 : 250;
    const osc = ac.createOscillator();
    const gain = ac.createGain();
    osc.type = "triangle";
    osc.frequency.setValueAtTime(base * 2, t);
    osc.frequency.exponentialRampToValueAtTime(base, t + 0.06);
    gain.gain.setValueAtTime(0.0001, t);
    gain.gain.exponentialRampToValueAtTime(0.35, t + 0.006);
    gain.gain.exponentialRampToValueAtTime(0.0001, t + 0.16);
    osc.connect(gain).connect(ac.destination);
    osc.start(t);
    osc.stop(t + 0.18);
    // a click of noise for the hit
    const length = Math.floor(ac.sampleRate * 0.025);
    const buffer = ac.createBuffer(1, length, ac.sampleRate);
    const data = buffer.getChannelData(0);
    for (let i = 0; i < length; i++) data[i] = (Math.random() * 2 - 1) * (1 - i / length) ** 2;
    const noise = ac.createBufferSource();
    const noiseGain = ac.createGain();
    noise.buffer = buffer;
    noiseGain.gain.value = owner === "ban" ? 0.12 : 0.2;
    noise.connect(noiseGain).connect(ac.destination);
    noise.start(t);
    played += 1;
    document.documentElement.dataset.sounds = String(played);
    return true;
  } catch (err) {
    return false;
  }
}

/** Play on every landing the page's boards announce. */
export function listenForDrops() {
  document.addEventListener("c4lab:land", (event) => playDrop(event.detail && event.detail.owner));
  document.addEventListener("pointerdown", wake, { capture: true });
  document.addEventListener("keydown", wake, { capture: true });
}
