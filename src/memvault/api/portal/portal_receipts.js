"use strict";

// Receipts: what each routed call or search recalled, for the memory key in use. A day's
// receipts are listed newest first; one opens with the memories it names as they are stored now
// (a forgotten message is counted, a purged one shows as gone; a brain fact shows its state as the
// key's grant sees it today). Texts are set as text, never markup.

function todayUtc() {
  return new Date().toISOString().slice(0, 10);
}

async function listReceipts(event) {
  if (event) event.preventDefault();
  const key = sessionStorage.getItem(MEMORY_KEY);
  if (!key) return say("receipt-status", "Enter a memory key first.", true);
  const day = byId("receipt-day").value || todayUtc();
  say("receipt-status", "Loading receipts…");
  try {
    const data = await call("/v1/memory/receipts?day=" + encodeURIComponent(day), { token: key });
    byId("receipt-list").replaceChildren(...data.receipts.map(receiptCard));
    say("receipt-status", data.receipts.length + " receipts on " + data.day);
  } catch (error) {
    failed(error, "receipt-status");
  }
}

function receiptCard(receipt) {
  const badges = [badge("surface", receipt.surface), badge("status", receipt.status)];
  const meta = when(receipt.created_at) + " · " + receipt.items.length + " items · " + receipt.tokens + "/" + receipt.budget_tokens + " tokens";
  const card = el("li", "card", el("div", "badges", ...badges), el("p", "content", receipt.query || "(query forgotten)"), el("p", "meta", meta));
  card.setAttribute("role", "button");
  card.tabIndex = 0;
  card.dataset.receipt = receipt.id;
  const open = () => openReceipt(receipt.id);
  card.addEventListener("click", open);
  card.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") open();
  });
  return card;
}

async function openReceipt(id) {
  const key = sessionStorage.getItem(MEMORY_KEY);
  say("receipt-status", "Opening receipt…");
  try {
    const view = await call("/v1/memory/receipts/" + encodeURIComponent(id), { token: key });
    byId("receipt-detail").replaceChildren(...receiptDetail(view));
    show("receipt-detail", true);
    say("receipt-status", "Receipt " + id);
  } catch (error) {
    failed(error, "receipt-status");
  }
}

function receiptDetail(view) {
  const receipt = view.receipt;
  // A message and a fact may carry the same id: each is looked up under its kind.
  const memories = new Map(view.memories.map((memory) => [memory.kind + ":" + memory.id, memory]));
  const latency = receipt.latency;
  const timing = ["embedding", "vault", "ranking", "forwarding"]
    .filter((part) => typeof latency[part + "_ms"] === "number")
    .map((part) => part + " " + latency[part + "_ms"].toFixed(1) + " ms");
  const usage = receipt.usage ? " · provider tokens in " + receipt.usage.input_tokens + ", out " + receipt.usage.output_tokens : "";
  const redacted = receipt.redacted ? " · " + receipt.redacted + " redacted at recall" : "";
  return [
    el("h3", "", "Query"),
    el("p", "content", receipt.query || "(forgotten)"),
    el("p", "meta", [...timing, "total " + latency.total_ms.toFixed(1) + " ms"].join(" · ") + usage + redacted),
    el("h3", "", "Injected"),
    el("ol", "results", ...receipt.items.map((item) => itemCard(item, memories))),
    el("h3", "", "Ranked but cut"),
    el("ol", "results", ...receipt.cut.map((item) => itemCard(item, memories))),
  ];
}

function itemCard(item, memories) {
  const badges = [badge("kind", item.kind), badge("vault", item.vault)];
  if (item.forgotten) badges.push(badge("forgotten", item.forgotten + " forgotten"));
  const lines = item.ids.flatMap((id) => {
    const memory = memories.get(item.kind + ":" + id);
    if (item.kind === "fact") return factLines(id, memory, badges);
    if (!memory || memory.state !== "kept") return [el("p", "content gone", id + ": gone")];
    return [el("p", "content", (memory.role === "user" ? "" : memory.role + ": ") + memory.text)];
  });
  const meta = "score " + item.score.toFixed(3) + " · " + item.tokens + " tokens · " + when(item.timestamp);
  return el("li", "card", el("div", "badges", ...badges), ...lines, el("p", "meta", meta));
}

const FACT_STATES = {
  gone: "gone from the brain",
  unreadable: "not readable: its scope is no longer granted to this key",
};

function factLines(id, fact, badges) {
  const state = fact ? fact.state : "gone";
  badges.push(badge("state", state));
  if (!fact || fact.text === null) return [el("p", "content gone", "fact " + id + ": " + (FACT_STATES[state] || state))];
  badges.push(badge("scope", fact.scope));
  let validity = "holds since " + when(fact.timestamp);
  if (state === "superseded") validity += " · superseded " + when(fact.ended_at) + " by " + fact.replaced_by;
  if (state === "retired") validity += " · retired " + when(fact.ended_at);
  return [el("p", state === "current" ? "content" : "content ended", fact.text), el("p", "meta", "fact " + id + " · " + validity)];
}

function startReceipts() {
  byId("receipt-day").value = todayUtc();
  byId("receipt-form").addEventListener("submit", listReceipts);
}

startReceipts();
