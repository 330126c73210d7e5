"""One normaliser for raw messages and one parser for times, whatever the surface."""

from __future__ import annotations

import math

import pytest

from memvault.core.errors import InvalidField, InvalidInput
from memvault.core.memory.messages import message_from, messages_from
from memvault.core.times import parse_time, require_time

NOW = 1_700_000_000.0


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, 0.0),
        ("0", 0.0),
        (1_700_000_000, 1_700_000_000.0),
        ("1700000000.5", 1_700_000_000.5),
        ("2024-01-01", 1_704_067_200.0),
        ("2024-01-01T00:00:00", 1_704_067_200.0),
        ("2024-01-01T00:00:00Z", 1_704_067_200.0),
        ("2024-01-01T02:00:00+02:00", 1_704_067_200.0),
        ("0001-01-01T00:00:00Z", -62_135_596_800.0),
        ("9999-12-31T23:59:59.999Z", 253_402_300_799.999),
        (None, None),
        ("", None),
    ],
)
def test_times_are_epoch_seconds_or_iso_8601_naive_meaning_utc(value: object, expected: float | None) -> None:
    assert parse_time(value, "t") == expected


@pytest.mark.parametrize(
    "value",
    [math.nan, math.inf, -math.inf, "nan", "Infinity", "-inf", 1e20, -1e20, "10000-01-01", 253_402_300_800, "yesterday", True, [1], {}],
)
def test_anything_else_is_refused_naming_the_field(value: object) -> None:
    with pytest.raises(InvalidField, match=r"^when ") as caught:
        parse_time(value, "when")
    assert caught.value.status == 422


def test_a_required_time_must_be_given() -> None:
    with pytest.raises(InvalidField, match="older_than is required"):
        require_time("", "older_than")


def test_a_message_takes_defaults_for_what_it_leaves_out() -> None:
    message = message_from({"role": "user", "content": "hi"}, NOW)
    assert message is not None
    assert (message.role, message.content, message.timestamp, message.model) == ("user", "hi", NOW, None)
    assert len(message.id) == 32


def test_timestamp_zero_is_a_time_not_a_missing_one() -> None:
    message = message_from({"role": "user", "content": "hi", "timestamp": 0}, NOW)
    assert message is not None and message.timestamp == 0.0


def test_iso_timestamps_and_given_ids_are_kept() -> None:
    message = message_from({"role": "assistant", "content": "x", "timestamp": "2024-01-01", "id": "a1", "model": "m"}, NOW)
    assert message is not None and (message.timestamp, message.id, message.model) == (1_704_067_200.0, "a1", "m")


def test_memory_false_means_not_remembered_but_still_checked() -> None:
    assert message_from({"role": "user", "content": "secret", "memory": False}, NOW) is None
    with pytest.raises(InvalidField, match="timestamp"):
        message_from({"role": "user", "content": "x", "memory": False, "timestamp": math.nan}, NOW)


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"role": "wizard", "content": "x"}, "messages[1].role"),
        ({"role": "user", "content": ""}, "messages[1].content"),
        ({"role": "user", "content": "   "}, "messages[1].content"),
        ({"role": "user", "content": 42}, "messages[1].content"),
        ({"role": "user", "content": "x", "timestamp": math.nan}, "messages[1].timestamp"),
        ({"role": "user", "content": "x", "memory": "no"}, "messages[1].memory"),
        ({"role": "user", "content": "x", "id": "x" * 201}, "messages[1].id"),
        ({"role": "user", "content": "x", "id": ["a"]}, "messages[1].id"),
        ({"role": "user", "content": "x", "model": 7}, "messages[1].model"),
    ],
)
def test_a_bad_message_refuses_the_whole_list_naming_its_field(raw: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidInput, match=field.replace("[", r"\[").replace("]", r"\]")):
        messages_from([{"role": "user", "content": "fine"}, raw], NOW)


def test_messages_must_be_a_list_of_objects() -> None:
    with pytest.raises(InvalidInput):
        messages_from("hello", NOW)
    with pytest.raises(InvalidInput, match=r"messages\[0\] must be an object"):
        messages_from(["hello"], NOW)
