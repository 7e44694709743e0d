// The small static picture of a board on the home form: its cells, the
// forbidden one crossed, each a click target that picks the forbidden cell.
//
// May import: board.js (el), notation.js.
//
// Everything that comes from a person is inserted with textContent or
// setAttribute, never as HTML.

import { el } from "./board.js";
import { cellName } from "./notation.js";

/** A small static picture of a board (home form preview). */
export function miniBoard(svg, geometry, { onCell = null } = {}) {
  svg.replaceChildren();
  const s = 22;
  const w = geometry.width * s + 8;
  const h = geometry.height * s + 8;
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  el("rect", { x: 0, y: 0, width: w, height: h, rx: 6, class: "mini-frame" }, svg);
  for (let col = 0; col < geometry.width; col++) {
    for (let row = 1; row <= geometry.height; row++) {
      const name = cellName(col, row);
      const x = 4 + col * s + s / 2;
      const y = 4 + (geometry.height - row) * s + s / 2;
      const isForbidden = geometry.forbidden.includes(name);
      const g = el("g", { class: isForbidden ? "mini-cell is-forbidden" : "mini-cell", "data-mini": name, transform: `translate(${x} ${y})` }, svg);
      el("circle", { r: s * 0.38, class: "mini-hole" }, g);
      if (isForbidden) el("path", { d: "M-6,-6 L6,6 M6,-6 L-6,6", class: "mini-x" }, g);
      const title = el("title", {}, g);
      title.textContent = name;
      if (onCell) g.addEventListener("click", () => onCell(name));
    }
  }
}
