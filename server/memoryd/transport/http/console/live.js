// Live: EventService.Watch over HTTP (a Connect server stream), rendered as events arrive.
// The stream ends when another view opens (its fetch is aborted).

import { stream } from "./api.js";
import { h, time, field, errorBox } from "./dom.js";
import { link } from "./state.js";

const MAX_SHOWN = 500;

function payload(event) {
  for (const [key, value] of Object.entries(event)) {
    if (!["seq", "time", "tenant", "session_id", "type"].includes(key)) return JSON.stringify(value);
  }
  return "";
}

export async function liveView({ params, signal, stillShown }) {
  const session = params.get("session") || "";
  const after = params.get("after") || "";
  const input = h("input", { name: "session", value: session, placeholder: "all sessions the token reads" });
  const from = h("input", { name: "after", value: after, inputmode: "numeric", size: 8, placeholder: "now" });
  const form = h("form", { class: "filters", onsubmit: (event) => {
    event.preventDefault();
    location.hash = link("live", "", { session: input.value.trim(), after: from.value.trim() });
  } }, field("Session", input), field("After seq (replay the log from there)", from), h("button", { type: "submit" }, "Watch"));
  const state = h("p", { "data-testid": "live-state", "aria-live": "polite" }, "connecting…");
  const list = h("ul", { class: "events", "data-testid": "events" });
  const request = session ? { session_ids: [session] } : {};
  if (/^\d+$/.test(after)) request.after_seq = after;
  stream("EventService", "Watch", request, (message) => {
    if (!stillShown()) return;
    if (message.progress) {
      state.textContent = `live · log at seq ${message.progress.latest_seq || 0}`;
      state.dataset.live = "true";
      return;
    }
    const event = message.event;
    if (!event) return;
    list.prepend(h("li", { "data-type": event.type, "data-session": event.session_id || "" },
      h("span", { class: "num" }, `#${event.seq}`), " ", h("time", {}, time(event.time)), " ",
      h("strong", {}, (event.type || "").replace("EVENT_TYPE_", "").toLowerCase()), " ",
      event.session_id ? h("a", { href: link("session", event.session_id) }, event.session_id) : "", " ",
      h("code", {}, payload(event))));
    while (list.children.length > MAX_SHOWN) list.lastChild.remove();
  }, { signal }).then(() => {
    if (stillShown()) state.textContent = "the stream ended";
  }, (error) => {
    if (stillShown() && error.name !== "AbortError") state.replaceWith(errorBox(error));
  });
  return h("section", { "aria-labelledby": "live-title" }, h("h2", { id: "live-title" }, "Live"), form, state, list);
}
