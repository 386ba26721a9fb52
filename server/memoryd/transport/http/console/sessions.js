// Sessions (ListSessions) and a session's timeline (GetSession, GetFullHistory,
// ListSummaries, GetSummaryCursor), with the write actions the token's scopes allow.

import { call } from "./api.js";
import { h, time, table, field, errorBox, confirmAction } from "./dom.js";
import { caller, link, may } from "./state.js";

const PAGE = 50;

// "plan=pro, lang=ja" -> {plan: "pro", lang: "ja"}
function parseLabels(text) {
  const labels = {};
  for (const part of (text || "").split(",")) {
    const [key, ...value] = part.split("=");
    if (key.trim()) labels[key.trim()] = value.join("=").trim();
  }
  return labels;
}

// A datetime-local value ("2026-12-07T21:30"), in the browser's time zone, as ms since the
// epoch; a number is taken as ms already. null: empty or not a time.
function instant(text) {
  if (!text) return null;
  const ms = /^\d+$/.test(text) ? Number(text) : Date.parse(text);
  return Number.isFinite(ms) ? Math.max(0, ms) : null;
}

// What a datetime-local input shows for a filter value (ms are shown as local time).
function localInput(text) {
  if (!/^\d+$/.test(text || "")) return text || "";
  const d = new Date(Number(text));
  const pad = (x) => String(x).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

function labelText(labels) {
  return Object.entries(labels || {}).map(([k, v]) => `${k}=${v}`).join(", ");
}

export async function sessionsView({ params, signal }) {
  const filters = {
    user: params.get("user") || "",
    agent: params.get("agent") || "",
    labels: params.get("labels") || "",
    since: params.get("since") || "",
    before: params.get("before") || "",
  };
  const request = { page_size: PAGE, page_token: params.get("page") || "", user_id: filters.user, agent_id: filters.agent, labels: parseLabels(filters.labels) };
  // The time range is ListSessions' own (on last activity), so every page holds only sessions in it.
  const since = instant(filters.since);
  const before = instant(filters.before);
  if (since !== null) request.active_since = String(since);
  if (before !== null) request.active_before = String(before);
  const answer = await call("MemoryService", "ListSessions", request, { signal });
  const sessions = answer.sessions || [];

  const inputs = {
    user: h("input", { name: "user", value: filters.user, placeholder: "end user id" }),
    agent: h("input", { name: "agent", value: filters.agent, placeholder: "agent id" }),
    labels: h("input", { name: "labels", value: filters.labels, placeholder: "key=value, key=value" }),
    since: h("input", { name: "since", type: "datetime-local", step: 1, value: localInput(filters.since) }),
    before: h("input", { name: "before", type: "datetime-local", step: 1, value: localInput(filters.before) }),
  };
  const form = h("form", { class: "filters", onsubmit: (event) => {
    event.preventDefault();
    location.hash = link("sessions", "", Object.fromEntries(Object.entries(inputs).map(([k, el]) => [k, el.value.trim()])));
  } },
  field("Owner", inputs.user), field("Agent", inputs.agent), field("Labels", inputs.labels),
  field("Active since", inputs.since), field("Active before", inputs.before), h("button", { type: "submit" }, "Filter"));

  const rows = sessions.map((s) => h("tr", { "data-session": s.session_id },
    h("td", {}, h("a", { href: link("session", s.session_id) }, s.session_id)),
    h("td", {}, (s.attributes || {}).user_id || ""),
    h("td", {}, (s.attributes || {}).agent_id || ""),
    h("td", {}, labelText((s.attributes || {}).labels)),
    h("td", { class: "num" }, s.message_count || "0"),
    h("td", { class: "num" }, s.unarchived_count || "0"),
    h("td", {}, time(s.last_activity)),
  ));
  const pager = h("p", { class: "pager" },
    params.get("page") ? h("a", { href: link("sessions", "", { ...filters }) }, "First page") : "",
    answer.next_page_token ? h("a", { href: link("sessions", "", { ...filters, page: answer.next_page_token }), rel: "next" }, "Next page") : "");
  const forget = may("memory:admin") && !caller.user_id ? forgetUserForm() : "";
  return h("section", { "aria-labelledby": "sessions-title" },
    h("h2", { id: "sessions-title" }, "Sessions"), form,
    rows.length ? table(["Session", "Owner", "Agent", "Labels", "Messages", "Unarchived", "Last activity"], rows, { "data-testid": "sessions" })
      : h("p", { class: "empty" }, "No sessions."),
    pager, forget);
}

function forgetUserForm() {
  const input = h("input", { name: "forget-user", placeholder: "end user id", required: true });
  const out = h("div", { "aria-live": "polite" });
  return h("form", { class: "danger-zone", "data-testid": "forget-user", onsubmit: async (event) => {
    event.preventDefault();
    const user = input.value.trim();
    if (!user || !(await confirmAction(`Forget end user "${user}"? Every session they own goes whole (messages, vectors, summaries, metadata), with their metadata namespaces and memory entries, in tenant ${caller.tenant}.`, "Forget user"))) return;
    try {
      const done = await call("MemoryService", "ForgetUser", { user_id: user });
      out.replaceChildren(h("p", {}, `Forgot ${done.sessions_forgotten || 0} sessions, ${done.messages_deleted || 0} messages.`));
    } catch (error) {
      out.replaceChildren(errorBox(error));
    }
  } }, h("h3", {}, "Forget a user"), field("End user", input), h("button", { type: "submit", class: "danger" }, "Forget user…"), out);
}

// Data URIs of a message's image segments (remote URLs are listed, never fetched).
function images(message) {
  const out = [];
  for (const segment of message.segments || []) {
    for (const value of Object.values(segment.data || {})) {
      if (typeof value !== "string") continue;
      if (value.startsWith("data:image/")) out.push(h("img", { class: "thumb", src: value, alt: `image (${segment.type})` }));
      else if (/^https?:\/\//.test(value) && /image|img|photo|picture|sticker/.test(segment.type || "")) out.push(h("span", { class: "remote" }, `[image ${value}]`));
    }
  }
  return out;
}

// UpdateMessageContent rewrites text among the newest `recent_limit` messages (at most 1000):
// offered for the messages within reach, naming what else it may change.
const MAX_RECENT = 1000;

function editButton(m, sessionId, lastSeq, status) {
  const reach = lastSeq - Number(m.seq) + 1;
  if (!m.content || reach > MAX_RECENT) return "";
  return h("button", { class: "small", "data-testid": "edit-message", onclick: () => {
    const text = h("textarea", { rows: 3, "aria-label": `New text of message ${m.seq}` }, m.content);
    const form = h("form", { class: "inline", onsubmit: async (event) => {
      event.preventDefault();
      const value = text.value;
      if (value === m.content) return;
      const ask = `Replace the text of message seq ${m.seq} ("${m.content.slice(0, 80)}") with "${value.slice(0, 80)}"? `
        + `Every occurrence of that text among the newest ${reach} messages of session ${sessionId} is replaced, so a newer message holding it changes too.`;
      if (!(await confirmAction(ask, "Replace"))) return;
      try {
        await call("MemoryService", "UpdateMessageContent", { session_id: sessionId, old_text: m.content, new_text: value, recent_limit: reach });
        window.dispatchEvent(new HashChangeEvent("hashchange"));
      } catch (error) {
        status.replaceChildren(errorBox(error));
      }
    } }, text, h("button", { type: "submit" }, "Save text"));
    status.replaceChildren(form);
    text.focus();
  } }, "Edit…");
}

export async function timelineView({ arg: sessionId, params, signal }) {
  const page = params.get("page") || "";
  const size = Math.min(Number(params.get("size")) || 100, 1000);
  const [info, history, cursor, summaries] = await Promise.all([
    call("MemoryService", "GetSession", { session_id: sessionId }, { signal }),
    call("MemoryService", "GetFullHistory", { session_id: sessionId, page_size: size, page_token: page }, { signal }),
    call("SummaryService", "GetSummaryCursor", { session_id: sessionId }, { signal }),
    call("SummaryService", "ListSummaries", { session_id: sessionId, page_size: 100 }, { signal }),
  ]);
  const session = info.session || {};
  const attributes = session.attributes || {};
  const messages = history.messages || [];
  const slices = summaries.summaries || [];
  const cursorSeq = Number(cursor.cursor || 0);
  const canWrite = may("memory:write");
  const status = h("div", { "aria-live": "polite" });

  const head = h("dl", { class: "facts" },
    h("dt", {}, "Owner"), h("dd", {}, attributes.user_id || "—"),
    h("dt", {}, "Agent"), h("dd", {}, attributes.agent_id || "—"),
    h("dt", {}, "Labels"), h("dd", {}, labelText(attributes.labels) || "—"),
    h("dt", {}, "Messages"), h("dd", { "data-testid": "message-count" }, session.message_count || "0"),
    h("dt", {}, "Unarchived"), h("dd", {}, session.unarchived_count || "0"),
    h("dt", {}, "Last activity"), h("dd", {}, time(session.last_activity)),
    h("dt", {}, "Summary cursor"), h("dd", { "data-testid": "cursor" }, `seq ${cursorSeq} of ${cursor.last_seq || 0}`));

  const sliceList = slices.length ? h("ol", { class: "slices", "data-testid": "summaries" }, slices.map((s, i) =>
    h("li", { style: { "--slice": i % 6 } },
      h("strong", {}, `seq ${s.from_seq}–${s.to_seq}`), ` (${(s.coverage || "").replace("SUMMARY_COVERAGE_", "").toLowerCase()}) `,
      h("span", { class: "text" }, s.text)))) : h("p", { class: "empty" }, "No summary slices.");

  const rows = [];
  for (const m of messages) {
    const seq = Number(m.seq);
    const covering = slices.map((s, i) => [s, i]).filter(([s]) => Number(s.from_seq) <= seq && seq <= Number(s.to_seq));
    const ranges = h("td", { class: "ranges" }, covering.map(([s, i]) => h("span", {
      class: `range${Number(s.from_seq) === seq ? " start" : ""}${Number(s.to_seq) === seq ? " end" : ""}`,
      style: { "--slice": i % 6 }, title: `summary seq ${s.from_seq}–${s.to_seq}`,
    })));
    const actions = canWrite ? h("td", {}, h("button", { class: "danger small", "data-testid": "delete-message", onclick: async () => {
      const excerpt = (m.content || "").slice(0, 80);
      if (!(await confirmAction(`Delete message seq ${m.seq} (${m.role}, ${time(m.timestamp)}): "${excerpt}" from session ${sessionId}? Its vectors go with it; summaries covering it are marked partially deleted.`))) return;
      try {
        await call("MemoryService", "DeleteMessages", { session_id: sessionId, ids: [m.id] });
        window.dispatchEvent(new HashChangeEvent("hashchange"));
      } catch (error) {
        status.replaceChildren(errorBox(error));
      }
    } }, "Delete…"), " ", editButton(m, sessionId, Number(cursor.last_seq || 0), status)) : "";
    rows.push(h("tr", { "data-seq": m.seq, class: m.archived ? "archived" : "" },
      ranges,
      h("td", { class: "num" }, m.seq),
      h("td", {}, time(m.timestamp)),
      h("td", {}, m.role),
      h("td", {}, m.kind || ""),
      h("td", {}, m.archived ? "archived" : ""),
      h("td", { class: "content", lang: "" }, m.content || "", images(m)),
      actions));
    if (seq === cursorSeq) rows.push(h("tr", { class: "cursor" }, h("td", { colspan: canWrite ? 8 : 7 }, `summary cursor: messages after seq ${cursorSeq} are not summarized yet`)));
  }
  const pager = h("p", { class: "pager" },
    page ? h("a", { href: link("session", sessionId, { size: params.get("size") }) }, "First page") : "",
    history.next_page_token ? h("a", { href: link("session", sessionId, { page: history.next_page_token, size: params.get("size") }), rel: "next" }, "Next page") : "");
  const headers = ["", "Seq", "Time", "Role", "Kind", "Archived", "Content"];
  if (canWrite) headers.push("");
  return h("section", { "aria-labelledby": "timeline-title" },
    h("h2", { id: "timeline-title" }, "Session ", h("code", {}, sessionId)),
    h("p", {}, h("a", { href: link("live", "", { session: sessionId }) }, "Watch this session live"),
      " · ", h("a", { href: link("recall", "", { session: sessionId }) }, "Recall in this session")),
    head, h("h3", {}, "Summary slices"), sliceList, status,
    h("h3", {}, "Messages"),
    messages.length ? table(headers, rows, { "data-testid": "timeline" }) : h("p", { class: "empty" }, "No messages."),
    pager);
}
