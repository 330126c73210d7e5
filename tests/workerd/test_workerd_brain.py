"""The brain in real workerd: facts in D1, a long body in R2, fact vectors through the Vectorize
and Workers AI stand-ins, and the walls between two credentials (one in the key store, one in
MEMVAULT_BRAIN_CREDENTIALS)."""

from __future__ import annotations

import uuid
from typing import Any

from tier_stack import MainStack

from memvault.core.brain.rows import body_key


def write(stack: MainStack, token: str, payload: dict[str, Any]) -> dict[str, Any]:
    done = stack.api("POST", "/memory/write", token, json=payload)
    assert done.status_code == 200, done.text
    return dict(done.json())


def search(stack: MainStack, token: str, q: str, mode: str = "keyword") -> dict[str, Any]:
    done = stack.api("GET", "/memory/search", token, params={"q": q, "mode": mode})
    assert done.status_code == 200, done.text
    return dict(done.json())


def test_a_fact_is_found_by_its_exact_token_and_recalled_within_the_budget(stack: MainStack) -> None:
    token = f"INV-{uuid.uuid4().hex[:6].upper()}"
    written = write(stack, stack.secrets.family_writer, {
        "source": "notes:workerd", "scope": "family",
        "facts": [{"content": f"The plumber's invoice {token} is due on 3 March.", "pinned": True},
                  {"content": "The cabin at Lake Orta has a green door."}]})
    assert len(written["ids"]) == 2
    found = search(stack, stack.secrets.family_writer, token)
    assert [r["id"] for r in found["results"]] == [written["ids"][0]] and found["degraded"] == []
    hybrid = search(stack, stack.secrets.family_writer, "which door does the cabin at the lake have", "hybrid")
    assert written["ids"][1] in [r["id"] for r in hybrid["results"]] and hybrid["degraded"] == []

    recalled = stack.api("GET", "/recall", stack.secrets.family_writer, params={"q": "cabin door", "budget": 600})
    assert recalled.status_code == 200, recalled.text
    envelope = recalled.json()
    assert written["ids"][0] in [e["id"] for e in envelope["core"]["entries"]]
    assert 0 < envelope["budget_used"] <= envelope["budget"] == 600


def test_a_long_body_lives_in_r2_and_reads_back_whole(stack: MainStack) -> None:
    body = "Winter checklist for the cabin. " + " ".join(f"Step {n}: check shutter {n} and its hinge." for n in range(60))
    written = write(stack, stack.secrets.family_writer, {"source": "notes:cabin", "scope": "family", "content": body})
    [fact_id] = written["ids"]
    found = search(stack, stack.secrets.family_writer, "winter checklist shutter")["results"]
    [fact] = [r for r in found if r["id"] == fact_id]
    assert fact["has_body"] and len(fact["content"]) < len(body)
    read = stack.api("GET", "/memory/body", stack.secrets.family_writer, params={"id": fact_id})
    assert read.status_code == 200 and read.json()["body"] == body
    # The object itself, read from the local R2 bucket the way an operator would.
    bucket = next(b["bucket_name"] for b in stack.settings["r2_buckets"] if b["binding"] == "BODIES")
    stored = stack.wrangler(["r2", "object", "get", f"{bucket}/{body_key(fact['content_hash'])}", "--local", "--pipe"])
    assert stored == body


def test_two_credentials_stay_behind_their_walls(stack: MainStack) -> None:
    secret = f"PO-{uuid.uuid4().hex[:6].upper()}"
    family = write(stack, stack.secrets.family_writer, {"source": "notes:walls", "scope": "family",
                                                        "content": f"Grandma's locker code is {secret}."})
    business = write(stack, stack.secrets.business_writer, {"source": "ledger", "scope": "business",
                                                            "content": f"Purchase order {secret}-B goes to Acme."})
    assert search(stack, stack.secrets.business_writer, secret)["results"][0]["id"] == business["ids"][0]
    assert [r["id"] for r in search(stack, stack.secrets.family_writer, secret)["results"]] == family["ids"]
    hybrid = search(stack, stack.secrets.business_writer, "grandma locker code", "hybrid")
    assert family["ids"][0] not in [r["id"] for r in hybrid["results"]]
    walled = stack.api("GET", "/memory/body", stack.secrets.business_writer, params={"id": family["ids"][0]})
    assert walled.status_code == 404
    refused = stack.api("POST", "/memory/write", stack.secrets.business_writer,
                        json={"source": "x", "scope": "family", "content": "Not mine to write."})
    assert refused.status_code == 403, refused.text
    assert stack.api("GET", "/memory/search", "bt_unknown", params={"q": secret}).status_code == 401


def test_the_v1_brain_paths_the_kept_paths_and_rpc_answer_alike(stack: MainStack) -> None:
    token = f"TKT-{uuid.uuid4().hex[:6].upper()}"
    writer = stack.secrets.family_writer
    done = stack.api("POST", "/v1/brain/facts", writer, json={
        "source": "notes:v1", "scope": "family", "content": f"Ticket {token} is for the leaking gutter.", "bands": False})
    assert done.status_code == 200, done.text
    [fact_id] = done.json()["ids"]
    found = stack.api("POST", "/v1/brain/facts/search", writer, json={"query": token, "limit": 5})
    assert found.status_code == 200 and [r["id"] for r in found.json()["results"]] == [fact_id]
    assert found.json() == search(stack, writer, token) == result_of(stack.rpc("brain_search", writer, token, None, 5))
    recalled = stack.api("POST", "/v1/brain/recall", writer, json={"query": "leaking gutter", "budget": 800}).json()
    assert "as_of" in recalled and recalled["budget_used"] <= 800
    body = stack.api("GET", f"/v1/brain/facts/{fact_id}/body", writer)
    assert body.status_code == 200 and token in body.json()["body"]
    refused = stack.api("POST", "/v1/brain/facts/search", writer, json={"query": token, "mode": "fuzzy"})
    assert refused.status_code == 422 and refused.json() == {
        "error": {"code": "invalid_request", "message": "mode must be keyword or hybrid"}}


def result_of(answer: dict[str, Any]) -> Any:
    assert "error" not in answer, answer["error"][-600:]
    return answer["result"]


def test_a_fact_retired_by_hand_leaves_current_reads_and_keeps_its_reason(stack: MainStack) -> None:
    code = f"GATE-{uuid.uuid4().hex[:6].upper()}"
    writer, other = stack.secrets.family_writer, stack.secrets.business_writer
    [by_http, by_rpc] = write(stack, writer, {"source": "notes:retire", "scope": "family", "facts": [
        {"content": f"The side gate code is {code}.", "valid_from": "2026-01-01T00:00:00Z"},
        {"content": f"The back gate code is {code}-B.", "valid_from": "2026-01-01T00:00:00Z"}]})["ids"]
    walled = stack.api("POST", f"/v1/brain/facts/{by_http}/retire", other, json={"reason": "changed"})
    absent = stack.api("POST", "/v1/brain/facts/mem-0000000000000000/retire", other, json={"reason": "changed"})
    assert walled.status_code == absent.status_code == 404 and walled.json() == absent.json()
    retired = stack.api("POST", f"/v1/brain/facts/{by_http}/retire", writer, json={"reason": "The code changed."})
    assert retired.status_code == 200, retired.text
    assert retired.json()["retirement"]["reason"] == "The code changed."
    again = stack.api("POST", f"/v1/brain/facts/{by_http}/retire", writer, json={"reason": "again"})
    assert again.status_code == 409, again.text
    assert result_of(stack.rpc("brain_retire", writer, by_rpc, "Both codes changed."))["status"] == "retired"
    assert search(stack, writer, code)["results"] == []
    past = stack.api("POST", "/v1/brain/facts/search", writer, json={"query": code, "as_of": "2026-06-01T00:00:00Z"})
    assert sorted(r["id"] for r in past.json()["results"]) == sorted([by_http, by_rpc])
    [version] = stack.api("GET", f"/v1/brain/facts/{by_http}/history", writer).json()["chain"]
    assert version["retirement"]["reason"] == "The code changed." and version["current"] is False
