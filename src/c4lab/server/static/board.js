// The board, drawn with SVG. No network, no game logic beyond gravity:
// the server decides what is legal; this module only draws and reports
// which column was clicked. Also the piece shapes used elsewhere on the
// page (the home form's small board is miniboard.js).
//
// May import: notation.js only (never the views, the state or the client).
//
// Layers, bottom to top: the back of the holes, the pieces, the frame (a
// rectangle with the holes cut out by a mask, so a falling piece passes
// behind it), overlays (forbidden X, bonus star, win line, hint, last move),
// the preview row above the board, and on top the click targets: one
// transparent column per board column (`data-col`) holding one transparent
// circle per cell (`data-cell`), so a click anywhere in a column plays it.
//
// Everything that comes from the server or from a person is inserted with
// textContent or setAttribute, never as HTML.

import { LETTERS, cellName, parseCell } from "./notation.js";

const SVG_NS = "http://www.w3.org/2000/svg";
const S = 64; // cell size in SVG units
const PAD = 10; // frame border around the holes
const LEFT = 26; // room for the row numbers
// A large board (9 or more columns or rows) is drawn smaller on screen: its
// letters and numbers are larger in SVG units (style.css, .labels.large),
// with more room beside and under the frame for them.
const LARGE = 9;
const LEFT_LARGE = 40;
const BOTTOM_LARGE = 42;
export const TOP = S * 0.95; // the preview row above the board (the scores above the columns are drawn in it too)
// From this many columns a column is too narrow for its score in large
// type: the scores above the columns take two staggered rows (review.js),
// the second in this much more room above the preview row.
export const WIDE = 9;
const TOP_WIDE_EXTRA = S;
const BOTTOM = 30; // room for the column letters
const HOLE_R = S * 0.38;
const PIECE_R = S * 0.36;
let uid = 0;

export function el(name, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attrs)) {
    if (value !== null && value !== undefined) node.setAttribute(key, String(value));
  }
  if (parent) parent.appendChild(node);
  return node;
}

/** The top of the frame: the preview row above it, and on a wide board the
 * second row of scores above that. */
export function topOf(geometry) {
  return geometry.width >= WIDE ? TOP + TOP_WIDE_EXTRA : TOP;
}

/** Whether the board's letters and numbers are drawn large (a large board). */
function large(geometry) {
  return Math.max(geometry.width, geometry.height) >= LARGE;
}

/** The left of the frame: the row numbers' room. */
function leftOf(geometry) {
  return large(geometry) ? LEFT_LARGE : LEFT;
}

function centre(geometry, col, row) {
  return {
    x: leftOf(geometry) + PAD + col * S + S / 2,
    y: topOf(geometry) + PAD + (geometry.height - row) * S + S / 2,
  };
}

/** A piece (owner "A", "B" or "ban") as an SVG group centred on 0,0. */
export function pieceShape(owner, parent, radius = PIECE_R) {
  const g = el("g", { class: `piece-body owner-${owner}` }, parent);
  const k = radius / PIECE_R;
  if (owner === "ban") {
    el("circle", { r: radius, class: "ban-disc" }, g);
    el("circle", { r: radius, class: "ban-hatch" }, g);
    el("rect", { x: -17 * k, y: -4.5 * k, width: 34 * k, height: 9 * k, rx: 2 * k, class: "ban-bar" }, g);
  } else {
    el("circle", { r: radius, class: "disc" }, g);
    el("circle", { r: radius * 0.66, class: "ring" }, g);
    if (owner === "B") el("circle", { r: radius * 0.33, class: "ring ring-inner" }, g);
  }
  return g;
}

/** Pattern definitions shared by the pieces of one SVG. */
export function defineHatch(svg) {
  const defs = el("defs", {}, svg);
  const id = `hatch-${++uid}`;
  const pattern = el("pattern", { id, width: 8, height: 8, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" }, defs);
  el("rect", { width: 8, height: 8, class: "hatch-bg" }, pattern);
  el("rect", { width: 3.2, height: 8, class: "hatch-line" }, pattern);
  svg.style.setProperty("--hatch", `url(#${id})`);
  return defs;
}

export class Board {
  /**
   * svg: an empty <svg>. options.onColumn(col, event) is called with the
   * column index of a click; options.onHover(col|null) when the pointer
   * enters or leaves a column. Without onColumn the board is read-only.
   */
  constructor(svg, options = {}) {
    this.svg = svg;
    this.options = options;
    this.geometry = null;
    this.drawn = {}; // cell name -> owner of the pieces on screen
    this.pieceNodes = {};
  }

  /** Draw an empty board (only when the geometry changes). */
  setup(geometry) {
    const same =
      this.geometry &&
      this.geometry.width === geometry.width &&
      this.geometry.height === geometry.height &&
      this.geometry.bonus === geometry.bonus &&
      this.geometry.forbidden.join() === geometry.forbidden.join();
    if (same) return false;
    this.geometry = { ...geometry, forbidden: [...geometry.forbidden] };
    const { width, height, forbidden, bonus } = this.geometry;
    const top = topOf(this.geometry);
    this.top = top;
    const svg = this.svg;
    svg.replaceChildren();
    this.drawn = {};
    this.pieceNodes = {};
    const frameW = width * S + 2 * PAD;
    const frameH = height * S + 2 * PAD;
    const left = leftOf(this.geometry);
    this.left = left;
    const totalW = left + frameW + 6;
    const totalH = top + frameH + (large(this.geometry) ? BOTTOM_LARGE : BOTTOM);
    svg.setAttribute("viewBox", `0 0 ${totalW} ${totalH}`);
    svg.setAttribute("data-width", width);
    svg.setAttribute("data-height", height);
    svg.style.setProperty("--ar", String(totalW / totalH));
    const defs = defineHatch(svg);
    const maskId = `holes-${++uid}`;
    const mask = el("mask", { id: maskId }, defs);
    el("rect", { x: 0, y: 0, width: totalW, height: totalH, fill: "white" }, mask);
    for (let col = 0; col < width; col++) {
      for (let row = 1; row <= height; row++) {
        if (forbidden.includes(cellName(col, row))) continue;
        const c = centre(this.geometry, col, row);
        el("circle", { cx: c.x, cy: c.y, r: HOLE_R, fill: "black" }, mask);
      }
    }
    // back of the holes
    el("rect", { x: left + 3, y: top + 3, width: frameW - 6, height: frameH - 6, rx: 10, class: "board-back" }, svg);
    this.columnGlow = el("g", { class: "column-glow" }, svg);
    this.piecesLayer = el("g", { class: "pieces" }, svg);
    el("rect", { x: left, y: top, width: frameW, height: frameH, rx: 14, class: "frame", mask: `url(#${maskId})` }, svg);
    // labels
    const labels = el("g", { class: large(this.geometry) ? "labels large" : "labels", "aria-hidden": "true" }, svg);
    for (let col = 0; col < width; col++) {
      const c = centre(this.geometry, col, 1);
      const t = el("text", { x: c.x, y: top + frameH + (large(this.geometry) ? 31 : 21), class: "col-label" }, labels);
      t.textContent = LETTERS[col];
    }
    for (let row = 1; row <= height; row++) {
      const c = centre(this.geometry, 0, row);
      const x = large(this.geometry) ? left - 7 : left / 2; // a large board's end 7 before the frame (10-12 ran into it)
      el("text", { x, y: c.y + (large(this.geometry) ? 8 : 5), class: "row-label" }, labels).textContent = String(row);
    }
    // fixed overlays
    const fixed = el("g", { class: "fixed-overlays" }, svg);
    for (const name of forbidden) {
      const { col, row } = parseCell(name);
      const c = centre(this.geometry, col, row);
      const g = el("g", { class: "forbidden", "data-forbidden": name, transform: `translate(${c.x} ${c.y})` }, fixed);
      el("rect", { x: -S / 2 + 5, y: -S / 2 + 5, width: S - 10, height: S - 10, rx: 9, class: "forbidden-tile" }, g);
      el("path", { d: "M-15,-15 L15,15 M15,-15 L-15,15", class: "forbidden-x-halo" }, g);
      el("path", { d: "M-15,-15 L15,15 M15,-15 L-15,15", class: "forbidden-x" }, g);
      const title = el("title", {}, g);
      title.textContent = `${name}: forbidden cell (pieces skip it)`;
    }
    if (bonus) {
      const { col, row } = parseCell(bonus);
      const c = centre(this.geometry, col, row);
      const g = el("g", { class: "bonus", "data-bonus": bonus, transform: `translate(${c.x} ${c.y})` }, fixed);
      el("circle", { r: HOLE_R + 3, class: "bonus-ring" }, g);
      el("path", { d: starPath(0, -HOLE_R - 1, 9, 4), class: "bonus-star" }, g);
      const title = el("title", {}, g);
      title.textContent = `${bonus}: bonus cell (the player who lands here may drop a ban piece)`;
    }
    this.overlays = el("g", { class: "overlays" }, svg);
    this.preview = el("g", { class: "preview" }, svg);
    // click targets
    this.hits = el("g", { class: "hits" }, svg);
    this.columns = [];
    for (let col = 0; col < width; col++) {
      const x = left + PAD + col * S;
      const g = el("g", { class: "col", "data-col": LETTERS[col], "aria-label": `column ${LETTERS[col]}` }, this.hits);
      el("rect", { x, y: 0, width: S, height: top + frameH, class: "col-hit" }, g);
      for (let row = 1; row <= height; row++) {
        const c = centre(this.geometry, col, row);
        const name = cellName(col, row);
        el("circle", {
          cx: c.x, cy: c.y, r: S * 0.46, class: forbidden.includes(name) ? "cell is-forbidden" : "cell",
          "data-cell": name,
        }, g);
      }
      if (this.options.onColumn) {
        g.addEventListener("click", (event) => this.options.onColumn(col, event));
        g.addEventListener("pointerenter", () => this.options.onHover && this.options.onHover(col));
        g.addEventListener("pointerleave", () => this.options.onHover && this.options.onHover(null));
      }
      this.columns.push(g);
    }
    this.svg.classList.toggle("interactive", Boolean(this.options.onColumn));
    return true;
  }

  /** Show `cells` (name -> owner); new pieces fall in `order` (cell names,
   * oldest first); pieces no longer there (an undo) disappear. */
  setCells(cells, { animate = true, order = [] } = {}) {
    for (const name of Object.keys(this.drawn)) {
      if (cells[name] !== this.drawn[name]) {
        this.pieceNodes[name].remove();
        delete this.pieceNodes[name];
        delete this.drawn[name];
      }
    }
    const fresh = Object.keys(cells).filter((name) => !this.drawn[name]);
    const rank = (name) => {
      const i = order.lastIndexOf(name);
      return i < 0 ? -1 : i;
    };
    fresh.sort((a, b) => rank(a) - rank(b) || parseCell(a).row - parseCell(b).row);
    const animated = animate ? fresh.slice(-3) : [];
    const reduce = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
    this.settleAt = 0;
    fresh.forEach((name) => {
      const owner = cells[name];
      const { col, row } = parseCell(name);
      const c = centre(this.geometry, col, row);
      const outer = el("g", { class: "piece", "data-piece": name, "data-owner": owner, transform: `translate(${c.x} ${c.y})` }, this.piecesLayer);
      const inner = el("g", {}, outer);
      pieceShape(owner, inner);
      this.pieceNodes[name] = outer;
      this.drawn[name] = owner;
      const index = animated.indexOf(name);
      if (index >= 0 && !reduce && inner.animate) {
        const dy = c.y - (this.top - TOP * 0.5);
        const duration = Math.min(480, 190 + 28 * (this.geometry.height - row + 1));
        inner.animate(
          [
            { transform: `translateY(${-dy}px)`, easing: "cubic-bezier(0.55, 0, 1, 0.45)" },
            { transform: "translateY(0px)", offset: 0.78, easing: "ease-out" },
            { transform: `translateY(${-S * 0.09}px)`, offset: 0.89, easing: "ease-in" },
            { transform: "translateY(0px)" },
          ],
          { duration, delay: index * 230, fill: "backwards" },
        );
        this.settleAt = Math.max(this.settleAt, performance.now() + index * 230 + duration * 0.78);
        this.landed(name, owner, index * 230 + duration * 0.78);
      } else if (index >= 0) {
        this.landed(name, owner, 0);
      }
    });
  }

  /** Announce that a falling piece lands, in `ms` (the sound listens). */
  landed(cell, owner, ms) {
    setTimeout(() => {
      if (this.drawn[cell] !== owner) return; // undone meanwhile
      this.svg.dispatchEvent(new CustomEvent("c4lab:land", { bubbles: true, detail: { cell, owner } }));
    }, Math.round(ms));
  }

  /** Overlays that follow the game: the last move, the winning lines
   * (winLines: each line's cells end to end, two or more after a double
   * win; without it, winLine: the cells of one line), the hint, a pending
   * bonus choice. */
  setOverlays({ last = [], winLine = [], winLines = null, hint = null, pending = null, banTargets = null } = {}) {
    const g = this.overlays;
    g.replaceChildren();
    // marks on a piece that is still falling appear when it lands
    const wait = Math.max(0, (this.settleAt || 0) - performance.now());
    const later = (node) => {
      if (wait > 0) node.style.animation = `appear .18s ease-out ${Math.round(wait)}ms both`;
      return node;
    };
    for (const name of last) {
      if (!this.drawn[name]) continue;
      const { col, row } = parseCell(name);
      const c = centre(this.geometry, col, row);
      later(el("circle", { cx: c.x, cy: c.y, r: 5, class: `last-move on-${this.drawn[name]}`, "data-last": name }, g));
    }
    const ringed = new Set();
    for (const cells of winLines && winLines.length ? winLines : [winLine].filter((l) => l.length)) {
      const pts = cells.map((name) => {
        const { col, row } = parseCell(name);
        return { name, ...centre(this.geometry, col, row) };
      });
      let a = pts[0];
      let b = pts[0];
      let best = -1;
      for (const p of pts) for (const q of pts) {
        const d = (p.x - q.x) ** 2 + (p.y - q.y) ** 2;
        if (d > best) { best = d; a = p; b = q; }
      }
      const line = later(el("g", { class: "win-line", "data-win": cells.join(" ") }, g));
      el("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, class: "win-stroke-halo" }, line);
      el("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, class: "win-stroke" }, line);
      for (const p of pts.filter((q) => !ringed.has(q.name))) {
        ringed.add(p.name);
        el("circle", { cx: p.x, cy: p.y, r: PIECE_R + 1, class: "win-ring-halo" }, line);
        el("circle", { cx: p.x, cy: p.y, r: PIECE_R + 1, class: "win-ring" }, line);
      }
    }
    if (pending) {
      const c = centre(this.geometry, pending.col, pending.row);
      const p = el("g", { class: "pending", "data-pending": cellName(pending.col, pending.row), transform: `translate(${c.x} ${c.y})` }, g);
      pieceShape(pending.owner, p);
      el("circle", { r: PIECE_R + 3, class: "pending-ring" }, p);
    }
    if (banTargets) {
      for (const col of banTargets) {
        const x = this.left + PAD + col * S;
        el("rect", { x: x + 4, y: this.top + 4, width: S - 8, height: this.geometry.height * S + 2 * PAD - 8, rx: 8, class: "ban-target", "data-ban-target": LETTERS[col] }, g);
      }
    }
    if (hint) {
      const c = centre(this.geometry, hint.col, hint.row);
      const h = el("g", { class: "hint", "data-hint": hint.token, transform: `translate(${c.x} ${c.y})` }, g);
      const ghost = pieceShape(hint.owner, h);
      ghost.setAttribute("opacity", "0.55");
      el("circle", { r: PIECE_R + 2, class: "hint-ring" }, h);
      const q = el("text", { y: 8, class: `hint-mark on-${hint.owner}` }, h);
      q.textContent = hint.mark || "?"; // the hint asks "here?"; a review's best move says so
      const top = centre(this.geometry, hint.col, this.geometry.height);
      const y = this.top - TOP * 0.65; // as far above the frame on every board
      el("path", { d: `M${top.x - 12},${y} L${top.x + 12},${y} L${top.x},${y + 16} Z`, class: "hint-arrow" }, g);
      if (hint.banCol !== null && hint.banRow !== null) {
        const b = centre(this.geometry, hint.banCol, hint.banRow);
        const bg = el("g", { class: "hint hint-ban", transform: `translate(${b.x} ${b.y})` }, g);
        const ghostBan = pieceShape("ban", bg);
        ghostBan.setAttribute("opacity", "0.55");
        el("circle", { r: PIECE_R + 2, class: "hint-ring" }, bg);
      }
    }
  }

  /** The piece that would be dropped, shown above column `col` (null: none). */
  setPreview(col, owner, { focus = false, landing = null } = {}) {
    this.preview.replaceChildren();
    for (const g of this.columns) g.classList.remove("hover");
    this.columnGlow.replaceChildren();
    // the keyboard's column; where scores are shown above the columns they take the row of its box, so its
    // score is boxed instead (review.js, drawColumnNotes; review.css hides the box and the piece drawn here)
    this.cursor = focus && col !== null && col !== undefined ? col : null;
    for (const note of this.svg.querySelectorAll(":scope > g.column-notes > g.col-note")) {
      note.classList.toggle("at-cursor", note.dataset.note === LETTERS[this.cursor]);
    }
    if (col === null || col === undefined || !this.geometry) return;
    const x = this.left + PAD + col * S + S / 2;
    this.columns[col].classList.add("hover");
    el("rect", { x: x - S / 2 + 2, y: this.top + 2, width: S - 4, height: this.geometry.height * S + 2 * PAD - 4, rx: 8, class: "glow" }, this.columnGlow);
    if (owner) {
      const g = el("g", { transform: `translate(${x} ${this.top - TOP / 2})`, class: "preview-piece", "data-preview": LETTERS[col] }, this.preview);
      pieceShape(owner, g, PIECE_R * 0.8);
      if (landing !== null) {
        const c = centre(this.geometry, col, landing);
        const ghost = el("g", { transform: `translate(${c.x} ${c.y})`, class: "landing-ghost", "data-landing": cellName(col, landing) }, this.preview);
        pieceShape(owner, ghost);
      }
    }
    if (focus) {
      el("rect", { x: x - S / 2 + 3, y: this.top - TOP + 3, width: S - 6, height: TOP - 6, rx: 10, class: "cursor" }, this.preview);
    }
  }

  /** Visible refusal of a click on column `col` (full column, not your turn). */
  refuse(col) {
    const x = this.left + PAD + col * S;
    const flash = el("rect", { x: x + 2, y: this.top + 2, width: S - 4, height: this.geometry.height * S + 2 * PAD - 4, rx: 8, class: "refused", "data-refused": LETTERS[col] }, this.overlays);
    this.svg.classList.remove("shake");
    void this.svg.getBoundingClientRect();
    this.svg.classList.add("shake");
    setTimeout(() => {
      flash.remove();
      this.svg.classList.remove("shake");
    }, 650);
  }
}

function starPath(cx, cy, outer, inner) {
  const pts = [];
  for (let i = 0; i < 10; i++) {
    const r = i % 2 === 0 ? outer : inner;
    const a = (Math.PI / 5) * i - Math.PI / 2;
    pts.push(`${(cx + r * Math.cos(a)).toFixed(2)},${(cy + r * Math.sin(a)).toFixed(2)}`);
  }
  return `M${pts.join(" L")} Z`;
}
