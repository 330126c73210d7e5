"""Dates a benchmark question names, moved by the shift its conversation's timestamps were stored
with, so a question about "3 June, 2023" asks about the day that conversation's 3 June became.

Written apart from memvault's own time-phrase reading (core/memory/when.py) so that one does not
grade itself. A day keeps its day; a month, season or year becomes the one holding its middle
once shifted, the nearest whole month, season or year there is. Relative phrases ("last week")
are left as they are: they are read against the moment of the search, which moved too."""

from __future__ import annotations

import calendar
import re
from datetime import UTC, date, datetime, timedelta

_MONTHS = {name.lower(): number for number in range(1, 13)
           for name in (calendar.month_name[number], calendar.month_abbr[number])}
_MONTH = "(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + ")"
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_DAY_FIRST = re.compile(rf"\b(?P<day>\d{{1,2}})(?P<nth>st|nd|rd|th)?(?P<of> of)? (?P<month>{_MONTH})\b(?P<sep>,? ?)(?P<year>\d{{4}})?\b", re.I)
_MONTH_FIRST = re.compile(rf"\b(?P<month>{_MONTH}) (?P<day>\d{{1,2}})(?P<nth>st|nd|rd|th)?\b(?![:\d])(?P<sep>,? ?)(?P<year>\d{{4}})?\b", re.I)
_MONTH_YEAR = re.compile(rf"\b(?P<month>{_MONTH})(?P<sep>,? )(?P<year>\d{{4}})\b", re.I)
_CUED_MONTH = re.compile(rf"\b(?P<cue>in|during|of|since|by) (?P<month>{_MONTH})\b(?! \d)", re.I)
_SEASON_YEAR = re.compile(r"\b(?P<season>spring|summer|autumn|fall|winter) (?P<year>\d{4})\b", re.I)
_YEAR = re.compile(r"\b(?P<year>(?:19|20)\d\d)\b")


def shift_question_dates(text: str, shift_seconds: float, asked: float) -> str:
    """``text`` with every date it names moved by ``shift_seconds``; ``asked`` (before the shift)
    gives the year of a date written without one (its latest occurrence up to then)."""
    shift = timedelta(seconds=shift_seconds)
    today = datetime.fromtimestamp(asked, tz=UTC).date()
    done: list[tuple[int, int, str]] = []

    def free(match: re.Match[str]) -> bool:
        return all(match.end() <= start or match.start() >= end for start, end, _ in done)

    for pattern, render in ((_DAY_FIRST, _day), (_MONTH_FIRST, _day), (_MONTH_YEAR, _month_year),
                            (_CUED_MONTH, _cued_month), (_SEASON_YEAR, _season_year), (_YEAR, _year)):
        for match in pattern.finditer(text):
            if free(match):
                replaced = render(match, shift, today)
                if replaced is not None:
                    done.append((match.start(), match.end(), replaced))
    for start, end, replaced in sorted(done, reverse=True):
        text = text[:start] + replaced + text[end:]
    return text


def _moved(day: date, shift: timedelta) -> date:
    return (datetime(day.year, day.month, day.day, 12, tzinfo=UTC) + shift).date()


def _month_name(number: int, like: str) -> str:
    name = calendar.month_name[number]
    return name.lower() if like.islower() else name


def _day(match: re.Match[str], shift: timedelta, today: date) -> str | None:
    month, day = _MONTHS[match["month"].lower()], int(match["day"])
    try:
        if match["year"]:
            original = date(int(match["year"]), month, day)
        else:
            original = date(today.year, month, day)
            if original > today:
                original = date(today.year - 1, month, day)
    except ValueError:
        return None
    moved = _moved(original, shift)
    name = _month_name(moved.month, match["month"])
    year = f"{match['sep']}{moved.year}" if match["year"] else match["sep"]
    if match.re is _DAY_FIRST:
        return f"{moved.day}{match['of'] or ''} {name}{year}"
    return f"{name} {moved.day}{year}"


def _month_year(match: re.Match[str], shift: timedelta, today: date) -> str:
    moved = _moved(date(int(match["year"]), _MONTHS[match["month"].lower()], 15), shift)
    return f"{_month_name(moved.month, match['month'])}{match['sep']}{moved.year}"


def _cued_month(match: re.Match[str], shift: timedelta, today: date) -> str:
    month = _MONTHS[match["month"].lower()]
    year = today.year if month <= today.month else today.year - 1
    moved = _moved(date(year, month, 15), shift)
    return f"{match['cue']} {_month_name(moved.month, match['month'])}"


def _season_year(match: re.Match[str], shift: timedelta, today: date) -> str:
    start = _SEASONS[match["season"].lower()]
    middle = _moved(date(int(match["year"]), start, 15) + timedelta(days=30), shift)
    season = next(name for name, first in _SEASONS.items() if (middle.month - first) % 12 < 3)
    year = middle.year - (middle.month < 3 and season == "winter")
    return f"{season} {year}"


def _year(match: re.Match[str], shift: timedelta, today: date) -> str:
    return str(_moved(date(int(match["year"]), 7, 2), shift).year)
