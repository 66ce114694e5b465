// Evaluation: the reports `tool-selector eval --report` wrote into the configured folder; one report's
// tables (recall@k, tiers, calibration), its reliability diagram and its markdown text.
import { api } from "./api.js";
import { add, h, heading, json, link, num, route, table, when } from "./dom.js";

const RECALL = [
  ["tool_recall_at_1", "tool R@1"], ["tool_recall_at_3", "tool R@3"], ["tool_recall_at_5", "tool R@5"],
  ["server_recall_at_1", "server R@1"], ["server_recall_at_3", "server R@3"], ["server_recall_at_5", "server R@5"],
  ["mrr", "MRR"],
];
const ROUTING = [
  ["tier_accuracy", "tier accuracy"], ["activated_precision", "activated precision"],
  ["answerable_activated", "answerable activated"], ["unanswerable_caught", "unanswerable caught"],
  ["confidence_auroc", "AUROC"], ["ece", "ECE"], ["latency_p50_ms", "p50 ms"], ["latency_p95_ms", "p95 ms"],
];

export async function render(view, params, tail) {
  return tail ? report(view, tail) : reports(view);
}

async function reports(view) {
  const all = await api("/api/v1/eval/reports");
  if (!view.isConnected) return;
  const rows = all.map((r) => [
    link(route("eval/" + encodeURIComponent(r.name)), r.title || r.name),
    h("code", {}, r.name),
    when(r.created_at),
    figures(r.summary),
    r.has_diagram ? "yes" : "no",
  ]);
  add(
    view,
    heading("Evaluation"),
    h("p", {}, "Reports written by ", h("code", {}, "tool-selector eval --report"), " into the configured reports folder."),
    rows.length
      ? table(["Report", "File", "Made", "Figures", "Diagram"], rows, { class: "reports" })
      : h("p", { class: "muted" }, "No reports yet: run `tool-selector eval DATASETS --report FILE` into the reports folder."),
  );
}

function figures(summary) {
  const groups = Object.entries(summary || {});
  if (!groups.length) return h("span", { class: "muted" }, "—");
  return h(
    "ul",
    { class: "figures" },
    groups.map(([group, values]) =>
      h("li", {}, h("strong", {}, group), ": ", Object.entries(values || {}).map(([k, v]) => `${k} ${typeof v === "number" ? num(v) : v}`).join(", ")),
    ),
  );
}

async function report(view, name) {
  const path = `/api/v1/eval/reports/${encodeURIComponent(name)}`;
  const r = await api(path);
  if (!view.isConnected) return;
  const groups = Object.entries(r.groups || (r.report && r.report.groups) || {});
  const diagram = h("figure", { class: "diagram" });
  add(
    view,
    h("p", {}, link(route("eval"), "← Evaluation")),
    heading(r.title || r.name),
    h("p", { class: "muted" }, "Made ", when(r.created_at), " · file ", h("code", {}, `${r.name}.md`)),
    Object.keys(r.settings || {}).length ? h("details", {}, h("summary", {}, "Settings"), json(r.settings)) : null,
    groups.length ? groupTables(groups) : h("p", { class: "muted" }, "This report has no figures in JSON; its text follows."),
    h("h2", {}, "Reliability diagram"),
    diagram,
    h("details", { class: "markdown" }, h("summary", {}, "The report as written (markdown)"), h("pre", {}, r.markdown || "")),
  );
  if (r.has_diagram === false) diagram.append(h("p", { class: "muted" }, "This report has no diagram."));
  else await showDiagram(diagram, `${path}/diagram`, r.name);
}

function groupTables(groups) {
  const meter = (v) => (v === null || v === undefined ? "—" : [h("meter", { min: "0", max: "1", value: String(v) }), ` ${num(v)}`]);
  const recall = table(
    ["Group", "Queries", ...RECALL.map(([, label]) => label)],
    groups.map(([name, g]) => [name, String(g.count), ...RECALL.map(([k]) => meter(g[k]))]),
    { class: "recall" },
  );
  const routing = table(
    ["Group", "Answerable", "Unanswerable", ...ROUTING.map(([, label]) => label)],
    groups.map(([name, g]) => [name, String(g.answerable), String(g.unanswerable), ...ROUTING.map(([k]) => num(g[k], k.endsWith("_ms") ? 1 : 3))]),
    { class: "routing" },
  );
  const tiers = table(
    ["Group", "Answerable: tiers", "Unanswerable: tiers"],
    groups.map(([name, g]) => [name, counts(g.tiers_answerable), counts(g.tiers_unanswerable)]),
    { class: "tiers" },
  );
  return h("div", {}, h("h2", {}, "Recall@k"), recall, h("h2", {}, "Routing and calibration"), routing, h("h2", {}, "Tiers"), tiers);
}

function counts(values) {
  return Object.entries(values || {}).map(([k, v]) => `${k} ${v}`).join(", ") || "—";
}

async function showDiagram(figure, path, name) {
  try {
    const blob = await api(path, { as: "blob" });
    const url = URL.createObjectURL(blob);
    const img = h("img", { src: url, alt: `Reliability diagram of ${name}: predicted confidence against observed accuracy` });
    img.addEventListener("load", () => URL.revokeObjectURL(url), { once: true });
    figure.replaceChildren(img);
  } catch (error) {
    figure.replaceChildren(h("p", { class: "muted" }, `No diagram: ${error.message}`));
  }
}
