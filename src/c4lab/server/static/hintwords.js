// The hint in words, and the hint's choice while the ban piece of a drop
// on the bonus cell is chosen: what analysis.js says, and where it draws
// the ghost and rings a score.
//
// May import: describe.js, notation.js.
// Pure functions of what they are given: no state, no page.

import { geometryOf } from "./describe.js";
import { LETTERS, cellName, landingRow } from "./notation.js";

/** The hint's words for ``token``, a move from ``room``'s position:
 * [the sentence, a phone's one line (the board draws the hint, the notes
 * their scores)]. */
export function hintWords(token, room) {
  let words = `Hint: drop in column ${token[0]}`;
  let short = `Hint: drop in ${token[0]}`;
  const landing = landingRow(geometryOf(room), room.cells, LETTERS.indexOf(token[0]));
  if (token.length === 3) [words, short] = [`${words} and put the ban piece in column ${token[2]}`, `${short}, ban piece in ${token[2]}`];
  else if (room.bonus && landing !== null && cellName(LETTERS.indexOf(token[0]), landing) === room.bonus) {
    [words, short] = [`${words} and decline the ban`, `${short}, decline the ban`];
  }
  return [words, short];
}

/** The hint's words while the ban piece is chosen: the drop is made, so
 * they name the ban (``token``, from :func:`bestBan`), not the move from
 * before it. */
export function banHintWords(token) {
  if (token === null) return ["No hint for the ban yet", "No hint for the ban yet"];
  if (token.length === 3) return [`Hint: put the ban piece in column ${token[2]}`, `Hint: ban piece in ${token[2]}`];
  return ["Hint: decline the ban", "Hint: decline the ban"];
}

/** The hint's choice for the ban of a drop in column ``letter`` on the
 * bonus cell: the engine's own move where it drops there too; else, among
 * the bans and the decline, the best exact score where every one is
 * solved, else the best estimate; null where nothing is known.  ``hint``:
 * the hint standing ({token, moves: {token: score|null}, estimates:
 * {token: 0..1}}). */
export function bestBan(hint, letter) {
  if (hint.token && hint.token[0] === letter) return hint.token;
  const choices = Object.keys(hint.moves).filter((token) => token[0] === letter);
  const best = (table, all) => {
    const known = choices.filter((token) => typeof table[token] === "number");
    if (!known.length || (all && known.length < choices.length)) return null;
    return known.reduce((a, b) => (table[b] > table[a] ? b : a));
  };
  return best(hint.moves, true) || best(hint.estimates, false);
}
