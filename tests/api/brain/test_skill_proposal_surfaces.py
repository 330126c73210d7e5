"""Skill proposals answer alike over HTTP, the Worker's RPC methods and MCP: the same proposal,
list and decision shapes (MCP checking each answer against the tool's published output schema),
and the same refusal for the same bad input."""

from __future__ import annotations

import pytest
from brain_env import Brain, brain_fixture, token  # noqa: F401
from test_brain_surfaces_agree import http, mcp_client, tool

from memvault.core.errors import Conflict, InvalidField
from memvault.runtime import rpc

PROPOSAL = {"title": "Bleed the radiators", "scope": "shared", "triggers": ["radiator cold at the top"],
            "steps": ["Turn the heating off.", "Open the bleed valve until water comes."],
            "source_trail": ["task:17"]}


async def test_propose_list_confirm_and_reject_answer_alike_everywhere(brain: Brain) -> None:
    writer = token("writer")
    await http(brain, "POST", "/v1/brain/skills", json={"slug": "bleed-the-radiators-old", "scope": "shared",
                                                         "content": "1. Bleed them."})
    response = await brain.client.post("/v1/brain/skills/proposals", json=PROPOSAL, headers=brain.headers("writer"))
    assert response.status_code == 201
    made = response.json()
    assert made["proposal"]["candidates"][0]["slug"] == "bleed-the-radiators-old"
    async with mcp_client(brain) as mcp:
        assert made == await rpc.brain_propose_skill(brain.deps, writer, PROPOSAL)
        assert made == await tool(mcp, "brain_skill_propose", PROPOSAL)
        listed = await http(brain, "GET", "/v1/brain/skills/proposals")
        assert listed["proposals"] == [made["proposal"]]
        assert listed == await rpc.brain_skill_proposals(brain.deps, writer)
        assert listed == await tool(mcp, "brain_skill_proposals", {"status": "pending"})

        confirmed = await tool(mcp, "brain_skill_confirm", {"id": made["proposal"]["id"],
                                                            "version_of": "bleed-the-radiators-old"})
        assert confirmed["skill"]["version"] == 2 and confirmed["registration"] == "updated"
        with pytest.raises(Conflict, match="already confirmed"):
            await rpc.brain_confirm_skill_proposal(brain.deps, writer, made["proposal"]["id"])
        refused = await mcp.call_tool("brain_skill_reject", {"id": made["proposal"]["id"]})
        assert refused.is_error and "already confirmed" in str(refused.content)
        read = await tool(mcp, "brain_skill", {"slug": "bleed-the-radiators-old", "version": 1})
        assert read == await rpc.brain_get_skill(brain.deps, writer, "bleed-the-radiators-old", None, 1)
        assert read["skill"]["superseded_at"] is not None

        other = await rpc.brain_propose_skill(brain.deps, writer, {**PROPOSAL, "title": "Top up the boiler"})
        rejected = await rpc.brain_reject_skill_proposal(brain.deps, writer, other["proposal"]["id"], "not ours")
        assert rejected == {"id": other["proposal"]["id"], "status": "rejected", "reason": "not ours"}


async def test_bad_input_is_refused_alike_everywhere(brain: Brain) -> None:
    bad = {**PROPOSAL, "steps": []}
    over_http = await brain.client.post("/v1/brain/skills/proposals", json=bad, headers=brain.headers("writer"))
    message = over_http.json()["error"]["message"]
    assert over_http.status_code == 422 and message == "steps must hold 1 to 50 entries"
    with pytest.raises(InvalidField, match=f"^{message}$"):
        await rpc.brain_propose_skill(brain.deps, token("writer"), bad)
    async with mcp_client(brain) as mcp:
        refused = await mcp.call_tool("brain_skill_propose", bad)
    assert refused.is_error and message in " ".join(getattr(block, "text", "") for block in refused.content)
    with pytest.raises(InvalidField, match="skill proposal id"):
        await rpc.brain_confirm_skill_proposal(brain.deps, token("writer"), "mem-123")
    assert (await http(brain, "GET", "/v1/brain/skills/proposals", params={"status": "all"}))["proposals"] == []
