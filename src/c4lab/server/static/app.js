// c4lab: the page's entry module. One page for every address (the server
// sends the same index.html for /, /r/<code>, /games, /games/<code> and
// /analyse?position=...);
// this routes by location.pathname to a view. The contract with the server
// is docs/protocol.md.
//
// Modules (plain ES modules, no build step), each importing only downward:
//   app.js       entry: routing (imports the views)
//   home.js      the new-game form, the player picker, recent games
//   room.js      the room page: input, buttons, joining (a view)
//   roomview.js  drawing the room page from the state
//   analysis.js  hint (with every column's score), review requests, the analysis board
//   evalbar.js   the evaluation bar (its last value kept for a reload)
//   history.js   stepping through the room's game (back, forward, a move of the list)
//   review.js    drawing the solver's scores above the columns and a game's review
//   client.js    the WebSocket room client (local and online games)
//   state.js     the room state R and its rules calls
//   games.js     finished games and the replay
//   describe.js  shared game words and the move list
//   settings.js  name, saved tokens, recent rooms, the look and the sound (browser storage)
//   prefs.js     the settings panel; theme.js the look (themes, dark mode); sound.js drops
//   board.js     the SVG board; notation.js  cell names, move tokens
//   util.js      api(), ApiError, toast, setText, show, say...
//
// May import: home.js, room.js, games.js (the views), prefs.js, state.js and util.js.
//
// Everything that comes from the server or from a person is inserted with
// textContent or setAttribute, never as HTML.

import { showHome } from "./home.js";
import { showAnalyse, showRoom } from "./room.js";
import { showGames, showReplay } from "./games.js";
import { startPrefs } from "./prefs.js";
import { R } from "./state.js";
import { show } from "./util.js";

function route() {
  const path = location.pathname.replace(/\/+$/, "") || "/";
  let match;
  if (path === "/") return showHome();
  if ((match = path.match(/^\/r\/([^/]+)$/))) return showRoom(decodeURIComponent(match[1]));
  if (path === "/games") return showGames();
  if (path === "/analyse") return showAnalyse();
  if ((match = path.match(/^\/games\/([^/]+)$/))) return showReplay(decodeURIComponent(match[1]));
  show("view-missing");
  return null;
}

// The skip link, the first stop of Tab: past the top bar, to the board of a
// room (or a replay's first control, the form's first field).
document.getElementById("skip-link").addEventListener("click", (event) => {
  const view = document.querySelector("main .view:not([hidden])");
  const target = view && (view.querySelector("#board[tabindex]")
    || view.querySelector("input:not([hidden]), select, button:not([hidden]), a[href], [tabindex='0']"));
  if (!target) return;
  event.preventDefault();
  target.focus();
});

// for the browser tests and for curious people
window.c4lab = { R, get ws() { return R.ws; } };

startPrefs();
route();
