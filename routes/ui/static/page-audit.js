// Audit: every mutation, newest first (the admin scope), filtered by actor and target, paged by
// sequence number (older pages continue below the smallest seq seen).
import { action, api, can, flash, newest, scopeNote } from "./api.js";
import { add, field, h, heading, json, keepRoute, select, short, table, when } from "./dom.js";

const SIZES = [10, 25, 50, 100];

export async function render(view, params) {
  const state = {
    actor: params.actor || "",
    target: params.target || "",
    limit: Number(params.limit) || 50,
    before_seq: Number(params.before_seq) || "",
  };
  const newer = []; // the before_seq of each page above this one
  const actor = h("input", { id: "audit-actor", type: "text", value: state.actor, autocomplete: "off" });
  const target = h("input", { id: "audit-target", type: "text", value: state.target, autocomplete: "off" });
  const sizes = [...new Set([...SIZES, state.limit])].sort((a, b) => a - b);
  const size = select("audit-size", sizes.map((n) => [String(n), String(n)]), String(state.limit));
  const results = h("div", { class: "results" });
  const ask = newest();
  const load = async () => {
    const current = ask();
    keepRoute("audit", { ...state, limit: state.limit === 50 ? "" : state.limit });
    const records = await api("/api/v1/audit", { query: state });
    if (view.isConnected && current()) results.replaceChildren(...draw(records, state, newer, load));
  };
  const apply = action("Apply filters", "admin", null, { type: "submit" });
  add(
    view,
    heading("Audit log"),
    scopeNote("admin", "The audit log is closed"),
    h(
      "form",
      {
        class: "filters",
        onsubmit: (event) => {
          event.preventDefault();
          Object.assign(state, { actor: actor.value.trim(), target: target.value.trim(), limit: Number(size.value), before_seq: "" });
          newer.length = 0;
          load().catch(flash);
        },
      },
      field("Actor", actor),
      field("Target", target),
      field("Per page", size),
      apply,
    ),
    results,
  );
  if (can("admin")) await load();
}

function draw(records, state, newer, load) {
  const smallest = records.length ? records[records.length - 1].seq : null;
  const older = h("button", { type: "button", disabled: records.length < state.limit || smallest <= 1 }, "Older");
  older.addEventListener("click", () => {
    newer.push(state.before_seq);
    state.before_seq = smallest;
    load().catch(flash);
  });
  const back = h("button", { type: "button", disabled: !state.before_seq }, "Newer");
  back.addEventListener("click", () => {
    state.before_seq = newer.length ? newer.pop() : "";
    load().catch(flash);
  });
  const span = records.length ? `seq ${records[0].seq}–${smallest}` : "no records";
  const pager = h("nav", { class: "pager", "aria-label": "Audit pages" }, back, h("span", { "aria-live": "polite" }, span), older);
  const rows = records.map((r) =>
    h(
      "tr",
      { "data-seq": String(r.seq) },
      h("td", { class: "n" }, String(r.seq)),
      h("td", {}, when(r.at)),
      h("td", {}, r.actor),
      h("td", {}, h("code", {}, r.action)),
      h("td", {}, r.target),
      h("td", {}, short(r.before_hash), " → ", short(r.after_hash)),
      h("td", {}, Object.keys(r.details || {}).length ? h("details", {}, h("summary", {}, "Details"), json(r.details)) : ""),
    ),
  );
  return [
    pager,
    rows.length
      ? table(["Seq", "When", "Actor", "Action", "Target", "Hash before → after", ""], rows, { class: "audit" })
      : h("p", { class: "muted" }, "No records match."),
  ];
}
