"""Commands' fields and their rules: the one id rule, numbers as JS sends them, values carried as
text, and schemas generated from the same rules that accept whatever the parser accepts."""

from __future__ import annotations

import math
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from memvault.core.contract import check_id, spec_schemas
from memvault.core.errors import InvalidField, InvalidInput
from memvault.core.memory import commands
from memvault.core.memory.operations import OPERATIONS
from memvault.core.memory.results import ClearReceipt, MemoryPage, PageMessage
from memvault.core.shapes import plain

NOW = 1_700_000_000.0


@pytest.mark.parametrize("good", ["a", "chat-7", "x" * 200, "café ☕", "two words", 42, "telegram:-1001"])
def test_an_id_is_1_to_200_printable_characters(good: object) -> None:
    assert check_id(good, "session_id") == str(good)


@pytest.mark.parametrize("bad", ["", " ", "   ", "x" * 201, "tab\there", "line\nbreak", "nul\x00", True, 4.5, None, [], {}])
def test_anything_else_is_refused_naming_the_field(bad: object) -> None:
    with pytest.raises(InvalidField, match=r"^session_id must be "):
        check_id(bad, "session_id")


def test_every_session_id_field_follows_the_rule_and_passes_the_secret_gate() -> None:
    for operation in OPERATIONS:
        names = {rule.name for rule in operation.request.rules}
        if "session_id" not in names:
            continue
        extra: dict[str, Any] = {"store": {"messages": [{"role": "user", "content": "x"}]}, "search": {"query": "x"},
                                 "forget": {"ids": ["m"]}}.get(operation.name, {})
        for bad in ("", "x" * 201, "a\tb", "4111 1111 1111 1111"):
            with pytest.raises(InvalidField, match=r"^session_id"):
                operation.parse({**extra, "session_id": bad}, NOW, False)
        assert operation.parse({**extra, "session_id": "s" * 200}, NOW, False).session_id == "s" * 200


def test_whole_numbers_come_as_numbers_or_whole_floats_and_as_digits_only_from_text() -> None:
    assert commands.parse_read({"limit": 5.0, "offset": 2}, NOW).limit == 5
    for bad in ("5", 5.5, True, math.inf, math.nan, 0, 501, -1, 10**400, -(10**400), 1e300):
        with pytest.raises(InvalidField, match=r"^limit must be a whole number"):
            commands.parse_read({"limit": bad}, NOW)
    assert commands.parse_read({"limit": "5", "offset": "3"}, NOW, text=True).offset == 3
    for bad in ("five", "5.0", "-1", "", " ", "٥"):
        with pytest.raises(InvalidField, match=r"^limit"):
            commands.parse_read({"limit": bad}, NOW, text=True)


def test_flags_from_text_and_a_required_time() -> None:
    assert commands.parse_clear({"reset": "yes"}, NOW, text=True).reset is True
    assert commands.parse_clear({"reset": "OFF"}, NOW, text=True).reset is False
    with pytest.raises(InvalidField, match=r"^reset must be true or false"):
        commands.parse_clear({"reset": "maybe"}, NOW, text=True)
    with pytest.raises(InvalidField, match=r"^reset must be true or false"):
        commands.parse_clear({"reset": "true"}, NOW)  # a JSON string is not a boolean
    for missing in ({}, {"older_than": None}, {"older_than": ""}):
        with pytest.raises(InvalidField, match=r"^older_than is required"):
            commands.parse_purge(missing, NOW)
    assert commands.parse_purge({"older_than": "2024-01-01"}, NOW).older_than == 1_704_067_200.0


def test_a_request_that_is_not_an_object_is_malformed() -> None:
    for body in (None, [], "messages", 7):
        with pytest.raises(InvalidInput, match="the request body must be an object"):
            commands.parse_search(body, NOW)


def test_a_store_assigns_ids_and_times_at_parse_and_names_a_bad_message() -> None:
    parsed = commands.parse_store({"messages": [{"role": "user", "content": "hi", "id": ""},
                                                {"role": "user", "content": "x", "memory": False}]}, NOW)
    first, skipped = parsed.messages
    assert first is not None and len(first.id) == 32 and first.timestamp == NOW and skipped is None
    with pytest.raises(InvalidField, match=r"^messages must be a list of 1 to 10000 objects"):
        commands.parse_store({"messages": []}, NOW)
    with pytest.raises(InvalidField, match=r"^messages\[1\]\.id looks like it contains a secret"):
        commands.parse_store({"messages": [{"role": "user", "content": "a"},
                                           {"role": "user", "content": "b", "id": "sk-proj-Ab12Cd34Ef56Gh78Ij90KlMnOp"}]}, NOW)


GOOD_REQUESTS: dict[str, list[dict[str, Any]]] = {
    "StoreRequest": [
        {"messages": [{"role": "user", "content": "hi"}]},
        {"messages": [{"role": "tool", "content": "x", "id": 7, "timestamp": 0, "memory": False, "model": "",
                       "metadata": {"a": [1, {"b": None}]}}], "metadata": {"chat": 1}, "session_id": "s"},
        {"messages": [{"role": "assistant", "content": "x", "timestamp": "2024-01-01", "id": ""}], "session_id": 12},
        {"messages": [{"role": "user", "content": "x", "id": None, "timestamp": None, "metadata": None, "model": None,
                       "memory": None}], "metadata": None, "session_id": None},
    ],
    "SearchRequest": [
        {"query": "x"}, {"query": "x", "limit": 500, "budget_tokens": 1, "now": "1700000000.5", "session_id": "s"},
        {"query": "x", "limit": 3.0, "now": 0},
        {"query": "x", "limit": None, "budget_tokens": None, "now": None, "session_id": None},
    ],
    "PurgeRequest": [{"older_than": 0}, {"older_than": "2024-01-01T00:00:00Z"}],
    "ForgetRequest": [{"ids": ["a", 2]}, {"ids": ["a"], "session_id": "s"}],
}


@pytest.mark.parametrize("name", sorted(GOOD_REQUESTS))
def test_the_documented_schema_takes_whatever_the_parser_takes(name: str) -> None:
    schemas = spec_schemas(op.request for op in OPERATIONS)
    check = Draft202012Validator({"$ref": f"#/components/schemas/{name}", "components": {"schemas": schemas}})
    operation = next(op for op in OPERATIONS if op.request.name == name)
    for request in GOOD_REQUESTS[name]:
        operation.parse(request, NOW, False)
        check.validate(request)
    for bad in ({}, {"query": 5, "messages": "x", "older_than": True, "ids": []}):
        assert not check.is_valid(bad), bad
        with pytest.raises(InvalidInput):
            operation.parse(bad, NOW, False)


def test_a_result_is_plain_data_field_by_field() -> None:
    page = MemoryPage("s", 0, 1, (PageMessage("pending", "m1", "user", "hi", 1.0, None, {"a": 1}),))
    assert plain(page) == {"session_id": "s", "offset": 0, "limit": 1, "items": [
        {"state": "pending", "id": "m1", "role": "user", "content": "hi", "timestamp": 1.0, "model": None,
         "metadata": {"a": 1}}]}
    assert plain(ClearReceipt(2, True)) == {"cleared_vaults": 2, "reset": True}
