"use strict";
// The portal's reading: the brain (recall, search, a fact's body and history) and conversation
// memory, on the session, calls and text-only helpers of session.js, which loads first; the
// actions on what it shows are in portal_actions.js, which loads after it.

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
  const body = {};
  if (query) body.query = query;
  if (asOf !== null) body.as_of = asOf;
  if (mode !== "recall") body.mode = mode;
  const mine = ++brainRequest;
  say("brain-status", "Searching…");
  try {
    const data = await call(mode === "recall" ? "/v1/brain/recall" : "/v1/brain/facts/search", { method: "POST", body });
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
  if (fact.superseded_at) badges.push(badge("flag", fact.retirement ? "retired" : "superseded"));
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
  byId("detail-actions").replaceChildren();
  say("detail-status", "");
  if (window.matchMedia("(max-width: 899px)").matches) byId("detail").scrollIntoView({ block: "start" });
  const fact = "/v1/brain/facts/" + encodeURIComponent(id);
  const [body, history] = await Promise.allSettled([call(fact + "/body"), call(fact + "/history")]);
  if (mine !== detailRequest) return;
  say("detail-body", body.status === "fulfilled" ? body.value.body : "");
  if (history.status === "fulfilled") {
    byId("detail-history").replaceChildren(...history.value.chain.map((fact) => historyItem(fact, id)));
    showFactActions(id, history.value.chain);
  }
  const problem = [body, history].find((result) => result.status === "rejected");
  if (problem) failed(problem.reason, "detail-status");
}

function historyItem(fact, openedId) {
  const until = fact.superseded_at ? " until " + when(fact.superseded_at) : " (current)";
  const item = el("li", "version", factBadges(fact), el("p", "content", fact.content),
    el("p", "meta", "valid from " + when(fact.valid_from) + until), retirementNote(fact));
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
  if (event) event.preventDefault();
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
  return el("li", "card", el("div", "badges", ...badges), el("p", "content", item.text), el("p", "meta", meta), forgetControl(item));
}

// Shared.

function failed(error, statusId) {
  if (error instanceof ApiError && error.status === 401 && statusId !== "memory-status") {
    return dropBrain("Signed out: " + error.message);
  }
  say(statusId, error instanceof ApiError ? error.message : "memvault could not be reached.", true);
}

function selectTab(name) {
  for (const tab of ["brain", "proposals", "conversations"]) {
    byId("tab-" + tab).setAttribute("aria-pressed", String(tab === name));
    show(tab + "-view", tab === name);
  }
  if (name === "proposals") loadProposals();
  // Scripts loaded after this one (the usage charts) fill a tab when it opens.
  document.dispatchEvent(new CustomEvent("portal:tab", { detail: name }));
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
  byId("tab-proposals").addEventListener("click", () => selectTab("proposals"));
  byId("tab-conversations").addEventListener("click", () => selectTab("conversations"));
  byId("proposals-refresh").addEventListener("click", () => loadProposals());
  byId("memory-key-form").addEventListener("submit", onMemoryKey);
  byId("memory-key-forget").addEventListener("click", forgetMemoryKey);
  byId("memory-search").addEventListener("submit", searchMemory);
  byId("brain-credential-form").addEventListener("submit", onBrainCredential);
  restoreSession();
}

start();
