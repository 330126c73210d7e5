"""The time phrases of a query, resolved into the periods memory is ranked against."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from memvault.core.memory.assemble import VaultAnswer, rank_items
from memvault.core.memory.when import DAY, TOLD_AFTER, Period, closeness, query_periods
from memvault.core.memory.windows import WindowPolicy
from memvault.core.models import Candidate, MemoryRow
from memvault.core.times import EARLIEST, PAST_LATEST

NOW = datetime(2023, 11, 24, 15, 30, tzinfo=UTC).timestamp()  # a Friday


def days(text: str, now: float = NOW) -> list[tuple[str, str]]:
    """Each period as its first and last day."""
    return [(_day(p.start), _day(p.end - 1)) for p in query_periods(text, now)]


def _day(moment: float) -> str:
    return datetime.fromtimestamp(moment, tz=UTC).date().isoformat()


@pytest.mark.parametrize(("text", "expected"), [
    ("What did Gina find on 1 February, 2023?", [("2023-02-01", "2023-02-01")]),
    ("what did we agree on May 23, 2023", [("2023-05-23", "2023-05-23")]),
    ("the book I finished on 8th of December, 2022", [("2022-12-08", "2022-12-08")]),
    ("the photo from December 1,2022", [("2022-12-01", "2022-12-01")]),
    ("notes of 2023-06-03", [("2023-06-03", "2023-06-03")]),
    ("what happened on 5 june", [("2023-06-05", "2023-06-05")]),
    ("what happened on 30 december", [("2022-12-30", "2022-12-30")]),  # no year: the latest one gone by
    ("where was I between August 11 and August 15 2023", [("2023-08-11", "2023-08-15")]),
    ("the puppy I got two weeks before August 11, 2023", [("2023-07-25", "2023-07-31")]),
    ("where was Tim in the week before 16 November 2023?", [("2023-11-09", "2023-11-16")]),
    ("what was shown on the Sunday before October 25, 2022?", [("2022-10-23", "2022-10-23")]),
    ("the second week of November", [("2023-11-08", "2023-11-14")]),
    ("the beginning of November 2022", [("2022-11-01", "2022-11-10")]),
    ("the first half of September 2022", [("2022-09-01", "2022-09-15")]),
    ("the last week of February 2023", [("2023-02-22", "2023-02-28")]),
    ("late March", [("2023-03-21", "2023-03-31")]),
    ("What did Maria donate in December 2022?", [("2022-12-01", "2022-12-31")]),
    ("When did Melanie go camping in June?", [("2023-06-01", "2023-06-30")]),
    ("what did I plan in December?", [("2022-12-01", "2022-12-31")]),
    ("the state Joanna visited in summer 2021", [("2021-06-01", "2021-08-31")]),
    ("what we did last summer", [("2023-06-01", "2023-08-31")]),
    ("during the winter", [("2022-12-01", "2023-02-28")]),
    ("how often did I go to the beach in 2022?", [("2022-01-01", "2022-12-31")]),
    ("what did we talk about yesterday", [("2023-11-23", "2023-11-23")]),
    ("what did I do last Friday?", [("2023-11-17", "2023-11-17")]),
    ("the call on Tuesday", [("2023-11-21", "2023-11-21")]),
    ("last week", [("2023-11-13", "2023-11-19")]),
    ("last weekend", [("2023-11-18", "2023-11-19")]),
    ("last month", [("2023-10-01", "2023-10-31")]),
    ("last year", [("2022-01-01", "2022-12-31")]),
    ("three days ago", [("2023-11-20", "2023-11-22")]),
    ("a couple of weeks ago", [("2023-11-07", "2023-11-13")]),
])
def test_a_phrase_names_its_period(text: str, expected: list[tuple[str, str]]) -> None:
    assert days(text) == expected


@pytest.mark.parametrize("text", [
    "may I ask what my cat is called?",  # a verb, not the month
    "the spring water was cold",
    "I did not fall asleep",
    "I scored 1000 points",
    "what is my sister's name?",
    "",
])
def test_words_that_name_no_time_name_no_period(text: str) -> None:
    assert days(text) == []


def test_a_period_still_to_come_names_nothing_and_is_not_read_again_as_its_year() -> None:
    assert days("what will happen on 8 December 2023?") == []
    assert days("the party in December 2023") == []


def test_words_for_the_present_name_no_period() -> None:
    # What is asked about the present was often said before it; recency favours the latest anyway.
    assert days("is he around this week?") == days("what's on today?") == days("what did I say this morning?") == []
    assert days("anything new this month?") == days("my plans for this year") == []
    assert days("what did we do in 2023?") == [("2023-01-01", "2023-12-31")]  # a year by its name counts


def test_a_day_the_month_does_not_have_is_read_as_no_more_than_its_month() -> None:
    assert days("on 30 February 2023") == [("2023-02-01", "2023-02-28")]
    assert days("on 31 June") == []
    assert days("on 29 February") == [("2020-02-29", "2020-02-29")]
    assert days("on 2023-02-30") == [("2023-01-01", "2023-12-31")]  # no such day: its year is what it names


@pytest.mark.parametrize("now", [EARLIEST, EARLIEST + 40 * DAY, PAST_LATEST, PAST_LATEST - 40 * DAY, 1e12, -1e12])
def test_a_moment_at_the_calendars_ends_reads_only_the_periods_the_calendar_holds(now: float) -> None:
    text = ("last week, yesterday, 3 days ago, 999 years ago, last friday, june 3, in july, last year, summer, "
            "two weeks before august 11, 999 days after june 3, between may 1 and may 9, the second week of november")
    for period in query_periods(text, now):
        assert EARLIEST <= period.start < period.end <= PAST_LATEST


def test_several_phrases_name_several_periods() -> None:
    assert days("what did I do on 3 June 2023 and in August 2022?") == [
        ("2023-06-03", "2023-06-03"), ("2022-08-01", "2022-08-31")
    ]


def test_closeness_is_whole_in_the_period_and_a_little_after_and_fades_with_distance() -> None:
    day = Period(datetime(2023, 6, 3, tzinfo=UTC).timestamp(), datetime(2023, 6, 4, tzinfo=UTC).timestamp())
    assert day.closeness(day.start) == day.closeness(day.end + TOLD_AFTER) == 1.0
    assert day.closeness(day.start - DAY) == 0.5
    assert day.closeness(day.end + TOLD_AFTER + 2 * DAY) == 0.25
    assert closeness([], day.start) == 0.0
    assert closeness([day, Period(0.0, DAY)], 0.0) == 1.0


def _message(row_id: str, when: date, text: str) -> Candidate:
    moment = datetime(when.year, when.month, when.day, 12, tzinfo=UTC).timestamp()
    row = MemoryRow(row_id, "message", text, "user", None, moment, moment, 10, (row_id,), row_id, None)
    return Candidate(row=row, channel="keyword", rank=1, score=1.0)


def test_memory_from_the_period_a_question_names_ranks_first() -> None:
    policy = WindowPolicy(3 * 86400, 90 * 86400, 0.0)
    march = _message("march", date(2023, 3, 10), "We went to the lake.")
    june = _message("june", date(2023, 6, 3), "We went to the lake.")
    asked = "what did we do in March?"
    order = [item.source_ids[0] for item in rank_items([VaultAnswer("k:core", "vault", [june, march])], asked, policy, NOW)]
    assert order == ["march", "june"]
    plain = rank_items([VaultAnswer("k:core", "vault", [june, march])], "what did we do?", policy, NOW)
    assert [item.source_ids[0] for item in plain] == ["june", "march"]  # the same words: the newer first


def test_a_long_query_is_read_for_time_phrases_only_as_far_as_a_question_goes() -> None:
    pasted = "on 3 June 2023 " * 10_000
    assert len(query_periods(pasted, NOW)) < 200
