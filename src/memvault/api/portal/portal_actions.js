"use strict";
// The portal's actions, each asked for in the confirmation dialog of session.js first: accept or
// reject a consolidation proposal and retire a fact (a writer brain credential), forget a
// conversation message (the memory key). Controls are drawn only for a session that may act;
// whatever the page draws, the server decides, and its refusal is shown where the action was.

// Consolidation proposals: open ones, the facts each names shown side by side.

let proposalsRequest = 0;

async function loadProposals() {
  const mine = ++proposalsRequest;
  say("proposals-status", "Loading…");
  try {
    const data = await call("/v1/brain/proposals?status=open");
    if (mine !== proposalsRequest) return;
    byId("proposals").replaceChildren(...data.proposals.map(proposalCard));
    const count = data.proposals.length;
    say("proposals-status", count ? count + " open" : "No open proposals.");
  } catch (error) {
    if (mine === proposalsRequest) failed(error, "proposals-status");
  }
}

const PROPOSAL_VERBS = {
  merge: "Merge these facts into one",
  retire: "Retire a fact, keeping another",
  skill_merge: "Merge these skills",
  skill_retire: "Retire a skill, keeping another",
};

function proposalSides(proposal) {
  const texts = new Map((proposal.facts || []).map((fact) => [fact.id, fact.content]));
  const side = (title, id) => el("div", "side", el("h3", "", title), el("p", "content", texts.get(id) ?? id), el("p", "meta", id));
  const sides = proposal.fact_ids
    .filter((id) => id !== proposal.keep_id)
    .map((id) => side(proposal.kind.endsWith("merge") ? "Merged away" : "Retired", id));
  if (proposal.keep_id) sides.push(side("Kept", proposal.keep_id));
  if (proposal.text !== null && proposal.text !== undefined) {
    sides.push(el("div", "side proposed", el("h3", "", "Proposed wording"), el("p", "content", proposal.text)));
  }
  return el("div", "sides", ...sides);
}

function proposalCard(proposal) {
  const card = el("li", "card proposal",
    el("div", "badges", badge("kind", proposal.kind), badge("scope", proposal.scope)),
    el("p", "", PROPOSAL_VERBS[proposal.kind] || proposal.kind),
    proposalSides(proposal),
    el("p", "meta", "Why: " + proposal.reason + " · proposed " + when(proposal.created_at)));
  card.dataset.id = proposal.id;
  if (mayWrite()) {
    card.append(el("div", "actions",
      actionButton("Accept", () => decideProposal(proposal, "accept")),
      actionButton("Reject", () => decideProposal(proposal, "reject"))));
  }
  return card;
}

async function decideProposal(proposal, decision) {
  const title = decision === "accept" ? "Accept this proposal?" : "Reject this proposal?";
  const outcome = decision === "accept"
    ? "The facts it names are superseded, never deleted: their history keeps them."
    : "Nothing changes but the proposal, which is not proposed again.";
  const detail = el("div", "", proposalSides(proposal), el("p", "", outcome));
  if (!(await confirmAction(title, detail, { confirmLabel: decision === "accept" ? "Accept" : "Reject" }))) return;
  say("proposals-status", decision === "accept" ? "Accepting…" : "Rejecting…");
  try {
    await call("/v1/brain/proposals/" + encodeURIComponent(proposal.id) + "/" + decision, { method: "POST" });
    await loadProposals();
    say("proposals-status", (decision === "accept" ? "Accepted " : "Rejected ") + proposal.id + ".");
  } catch (error) {
    failed(error, "proposals-status");
  }
}

// Retiring the fact open in the detail panel: superseded by nothing, kept in its history.

function showFactActions(id, chain) {
  const opened = chain.find((fact) => fact.id === id);
  const canRetire = mayWrite() && opened !== undefined && opened.current;
  byId("detail-actions").replaceChildren(...(canRetire ? [actionButton("Retire fact…", () => retireFact(opened), true)] : []));
}

async function retireFact(fact) {
  const detail = el("div", "", el("p", "content", fact.content),
    el("p", "", "It stops being current now; as of any earlier day it still reads as it does today."));
  const reason = await askReason("Retire this fact?", detail, { confirmLabel: "Retire", danger: true, label: "Why it no longer holds" });
  if (reason === null) return;
  say("detail-status", "Retiring…");
  try {
    await call("/v1/brain/facts/" + encodeURIComponent(fact.id) + "/retire", { method: "POST", body: { reason } });
    await openDetail(fact.id);
    say("detail-status", "Retired.");
    await searchBrain();
  } catch (error) {
    failed(error, "detail-status");
  }
}

function retirementNote(fact) {
  const retired = fact.retirement;
  if (!retired) return null;
  return el("p", "retired", "Retired " + when(retired.retired_at) + " by " + retired.retired_by + ": " + retired.reason);
}

// Forgetting conversation messages: a search item is a message or a passage of several, and
// forgetting it forgets every message it came from, in every vault of the key.

function forgetControl(item) {
  if (!session.memory || !item.source_ids || !item.source_ids.length) return null;
  return el("div", "actions", actionButton("Forget…", () => forgetItem(item), true));
}

async function forgetItem(item) {
  const count = item.source_ids.length;
  const what = count === 1 ? "this message" : "the " + count + " messages of this passage";
  const detail = el("div", "", el("p", "content", item.text),
    el("p", "", "memvault forgets " + what + " for good, in the vault and its mirror."));
  if (!(await confirmAction("Forget " + what + "?", detail, { confirmLabel: "Forget", danger: true }))) return;
  say("memory-status", "Forgetting…");
  try {
    const data = await call("/v1/memory/forget", { token: sessionStorage.getItem(MEMORY_KEY), method: "POST", body: { ids: item.source_ids } });
    const gone = data.forgotten.length;
    await searchMemory();
    say("memory-status", "Forgot " + gone + (gone === 1 ? " message." : " messages."));
  } catch (error) {
    failed(error, "memory-status");
  }
}
