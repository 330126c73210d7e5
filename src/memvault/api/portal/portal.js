"use strict";
// The portal's only script. Stored text reaches the page through text nodes alone (append() of a
// string, textContent), never through markup parsing, and the page's Content-Security-Policy
// requires Trusted Types, so an HTML sink would throw instead of running anything.
// Credentials live in this tab's sessionStorage and travel only in the Authorization header.

const BRAIN_TOKEN = "memvault.brainToken";
const MEMORY_KEY = "memvault.memoryKey";

const byId = (id) => document.getElementById(id);

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function el(tag, className, ...children) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  for (const child of children) {
    if (child !== null && child !== undefined && child !== "") node.append(child);
  }
  return node;
}

function badge(kind, text) {
  const node = el("span", "badge", text);
  node.dataset.kind = kind;
  node.dataset.value = text;
  return node;
}

function show(id, visible) {
  byId(id).hidden = !visible;
}

function say(id, text, isError = false) {
  const node = byId(id);
  node.textContent = text;
  node.classList.toggle("error", isError);
}

function when(seconds) {
  if (typeof seconds !== "number" || !Number.isFinite(seconds)) return "";
  return new Date(seconds * 1000).toISOString().slice(0, 16).replace("T", " ") + " UTC";
}

async function call(path, { token = sessionStorage.getItem(BRAIN_TOKEN), method = "GET", body } = {}) {
  const headers = { Accept: "application/json" };
  if (token) headers.Authorization = "Bearer " + token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
    credentials: "same-origin",
    referrerPolicy: "no-referrer",
  });
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) {
    const message = data && data.error && typeof data.error.message === "string" ? data.error.message : "HTTP " + response.status;
    throw new ApiError(response.status, message);
  }
  return data;
}

// Signing in and out. A memory key (mk_…) opens the conversations tab, a brain credential (or
// Cloudflare Access) the brain tab; either alone is a session, and the other can be added later.

const MEMORY_KEY_PREFIX = "mk_";
const session = { brain: null, via: "", memory: null };

function whoIs(token) {
  return call("/portal/me", { token });
}

async function restoreSession() {
  const brainToken = sessionStorage.getItem(BRAIN_TOKEN);
  const memoryKey = sessionStorage.getItem(MEMORY_KEY);
  let problem = "";
  // Without a stored brain credential, Cloudflare Access may still vouch for the browser.
  if (brainToken || !memoryKey) {
    try {
      session.brain = await whoIs(brainToken);
      session.via = brainToken ? "brain credential" : "Cloudflare Access";
    } catch (error) {
      sessionStorage.removeItem(BRAIN_TOKEN);
      problem = signInProblem(error, brainToken);
    }
  }
  if (memoryKey) {
    try {
      session.memory = await whoIs(memoryKey);
    } catch {
      sessionStorage.removeItem(MEMORY_KEY);
    }
  }
  render(problem);
  if (session.brain) await searchBrain();
}

async function useSecret(secret, errorId) {
  const isMemoryKey = secret.startsWith(MEMORY_KEY_PREFIX);
  try {
    const me = await whoIs(secret);
    if (isMemoryKey) {
      sessionStorage.setItem(MEMORY_KEY, secret);
      session.memory = me;
    } else {
      sessionStorage.setItem(BRAIN_TOKEN, secret);
      session.brain = me;
      session.via = "brain credential";
    }
    say(errorId, "");
    show(errorId, false);
    render("", isMemoryKey ? "conversations" : "brain");
    if (!isMemoryKey) await searchBrain();
  } catch (error) {
    const what = isMemoryKey ? "That memory key" : "That credential";
    const problem = error instanceof ApiError ? what + " was not accepted (" + error.message + ")." : "memvault could not be reached.";
    say(errorId, problem, true);
    show(errorId, true);
  }
}

function signInProblem(error, token) {
  if (!(error instanceof ApiError)) return "memvault could not be reached.";
  if (token) return "That credential was not accepted (" + error.message + ").";
  // Without a credential, a 403 means Cloudflare Access knows the user but grants no scope.
  if (error.status === 403) return "Cloudflare Access signed you in, but grants you no brain credential. Sign in with a credential instead.";
  return error.status === 401 ? "" : error.message;
}

function render(problem = "", tab = null) {
  show("loading", false);
  if (!session.brain && !session.memory) {
    show("app", false);
    show("who", false);
    show("sign-out", false);
    show("sign-in", true);
    say("sign-in-error", problem, true);
    show("sign-in-error", Boolean(problem));
    byId("credential").focus();
    return;
  }
  show("sign-in", false);
  show("app", true);
  const parts = [];
  if (session.brain) parts.push(session.brain.name + " · " + session.brain.scopes.join(", ") + " · " + session.via);
  if (session.memory) parts.push("memory key " + session.memory.name);
  say("who", parts.join(" · "));
  show("who", true);
  show("sign-out", session.via === "brain credential" || Boolean(session.memory));
  show("brain-locked", !session.brain);
  show("brain-search", Boolean(session.brain));
  show("brain-status", Boolean(session.brain));
  show("results", Boolean(session.brain));
  showMemoryKeyState();
  selectTab(tab || (session.brain ? "brain" : "conversations"));
}

function dropBrain(message) {
  sessionStorage.removeItem(BRAIN_TOKEN);
  session.brain = null;
  byId("results").replaceChildren();
  closeDetail();
  if (session.memory) {
    say("brain-credential-error", message, true);
    show("brain-credential-error", Boolean(message));
  }
  render(message);
}

function signOut() {
  sessionStorage.removeItem(BRAIN_TOKEN);
  sessionStorage.removeItem(MEMORY_KEY);
  session.brain = null;
  session.memory = null;
  byId("results").replaceChildren();
  byId("memory-results").replaceChildren();
  closeDetail();
  render("");
}

function onSignIn(event) {
  event.preventDefault();
  const field = byId("credential");
  const secret = field.value.trim();
  field.value = "";
  if (secret) useSecret(secret, "sign-in-error");
}

function onBrainCredential(event) {
  event.preventDefault();
  const field = byId("brain-credential");
  const token = field.value.trim();
  field.value = "";
  if (token.startsWith(MEMORY_KEY_PREFIX)) {
    say("brain-credential-error", "That is a memory key; the brain needs a brain credential.", true);
    show("brain-credential-error", true);
  } else if (token) {
    useSecret(token, "brain-credential-error");
  }
}

// The brain: recall, keyword and hybrid search, as of a past day.

let brainRequest = 0;

function asOfSeconds() {
  const value = byId("as-of").value;
  if (!value) return null;
  const [year, month, day] = value.split("-").map(Number);
  // The end of the chosen day in the browser's time zone.
  return Math.floor(new Date(year, month - 1, day, 23, 59, 59).getTime() / 1000);
}

async function searchBrain() {
  const query = byId("q").value.trim();
  const mode = byId("mode").value;
  const asOf = asOfSeconds();
  if (mode !== "recall" && !query) {
    say("brain-status", "Type something to search for.");
    return;
  }
  const params = new URLSearchParams();
  if (query) params.set("q", query);
  if (asOf !== null) params.set("as_of", String(asOf));
  if (mode !== "recall") params.set("mode", mode);
  const mine = ++brainRequest;
  say("brain-status", "Searching…");
  try {
    const data = await call((mode === "recall" ? "/recall?" : "/memory/search?") + params);
    if (mine !== brainRequest) return;
    if (mode === "recall") renderRecall(data, asOf);
    else renderSearch(data, asOf);
  } catch (error) {
    if (mine === brainRequest) failed(error, "brain-status");
  }
}

function asOfNote(asOf) {
  return asOf === null ? "" : " as of " + when(asOf);
}

function degradedNote(data) {
  return data.degraded && data.degraded.length ? " (without: " + data.degraded.join(", ") + ")" : "";
}

function renderSearch(data, asOf) {
  const list = el("ol", "cards", ...data.results.map(factCard));
  byId("results").replaceChildren(list);
  say("brain-status", data.results.length + " found" + asOfNote(asOf) + degradedNote(data));
}

function renderRecall(data, asOf) {
  const tiers = [
    ["Pinned", data.core.entries],
    ["Recent", data.recent],
    ["Found", data.facts],
  ].filter(([, entries]) => entries.length);
  const sections = tiers.map(([title, entries]) => el("section", "tier", el("h3", "", title), el("ol", "cards", ...entries.map(factCard))));
  byId("results").replaceChildren(...sections);
  const count = tiers.reduce((sum, [, entries]) => sum + entries.length, 0);
  say("brain-status", count + " recalled, " + data.budget_used + " of " + data.budget + " tokens" + asOfNote(asOf) + degradedNote(data));
}

function factBadges(fact) {
  const badges = [badge("scope", fact.scope), badge("type", fact.entry_type)];
  if (fact.pinned) badges.push(badge("flag", "pinned"));
  if (fact.superseded_at) badges.push(badge("flag", "superseded"));
  if (fact.has_body) badges.push(badge("flag", "full text"));
  if (fact.redacted && fact.redacted.length) badges.push(badge("flag", "redacted"));
  return el("div", "badges", ...badges);
}

function factCard(fact) {
  const meta = [fact.source, fact.valid_from !== undefined ? "valid from " + when(fact.valid_from) : ""];
  if (typeof fact.score === "number") meta.push("score " + fact.score.toFixed(3));
  const card = el("li", "card", factBadges(fact), el("p", "content", fact.content), el("p", "meta", meta.filter(Boolean).join(" · ")));
  card.dataset.id = fact.id;
  card.tabIndex = 0;
  card.setAttribute("role", "button");
  card.addEventListener("click", () => openDetail(fact.id));
  card.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      openDetail(fact.id);
    }
  });
  return card;
}

let detailRequest = 0;

async function openDetail(id) {
  const mine = ++detailRequest;
  show("detail", true);
  say("detail-id", id);
  say("detail-body", "Loading…");
  byId("detail-history").replaceChildren();
  say("detail-status", "");
  if (window.matchMedia("(max-width: 899px)").matches) byId("detail").scrollIntoView({ block: "start" });
  const query = "?" + new URLSearchParams({ id });
  const [body, history] = await Promise.allSettled([call("/memory/body" + query), call("/memory/history" + query)]);
  if (mine !== detailRequest) return;
  say("detail-body", body.status === "fulfilled" ? body.value.body : "");
  if (history.status === "fulfilled") {
    byId("detail-history").replaceChildren(...history.value.chain.map((fact) => historyItem(fact, id)));
  }
  const problem = [body, history].find((result) => result.status === "rejected");
  if (problem) failed(problem.reason, "detail-status");
}

function historyItem(fact, openedId) {
  const until = fact.superseded_at ? " until " + when(fact.superseded_at) : " (current)";
  const item = el("li", "version", factBadges(fact), el("p", "content", fact.content), el("p", "meta", "valid from " + when(fact.valid_from) + until));
  if (fact.id === openedId) item.setAttribute("aria-current", "true");
  return item;
}

function closeDetail() {
  detailRequest++;
  show("detail", false);
}

// Conversation memory, searched with a memory key.

function showMemoryKeyState() {
  const held = Boolean(session.memory);
  say("memory-key-state", held ? "Searching with memory key " + session.memory.name + "." : "Enter a memory key (mk_…) to search conversation memory.");
  show("memory-key-form", !held);
  show("memory-key-forget", held);
}

function onMemoryKey(event) {
  event.preventDefault();
  const field = byId("memory-key");
  const key = field.value.trim();
  field.value = "";
  if (!key) return;
  if (!key.startsWith(MEMORY_KEY_PREFIX)) {
    say("memory-key-error", "A memory key starts with mk_.", true);
    return show("memory-key-error", true);
  }
  useSecret(key, "memory-key-error");
}

function forgetMemoryKey() {
  sessionStorage.removeItem(MEMORY_KEY);
  session.memory = null;
  byId("memory-results").replaceChildren();
  render("", "conversations");
}

async function searchMemory(event) {
  event.preventDefault();
  const key = sessionStorage.getItem(MEMORY_KEY);
  const query = byId("memory-q").value.trim();
  if (!key) return say("memory-status", "Enter a memory key first.", true);
  if (!query) return say("memory-status", "Type something to search for.");
  say("memory-status", "Searching…");
  try {
    const data = await call("/v1/memory/search", { token: key, method: "POST", body: { query } });
    byId("memory-results").replaceChildren(...data.items.map(memoryCard));
    say("memory-status", data.items.length + " found, " + data.tokens + " tokens");
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      sessionStorage.removeItem(MEMORY_KEY);
      session.memory = null;
      byId("memory-results").replaceChildren();
      render("That memory key was not accepted.", "conversations");
      return say("memory-status", "That memory key was not accepted.", true);
    }
    failed(error, "memory-status");
  }
}

function memoryCard(item) {
  const badges = [badge("role", item.role), badge("window", item.window)];
  if (item.vault && item.vault !== "core") badges.push(badge("vault", item.vault));
  const meta = when(item.ts_end) + " · score " + item.score.toFixed(3);
  return el("li", "card", el("div", "badges", ...badges), el("p", "content", item.text), el("p", "meta", meta));
}

// Shared.

function failed(error, statusId) {
  if (error instanceof ApiError && error.status === 401 && statusId !== "memory-status") {
    return dropBrain("Signed out: " + error.message);
  }
  say(statusId, error instanceof ApiError ? error.message : "memvault could not be reached.", true);
}

function selectTab(name) {
  for (const tab of ["brain", "conversations"]) {
    byId("tab-" + tab).setAttribute("aria-pressed", String(tab === name));
    show(tab + "-view", tab === name);
  }
}

function start() {
  byId("sign-in-form").addEventListener("submit", onSignIn);
  byId("sign-out").addEventListener("click", signOut);
  byId("brain-search").addEventListener("submit", (event) => {
    event.preventDefault();
    searchBrain();
  });
  byId("as-of").addEventListener("change", searchBrain);
  byId("mode").addEventListener("change", searchBrain);
  byId("detail-close").addEventListener("click", closeDetail);
  byId("tab-brain").addEventListener("click", () => selectTab("brain"));
  byId("tab-conversations").addEventListener("click", () => selectTab("conversations"));
  byId("memory-key-form").addEventListener("submit", onMemoryKey);
  byId("memory-key-forget").addEventListener("click", forgetMemoryKey);
  byId("memory-search").addEventListener("submit", searchMemory);
  byId("brain-credential-form").addEventListener("submit", onBrainCredential);
  restoreSession();
}

start();
