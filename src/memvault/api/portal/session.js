"use strict";
// The portal's session: who the tab is signed in as, the calls to memvault's API, and the helpers
// both scripts build the page with (portal.js, loaded after this one, reads and searches).
// Stored text reaches the page through text nodes alone (append() of a string, textContent),
// never through markup parsing, and the page's Content-Security-Policy requires Trusted Types,
// so an HTML sink would throw instead of running anything. Credentials live in this tab's
// sessionStorage and travel only in the Authorization header.
//
// Actions that change something ask first, in the page's own dialog (confirmAction, askReason
// below), never window.confirm. Their controls are drawn only for a session that may act
// (mayWrite: a writer brain credential); the server checks the credential again on every call,
// so a control drawn by a tampered page still meets the server's refusal.

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
  show("tab-proposals", Boolean(session.brain));
  show("brain-search", Boolean(session.brain));
  show("brain-status", Boolean(session.brain));
  show("results", Boolean(session.brain));
  showMemoryKeyState();
  selectTab(tab || (session.brain ? "brain" : "conversations"));
}

function dropBrain(message) {
  sessionStorage.removeItem(BRAIN_TOKEN);
  session.brain = null;
  session.via = "";
  byId("results").replaceChildren();
  byId("proposals").replaceChildren();
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
  session.via = "";
  session.memory = null;
  byId("results").replaceChildren();
  byId("proposals").replaceChildren();
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

// The confirmation dialog any portal script may use before an action:
//   confirmAction(title, detail, {confirmLabel, danger}) -> Promise<boolean>
//     true once confirmed; false if cancelled (the Cancel button, Escape, or a newer question).
//   askReason(title, detail, {confirmLabel, danger, label}) -> Promise<string | null>
//     the same dialog with a required text field: its trimmed text, or null if cancelled.
// `detail` is a string or a node built with el(); either is shown as text, never as markup.

let settleDialog = null;

function openDialog(title, detail, { confirmLabel = "Confirm", danger = false, reason = false, label = "Reason" } = {}) {
  if (settleDialog) settleDialog(false);
  const dialog = byId("confirm");
  say("confirm-title", title);
  byId("confirm-detail").replaceChildren(typeof detail === "string" ? el("p", "", detail) : detail);
  say("confirm-reason-label", label);
  byId("confirm-reason").value = "";
  show("confirm-reason-label", reason);
  show("confirm-reason", reason);
  show("confirm-error", false);
  const ok = byId("confirm-ok");
  ok.textContent = confirmLabel;
  ok.classList.toggle("danger", danger);
  return new Promise((resolve) => {
    settleDialog = (confirmed) => {
      settleDialog = null;
      if (dialog.open) dialog.close();
      resolve(reason ? (confirmed ? byId("confirm-reason").value.trim() : null) : confirmed);
    };
    dialog.showModal();
    (reason ? byId("confirm-reason") : byId("confirm-cancel")).focus();
  });
}

function confirmAction(title, detail, options = {}) {
  return openDialog(title, detail, { ...options, reason: false });
}

function askReason(title, detail, options = {}) {
  return openDialog(title, detail, { ...options, reason: true });
}

function onDialogConfirm() {
  if (!settleDialog) return;
  if (!byId("confirm-reason").hidden && !byId("confirm-reason").value.trim()) {
    say("confirm-error", "A reason is required.", true);
    show("confirm-error", true);
    byId("confirm-reason").focus();
    return;
  }
  settleDialog(true);
}

function wireDialog() {
  byId("confirm-ok").addEventListener("click", onDialogConfirm);
  byId("confirm-cancel").addEventListener("click", () => settleDialog && settleDialog(false));
  // Escape closes the dialog itself; whatever closes it, the question is answered "no". A close
  // arriving after a newer question opened the dialog again belongs to the old one: ignored.
  byId("confirm").addEventListener("close", () => settleDialog && !byId("confirm").open && settleDialog(false));
}

// Whether the brain session may change facts and proposals: a writer credential.
function mayWrite() {
  return Boolean(session.brain && session.brain.writer);
}

function actionButton(label, onClick, danger = false) {
  const button = el("button", danger ? "action danger" : "action", label);
  button.type = "button";
  button.addEventListener("click", (event) => {
    event.stopPropagation();
    onClick();
  });
  return button;
}

wireDialog();
