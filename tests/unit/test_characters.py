"""Text that is not made of characters (half of a UTF-16 surrogate pair) is found wherever it sits
in a command, and a provider's answer holding it is repaired rather than lost."""

from __future__ import annotations

import json

import pytest

from memvault.core.characters import lone_surrogate_path, repaired, repaired_json, require_characters
from memvault.core.errors import InvalidField, InvalidInput


@pytest.mark.parametrize(("value", "path"), [
    ("plain ascii", None),
    ("ünïcødé ☕ 😀 中文", None),
    ({"a": [1, 2.5, None, True, {"b": "fine"}]}, None),
    ("\ud800", ""),
    ("tail \udfff", ""),
    (["ok", "ok", "bad \udc00"], "[2]"),
    ({"messages": [{"role": "user", "content": "x"}, {"role": "user", "content": "cut \ud83d"}]},
     ".messages[1].content"),
    ({"metadata": {"tag\ud800": "value"}}, ".metadata"),
])
def test_a_lone_surrogate_is_found_where_it_is(value: object, path: str | None) -> None:
    assert lone_surrogate_path(value) == path


def test_the_refusal_names_the_field_and_never_echoes_the_text() -> None:
    with pytest.raises(InvalidField) as refused:
        require_characters({"content": "password hunter2 \ud800"}, "messages[0]")
    assert refused.value.message.startswith("messages[0].content holds a lone UTF-16 surrogate")
    assert "hunter2" not in refused.value.message
    with pytest.raises(InvalidInput, match=r"^the request body holds"):
        require_characters("\udc00", "", InvalidInput)
    require_characters({"deep": [[["fine 😀"]]]}, "x")


def test_deep_nesting_is_walked_without_recursion() -> None:
    value: object = "half \ud800"
    for _ in range(5000):
        value = [value]
    assert lone_surrogate_path(value) == "[0]" * 5000


def test_repair_joins_halves_that_arrived_apart_and_marks_lone_ones() -> None:
    assert repaired("smile " + "\ud83d" + "\ude00" + " done") == "smile 😀 done"
    assert repaired("lone \ud800 and \udfff") == "lone \ufffd and \ufffd"
    text = "nothing to repair ☕"
    assert repaired(text) is text


def test_a_json_body_is_walked_only_when_its_bytes_could_spell_a_lone_surrogate() -> None:
    clean = b'{"messages": [{"content": "\\u00e9t\\u00e9 \xe2\x98\x95"}]}'
    decoded = json.loads(clean)
    assert repaired_json(clean, decoded) is decoded
    for raw in (b'{"a": ["x \\ud83d"]}', b'{"a": ["x \xed\xa0\xbd"]}', b'{"a\\uDFFF": ["x"]}'):
        fixed = repaired_json(raw, json.loads(raw))
        assert lone_surrogate_path(fixed) is None
        json.dumps(fixed, ensure_ascii=False).encode("utf-8")


def test_a_body_nested_as_deep_as_json_allows_is_repaired_without_recursion() -> None:
    raw = b"[" * 900 + b'{"k\\udc00": "v \\ud800"}' + b"]" * 900
    fixed = repaired_json(raw, json.loads(raw))
    inner = fixed
    for _ in range(900):
        inner = inner[0]
    assert inner == {"k\ufffd": "v \ufffd"}
