// Memory: the choices agents confirmed, which the gateway remembers (the admin scope): forget one, or
// clear them all. Nothing here is sent anywhere; both actions are audited.
import { action, api, can, flash, scopeNote } from "./api.js";
import { add, h, heading, table, when } from "./dom.js";

export async function render(view) {
  const results = h("div", { class: "results" });
  const load = async () => {
    const found = await api("/api/v1/memory", { query: { limit: 500 } });
    if (view.isConnected) results.replaceChildren(...draw(found, load));
  };
  add(
    view,
    heading("Memory"),
    h(
      "p",
      { class: "muted" },
      "A request an agent resolved, then served with a tool of the power it chose, is remembered here for whoever confirmed it (local: the person over stdio; key:ID: an API key); a later request like it from the same one can activate that power. Turn it off with TOOL_SELECTOR_MEMORY__ENABLED=false.",
    ),
    scopeNote("admin", "The memory is closed"),
    results,
  );
  if (can("admin")) await load();
}

function draw(found, load) {
  const clearAll = action("Forget everything", "admin", async () => {
    if (!confirm(`Forget all ${found.length} remembered choices?`)) return;
    const done = await api("/api/v1/memory", { method: "DELETE" }).catch(flash);
    if (done) flash(`Forgot ${done.forgotten} remembered choices.`);
    await load().catch(flash);
  }, { disabled: !found.length });
  const rows = found.map((c) =>
    h(
      "tr",
      { "data-choice": String(c.id) },
      h("td", { class: "n" }, String(c.id)),
      h("td", {}, c.principal),
      h("td", {}, c.power),
      h("td", {}, h("code", {}, c.tool)),
      h("td", { class: "n" }, String(c.confirmed)),
      h("td", { class: "n" }, String(c.refuted)),
      h("td", {}, when(c.confirmed_at)),
      h(
        "td",
        {},
        c.damaged
          ? h("strong", { class: "damaged" }, `Damaged (${c.damaged}): not used; forget it to repair.`)
          : c.request || h("span", { class: "muted" }, "(words not kept)"),
      ),
      h(
        "td",
        {},
        action("Forget", "admin", async () => {
          const done = await api(`/api/v1/memory/${c.id}`, { method: "DELETE" }).catch(flash);
          if (done) flash(`Forgot choice ${done.id} (${done.power}).`);
          await load().catch(flash);
        }, { "aria-label": `Forget choice ${c.id} (${c.power})` }),
      ),
    ),
  );
  return [
    h("p", {}, clearAll),
    rows.length
      ? table(["Id", "Whose", "Power", "Tool", "Confirmed", "Refuted", "Last confirmed", "Request", ""], rows, { class: "memory" })
      : h("p", { class: "muted" }, "Nothing remembered yet: a choice is remembered after an agent's call served it."),
  ];
}
