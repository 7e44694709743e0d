// The notation of RULES.md, with no DOM and no network: column letters,
// cell names ("d3"), the move tokens of a position string, where a piece
// lands (gravity only) and a replay of the moves. The server decides what
// is legal; these only help draw and describe.
//
// May import: nothing.

export const LETTERS = "abcdefghijkl";

export function cellName(col, row) {
  return LETTERS[col] + String(row);
}

export function parseCell(name) {
  return { col: LETTERS.indexOf(name[0]), row: parseInt(name.slice(1), 10) };
}

/** A position read from the address's query (``search``: location.search),
 * trimmed, "" when absent. Read as written, not as a form's query (where
 * "+" is a space): a position's bonus moves are written with "+" ("b+ac"),
 * and a link typed by hand with a literal "+" means that "+"; a "%20" is a
 * space, quoted as such in the error (it read as "+"). */
export function positionParam(search, name) {
  for (const part of search.replace(/^\?/, "").split("&")) {
    const at = part.indexOf("=");
    if ((at < 0 ? part : part.slice(0, at)) !== name) continue;
    const raw = at < 0 ? "" : part.slice(at + 1);
    try {
      return decodeURIComponent(raw).trim();
    } catch {
      return raw.trim(); // a stray "%": the position's own error names it
    }
  }
  return "";
}

/** The move tokens of a position string ("7x6:dd+ac" -> ["d", "d+a", "c"]). */
export function moveTokens(position) {
  const colon = position.indexOf(":");
  if (colon < 0) return [];
  const text = position.slice(colon + 1);
  const tokens = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i + 1] === "+") {
      tokens.push(text.slice(i, i + 3));
      i += 2;
    } else {
      tokens.push(text[i]);
    }
  }
  return tokens;
}

/** The row a piece dropped in `col` lands on (gravity skips forbidden
 * cells), or null if the column is full. */
export function landingRow(geometry, cells, col) {
  for (let row = 1; row <= geometry.height; row++) {
    const name = cellName(col, row);
    if (geometry.forbidden.includes(name)) continue;
    if (!cells[name]) return row;
  }
  return null;
}

/** The cells after each move of `tokens`, replayed with gravity only (for
 * the replay view and for the order of the falling animations). Returns the
 * list of boards, the first one empty, and the order in which cells filled. */
export function replay(geometry, tokens) {
  const boards = [{}];
  const order = [];
  let cells = {};
  tokens.forEach((token, ply) => {
    cells = { ...cells };
    const side = ply % 2 === 0 ? "A" : "B";
    const drops = [[token[0], side]];
    if (token.length === 3) drops.push([token[2], "ban"]);
    for (const [letter, owner] of drops) {
      const col = LETTERS.indexOf(letter);
      const row = landingRow(geometry, cells, col);
      if (row === null) continue;
      const name = cellName(col, row);
      cells[name] = owner;
      order.push(name);
    }
    boards.push(cells);
  });
  return { boards, order };
}
