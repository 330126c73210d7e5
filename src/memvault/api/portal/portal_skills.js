"use strict";
// Skill proposals in the portal: the proposals of the signed-in brain credential's scopes, each
// with what it may duplicate; a writer confirms (as a new skill, or as the next version of a
// candidate skill) or rejects one, each after a second, explicit step. Readers see no controls.
// Built on session.js's session, calls and text-only helpers; it loads the list whenever the
// session changes, so it needs no hook in the other scripts. Its names stay inside one function
// scope: the page's scripts share one global scope, and none of them may clash with another's.

(() => {
  let proposalsRequest = 0;

  function canDecide() {
    return Boolean(session.brain && session.brain.writer);
  }

  async function loadProposals() {
    if (!session.brain) {
      byId("skill-proposals-list").replaceChildren();
      show("skill-proposals", false);
      return;
    }
    show("skill-proposals", true);
    const status = byId("skill-proposals-status-filter").value;
    const mine = ++proposalsRequest;
    say("skill-proposals-status", "Loading…");
    try {
      const data = await call("/v1/brain/skills/proposals?status=" + encodeURIComponent(status));
      if (mine !== proposalsRequest) return;
      byId("skill-proposals-list").replaceChildren(...data.proposals.map(proposalCard));
      const noun = data.proposals.length === 1 ? " proposal" : " proposals";
      say("skill-proposals-status", data.proposals.length + " " + (status === "all" ? "" : status + " ") + noun.trim());
    } catch (error) {
      if (mine === proposalsRequest) say("skill-proposals-status", error.message, true);
    }
  }

  function candidateItem(candidate) {
    const what = candidate.kind === "skill"
      ? "Skill " + candidate.slug + " v" + candidate.version + ": " + candidate.title
      : "Fact: " + candidate.content;
    const why = candidate.match === "slug" ? "same slug family" : "similar text, score " + candidate.score.toFixed(3);
    return el("li", "", el("span", "", what), " ", el("span", "meta", "(" + candidate.scope + ", " + why + ")"));
  }

  function proposalCard(proposal) {
    const badges = el("div", "badges", badge("scope", proposal.scope), badge("flag", proposal.status));
    if (proposal.redacted.length) badges.append(badge("flag", "redacted"));
    const parts = [
      badges,
      el("h3", "", proposal.title),
      el("p", "meta", "slug " + proposal.slug + " · proposed by " + proposal.created_by + " " + when(proposal.created_at)),
      el("p", "content", "When: " + proposal.triggers.join("; ")),
      el("ol", "steps", ...proposal.steps.map((step) => el("li", "", step))),
      el("p", "meta", "From: " + proposal.source_trail.join(", ")),
    ];
    if (proposal.candidates.length) {
      parts.push(el("p", "meta", "May duplicate:"), el("ul", "candidates", ...proposal.candidates.map(candidateItem)));
    }
    if (proposal.status !== "pending") {
      const decided = proposal.status + " by " + proposal.decided_by + " " + when(proposal.decided_at);
      parts.push(el("p", "meta", decided + (proposal.reason ? ": " + proposal.reason : "")));
    }
    const card = el("li", "card proposal", ...parts);
    card.dataset.id = proposal.id;
    if (proposal.status === "pending" && canDecide()) card.append(decisionControls(proposal));
    return card;
  }

  function button(text, onClick, quiet = false) {
    const node = el("button", quiet ? "quiet" : "", text);
    node.type = "button";
    node.addEventListener("click", onClick);
    return node;
  }

  function decisionControls(proposal) {
    const area = el("div", "decide");
    const status = el("p", "status");
    status.setAttribute("role", "status");
    const start = () => area.replaceChildren(
      button("Confirm…", () => askConfirm(proposal, area, status, start)),
      button("Reject…", () => askReject(proposal, area, status, start), true),
      status,
    );
    start();
    return area;
  }

  function askConfirm(proposal, area, status, back) {
    const target = el("select", "");
    target.setAttribute("aria-label", "Register as");
    target.append(new Option("a new skill: " + proposal.slug, ""));
    for (const candidate of proposal.candidates.filter((c) => c.kind === "skill")) {
      target.append(new Option("the next version of " + candidate.slug + " (" + candidate.scope + ")", candidate.slug));
    }
    const yes = button("Yes, register it", async () => {
      const body = target.value ? { version_of: target.value } : {};
      await decide(proposal, "confirm", body, area, status, (data) =>
        "Registered " + data.skill.slug + " version " + data.skill.version + " (" + data.registration + ").");
    });
    area.replaceChildren(el("p", "", "Register this skill?"), el("label", "", "Register as ", target), yes, button("Cancel", back, true), status);
    yes.focus();
  }

  function askReject(proposal, area, status, back) {
    const reason = el("input", "");
    reason.type = "text";
    reason.maxLength = 2000;
    reason.setAttribute("aria-label", "Why (optional)");
    reason.placeholder = "Why (optional)";
    const yes = button("Yes, reject it", async () => {
      const body = reason.value.trim() ? { reason: reason.value.trim() } : {};
      await decide(proposal, "reject", body, area, status, () => "Rejected.");
    });
    area.replaceChildren(el("p", "", "Reject this proposal?"), reason, yes, button("Cancel", back, true), status);
    reason.focus();
  }

  async function decide(proposal, action, body, area, status, done) {
    for (const control of area.querySelectorAll("button, select, input")) control.disabled = true;
    status.textContent = "Working…";
    try {
      const path = "/v1/brain/skills/proposals/" + encodeURIComponent(proposal.id) + "/" + action;
      const message = done(await call(path, { method: "POST", body }));
      await loadProposals();
      say("skill-proposals-status", message);
    } catch (error) {
      status.textContent = error.message;
      status.classList.add("error");
      for (const control of area.querySelectorAll("button, select, input")) control.disabled = false;
    }
  }

  function watchBrainSession() {
    // session.js's render() rewrites who is signed in on every change of the session; the list is
    // loaded again only when the brain credential changed, so a decision under way is kept.
    let shownFor = null;
    const observer = new MutationObserver(() => {
      const now = session.brain ? session.brain.name + "|" + session.via + "|" + session.brain.writer : "";
      if (now === shownFor) return;
      shownFor = now;
      loadProposals();
    });
    observer.observe(byId("who"), { childList: true, characterData: true, subtree: true });
    byId("skill-proposals-refresh").addEventListener("click", loadProposals);
    byId("skill-proposals-status-filter").addEventListener("change", loadProposals);
  }

  document.addEventListener("DOMContentLoaded", watchBrainSession);
})();
