// Operations: health (GET /healthz), the vector index (GetVectorStats: sizes, the index's
// position in the event log and its lag), memory formation (status: each strategy's
// position and lag; the effective settings). Each part that the token may not read (a
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

export async function opsView({ signal }) {
  const parts = await Promise.all([
    part("Health", async () => pairs(await health(), "health")),
    part("Vector index", async () => {
      const stats = await call("VectorService", "GetVectorStats", {}, { signal });
      const lag = Math.max(0, Number(stats.event_seq || 0) - Number(stats.indexed_through_seq || 0));
      return [
        pairs({ ...stats, index_lag_events: lag }, "vector-stats"),
        (stats.models || []).length ? table(["Model", "Points", "Dimension"], stats.models.map((m) => h("tr", {}, h("td", {}, m.model_id), h("td", { class: "num" }, m.count || "0"), h("td", { class: "num" }, m.dimension || "0")))) : "",
        (stats.collections || []).length ? table(["Collection", "Points", "Dimension"], stats.collections.map((c) => h("tr", {}, h("td", {}, c.collection), h("td", { class: "num" }, c.count || "0"), h("td", { class: "num" }, c.dimension || "0")))) : "",
      ];
    }),
    part("Memory formation", async () => {
      const status = await call("FormationService", "GetFormationStatus", {}, { signal });
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
