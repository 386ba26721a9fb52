// Formed memory (FormationService): a user's facts with the messages they came from, their
// superseded history, the profile, the records the tenant's custom strategies formed (with
// their messages too); corrections and deletions with memory:write.

import { call } from "./api.js";
import { h, time, table, field, errorBox, confirmAction } from "./dom.js";
import { caller, link, may } from "./state.js";

export async function memoryView({ params, signal }) {
  const user = params.get("user") || caller.user_id || "";
  const history = params.get("superseded") === "1";
  const inputs = {
    user: h("input", { name: "user", value: user, placeholder: "end user id", required: true }),
    superseded: h("input", { name: "superseded", type: "checkbox", checked: history }),
  };
  const form = h("form", { class: "filters", onsubmit: (event) => {
    event.preventDefault();
    location.hash = link("memory", "", { user: inputs.user.value.trim(), superseded: inputs.superseded.checked ? "1" : "" });
  } }, field("End user", inputs.user), field("Superseded history", inputs.superseded), h("button", { type: "submit" }, "Show"));
  const section = h("section", { "aria-labelledby": "memory-title" }, h("h2", { id: "memory-title" }, "Formed memory"), form);
  if (!user) {
    section.append(h("p", { class: "empty" }, "Name an end user to see the facts and profile formed from their sessions."));
    return section;
  }
  const status = h("div", { "aria-live": "polite" });
  try {
    const [facts, profile, custom] = await Promise.all([
      call("FormationService", "ListFacts", { user_id: user, include_superseded: history, page_size: 200, page_token: params.get("page") || "" }, { signal }),
      call("FormationService", "GetProfile", { user_id: user }, { signal }),
      call("FormationService", "ListCustomRecords", { user_id: user, page_size: 100, page_token: params.get("records") || "" }, { signal }),
    ]);
    const p = profile.profile || {};
    section.append(h("h3", {}, "Profile"),
      p.text ? h("blockquote", { "data-testid": "profile" }, p.text, h("footer", {}, `updated ${time(p.update_time)} · from ${(p.fact_ids || []).length} facts`))
        : h("p", { class: "empty" }, "No profile yet."));
    const canWrite = may("memory:write");
    const rows = (facts.facts || []).map((fact) => h("tr", { "data-fact": fact.id, class: fact.superseded_by || fact.valid_to ? "archived" : "" },
      h("td", { class: "content" }, fact.text),
      h("td", {}, fact.category || ""),
      h("td", {}, (fact.keywords || []).join(", ")),
      h("td", {}, sourceLinks(fact.sources)),
      h("td", {}, time(fact.event_time)),
      h("td", {}, time(fact.update_time || fact.create_time)),
      h("td", {}, fact.superseded_by ? `superseded by ${fact.superseded_by}` : fact.valid_to ? `ended ${time(fact.valid_to)}` : fact.corrected ? "corrected" : "current"),
      canWrite ? h("td", {},
        h("button", { class: "small", "data-testid": "correct-fact", onclick: () => correct(fact, user, status) }, "Correct…"),
        " ",
        h("button", { class: "danger small", "data-testid": "delete-fact", onclick: async () => {
          if (!(await confirmAction(`Delete the fact "${fact.text}" of user ${user}? It is removed from recall and the profile.`))) return;
          try {
            await call("FormationService", "DeleteFact", { user_id: user, fact_id: fact.id });
            window.dispatchEvent(new HashChangeEvent("hashchange"));
          } catch (error) { status.replaceChildren(errorBox(error)); }
        } }, "Delete…")) : ""));
    const headers = ["Fact", "Category", "Keywords", "Sources", "When", "Updated", "State"];
    if (canWrite) headers.push("");
    section.append(h("h3", {}, "Facts"), status,
      rows.length ? table(headers, rows, { "data-testid": "facts" }) : h("p", { class: "empty" }, "No facts."),
      facts.next_page_token ? h("p", { class: "pager" }, h("a", { href: link("memory", "", { user, superseded: history ? "1" : "", page: facts.next_page_token }) }, "Next page")) : "");
    section.append(...customRecords(custom, user, canWrite, status, params));
  } catch (error) {
    section.append(errorBox(error));
  }
  return section;
}

function sourceLinks(sources) {
  return (sources || []).map((s) => h("a", { href: link("session", s.session_id), title: `message ${s.message_id}` }, `${s.session_id} #${s.seq}`)).flatMap((a) => [a, " "]);
}

// Records of the tenant's custom strategies about the user (ListCustomRecords), newest first:
// each value as the JSON it is, with the messages it came from.
function customRecords(custom, user, canWrite, status, params) {
  const rows = (custom.records || []).map((record) => {
    const value = JSON.stringify(record.value || {});
    return h("tr", { "data-record": record.id },
      h("td", {}, record.strategy),
      h("td", { class: "content" }, h("code", { "data-testid": "record-value" }, value)),
      h("td", {}, sourceLinks(record.sources)),
      h("td", {}, time(record.create_time)),
      h("td", {}, time(record.update_time || record.create_time)),
      canWrite ? h("td", {}, h("button", { class: "danger small", "data-testid": "delete-record", onclick: async () => {
        const ask = `Delete the ${record.strategy} record ${value.slice(0, 120)} of user ${user}? It is not formed again from the messages already read, unless one of them is rewritten.`;
        if (!(await confirmAction(ask))) return;
        try {
          await call("FormationService", "DeleteCustomRecord", { user_id: user, record_id: record.id });
          window.dispatchEvent(new HashChangeEvent("hashchange"));
        } catch (error) { status.replaceChildren(errorBox(error)); }
      } }, "Delete…")) : "");
  });
  const headers = ["Strategy", "Record", "Sources", "Formed", "Updated"];
  if (canWrite) headers.push("");
  const next = custom.next_page_token
    ? h("p", { class: "pager" }, h("a", { href: link("memory", "", { user, superseded: params.get("superseded") || "", records: custom.next_page_token }) }, "Next records"))
    : "";
  return [h("h3", {}, "Custom records"),
    rows.length ? table(headers, rows, { "data-testid": "custom-records" }) : h("p", { class: "empty" }, "No custom records."), next];
}

function correct(fact, user, status) {
  const text = h("textarea", { rows: 3, "aria-label": "Corrected fact" }, fact.text);
  const form = h("form", { class: "inline", onsubmit: async (event) => {
    event.preventDefault();
    const value = text.value.trim();
    if (!value || !(await confirmAction(`Replace the fact "${fact.text}" of user ${user} with "${value}"?`, "Correct"))) return;
    try {
      await call("FormationService", "UpdateFact", { user_id: user, fact_id: fact.id, text: value });
      window.dispatchEvent(new HashChangeEvent("hashchange"));
    } catch (error) { status.replaceChildren(errorBox(error)); }
  } }, text, h("button", { type: "submit" }, "Save correction"));
  status.replaceChildren(form);
  text.focus();
}
