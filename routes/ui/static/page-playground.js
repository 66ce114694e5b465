// Playground: a request in; the tier, confidence and evidence out, with the ranked powers and tools
// (scores, match types), and on demand the JSON resolve_intent would return (the answer without the
// ranked candidates).
import { api, flash } from "./api.js";
import {
  add, badge, field, h, heading, json, keepRoute, link, list, num, pct, select, table, toolHref,
} from "./dom.js";

export async function render(view, params) {
  const query = h("textarea", { id: "pg-query", name: "query", rows: "3", required: true, maxlength: "32000" });
  query.value = params.q || "";
  const mode = select("pg-mode", [["hybrid", "hybrid"], ["keyword", "keyword"], ["semantic", "semantic"]], params.mode || "hybrid");
  const limit = h("input", { id: "pg-limit", type: "number", min: "1", max: "50", value: params.limit || "10" });
  const answer = h("div", { class: "answer", "aria-live": "polite" });
  const run = async (event) => {
    event?.preventDefault();
    const text = query.value.trim();
    if (!text) return;
    keepRoute("playground", { q: text, mode: mode.value === "hybrid" ? "" : mode.value, limit: limit.value === "10" ? "" : limit.value });
    const started = performance.now();
    try {
      const response = await api("/api/v1/resolve", {
        method: "POST",
        body: { query: text, mode: mode.value, limit: Number(limit.value) || 10, explain: true },
      });
      if (view.isConnected) answer.replaceChildren(...draw(response, performance.now() - started));
    } catch (error) {
      flash(error);
    }
  };
  query.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) run(event);
  });
  add(
    view,
    heading("Playground"),
    h(
      "form",
      { class: "playground", onsubmit: run },
      field("Request", query, "What an agent wants to do, in its words (Ctrl+Enter resolves)."),
      h("div", { class: "filters" }, field("Mode", mode), field("Candidates", limit), h("button", { type: "submit", class: "primary" }, "Resolve")),
    ),
    answer,
  );
  if (query.value) await run();
}

function draw(response, ms) {
  const r = response.resolution;
  const intent = { ...response };
  delete intent.resolution; // what resolve_intent returns: the decision without the ranked candidates
  const shown = h("div", { class: "intent", hidden: true }, json(intent));
  const toggle = h("button", { type: "button", "aria-expanded": "false", "aria-controls": "pg-json" }, "Show resolve_intent JSON");
  shown.id = "pg-json";
  toggle.addEventListener("click", () => {
    shown.hidden = !shown.hidden;
    toggle.setAttribute("aria-expanded", String(!shown.hidden));
    toggle.textContent = shown.hidden ? "Show resolve_intent JSON" : "Hide resolve_intent JSON";
  });
  const out = [
    h(
      "div",
      { class: "verdict" },
      h("p", {}, "Tier ", badge(response.status), " · confidence ", h("strong", { class: "confidence" }, pct(response.confidence)),
        r ? ` · a right power in the top three: ${pct(r.top3_confidence)}` : "", h("span", { class: "muted" }, ` · ${Math.round(ms)} ms`)),
      h("p", { class: "message" }, response.message),
      response.power ? h("p", {}, "Activated power: ", h("strong", {}, response.power), ` (${response.match_type})`) : null,
    ),
    h("div", { class: "json-toggle" }, toggle),
    shown,
  ];
  if (response.parts) {
    out.push(h("h2", {}, "Steps"), table(["Step", "Powers", "Tools"], response.parts.map((p) => [p.step, list(p.powers), list(p.tools)])));
  }
  if (r) {
    out.push(
      h("h2", {}, "Ranked powers"),
      table(
        ["#", "Power", "Score", "Match", "Its matching tools"],
        r.powers.map((p, i) => [String(i + 1), p.name, num(p.score), badge(p.match_type), p.tools.join(", ")]),
        { class: "powers" },
      ),
      h("h2", {}, "Ranked tools"),
      table(
        ["#", "Tool", "Power", "Score", "Match"],
        r.tools.map((t, i) => [String(i + 1), link(toolHref(t.id), t.name), t.server, num(t.score), badge(t.match_type)]),
        { class: "ranked-tools" },
      ),
      h(
        "details",
        { class: "evidence" },
        h("summary", {}, "Evidence (the features the confidence is read from)"),
        table(["Feature", "Value"], Object.entries(r.features).map(([k, v]) => [k, num(v, 4)])),
      ),
    );
  }
  return out;
}
