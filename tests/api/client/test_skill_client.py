"""Skills from the Python client over both transports (HTTP and the Worker's RPC methods, in
process): a proposal is made, listed, confirmed once; re-registering is idempotent and a change is
the next version; refusals arrive as the domain errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from client_support import BASE_URL, Memvault, plain

from memvault.client import HttpTransport, MemoryClient, RpcTransport
from memvault.core.brain.scopes import token_hash
from memvault.core.errors import Conflict, Forbidden, InvalidField
from memvault.runtime import rpc

WRITER, READER = "family-writer-token", "family-reader-token"


class BrainRpc:
    """The entrypoint's brain methods in process, plain data both ways."""

    def __init__(self, memvault: Memvault) -> None:
        self.memvault = memvault

    async def call(self, method: str, *args: Any) -> Any:
        return plain(await getattr(rpc, method)(self.memvault.deps, *plain(list(args))))


def clients(memvault: Memvault, token: str) -> dict[str, MemoryClient]:
    return {"http": MemoryClient(HttpTransport(memvault.network, BASE_URL, memvault.key, token)),
            "rpc": MemoryClient(RpcTransport(BrainRpc(memvault), token))}


@pytest.fixture(name="family")
def family_fixture(memvault: Memvault) -> Memvault:
    credentials = {token_hash(WRITER): {"name": "helper", "scopes": ["family"], "writer": True},
                   token_hash(READER): {"name": "kid", "scopes": ["family"], "writer": False}}
    memvault.deps.settings = memvault.deps.settings.replace(brain_credentials=json.dumps(credentials))
    return memvault


@pytest.mark.parametrize("transport", ["http", "rpc"])
async def test_propose_list_confirm_and_re_register(family: Memvault, transport: str) -> None:
    client, reader = clients(family, WRITER)[transport], clients(family, READER)[transport]
    slug = f"water-the-plants-{transport}"
    made = await client.propose_skill(title="Water the plants", triggers=["plants look dry"], slug=slug,
                                      steps=["Check the soil.", "Water the ferns first."], source_trail=["task:7"])
    proposal = made["proposal"]
    assert proposal["status"] == "pending" and proposal["scope"] == "family"
    listed = await reader.skill_proposals()
    assert proposal["id"] in [p["id"] for p in listed["proposals"]]
    with pytest.raises(Forbidden):
        await reader.confirm_skill_proposal(proposal["id"])
    confirmed = await client.confirm_skill_proposal(proposal["id"])
    assert confirmed["registration"] == "registered" and confirmed["skill"]["version"] == 1
    with pytest.raises(Conflict, match="already confirmed"):
        await client.reject_skill_proposal(proposal["id"], "too late")
    skill = confirmed["skill"]
    same = await client.register_skill({"slug": slug, "name": skill["name"], "description": skill["description"],
                                        "content": skill["content"]})
    assert same["status"] == "unchanged" and same["skill"]["version"] == 1
    bumped = await client.register_skill({"slug": slug, "content": skill["content"] + "\n3. Mist the orchid."})
    assert bumped["status"] == "updated" and bumped["skill"]["version"] == 2
    again = await client.propose_skill(title="Water the plants weekly", triggers=["plants"], steps=["Water."],
                                       source_trail=["chat"], slug=f"{slug}-weekly")
    candidate = again["proposal"]["candidates"][0]
    assert (candidate["slug"], candidate["version"]) == (slug, 2)
    rejected = await client.reject_skill_proposal(again["proposal"]["id"], "same as the existing one")
    assert rejected["status"] == "rejected"
    assert [p["id"] for p in (await client.skill_proposals("rejected"))["proposals"]] == [again["proposal"]["id"]]
    with pytest.raises(InvalidField, match="steps must hold"):
        await client.propose_skill(title="Nothing", triggers=["x"], steps=[], source_trail=["y"])
