// Small DOM helpers. Text from the API is untrusted (tool descriptions may carry HTML and prompt
// injection): it only ever becomes text nodes or attribute values, never markup.

const PROPS = new Set(["value", "checked", "disabled", "hidden", "selected", "open", "htmlFor", "max"]);

/** An element: h("a", {href, class, onclick}, child, ...); strings become text nodes. */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") el.className = value;
    else if (name === "text") el.textContent = String(value);
    else if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else if (name === "style") throw new Error("no inline styles (CSP)");
    else if (PROPS.has(name)) el[name] = value;
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  add(el, children);
  return el;
}

/** Append children (nodes, strings, numbers, nested arrays; null and false are skipped). */
export function add(el, ...children) {
  for (const child of [children].flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

export function clear(el) {
  el.replaceChildren();
  return el;
}

/** A route's address: "#/tools/" + the encoded id, with query parameters (empty ones left out). */
export function route(path, params = {}) {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== "" && v !== null && v !== undefined) query.set(k, String(v));
  }
  const text = query.toString();
  return "#/" + path + (text ? "?" + text : "");
}

/** Show a page's filters in the address without a new history entry, if that page is still shown. */
export function keepRoute(path, params = {}) {
  const page = path.split("/")[0];
  const now = location.hash.startsWith("#/") ? location.hash.slice(2).split(/[/?]/)[0] : "servers";
  if (now === page) history.replaceState(null, "", route(path, params));
}

export function toolHref(id) {
  return route("tools/" + encodeURIComponent(id));
}

export function link(href, text, props = {}) {
  return h("a", { href, ...props }, text);
}

/** "2026-01-31 12:00:00 UTC" in a <time> element; "—" when there is none. */
export function when(iso) {
  if (!iso) return h("span", { class: "muted" }, "—");
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return h("span", {}, String(iso));
  const text = d.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
  return h("time", { datetime: d.toISOString(), title: localTime(d) }, text);
}

/** The same moment in the browser's time zone, written by hand: toLocaleString loads the locale's data
 * on first use and cost 30-90 ms of a first page of 50 rows. */
function localTime(d) {
  const two = (n) => String(n).padStart(2, "0");
  const offset = -d.getTimezoneOffset();
  const zone = `${offset < 0 ? "-" : "+"}${two(Math.floor(Math.abs(offset) / 60))}:${two(Math.abs(offset) % 60)}`;
  const day = `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}`;
  return `${day} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())} local (UTC${zone})`;
}

export function num(value, digits = 3) {
  return value === null || value === undefined ? "—" : Number(value).toFixed(digits);
}

export function pct(value) {
  return value === null || value === undefined ? "—" : `${Math.round(Number(value) * 1000) / 10} %`;
}

export function badge(text, kind = text) {
  return h("span", { class: `badge badge-${String(kind).replace(/[^a-z_]/gi, "")}` }, text);
}

export function short(hash, n = 12) {
  return hash ? h("code", { title: hash }, String(hash).slice(0, n)) : h("span", { class: "muted" }, "—");
}

/** A table: head is a list of column names, rows a list of lists of cells (nodes or text). */
export function table(head, rows, props = {}) {
  const cells = (r) => (r instanceof Node ? r : h("tr", {}, r.map((c) => h("td", {}, c))));
  return h(
    "div",
    { class: "table-scroll" }, // a narrow screen scrolls the table, not the page
    h(
      "table",
      props,
      h("thead", {}, h("tr", {}, head.map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, rows.map(cells)),
    ),
  );
}

export function json(value) {
  return h("pre", { class: "json" }, JSON.stringify(value, null, 2));
}

/** A labelled form control: the label's for= names the control's id. */
export function field(label, control, hint) {
  return h("div", { class: "field" }, h("label", { for: control.id }, label), control, hint ? h("small", {}, hint) : null);
}

export function select(id, options, value, props = {}) {
  return h(
    "select",
    { id, name: id, ...props },
    options.map(([v, text]) => h("option", { value: v, selected: v === value }, text)),
  );
}

export function chips(values) {
  if (!values || values.length === 0) return h("span", { class: "muted" }, "none");
  return h("ul", { class: "chips" }, values.map((v) => h("li", {}, v)));
}

export function list(values) {
  if (!values || values.length === 0) return h("span", { class: "muted" }, "none");
  return h("ul", {}, values.map((v) => h("li", {}, v)));
}

export function heading(text, ...extra) {
  return h("div", { class: "page-head" }, h("h1", { tabindex: "-1" }, text), ...extra);
}
