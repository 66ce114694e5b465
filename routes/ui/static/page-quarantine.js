// Quarantine: the held tool definitions; one entry's approved and held definition as a diff, the
// scanner's reasons, and approve or reject (the approve scope) with a note for the audit log.
import { action, api, can, flash, scopeNote } from "./api.js";
import {
  add, badge, clear, field, h, heading, json, keepRoute, link, list, route, short, table, toolHref, when,
} from "./dom.js";

export async function render(view, params, tail) {
  return tail ? entry(view, tail) : entries(view, params);
}

async function entries(view, params) {
  const everything = params.all === "1";
  const server = params.server || "";
  const held = await api("/api/v1/quarantine", { query: { all: everything || "", server } });
  if (!view.isConnected) return;
  const all = h("input", { id: "q-all", type: "checkbox", checked: everything });
  all.addEventListener("change", () => {
    location.hash = route("quarantine", { all: all.checked ? "1" : "", server });
  });
  const rows = held.map((e) =>
    h(
      "tr",
      { "data-entry": e.id },
      h("td", {}, link(route("quarantine/" + encodeURIComponent(e.id)), e.id, { "aria-label": `Review ${e.id} (${e.tool_id})` })),
      h("td", {}, e.tool_id),
      h("td", {}, badge(e.kind)),
      h("td", {}, badge(e.state)),
      h("td", {}, e.found_by, " ", when(e.found_at)),
      h("td", {}, h("div", { class: "desc" }, e.reasons[0] || ""), e.reasons.length > 1 ? h("small", {}, `and ${e.reasons.length - 1} more`) : null),
    ),
  );
  add(
    view,
    heading("Quarantine"),
    h("p", {}, "Held definitions are out of the index and the gateway until someone with the approve scope decides."),
    scopeNote("approve", "Approving and rejecting are off"),
    h(
      "div",
      { class: "filters" },
      h("div", { class: "field check" }, all, h("label", { for: "q-all" }, "Also decided and settled entries")),
      server ? h("p", {}, `Server: ${server} `, link(route("quarantine", { all: params.all }), "(all servers)")) : null,
    ),
    rows.length
      ? table(["Entry", "Tool", "Kind", "State", "Found", "Reasons"], rows, { class: "quarantine" })
      : h("p", { class: "muted" }, everything ? "No entries." : "Nothing is held."),
  );
  keepRoute("quarantine", { all: params.all, server });
}

async function entry(view, id) {
  const detail = await api(`/api/v1/quarantine/${encodeURIComponent(id)}`);
  if (!view.isConnected) return;
  const box = h("div", {});
  add(view, h("p", {}, link(route("quarantine"), "← Quarantine")), heading(`Held: ${detail.entry.tool_id}`), box);
  draw(box, detail);
}

function draw(box, detail) {
  const e = detail.entry;
  const note = h("input", { id: "q-note", type: "text", maxlength: "500", autocomplete: "off" });
  const decide = (verb) => async (event) => {
    const buttons = box.querySelectorAll(".decide button");
    buttons.forEach((b) => (b.disabled = true));
    try {
      const done = await api(`/api/v1/quarantine/${encodeURIComponent(e.id)}/${verb}`, { method: "POST", body: { note: note.value } });
      flash(`${done.entry.tool_id}: ${verb === "approve" ? "approved, pinned and indexed" : "rejected, still held"}.`);
      const fresh = await api(`/api/v1/quarantine/${encodeURIComponent(e.id)}`);
      if (box.isConnected) draw(box, fresh);
      box.querySelector(".decision")?.focus();
    } catch (error) {
      flash(error);
      approve.disabled = !can("approve") || settled;
      reject.disabled = !can("approve") || e.state !== "pending";
      event.target.focus();
    }
  };
  const approve = action("Approve", "approve", decide("approve"), { class: "primary" });
  const reject = action("Reject", "approve", decide("reject"), { class: "danger" });
  const settled = e.state === "approved" || e.state === "superseded";
  if (settled) approve.disabled = true;
  if (e.state !== "pending") reject.disabled = true;
  add(clear(box),
    h(
      "dl",
      { class: "facts" },
      h("dt", {}, "Entry"), h("dd", {}, h("code", {}, e.id)),
      h("dt", {}, "Tool"), h("dd", {}, link(toolHref(e.tool_id), e.tool_id)),
      h("dt", {}, "Kind"), h("dd", {}, badge(e.kind)),
      h("dt", {}, "State"), h("dd", { class: "decision", tabindex: "-1" }, badge(e.state), e.decided_by ? [" by ", e.decided_by, " ", when(e.decided_at)] : null),
      h("dt", {}, "Found"), h("dd", {}, `by ${e.found_by} `, when(e.found_at)),
      h("dt", {}, "Approved hash"), h("dd", {}, short(e.old_hash, 64)),
      h("dt", {}, "Held hash"), h("dd", {}, short(e.new_hash, 64)),
    ),
    h("h2", {}, "Why it is held"),
    h("div", { class: "reasons" }, list(e.reasons)),
    h("h2", {}, "Approved → held"),
    diff(detail.diff),
    h(
      "details",
      {},
      h("summary", {}, "Both definitions"),
      h(
        "div",
        { class: "columns" },
        h("section", {}, h("h3", {}, "Approved"), e.old_definition ? json(e.old_definition) : h("p", { class: "muted" }, "never approved")),
        h("section", {}, h("h3", {}, "Held"), json(e.new_definition)),
      ),
    ),
    h("h2", {}, "Decide"),
    scopeNote("approve", "Approving and rejecting are off"),
    h(
      "div",
      { class: "decide" },
      field("Note for the audit log", note),
      approve,
      reject,
    ),
  );
}

/** The unified diff, each line as text, marked as added, removed or a hunk header. */
function diff(text) {
  if (!text) return h("p", { class: "muted" }, "No approved definition to compare with: the whole definition is new.");
  const lines = text.split("\n").map((line) => {
    const kind = line.startsWith("+++") || line.startsWith("---") ? "file" : line.startsWith("@@") ? "hunk" : line[0] === "+" ? "add" : line[0] === "-" ? "del" : "same";
    return h("span", { class: `line ${kind}` }, line + "\n");
  });
  return h("pre", { class: "diff", "aria-label": "Differences between the approved and the held definition" }, lines);
}
