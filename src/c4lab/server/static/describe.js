// Words and small pieces shared by the views that show a game (the room,
// the recent games, the finished games, the replay): side names, seat
// labels, the result sentence, the position header, the geometry of a room
// or game object, the move list, and the keys line under a room's board.
//
// The vocabulary is every screen's (docs/design.md, "One vocabulary"; the
// terminal's in c4lab/rules/sides.py): a side is its letter, its pieces'
// colour as a helper, "A (white)"; a player follows their side, "A (white),
// Ann"; a result is one sentence, "A (white), Ann, wins: four in a row".
//
// May import: util.js, notation.js, settings.js (no view, no state, no client).
//
// Everything that comes from the server or from a person is inserted with
// textContent or setAttribute, never as HTML.

import { LETTERS, replay } from "./notation.js";
import { PIECE_COLOURS, PIECES } from "./settings.js";
import { $, setText } from "./util.js";

// the pieces' colour words follow the theme (theme.js): white and black in the colour-blind safe one
// (RULES.md's), red and yellow in the classic one; never a colour the pieces shown are not
const colours = () => PIECE_COLOURS[document.documentElement.dataset.pieces] || PIECE_COLOURS[PIECES[0]];
/** Each side's colour word, in the look shown: "white". */
export const COLOUR = {
  get A() { return colours().A; },
  get B() { return colours().B; },
};
/** Each side by name: its letter, then its colour as a helper: "A (white)", "B (yellow)". */
export const SIDE = {
  get A() { return `A (${COLOUR.A})`; },
  get B() { return `B (${COLOUR.B})`; },
};
export const OTHER = { A: "B", B: "A" };

/** Call `redraw` after the theme changes the pieces' colours (the settings
 * panel, theme.js): the words a view wrote from SIDE ("A (white) to move",
 * the seats, the move list, the review) would else name the old colours
 * under the new pieces until the next move. */
export function onColourChange(redraw) {
  const root = document.documentElement;
  new MutationObserver((records) => {
    if (records.some((r) => r.oldValue !== root.dataset.pieces)) redraw();
  }).observe(root, { attributes: true, attributeFilter: ["data-pieces"], attributeOldValue: true });
}

/** A seat's player for the status lines: its name; none where one person
 * plays both sides at this screen (a local room of two humans, an analysis
 * board: "B (black) to move", not "B (black), Player, to move" and "A
 * (white), Player, ..." by turns, the same name each time). */
function seatName(room, side) {
  const seat = room.seats[side];
  if (room.mode === "local" && Object.values(room.seats).every((s) => s.kind === "human")) return "";
  return seat && seat.taken ? seat.name : "free seat";
}

export function seatLabel(room, side) {
  return plainText(seatParts(room, side));
}

/** seatLabel as the subject of a sentence: "A (white), Ann," (subjectParts). */
export function subjectLabel(room, side) {
  return plainText(subjectParts(room, side));
}

/** A status line in parts: strings, {name} (a person's or agent's name,
 * cut with an ellipsis where the line is short: the seat cards show it
 * whole) and {aside} (words a phone leaves to screen readers): "A (white),
 * Ann", the colour an aside beside a name (the seat cards show it: a phone's
 * status line broke in two); a seat with no name, its side alone. */
export function seatParts(room, side) {
  const name = seatName(room, side);
  return name ? [side, { aside: ` (${COLOUR[side]})` }, ", ", { name }] : [SIDE[side]];
}

/** seatParts as the subject of a sentence, a comma closing the name: "A (white), Ann, to move". */
export function subjectParts(room, side) {
  const parts = seatParts(room, side);
  return parts.length > 1 ? [...parts, ","] : parts;
}

// the loser's part: why they lost
const GIVEN_UP = {
  resign: ["resigned"],
  forfeit: ["forfeited", { aside: " (away too long)" }],
  failed: ["failed", { aside: " (its player raised an error or gave no legal move)" }], // rooms.py: an agent's fault
};

/** "A (white), Ann, wins: four in a row", "... wins: B (black) resigned",
 * "Draw: the board is full", "Abandoned: the players left": the sentence of
 * every screen (c4lab/rules/sides.py's result_words says it in the terminal). */
export function resultText(room) {
  return plainText(resultParts(room));
}

/** resultText in parts (see seatParts). */
export function resultParts(room) {
  if (room.result === "draw") return ["Draw: the board is full"];
  if (room.result === "A" || room.result === "B") {
    const winner = subjectParts(room, room.result);
    if (room.reason in GIVEN_UP) {
      // the loser's colour, like the reason's detail, is left to screen readers on a phone: two lines at 320 px
      const loser = OTHER[room.result];
      return [...winner, ` wins: ${loser}`, { aside: ` (${COLOUR[loser]})` }, " ", ...GIVEN_UP[room.reason]];
    }
    return [...winner, " wins: four in a row"];
  }
  if (room.reason === "abandoned") return ["Abandoned: the players left"];
  return ["The game is over"];
}

export function plainText(parts) {
  return parts.map((part) => (typeof part === "string" ? part : part.name ?? part.aside)).join("");
}

/** Show `parts` in `element`: the names in .status-name, the asides in
 * .status-aside.  Screen readers hear the whole sentence as one text
 * (.status-said), and not the parts: a name's box and a phone's hidden
 * aside were each heard as a piece of their own, "A (white) , Ann , to move". */
export function showParts(into, parts) {
  const said = document.createElement("span");
  said.className = "sr-only status-said";
  setText(said, plainText(parts));
  const element = document.createElement("span");
  element.setAttribute("aria-hidden", "true");
  into.replaceChildren(said, element);
  // a name with the punctuation either side of it ("(Ann)"): one piece, never broken over two lines
  // (an inline-block name lets a line break before and after it, which left a ")" alone on a line)
  let group = null;
  parts.forEach((part, i) => {
    if (typeof part === "string") {
      let text = part;
      if (group) {
        const lead = /^\S*/.exec(text)[0];
        group.append(lead);
        text = text.slice(lead.length);
        group = null;
      }
      const next = parts[i + 1];
      const tail = next && typeof next === "object" && "name" in next ? /\S*$/.exec(text)[0] : "";
      if (text.length > tail.length) element.append(text.slice(0, text.length - tail.length));
      if (tail) group = nameGroup(element, tail);
      return;
    }
    const span = document.createElement("span");
    span.className = "name" in part ? "status-name" : "status-aside";
    setText(span, part.name ?? part.aside);
    if ("name" in part) (group ?? (group = nameGroup(element, ""))).append(span);
    else {
      group = null;
      element.append(span);
    }
  });
}

/** A new no-wrap group at the end of `element`, starting with `text`. */
function nameGroup(element, text) {
  const group = document.createElement("span");
  group.className = "status-name-group";
  if (text) group.append(text);
  element.append(group);
  return group;
}

/** The keys line under the room's board and the board's own label: the last
 * column's letter and digit (a digit past the board, or past 9, is no
 * column); the bonus keys only on a board whose bonus cell is still to take. */
export function describeKeys(room, board) {
  const letter = LETTERS[room.width - 1];
  const digit = String(Math.min(9, room.width));
  setText($("last-key"), letter);
  setText($("last-digit"), digit);
  $("keys-bonus").hidden = !room.bonus || Boolean(room.cells[room.bonus]); // taken: no ban to choose any more
  board.setAttribute("aria-label", `game board; column keys a to ${letter} or 1 to ${digit}, arrows and Enter`);
}

export function positionHeader(position) {
  const colon = position.indexOf(":");
  return colon < 0 ? position : position.slice(0, colon);
}

export function geometryOf(room) {
  return { width: room.width, height: room.height, forbidden: room.forbidden || [], bonus: room.bonus || null };
}

/** Where the piece of move `ply` (0 = the first) landed, from replay's
 * `boards`: its cell (null if it found no room), and whether that is the
 * bonus cell. */
function landing(geometry, boards, ply) {
  const after = boards[ply + 1];
  const cell = Object.keys(after).find((name) => !boards[ply][name] && after[name] !== "ban") ?? null;
  return { cell, bonus: cell !== null && cell === geometry.bonus };
}

/** Whether the game of `room` (a room's state, or a stored game) ended on
 * the board with its last move: four in a row, or the board full -- not a
 * resignation, a forfeit or an abandoned game. */
export function endedOnBoard(room) {
  return room.status === "over" && (room.reason === "four" || room.reason === "full");
}

/** Move `ply` (0 = the first) of `tokens` in words, as the terminal says
 * it (ui/board_view.py's move_words): its column and the cell it landed on,
 * and on the bonus cell what became of the ban piece -- "d (d3)", "b (b1),
 * on the bonus cell, and drops the ban piece in a", "b (b1), on the bonus
 * cell, and declines the ban piece". `boards`: replay's, of `tokens`.
 * `ended`: the game ended with the last of `tokens` (`endedOnBoard`): a
 * landing there that won or filled the board was offered no ban
 * (RULES.md), so it declined nothing -- "d (d1), on the bonus cell". */
export function moveWords(geometry, boards, tokens, ply, ended = false) {
  const token = tokens[ply];
  const { cell, bonus } = landing(geometry, boards, ply);
  const words = cell ? `${token[0]} (${cell})` : token[0];
  if (!bonus) return words;
  if (token.length !== 3 && ended && ply === tokens.length - 1) return `${words}, on the bonus cell`;
  return `${words}, on the bonus cell, and ${token.length === 3 ? `drops the ban piece in ${token[2]}` : "declines the ban piece"}`;
}

/** The move list: one <li> per move pair, one .mv per move (data-ply),
 * the move shown marked aria-current; with the game's `geometry`, a bonus
 * declined is marked "(no ban)". A list of buttons (`onPick`) names each
 * by its move in words: a screen reader would say the letter alone. */
export function renderMoves(list, tokens, { startPly = 0, current = tokens.length, onPick = null, geometry = null, ended = false } = {}) {
  list.replaceChildren();
  const { boards } = geometry ? replay(geometry, tokens) : { boards: null };
  for (let i = 0; i < tokens.length; i += 2) {
    const li = document.createElement("li");
    const num = document.createElement("span");
    num.className = "num";
    setText(num, `${i / 2 + 1}.`);
    li.appendChild(num);
    for (const ply of [i, i + 1]) {
      if (ply >= tokens.length) break;
      const mv = document.createElement(onPick ? "button" : "span");
      mv.className = "mv";
      if (onPick) mv.type = "button";
      mv.dataset.ply = String(ply + 1);
      mv.dataset.side = ply % 2 === 0 ? "A" : "B";
      setText(mv, tokens[ply]);
      // its name, said for the letter: the move's number, who played it, where it landed ("Move 3: A (white) played d (d2)")
      const words = boards ? moveWords(geometry, boards, tokens, ply, ended) : tokens[ply];
      if (onPick) {
        mv.dataset.words = `Move ${ply + 1}: ${SIDE[mv.dataset.side]} played ${words}`; // a review adds its verdict (markMoves)
        mv.setAttribute("aria-label", mv.dataset.words);
      }
      if (boards && tokens[ply].length === 1 && landing(geometry, boards, ply).bonus && !(ended && ply === tokens.length - 1)) {
        const note = document.createElement("span");
        note.className = "no-ban";
        setText(note, " (no ban)");
        mv.appendChild(note);
        mv.title = "landed on the bonus cell; the ban was declined";
      }
      if (ply < startPly) {
        mv.classList.add("pre");
        mv.title = "part of the starting position";
      }
      if (ply + 1 === current) {
        mv.classList.add("current");
        mv.setAttribute("aria-current", "step"); // the move shown: said, not only drawn in the accent colour
      }
      if (onPick) mv.addEventListener("click", () => onPick(ply + 1));
      li.appendChild(mv);
    }
    list.appendChild(li);
  }
  fitPairs(list);
  const cur = list.querySelector(".current");
  if (cur) {
    const box = list;
    const top = cur.offsetTop - box.offsetTop;
    if (top < box.scrollTop || top > box.scrollTop + box.clientHeight - 30) box.scrollTop = top - box.clientHeight / 2;
  }
}

/** Every column of the move list as wide as its widest pair, measured in
 * the fonts this browser has (the list's --pair): the widths set in the
 * style sheet were this machine's fonts', and "(no ban)" in a wider system
 * font ran past its pair's place. A list not shown measures nothing, and
 * keeps the style sheet's widths. */
function fitPairs(list) {
  const pairs = [...list.children];
  if (!pairs.length) return;
  const style = getComputedStyle(pairs[0]);
  const around = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
  const gap = parseFloat(style.columnGap) || 0;
  let widest = 0;
  for (const pair of pairs) {
    const parts = [...pair.children];
    const width = parts.reduce((sum, part) => sum + part.getBoundingClientRect().width, 0);
    widest = Math.max(widest, width + gap * (parts.length - 1) + around);
  }
  list.style.setProperty("--pair", `${Math.ceil(widest)}px`);
}
