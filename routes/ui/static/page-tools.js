// Tools: search and filter the catalog's tools (by text, server, enrichment or approval state), paged;
// one tool's original definition beside its enrichment and its server's profile, hash and approval.
import { api, flash, newest } from "./api.js";
import {
  add, badge, chips, field, h, heading, json, keepRoute, link, list, route, select, short, table, toolHref, when,
} from "./dom.js";

const STATES = [["", "any"], ["current", "enriched (current)"], ["stale", "enrichment stale"], ["missing", "not enriched"], ["held", "held"]];
const PAGE = 50;

export async function render(view, params, tail) {
  return tail ? detail(view, tail) : search(view, params);
}

async function search(view, params) {
  const state = {
    q: params.q || "",
    server: params.server || "",
    state: params.state || "",
    limit: Number(params.limit) || PAGE,
    offset: Number(params.offset) || 0,
  };
  let first = api("/api/v1/tools", { query: state }); // beside the server list, not after it
  first.catch(() => {}); // awaited by the first load, which shows its error
  const overview = await api("/api/v1/overview/servers");
  if (!view.isConnected) return;
  const names = overview.servers.map((s) => s.name).sort((a, b) => a.localeCompare(b));
  if (state.server && !names.includes(state.server)) names.unshift(state.server);
  const q = h("input", { id: "tool-q", name: "q", type: "search", value: state.q });
  const server = select("tool-server", [["", "any"], ...names.map((n) => [n, n])], state.server);
  const filter = select("tool-state", STATES, state.state);
  const results = h("div", { class: "results" });
  const ask = newest();
  const load = async () => {
    const current = ask();
    keepRoute("tools", { ...state, limit: state.limit === PAGE ? "" : state.limit, offset: state.offset || "" });
    const pending = first || api("/api/v1/tools", { query: state });
    first = null;
    const page = await pending;
    if (view.isConnected && current()) results.replaceChildren(...drawTools(page, state, load));
  };
  const refilter = (event) => {
    event?.preventDefault();
    Object.assign(state, { q: q.value.trim(), server: server.value, state: filter.value, offset: 0 });
    load().catch(flash);
  };
  server.addEventListener("change", refilter);
  filter.addEventListener("change", refilter);
  add(
    view,
    heading("Tools"),
    h(
      "form",
      { class: "filters", role: "search", onsubmit: refilter },
      field("Search tools", q),
      h("button", { type: "submit" }, "Search"),
      field("Server", server),
      field("State", filter),
    ),
    results,
  );
  await load();
}

function drawTools(page, state, load) {
  const first = page.total === 0 ? 0 : state.offset + 1;
  const last = state.offset + page.tools.length;
  const go = (offset) => () => {
    state.offset = Math.max(0, offset);
    load().catch(flash);
  };
  const pager = h(
    "nav",
    { class: "pager", "aria-label": "Tool pages" },
    h("button", { type: "button", disabled: state.offset === 0, onclick: go(state.offset - state.limit) }, "Previous page"),
    h("span", { "aria-live": "polite" }, `${first}–${last} of ${page.total} tools`),
    h("button", { type: "button", disabled: last >= page.total, onclick: go(state.offset + state.limit) }, "Next page"),
  );
  const rows = page.tools.map((t) =>
    h(
      "tr",
      { "data-tool": t.id },
      h("td", {}, link(toolHref(t.id), t.name)),
      h("td", {}, t.server),
      h("td", {}, h("div", { class: "desc" }, t.description)),
      h("td", {}, badge(t.enrichment)),
      h("td", {}, badge(t.approval)),
      h("td", {}, short(t.content_hash)),
    ),
  );
  const shown = rows.length
    ? table(["Tool", "Server", "Description", "Enrichment", "Approval", "Hash"], rows, { class: "tools" })
    : h("p", { class: "muted" }, "No tools match.");
  return [pager, shown];
}

async function detail(view, id) {
  const d = await api(`/api/v1/enrichment/tool/${encodeURIComponent(id)}`);
  if (!view.isConnected) return;
  const t = d.tool;
  const approval = d.approval || {};
  const held = (approval.quarantine || []).map((entry) => link(route("quarantine/" + encodeURIComponent(entry)), entry));
  add(
    view,
    h("p", {}, link(route("tools", { server: t.server }), `← Tools of ${t.server}`)),
    heading(t.name),
    h(
      "dl",
      { class: "facts" },
      h("dt", {}, "Id"), h("dd", {}, h("code", {}, t.id || id)),
      h("dt", {}, "Server"), h("dd", {}, t.server),
      h("dt", {}, "Hash"), h("dd", {}, h("code", { class: "hash" }, t.content_hash)),
      h("dt", {}, "Approval"), h("dd", {}, badge(approval.state || "unknown"), held.length ? [" held as ", held] : null),
      h("dt", {}, "Pinned hash"),
      h("dd", {}, approval.pinned_hash ? h("code", { class: "hash" }, approval.pinned_hash) : "none",
        approval.pinned_by ? ` (${approval.pinned_how || "pinned"} by ${approval.pinned_by})` : null),
      h("dt", {}, "Definition hash"), h("dd", {}, approval.definition_hash ? h("code", { class: "hash" }, approval.definition_hash) : "—"),
      h("dt", {}, "Enrichment"), h("dd", {}, badge(d.enrichment_state)),
      h("dt", {}, "Updated"), h("dd", {}, when(t.updated_at), ` by ${t.modified_by || t.created_by || "?"} (${t.creation_method})`),
    ),
    h(
      "div",
      { class: "columns" },
      h("section", { "aria-labelledby": "def-h" }, h("h2", { id: "def-h" }, "Original definition"), definition(d.definition)),
      h("section", { "aria-labelledby": "enr-h" }, h("h2", { id: "enr-h" }, "Enrichment"), enrichment(d.enrichment), h("h2", {}, "Server profile"), profile(d.profile)),
    ),
  );
}

function definition(def) {
  if (!def) return h("p", { class: "muted" }, "none");
  return h(
    "div",
    { class: "definition" },
    h("h3", {}, "Description"),
    h("p", { class: "text" }, def.description || ""),
    h("h3", {}, "Input schema"),
    json(def.input_schema || {}),
    def.output_schema ? [h("h3", {}, "Output schema"), json(def.output_schema)] : null,
    def.annotations && Object.keys(def.annotations).length ? [h("h3", {}, "Annotations"), json(def.annotations)] : null,
  );
}

function enrichment(e) {
  if (!e) return h("p", { class: "muted" }, "Not enriched yet: the next sync enriches it.");
  return h(
    "div",
    { class: "enrichment" },
    h("h3", {}, "Enhanced description"),
    h("p", { class: "text" }, e.enhanced_description || ""),
    h("h3", {}, "Action–entity pairs"),
    chips(e.action_entities),
    h("h3", {}, "Keywords"),
    chips(e.semantic_keywords),
    h("h3", {}, "Use cases"),
    list(e.use_cases),
    h("p", { class: "muted" }, `by ${e.enricher} (${e.model}, prompt ${e.prompt_version}), `, when(e.last_updated), " · hash ", short(e.enrichment_hash)),
  );
}

function profile(p) {
  if (!p) return h("p", { class: "muted" }, "No profile yet.");
  return h(
    "dl",
    { class: "facts" },
    h("dt", {}, "Domain"), h("dd", {}, p.domain),
    h("dt", {}, "Capabilities"), h("dd", {}, chips(p.primary_capabilities)),
    h("dt", {}, "Entities"), h("dd", {}, chips(p.entity_types)),
    h("dt", {}, "Verbs"), h("dd", {}, chips(p.action_verbs)),
    h("dt", {}, "Keywords"), h("dd", {}, chips(p.semantic_keywords)),
    h("dt", {}, "Context"), h("dd", {}, p.integration_context || "—"),
    h("dt", {}, "Profiled"), h("dd", {}, when(p.last_updated), ` by ${p.profiler}`),
  );
}
