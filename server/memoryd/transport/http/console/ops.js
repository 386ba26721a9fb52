// Operations: health (GET /healthz); each consumer of the event log with its position and
// lag (the recall index: GetVectorStats; each formation strategy: GetFormationStatus); the
// sizes of the tenant's memory (GetMemoryStats: sessions and messages; GetVectorStats:
// points per model and collection); the retention settings in effect (GetMemoryStats);
// the tenant's effective formation settings. Each part that the token may not read (a
// user-bound token reads no tenant-wide figures) says so instead.

import { call, health } from "./api.js";
import { h, table, errorBox } from "./dom.js";

function pairs(object, testid) {
  const rows = Object.entries(object || {}).filter(([, v]) => typeof v !== "object").map(([k, v]) => h("tr", {}, h("th", { scope: "row" }, k.replace(/_/g, " ")), h("td", { class: "num" }, String(v))));
  return rows.length ? h("div", { class: "scroll" }, h("table", { class: "pairs", "data-testid": testid }, h("tbody", {}, rows))) : h("p", { class: "empty" }, "Nothing reported.");
}

async function part(title, load) {
  const section = h("section", {}, h("h3", {}, title));
  try {
    section.append(...[await load()].flat());
  } catch (error) {
    section.append(errorBox(error));
  }
  return section;
}

const num = (value) => Number(value || 0);

function days(value) {
  const d = num(value);
  return d ? `${d} days` : "kept (no retention)";
}

function seconds(value) {
  const s = num(value);
  if (s % 86400 === 0) return `${s / 86400} days`;
  if (s % 3600 === 0) return `${s / 3600} hours`;
  return `${s} s`;
}

export async function opsView({ signal }) {
  // Each call once; the parts that need it share its answer (or its error).
  const vectors = call("VectorService", "GetVectorStats", {}, { signal });
  const formation = call("FormationService", "GetFormationStatus", {}, { signal });
  const memory = call("MemoryService", "GetMemoryStats", {}, { signal });
  for (const pending of [vectors, formation, memory]) pending.catch(() => {}); // shown by the parts that await them

  const parts = await Promise.all([
    part("Health", async () => pairs(await health(), "health")),
    part("Consumers of the event log", async () => {
      const [index, status] = await Promise.allSettled([vectors, formation]);
      const rows = [];
      if (index.status === "fulfilled") {
        const v = index.value;
        const lag = Math.max(0, num(v.event_seq) - num(v.indexed_through_seq));
        rows.push(h("tr", { "data-consumer": "recall-index" }, h("td", {}, "recall index"), h("td", { class: "num" }, num(v.indexed_through_seq)),
          h("td", { class: "num" }, num(v.event_seq)), h("td", { class: "num", "data-testid": "lag" }, lag), h("td", {}, v.rebuilding ? "rebuilding" : "")));
      }
      if (status.status === "fulfilled") {
        for (const s of status.value.strategies || []) {
          const name = (s.strategy || "").replace("FORMATION_STRATEGY_", "").toLowerCase();
          rows.push(h("tr", { "data-consumer": `formation-${name}` }, h("td", {}, `formation: ${name}`), h("td", { class: "num" }, num(s.position)),
            h("td", { class: "num" }, num(s.latest)), h("td", { class: "num", "data-testid": "lag" }, num(s.lag)), h("td", {}, s.last_error || "")));
        }
      }
      const errors = [index, status].filter((r) => r.status === "rejected").map((r) => errorBox(r.reason));
      return [rows.length ? table(["Consumer", "Applied through seq", "Log's newest seq", "Lag (events)", "State"], rows, { "data-testid": "consumers" }) : "", errors];
    }),
    part("Sizes", async () => {
      const [stored, index] = await Promise.allSettled([memory, vectors]);
      const figures = {};
      if (stored.status === "fulfilled") {
        Object.assign(figures, { sessions: num(stored.value.sessions), messages: num(stored.value.messages), unarchived_messages: num(stored.value.unarchived_messages) });
      }
      if (index.status === "fulfilled") {
        const v = index.value;
        figures.vector_points = (v.models || []).reduce((sum, m) => sum + num(m.count), 0);
        figures.keyword_points = num(v.keyword_points);
      }
      const errors = [stored, index].filter((r) => r.status === "rejected").map((r) => errorBox(r.reason));
      return [Object.keys(figures).length ? pairs(figures, "sizes") : "", errors];
    }),
    part("Retention in effect", async () => {
      const stats = await memory;
      const sessions = stats.session_retention || {};
      const events = stats.event_retention || {};
      return pairs({
        session_retention: days(sessions.days),
        session_retention_action: sessions.action || "",
        sessions_with_their_own_window: num(sessions.labelled_sessions),
        event_log_max_age: seconds(events.max_age_seconds),
        event_log_max_events: num(events.max_events),
      }, "retention");
    }),
    part("Vector index", async () => {
      const stats = await vectors;
      const lag = Math.max(0, num(stats.event_seq) - num(stats.indexed_through_seq));
      return [
        pairs({ ...stats, index_lag_events: lag }, "vector-stats"),
        (stats.models || []).length ? table(["Model", "Points", "Dimension"], stats.models.map((m) => h("tr", {}, h("td", {}, m.model_id), h("td", { class: "num" }, m.count || "0"), h("td", { class: "num" }, m.dimension || "0")))) : "",
        (stats.collections || []).length ? table(["Collection", "Points", "Dimension"], stats.collections.map((c) => h("tr", {}, h("td", {}, c.collection), h("td", { class: "num" }, c.count || "0"), h("td", { class: "num" }, c.dimension || "0")))) : "",
      ];
    }),
    part("Memory formation", async () => {
      const status = await formation;
      const rows = (status.strategies || []).map((s) => h("tr", {},
        h("td", {}, (s.strategy || "").replace("FORMATION_STRATEGY_", "").toLowerCase()),
        ["position", "latest", "lag", "llm_calls", "llm_failures", "prompt_tokens", "completion_tokens"].map((k) => h("td", { class: "num" }, s[k] || "0")),
        h("td", {}, s.last_error || "")));
      return [pairs(status, "formation-status"),
        rows.length ? table(["Strategy", "Position", "Latest", "Lag", "LLM calls", "Failures", "Prompt tokens", "Completion tokens", "Last error"], rows) : ""];
    }),
    part("Formation settings (tenant)", async () => {
      const settings = await call("FormationService", "GetFormationSettings", {}, { signal });
      return pairs(settings.effective, "formation-settings");
    }),
  ]);
  return h("section", { "aria-labelledby": "ops-title" }, h("h2", { id: "ops-title" }, "Operations"), parts);
}
