// Servers: configured and catalog-only servers, their state and tool counts; enable or disable a
// configured server (edit); start a sync (edit) and watch its job to the end.
import { action, api, can, flash, scopeNote } from "./api.js";
import { add, badge, field, h, heading, keepRoute, link, route, select, table, when } from "./dom.js";
import { jobPanel } from "./page-jobs.js";

const STATES = ["ok", "stale", "failed", "disabled", "pending", "catalog"];
const SHOWN = 25; // rows drawn at first (two screens): 50 rows of a registry cost 130-200 ms of layout on a first load

/** The page's request, started as soon as the page is asked for (on a first load, beside whoami). Only
 * the overview draws the table; the index's state and a running sync are asked for after it. */
export function prefetch() {
  return api("/api/v1/overview/servers");
}

const health = () => fetch("/health").then((r) => r.json());

export async function render(view, query, tail, data) {
  const step = Number(query.limit) || SHOWN;
  const params = { q: query.q || "", state: query.state || "", step, shown: step }; // kept across redraws
  const overview = await (data || prefetch());
  if (!view.isConnected) return;
  const watch = h("div", { class: "job-watch" });
  const index = h("p", { class: "index-state" }, "Index: …");
  const body = h("div", {}, summary(overview, index), serverTable(overview.servers, params));
  const start = action("Start sync", "edit", async () => {
    start.disabled = true;
    try {
      const accepted = await api("/api/v1/enrichment/sync", { method: "POST" });
      watch.replaceChildren(jobPanel(accepted.job, { title: "Sync", onEnd: ended }));
    } catch (error) {
      flash(error);
      start.disabled = false;
    }
  });
  const ended = async () => {
    start.disabled = !can("edit");
    const [fresh, now] = await Promise.all([api("/api/v1/overview/servers"), health()]);
    if (!view.isConnected) return;
    indexState(index, now);
    body.replaceChildren(summary(fresh, index), serverTable(fresh.servers, params));
  };
  add(view, heading("Servers", start), scopeNote("edit", "Enabling, disabling and syncing are off"), watch, body);
  // after the table is drawn: the index's state, and a sync already running (watched to its end)
  const [now, syncs] = await Promise.all([health(), api("/api/v1/jobs", { query: { kind: "sync", limit: 1 } })]);
  if (!view.isConnected) return;
  indexState(index, now);
  const running = syncs.jobs.find((j) => j.state === "queued" || j.state === "running");
  if (running && !watch.firstChild) {
    start.disabled = true;
    watch.append(jobPanel(running, { title: "Sync", onEnd: ended }));
  }
}

function indexState(element, health) {
  element.textContent =
    `Index: ${health.index_current ? "current" : "not current"}, ${health.indexed_tools} tools indexed ` +
    `(backend ${health.backend}${health.backend_reachable ? "" : ", unreachable: " + health.backend_error}).`;
}

function summary(overview, index) {
  const counts = STATES.filter((s) => overview.counts[s]).map((s) => h("li", {}, badge(s), ` ${overview.counts[s]}`));
  const sync =
    overview.last_sync_at === null
      ? "never"
      : [when(overview.last_sync_at), overview.last_sync_ok ? " (ok)" : " (with failures)"];
  return h(
    "div",
    { class: "summary" },
    h("ul", { class: "counts", "aria-label": "Servers per state" }, counts),
    h("p", {}, "Last sync: ", sync),
    index,
  );
}

/** Servers that need a look first (failed, stale, pending), then the rest; by name within each state. */
function ordered(servers) {
  const order = ["failed", "stale", "pending", "ok", "disabled", "catalog"];
  // plain comparisons: localeCompare loads the locale's collation on first use (40 ms of a first load)
  const key = (s) => [order.indexOf(s.status), s.name.toLowerCase(), s.name];
  const keyed = servers.map((s) => [key(s), s]);
  keyed.sort(([a], [b]) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0));
  return keyed.map(([, s]) => s);
}

function serverTable(all, params) {
  const servers = ordered(all);
  const text = h("input", { id: "server-filter", type: "search", value: params.q });
  const state = select("server-state", [["", "any"], ...STATES.map((s) => [s, s])], params.state);
  const body = h("div", { class: "servers-body" });
  const draw = () => {
    const q = text.value.trim().toLowerCase();
    const matching = servers.filter(
      (s) => (!state.value || s.status === state.value) && (!q || s.name.toLowerCase().includes(q)),
    );
    Object.assign(params, { q: text.value.trim(), state: state.value });
    keepRoute("servers", { q: params.q, state: params.state, limit: params.step === SHOWN ? "" : params.step });
    const shown = matching.slice(0, params.shown);
    const more = matching.length - shown.length;
    body.replaceChildren(
      h("p", { class: "muted", "aria-live": "polite" }, `${matching.length} of ${servers.length} servers`),
      table(
        ["Server", "State", "Source", "Tools", "Held", "Last attempt", "Last success", ""],
        shown.map(serverRow),
        { class: "servers" },
      ),
    );
    if (more > 0) {
      const next = Math.min(more, params.step);
      const button = h("button", { type: "button" }, `Show ${next} more (${more} not shown)`);
      button.addEventListener("click", () => {
        const first = params.shown;
        params.shown += params.step;
        draw();
        body.querySelectorAll("table.servers tbody tr")[first]?.querySelector("a")?.focus();
      });
      body.append(button);
    }
  };
  const refilter = () => {
    params.shown = params.step;
    draw();
  };
  text.addEventListener("input", refilter);
  state.addEventListener("change", refilter);
  draw();
  return h("section", {}, h("div", { class: "filters" }, field("Filter by name", text), field("State", state)), body);
}

function serverRow(s) {
  const imported = s.configured && s.origin === "import";
  const where = s.configured
    ? h(
        "span",
        {},
        imported ? `imported (${s.transport || "?"}): waits for the operator` : `configured (${s.transport || "?"})`,
        imported ? h("code", { class: "launch" }, s.launch) : null,
      )
    : "catalog only";
  const row = h(
    "tr",
    { "data-server": s.name },
    h("td", {}, link(route("tools", { server: s.name }), s.name), h("div", { class: "desc" }, s.description)),
    h("td", {}, badge(s.status), s.error ? h("p", { class: "error-text" }, s.error) : null),
    h("td", {}, where),
    h("td", { class: "n" }, String(s.tool_count)),
    h("td", { class: "n" }, s.held ? link(route("quarantine", { server: s.name }), String(s.held)) : "0"),
    h("td", {}, when(s.last_attempt_at)),
    h("td", {}, when(s.last_success_at)),
  );
  row.append(h("td", {}, s.configured ? toggle(s, row) : null));
  return row;
}

function toggle(s, row) {
  // An imported entry is switched on only by an admin, who allows the launch line shown beside it.
  const adopt = s.origin === "import";
  const verb = adopt ? "Allow and enable" : s.enabled ? "Disable" : "Enable";
  return action(verb, adopt ? "admin" : "edit", async (event) => {
    const button = event.target;
    button.disabled = true;
    try {
      const body = adopt ? { enabled: true, confirm_launch: s.launch } : { enabled: !s.enabled };
      const now = await api(`/api/v1/config/servers/${encodeURIComponent(s.name)}/enabled`, {
        method: "PUT",
        body,
      });
      flash(`${now.name} is ${now.enabled ? "enabled" : "disabled"}; the next sync ${now.enabled ? "discovers" : "removes"} its tools.`);
      Object.assign(s, now); // the page's list too: a filter redraws it as it is now
      const fresh = serverRow(s);
      row.replaceWith(fresh);
      fresh.querySelector("td:last-child button")?.focus();
    } catch (error) {
      flash(error);
      button.disabled = false;
    }
  }, { "aria-label": `${verb} ${s.name}` });
}
