// The recall playground: VectorService.SearchMemory with its options, each hit's score
// parts and context; SummaryService.SearchSummaries with the same query.

import { call } from "./api.js";
import { h, time, score, table, field, errorBox } from "./dom.js";
import { link } from "./state.js";

const SCOPES = ["RECALL_SCOPE_UNSPECIFIED", "RECALL_SCOPE_SESSION", "RECALL_SCOPE_USER", "RECALL_SCOPE_PLATFORM", "RECALL_SCOPE_ALL"];
const FUSIONS = ["RECALL_FUSION_UNSPECIFIED", "RECALL_FUSION_RELATIVE_SCORE", "RECALL_FUSION_RECIPROCAL_RANK"];
const SLICES = ["RECALL_SLICES_UNSPECIFIED", "RECALL_SLICES_OFF", "RECALL_SLICES_FUSED", "RECALL_SLICES_FIRST"];
// Optional numbers of SearchMemoryRequest: sent only when filled in.
const NUMBERS = ["top_k", "min_score", "keyword_weight", "time_weight", "neighbor_weight", "date_weight", "half_life_hours", "context_window", "per_item_max_chars"];
// The parts of a hit's score, as MemoryHit names them.
export const SCORE_PARTS = ["score", "relevance", "semantic_score", "keyword_score", "neighbor_lift", "date_lift", "slice_lift"];

function select(name, values, chosen) {
  return h("select", { name }, values.map((v) => h("option", { value: v, selected: v === chosen }, v.replace(/^RECALL_\w+?_/, "").toLowerCase())));
}

// The SearchMemory request the form's fields describe (also what the URL keeps).
export function searchRequest(params) {
  const request = { query_text: params.get("q") || "" };
  if (params.get("session")) request.session_id = params.get("session");
  if (params.get("model")) request.model_id = params.get("model");
  if (params.get("vector")) request.query_vector = params.get("vector").split(",").map(Number);
  for (const key of ["scope", "fusion", "slices"]) if (params.get(key)) request[key] = params.get(key);
  for (const key of NUMBERS) if (params.get(key)) request[key] = Number(params.get(key));
  return request;
}

function context(messages, label) {
  if (!messages || !messages.length) return "";
  return h("details", {}, h("summary", {}, `${label} (${messages.length})`),
    h("ol", { class: "context" }, messages.map((c) => h("li", {}, h("span", { class: "role" }, `${c.message.role} #${c.message.seq}`), " ", c.message.content || ""))));
}

function hitRows(hits) {
  return hits.map((hit, i) => h("tr", { "data-testid": "hit", "data-message": hit.message_id || "" },
    h("td", { class: "num" }, i + 1),
    SCORE_PARTS.map((part) => h("td", { class: "num", "data-part": part }, score(hit[part]))),
    h("td", {}, [hit.semantic_match ? "dense" : "", hit.keyword_match ? "keyword" : "", hit.boosted ? "boosted" : "", hit.in_context_of !== undefined ? `context of #${hit.in_context_of + 1}` : ""].filter(Boolean).join(" ")),
    h("td", {}, h("a", { href: link("session", hit.session_id) }, hit.session_id)),
    h("td", {}, hit.role || ""),
    h("td", {}, time(hit.timestamp)),
    h("td", { class: "content" }, hit.text || "", context(hit.before, "before"), context(hit.after, "after"))));
}

export async function recallView({ params, signal }) {
  const inputs = {
    q: h("input", { name: "q", value: params.get("q") || "", placeholder: "what to recall", "aria-label": "Query" }),
    session: h("input", { name: "session", value: params.get("session") || "", placeholder: "session id" }),
    model: h("input", { name: "model", value: params.get("model") || "", placeholder: "model id (with a vector)" }),
    vector: h("input", { name: "vector", value: params.get("vector") || "", placeholder: "0.1, 0.2, … (your own embedding)" }),
    scope: select("scope", SCOPES, params.get("scope") || SCOPES[0]),
    fusion: select("fusion", FUSIONS, params.get("fusion") || FUSIONS[0]),
    slices: select("slices", SLICES, params.get("slices") || SLICES[0]),
  };
  for (const key of NUMBERS) inputs[key] = h("input", { name: key, value: params.get(key) || "", inputmode: "decimal", size: 6 });
  const what = params.get("what") || "messages";
  const go = (kind) => () => {
    const values = Object.fromEntries(Object.entries(inputs).map(([k, el]) => [k, el.value.trim()]));
    for (const key of ["scope", "fusion", "slices"]) if (values[key].endsWith("_UNSPECIFIED")) values[key] = "";
    location.hash = link("recall", "", { ...values, what: kind });
  };
  const form = h("form", { class: "filters", onsubmit: (event) => { event.preventDefault(); go("messages")(); } },
    field("Query", inputs.q), field("Session", inputs.session), field("Scope", inputs.scope),
    field("Model", inputs.model), field("Vector", inputs.vector), field("Fusion", inputs.fusion), field("Slices", inputs.slices),
    NUMBERS.map((key) => field(key.replace(/_/g, " "), inputs[key])),
    h("button", { type: "submit" }, "Search memory"),
    h("button", { type: "button", onclick: go("summaries") }, "Search summaries"));

  const section = h("section", { "aria-labelledby": "recall-title" }, h("h2", { id: "recall-title" }, "Recall"), form);
  if (!params.get("q") && !params.get("vector")) return section;
  try {
    if (what === "summaries") {
      const request = { query_text: params.get("q") || "", include_messages: true, max_messages_per_hit: 5 };
      for (const key of ["session_id", "model_id", "query_vector", "scope", "fusion", "top_k", "keyword_weight"]) {
        const value = searchRequest(params)[key];
        if (value !== undefined) request[key] = value;
      }
      const answer = await call("SummaryService", "SearchSummaries", request, { signal });
      const rows = (answer.hits || []).map((hit, i) => h("tr", { "data-testid": "summary-hit" },
        h("td", { class: "num" }, i + 1),
        ["score", "semantic_score", "keyword_score"].map((part) => h("td", { class: "num", "data-part": part }, score(hit[part]))),
        h("td", {}, h("a", { href: link("session", hit.summary.session_id) }, hit.summary.session_id)),
        h("td", {}, `seq ${hit.summary.from_seq}–${hit.summary.to_seq}`),
        h("td", { class: "content" }, hit.summary.text, context((hit.messages || []).map((message) => ({ message })), "messages"))));
      section.append(h("p", { "data-testid": "retrieval" }, `retrieval ${answer.retrieval || ""} ${answer.model_id ? `· model ${answer.model_id}` : ""}`),
        rows.length ? table(["#", "score", "dense", "keyword", "Session", "Covers", "Summary"], rows, { "data-testid": "summary-hits" }) : h("p", { class: "empty" }, "No summaries found."));
      return section;
    }
    const answer = await call("VectorService", "SearchMemory", searchRequest(params), { signal });
    const hits = answer.hits || [];
    section.append(
      h("p", { "data-testid": "retrieval" }, `retrieval ${answer.retrieval || ""} · dense weight ${score(answer.semantic_weight)}${answer.model_id ? ` · model ${answer.model_id}` : ""}${answer.excluded_other_models ? ` · ${answer.excluded_other_models} points of other models left out` : ""}`),
      hits.length ? table(["#", ...SCORE_PARTS.map((p) => p.replace("semantic_score", "dense").replace("keyword_score", "keyword").replace("_lift", "")), "matched", "Session", "Role", "Time", "Text and context"], hitRows(hits), { "data-testid": "hits" })
        : h("p", { class: "empty" }, "No hits."));
  } catch (error) {
    section.append(errorBox(error));
  }
  return section;
}
