// The REST API client: the key from session storage on every call, errors as ApiError with the API's
// message, hint and scope. Who is signed in (GET /api/v1/whoami) decides which actions are offered.
import { h } from "./dom.js";

const KEY = "tool-selector.key";
export const session = {
  key: () => sessionStorage.getItem(KEY),
  save: (key) => sessionStorage.setItem(KEY, key),
  clear: () => sessionStorage.removeItem(KEY),
  me: null, // {actor, key_id, scopes, needs}
};

export class ApiError extends Error {
  constructor(status, body) {
    const error = (body && body.error) || {};
    super(error.message || `The request failed (HTTP ${status}).`);
    this.status = status;
    this.code = error.code || "http_error";
    this.hint = error.hint || "";
    this.details = error.details || {};
    this.fields = error.fields || null;
  }
}

/** Call /api/v1...: JSON in and out; query parameters that are "" or null are left out. */
export async function api(path, { method = "GET", body, query, key, as = "json" } = {}) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(query || {})) {
    if (v !== "" && v !== null && v !== undefined) url.searchParams.set(k, String(v));
  }
  const headers = { Authorization: `Bearer ${key || session.key() || ""}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (exc) {
    throw new ApiError(0, { error: { message: "The API did not answer.", hint: String(exc) } });
  }
  if (!response.ok) {
    let data = null;
    try {
      data = await response.json();
    } catch {
      data = null;
    }
    const error = new ApiError(response.status, data);
    if (response.status === 401 && !key) window.dispatchEvent(new CustomEvent("console:unauthorized", { detail: error }));
    throw error;
  }
  return as === "blob" ? response.blob() : response.json();
}

export function can(scope) {
  return Boolean(session.me && session.me.scopes.includes(scope));
}

/** "needs the edit scope (editor, admin)": why an action is off for this key. */
export function needs(scope) {
  const roles = (session.me && session.me.needs && session.me.needs[scope]) || [];
  return `needs the ${scope} scope` + (roles.length ? ` (${roles.join(", ")})` : "");
}

/** A button for an action that needs a scope: disabled, with the scope it needs, for a key without it. */
export function action(text, scope, onclick, props = {}) {
  const allowed = can(scope);
  const button = h("button", { type: "button", ...props, onclick: allowed ? onclick : null }, text);
  if (!allowed) {
    button.disabled = true;
    button.title = needs(scope);
    button.dataset.needs = scope;
    button.setAttribute("aria-description", needs(scope));
  }
  return button;
}

/** A visible line saying what this key cannot do here, or null when it can. */
export function scopeNote(scope, what) {
  return can(scope) ? null : h("p", { class: "note", "data-needs": scope }, `${what}: this key ${needs(scope)}.`);
}

/** An error's message, hint and missing scope, as a block for the page. */
export function errorBox(error) {
  const scope = error.details && error.details.scope;
  return h(
    "div",
    { class: "error", role: "alert" },
    h("strong", {}, error.message),
    error.hint ? h("p", { class: "hint" }, error.hint) : null,
    scope ? h("p", { class: "hint" }, needs(scope)) : null,
    error.fields ? h("ul", {}, error.fields.map((f) => h("li", {}, `${f.field}: ${f.message}`))) : null,
  );
}

/** Show an outcome (text, or an error) in the page's status line. */
export function flash(what) {
  const box = document.getElementById("flash");
  if (what instanceof Error) box.replaceChildren(errorBox(what));
  else box.replaceChildren(...(what ? [h("p", { class: "ok" }, what)] : []));
}

/** A counter of requests: each call starts one and returns whether it is still the newest. A list that
 * filters redraw answers for the last filters chosen, whatever order the answers arrive in. */
export function newest() {
  let count = 0;
  return () => {
    const mine = ++count;
    return () => mine === count;
  };
}
