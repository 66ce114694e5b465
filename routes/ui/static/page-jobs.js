// Jobs: sync and import jobs, paged and filtered by kind and state; a running job is watched (its
// progress polled) until it ends. jobPanel is also the Servers page's view of the sync it started.
import { api, flash, newest } from "./api.js";
import { add, badge, field, h, heading, json, keepRoute, select, table, when } from "./dom.js";

const KINDS = [["", "any"], ["sync", "sync"], ["import", "import"]];
const STATES = ["queued", "running", "succeeded", "failed", "interrupted"];
const SIZES = [10, 25, 50, 100];
const POLL_MS = 400;

export async function render(view, params) {
  const state = {
    kind: params.kind || "",
    state: params.state || "",
    limit: Number(params.limit) || 25,
    offset: Number(params.offset) || 0,
  };
  const kind = select("job-kind", KINDS, state.kind);
  const jobState = select("job-state", [["", "any"], ...STATES.map((s) => [s, s])], state.state);
  const sizes = [...new Set([...SIZES, state.limit])].sort((a, b) => a - b);
  const size = select("job-size", sizes.map((n) => [String(n), String(n)]), String(state.limit));
  const results = h("div", { class: "results" });
  let timer = 0;
  const ask = newest();
  const load = async () => {
    const current = ask();
    keepRoute("jobs", { ...state, offset: state.offset || "" });
    const page = await api("/api/v1/jobs", { query: state });
    if (!view.isConnected || !current()) return; // a later load answers for the filters chosen since
    results.replaceChildren(...drawJobs(page, state, load));
    clearTimeout(timer); // while a job shown runs, the list follows it
    if (page.jobs.some((j) => j.state === "queued" || j.state === "running")) {
      timer = setTimeout(() => view.isConnected && load().catch(flash), 1000);
    }
  };
  const refilter = () => {
    Object.assign(state, { kind: kind.value, state: jobState.value, limit: Number(size.value), offset: 0 });
    load().catch(flash);
  };
  for (const control of [kind, jobState, size]) control.addEventListener("change", refilter);
  const again = h("button", { type: "button", onclick: () => load().catch(flash) }, "Refresh");
  add(
    view,
    heading("Jobs", again),
    h("div", { class: "filters" }, field("Kind", kind), field("State", jobState), field("Per page", size)),
    results,
  );
  await load();
}

function drawJobs(page, state, load) {
  const first = page.total === 0 ? 0 : state.offset + 1;
  const last = state.offset + page.jobs.length;
  const go = (offset) => () => {
    state.offset = Math.max(0, offset);
    load().catch(flash);
  };
  const pager = h(
    "nav",
    { class: "pager", "aria-label": "Job pages" },
    h("button", { type: "button", disabled: state.offset === 0, onclick: go(state.offset - state.limit) }, "Previous page"),
    h("span", { "aria-live": "polite" }, `${first}–${last} of ${page.total}`),
    h("button", { type: "button", disabled: last >= page.total, onclick: go(state.offset + state.limit) }, "Next page"),
  );
  const rows = page.jobs.map((j) =>
    h(
      "tr",
      { "data-job": j.id },
      h("td", {}, h("code", {}, j.id)),
      h("td", {}, j.kind),
      h("td", {}, badge(j.state), j.progress ? h("div", {}, progress(j.progress)) : null),
      h("td", {}, j.created_by),
      h("td", {}, when(j.created_at)),
      h("td", {}, when(j.finished_at)),
      h("td", {}, outcome(j)),
    ),
  );
  const list = rows.length
    ? table(["Job", "Kind", "State", "By", "Created", "Finished", "Outcome"], rows, { class: "jobs" })
    : h("p", { class: "muted" }, "No jobs match.");
  return [pager, list];
}

function progress(p) {
  const bar = h("progress", { max: Math.max(p.total, 1), "aria-label": `${p.phase} progress` });
  if (p.total > 0) bar.value = p.done;
  return h("span", { class: "progress" }, bar, ` ${p.phase} ${p.done}/${p.total}`);
}

/** What a finished job did, in a line, with its whole result or error on demand. */
export function outcome(job) {
  if (job.error) {
    return h(
      "div",
      { class: "error-text" },
      job.error.message,
      job.error.hint ? h("p", { class: "hint" }, job.error.hint) : null,
    );
  }
  if (!job.result) return h("span", { class: "muted" }, "—");
  const r = job.result;
  const line =
    job.kind === "sync"
      ? `${r.ok ? "ok" : "with failures"}: ${r.servers_seen ?? 0} servers answered, ${r.servers_failed ?? 0} failed; ` +
        `tools +${r.tools_added ?? 0} ~${r.tools_changed ?? 0} -${r.tools_removed ?? 0}, ` +
        `${(r.tools_held || []).length} held`
      : r.counts
        ? Object.entries(r.counts).map(([k, v]) => `${k} ${v}`).join(", ")
        : "done";
  return h("div", {}, line, h("details", {}, h("summary", {}, "Result"), json(r)));
}

/** A job, polled until it ends; ``onEnd(job)`` runs once then. Stops when taken off the page. */
export function jobPanel(job, { title = "Job", onEnd } = {}) {
  const panel = h("section", { class: "job-panel", "aria-label": `${title} job`, "data-job": job.id });
  const status = h("div", { "aria-live": "polite" });
  panel.append(h("h2", {}, `${title} job `, h("code", {}, job.id)), status);
  const draw = (j) => {
    status.replaceChildren();
    add(status, [
      h("p", {}, "State: ", badge(j.state), " started ", when(j.started_at)),
      j.progress ? h("p", {}, progress(j.progress)) : null,
      j.state === "queued" || j.state === "running"
        ? null
        : h("div", { class: "job-end" }, h("p", {}, "Finished ", when(j.finished_at)), outcome(j)),
    ]);
  };
  const poll = async (j) => {
    draw(j);
    if (j.state !== "queued" && j.state !== "running") {
      if (onEnd) Promise.resolve(onEnd(j)).catch(flash);
      return;
    }
    setTimeout(async () => {
      if (!panel.isConnected) return;
      try {
        await poll(await api(`/api/v1/jobs/${encodeURIComponent(j.id)}`));
      } catch (error) {
        flash(error);
      }
    }, POLL_MS);
  };
  poll(job);
  return panel;
}
