// The console: hash routes, the caller's identity, and the views. Every view reads through
// api.js with the user's token, so it shows what that token gets over the API and no more.

import { ApiError, call, setToken, token } from "./api.js";
import { h, errorBox } from "./dom.js";
import { sessionsView, timelineView } from "./sessions.js";
import { recallView } from "./recall.js";
import { memoryView } from "./memory.js";
import { liveView } from "./live.js";
import { opsView } from "./ops.js";
import { caller, route } from "./state.js";

const VIEWS = {
  sessions: sessionsView,
  session: timelineView,
  recall: recallView,
  memory: memoryView,
  live: liveView,
  ops: opsView,
};

let current = { abort: new AbortController() };

async function render() {
  current.abort.abort(); // a view's calls and streams end when another view opens
  const mine = { abort: new AbortController() };
  current = mine;
  const { view, arg, params } = route();
  for (const a of document.querySelectorAll("nav a")) {
    const on = a.dataset.view === view || (view === "session" && a.dataset.view === "sessions");
    if (on) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  const main = document.getElementById("main");
  const focusInView = main.contains(document.activeElement); // a link or button of the view being left
  const show = VIEWS[view];
  if (!show) {
    main.replaceChildren(h("p", { class: "error", role: "alert" }, `No view named ${view}`));
    return;
  }
  main.replaceChildren(h("p", { class: "busy", "aria-busy": "true" }, "Loading…"));
  main.setAttribute("aria-busy", "true");
  try {
    const content = await show({ arg, params, signal: mine.abort.signal, stillShown: () => current === mine });
    if (current === mine) main.replaceChildren(content);
  } catch (error) {
    if (current === mine && !(error && error.name === "AbortError")) main.replaceChildren(errorBox(error));
  } finally {
    if (current === mine) {
      main.removeAttribute("aria-busy");
      // A link or button of the view just replaced took the keyboard focus with it (to the
      // body): the new view takes it, so the next Tab goes on inside the view.
      if (focusInView && (!document.activeElement || document.activeElement === document.body)) main.focus({ preventScroll: true });
    }
  }
}

async function identify() {
  const line = document.getElementById("caller");
  Object.assign(caller, { tenant: "", scopes: [], user_id: "", known: false });
  try {
    Object.assign(caller, await call("MemoryService", "GetCaller", {}), { known: true });
    caller.scopes = caller.scopes || [];
    line.replaceChildren(
      h("span", { "data-testid": "tenant" }, `tenant ${caller.tenant}`),
      caller.user_id ? h("span", {}, ` · user ${caller.user_id}`) : "",
      h("span", { "data-testid": "scopes" }, ` · ${caller.scopes.join(" ") || "no scopes"}`),
    );
  } catch (error) {
    const hint = error instanceof ApiError && error.code === "unauthenticated" ? "Enter a token to see this server's memory." : "";
    line.replaceChildren(h("span", { class: "error" }, `${error.message} ${hint}`));
  }
}

document.getElementById("token-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const input = document.getElementById("token");
  setToken(input.value.trim());
  input.value = "";
  await identify();
  await render();
});
document.getElementById("token-clear").addEventListener("click", async () => {
  setToken("");
  await identify();
  await render();
});
window.addEventListener("hashchange", render);
// The skip link moves the focus to the view; its "#main" is no route, so it must not reach the URL.
document.querySelector("a.skip").addEventListener("click", (event) => {
  event.preventDefault();
  document.getElementById("main").focus();
});

document.getElementById("token").placeholder = token() ? "token set for this tab" : "bearer token (static or JWT)";
await identify();
await render();
document.body.dataset.ready = "true";
