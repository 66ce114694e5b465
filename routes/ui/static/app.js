// The console's shell: sign-in, the navigation and the hash router (#/servers, #/tools/<id>, ...).
// Each page module exports render(view, params, path) and draws into `view`, a fresh element; a page
// that loads later than the next route change finds its view detached and stops.
import { api, ApiError, errorBox, flash, session } from "./api.js";
import { h } from "./dom.js";
import * as serversPage from "./page-servers.js";
// Pages load when first shown, except the first page (servers), which a first load waits for: imported
// with the shell, its request goes out beside whoami's (a dynamic import there cost 20-60 ms).
const PAGES = {
  servers: () => serversPage,
  tools: () => import("./page-tools.js"),
  quarantine: () => import("./page-quarantine.js"),
  playground: () => import("./page-playground.js"),
  audit: () => import("./page-audit.js"),
  memory: () => import("./page-memory.js"),
  jobs: () => import("./page-jobs.js"),
  eval: () => import("./page-eval.js"),
};
const $ = (id) => document.getElementById(id);

function parse() {
  const raw = location.hash.startsWith("#/") ? location.hash.slice(2) : "servers";
  const [pathText, queryText = ""] = raw.split("?");
  const [name, ...rest] = pathText.split("/");
  const tail = rest.length ? decodeURIComponent(rest.join("/")) : "";
  return { name: PAGES[name] ? name : "servers", tail, params: Object.fromEntries(new URLSearchParams(queryText)) };
}

/** Draw the page the address names. ``me``: who is signed in, or a promise of it (a first load asks
 * for the page's data while whoami is on its way: a page's ``prefetch`` starts its requests). */
async function show({ focus = false, me = session.me } = {}) {
  if (!me) return;
  const { name, tail, params } = parse();
  for (const a of $("nav").querySelectorAll("a")) {
    if (a.dataset.page === name) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  flash(null);
  const view = h("div", { class: "view", "data-page": name });
  $("page").replaceChildren(view);
  document.title = `${$("nav").querySelector(`[data-page="${name}"]`).textContent} · tool-selector console`;
  try {
    const loading = PAGES[name]();
    const page = loading instanceof Promise ? await loading : loading; // no await for one already here
    const data = page.prefetch ? page.prefetch(params, tail) : undefined;
    data?.catch(() => {}); // its error is shown by render, which awaits it
    await me;
    if (!session.me || !view.isConnected) return;
    await page.render(view, params, tail, data);
    if (focus && view.isConnected) view.querySelector("h1")?.focus();
  } catch (error) {
    if (!view.isConnected) return;
    view.append(error instanceof ApiError ? errorBox(error) : errorBox(new ApiError(0, { error: { message: String(error) } })));
    if (!(error instanceof ApiError)) console.error(error); // a bug of the page: shown, and in the log
  }
}

function signedIn(me) {
  session.me = me;
  $("sign-in").hidden = true;
  $("nav").hidden = false;
  $("who").hidden = false;
  $("who-actor").textContent = me.actor;
  $("who-scopes").textContent = `scopes: ${me.scopes.join(", ") || "none"}`;
}

function signedOut(reason) {
  session.clear();
  session.me = null;
  $("nav").hidden = true;
  $("who").hidden = true;
  $("page").replaceChildren();
  flash(null);
  $("sign-in").hidden = false;
  const box = $("sign-in-error");
  box.hidden = !reason;
  box.replaceChildren(...(reason ? [errorBox(reason)] : []));
  $("api-key").value = "";
  $("api-key").focus();
}

async function signIn(event) {
  event.preventDefault();
  const key = $("api-key").value.trim();
  const button = event.target.querySelector("button");
  button.disabled = true;
  try {
    const me = await api("/api/v1/whoami", { key });
    session.save(key);
    $("sign-in-error").hidden = true;
    signedIn(me);
    show();
    $("main").focus();
  } catch (error) {
    $("sign-in-error").hidden = false;
    $("sign-in-error").replaceChildren(errorBox(error));
  } finally {
    button.disabled = false;
  }
}

async function start() {
  $("sign-in-form").addEventListener("submit", signIn);
  $("sign-out").addEventListener("click", () => signedOut(null));
  $("skip").addEventListener("click", (event) => {
    event.preventDefault(); // the hash is the route: focus the content instead of jumping to #main
    (document.querySelector("#page h1") || $("main")).focus();
  });
  window.addEventListener("hashchange", () => show({ focus: true }));
  window.addEventListener("console:unauthorized", (event) => signedOut(event.detail));
  const key = session.key();
  if (!key) return signedOut(null);
  let known;
  const me = new Promise((resolve) => (known = resolve));
  show({ me }); // the page's requests go out first (the first page's module is here: no await before them)
  api("/api/v1/whoami", { key })
    .then(signedIn, (error) => {
      signedOut(error);
      return null;
    })
    .then(known);
}

start();
