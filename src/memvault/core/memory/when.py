"""Time phrases of a query resolved into periods: "on 3 June 2023", "in July", "summer 2021",
"the second week of November", "two weeks before August 11", "between May 1 and May 9",
"yesterday", "last week", "three days ago", "last Friday". Memory from the period a question
names then ranks above what merely shares its words (``Period.closeness``).

Dates are read in UTC, the zone every stored timestamp is kept in. A date written without its
year is its latest occurrence up to the moment of the search. Words for the present ("today",
"this week") name no period: what is asked about the present ("is he around this week?") was
often said before it, and recency already favours what was said lately. A period still to come
names none either."""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

DAY = 86400.0
# What is said about a period often comes a little after it ("last Friday I ..."), so a period
# counts in full until this long after its end, and fades with distance on both sides.
TOLD_AFTER = 3 * DAY
# A query is read for time phrases this far: a question names its time early, and a long text
# pasted as a query must not cost more than a short one.
READ_CHARS = 2000


@dataclass(frozen=True)
class Period:
    start: float
    end: float  # exclusive

    def closeness(self, timestamp: float) -> float:
        """1 within the period (and ``TOLD_AFTER`` past its end), halving with every half-period
        (a day at least) of distance outside it."""
        half_life = max(DAY, (self.end - self.start) / 2)
        if timestamp < self.start:
            return float(0.5 ** ((self.start - timestamp) / half_life))
        late = timestamp - self.end - TOLD_AFTER
        return 1.0 if late <= 0 else float(0.5 ** (late / half_life))


def query_periods(text: str, now: float) -> list[Period]:
    """The periods ``text`` names, resolved against ``now``; none for a text that names no time.
    Phrases are read most specific first, and the words a phrase used are not read again."""
    try:
        today = datetime.fromtimestamp(now, tz=UTC).date()
    except (ValueError, OverflowError, OSError):
        return []  # a moment past the calendar's ends (years 1 to 9999) has no dates around it
    rest = text[:READ_CHARS].lower().replace("\u2019", "'")
    found: list[Period] = []
    for pattern, resolve in _RULES:
        read: list[tuple[int, int]] = []
        for match in pattern.finditer(rest):
            try:
                period = resolve(match, today)
            except (ValueError, OverflowError):
                period = None  # a day the calendar does not have, or past its ends
            if period is None:
                continue
            read.append(match.span())
            if period.start <= now:
                found.append(period)
        for start, end in reversed(read):
            rest = rest[:start] + " " * (end - start) + rest[end:]
    return found


def closeness(periods: list[Period], timestamp: float) -> float:
    """How near ``timestamp`` lies to the nearest of ``periods`` (0 when there are none)."""
    return max((period.closeness(timestamp) for period in periods), default=0.0)


_MONTHS = {name: number for number in range(1, 13)
           for name in (calendar.month_name[number].lower(), calendar.month_abbr[number].lower())}
_MONTHS["sept"] = 9
_WEEKDAYS = {calendar.day_name[number].lower(): number for number in range(7)}
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "couple of": 2, "a few": 3, "few": 3}
_UNIT_DAYS = {"day": 1.0, "week": 7.0, "weekend": 7.0, "month": 30.44, "year": 365.25}
_SEASON_MONTH = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}

_MONTH = "(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_WEEKDAY = "(?:" + "|".join(_WEEKDAYS) + ")"
_COUNT = "(?:" + "|".join(sorted(_NUMBERS, key=len, reverse=True)) + r"|\d{1,3})"
_NTH = r"\d{1,2}(?:st|nd|rd|th)?"
_YEAR = r"(?:1[89]|2\d)\d\d"


def _date(tag: str = "") -> str:
    """A date, its groups suffixed by ``tag``: "3 june 2023", "8th of december, 2023",
    "october 13, 2023", "december 1,2023", "june 3"."""
    return (rf"(?:(?P<d{tag}>{_NTH})\s+(?:of\s+)?(?P<m{tag}>{_MONTH})|(?P<n{tag}>{_MONTH})\s+(?P<e{tag}>{_NTH}))"
            rf"(?![\w:])(?:,?\s*(?P<y{tag}>{_YEAR})\b)?")


def _epoch(day: date) -> float:
    return datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()


def _days(first: date, last: date) -> Period:
    return Period(_epoch(first), _epoch(last + timedelta(days=1)))


def _month_number(name: str) -> int:
    return _MONTHS[name.rstrip(".")]


def _last_day(first: date) -> date:
    return first.replace(day=calendar.monthrange(first.year, first.month)[1])


def _latest(month: int, day: int, year: str | None, today: date) -> date | None:
    """The date, or without a year its latest occurrence up to today (29 February: within four
    years); None for a day the month does not have."""
    for candidate_year in [int(year)] if year else range(today.year, today.year - 5, -1):
        try:
            found = date(candidate_year, month, day)
        except ValueError:
            continue
        if year or found <= today:
            return found
    return None


def _first_of_month(month: int, year: str | None, today: date) -> date:
    if year:
        return date(int(year), month, 1)
    return date(today.year if month <= today.month else today.year - 1, month, 1)


def _date_of(match: re.Match[str], today: date, tag: str = "", year: str | None = None) -> date | None:
    month = match[f"m{tag}"] or match[f"n{tag}"]
    day = int(re.sub(r"\D", "", match[f"d{tag}"] or match[f"e{tag}"]))
    return _latest(_month_number(month), day, match[f"y{tag}"] or year, today)


def _on_date(match: re.Match[str], today: date) -> Period | None:
    day = _date_of(match, today)
    return None if day is None else _days(day, day)


def _iso_date(match: re.Match[str], today: date) -> Period:
    day = date(int(match["iy"]), int(match["im"]), int(match["id"]))  # 2023-02-30 raises: no period
    return _days(day, day)


def _between(match: re.Match[str], today: date) -> Period | None:
    first = _date_of(match, today, "", match["yb"])
    last = _date_of(match, today, "b", match["y"])
    if first is None or last is None:
        return None
    return _days(min(first, last), max(first, last))


def _around_date(match: re.Match[str], today: date) -> Period | None:
    """"two weeks before august 11", "the week before 16 november 2023", "the sunday before …"."""
    anchor = _date_of(match, today)
    if anchor is None:
        return None
    sign = -1 if match["dir"] == "before" else 1
    if match["weekday"]:
        day = anchor + timedelta(days=sign)
        while day.weekday() != _WEEKDAYS[match["weekday"]]:
            day += timedelta(days=sign)
        return _days(day, day)
    count = match["count"]
    length = timedelta(days=_UNIT_DAYS[match["unit"].rstrip("s")] * (_NUMBERS.get(count or "a") or int(count or 1)))
    if count:  # around the point that far from the date
        point = anchor + sign * length
        return _days(point - timedelta(days=3), point + timedelta(days=3))
    return _days(min(anchor, anchor + sign * length), max(anchor, anchor + sign * length))


# Days of a month each part names: (first, last); 0 is the month's last day, a negative first
# counts back from it.
_PARTS = {"first week": (1, 7), "second week": (8, 14), "third week": (15, 21), "fourth week": (22, 28),
          "last week": (-6, 0), "first half": (1, 15), "second half": (16, 0), "beginning": (1, 10),
          "start": (1, 10), "early": (1, 10), "middle": (10, 20), "mid": (10, 20), "end": (-9, 0), "late": (21, 0)}


def _part_of_month(match: re.Match[str], today: date) -> Period:
    first = _first_of_month(_month_number(match["pm"]), match["py"], today)
    last = _last_day(first).day
    low, high = _PARTS[" ".join(match["part"].split())]
    return _days(first.replace(day=low if low > 0 else last + low), first.replace(day=high or last))


def _month(match: re.Match[str], today: date) -> Period:
    first = _first_of_month(_month_number(match["mm"]), match["my"], today)
    return _days(first, _last_day(first))


def _season(match: re.Match[str], today: date) -> Period | None:
    """A season of the northern hemisphere, three months from its first: with its year, or the
    latest one begun by today ("last summer" while it is summer: the one before)."""
    if not (match["which"] or match["sy"]):
        return None  # "spring" and "fall" are also plain words
    start_month = _SEASON_MONTH[match["season"]]
    if match["sy"]:
        year = int(match["sy"])
    else:
        year = today.year if today >= date(today.year, start_month, 1) else today.year - 1
        if match["which"] == "last" and today <= _season_last_day(year, start_month):
            year -= 1
    return _days(date(year, start_month, 1), _season_last_day(year, start_month))


def _season_last_day(year: int, start_month: int) -> date:
    end_month = (start_month + 1) % 12 + 1
    return _last_day(date(year + (end_month < start_month), end_month, 1))


def _year(match: re.Match[str], today: date) -> Period:
    year = int(match["year"])
    return _days(date(year, 1, 1), date(year, 12, 31))


def _ago(match: re.Match[str], today: date) -> Period:
    count = match["count"]
    days = _UNIT_DAYS[match["unit"].rstrip("s")] * (_NUMBERS.get(count) or int(count))
    point = today - timedelta(days=days)
    spread = timedelta(days=max(1.0, days / 4))
    return _days(point - spread, point + spread)


def _named_day(match: re.Match[str], today: date) -> Period | None:
    if match["weekday"] is None:
        return _days(today - timedelta(days=1), today - timedelta(days=1)) if match["word"] else None
    back = (today.weekday() - _WEEKDAYS[match["weekday"]]) % 7
    if back == 0 and match["which"] == "last":
        back = 7
    day = today - timedelta(days=back)
    return _days(day, day)


def _last_week_month_or_year(match: re.Match[str], today: date) -> Period:
    unit = match["unit"]
    if unit in ("week", "weekend"):
        monday = today - timedelta(days=today.weekday() + 7)
        return _days(monday + timedelta(days=5 if unit == "weekend" else 0), monday + timedelta(days=6))
    if unit == "month":
        first = (today.replace(day=1) - timedelta(days=1)).replace(day=1)
        return _days(first, _last_day(first))
    return _days(date(today.year - 1, 1, 1), date(today.year - 1, 12, 31))


Resolver = Callable[[re.Match[str], date], "Period | None"]
_RULES: tuple[tuple[re.Pattern[str], Resolver], ...] = tuple(
    (re.compile(pattern), resolve)
    for pattern, resolve in (
        (rf"\bbetween\s+{_date()}\s+and\s+{_date('b')}", _between),
        (rf"\b(?:(?:the|a|an|last)\s+)?(?:(?P<count>{_COUNT})\s+)?(?:(?P<unit>days?|weeks?|weekends?|months?)|"
         rf"(?P<weekday>{_WEEKDAY}))\s+(?P<dir>before|after)\s+{_date()}", _around_date),
        (rf"\b(?:the\s+)?(?P<part>(?:first|second|third|fourth|last)\s+week|first half|second half|beginning|start|"
         rf"middle|end)\s+of\s+(?P<pm>{_MONTH})(?:,?\s+(?P<py>{_YEAR}))?\b", _part_of_month),
        (rf"\b(?P<part>early|mid|late)[\s-]+(?P<pm>{_MONTH})(?:,?\s+(?P<py>{_YEAR}))?\b", _part_of_month),
        (rf"\b(?P<iy>{_YEAR})-(?P<im>\d\d)-(?P<id>\d\d)\b", _iso_date),
        (rf"\b{_date()}", _on_date),
        (rf"\b(?P<mm>{_MONTH}),?\s+(?P<my>{_YEAR})\b", _month),
        (rf"\b(?:in|during|since|of|last|this|through|until|by|from)\s+(?P<mm>{_MONTH})(?P<my>)(?!\w)", _month),
        (rf"\b(?:(?P<which>last|this|in|during|past)\s+(?:the\s+)?)?(?P<season>spring|summer|autumn|fall|winter)"
         rf"(?:\s+(?:of\s+)?(?P<sy>{_YEAR}))?\b", _season),
        (rf"\b(?P<count>{_COUNT})\s+(?P<unit>days?|weeks?|months?|years?)\s+ago\b", _ago),
        (rf"\b(?:(?P<word>yesterday|last night)|(?:(?P<which>last|on|this)\s+)(?P<weekday>{_WEEKDAY}))\b", _named_day),
        (r"\b(?:last|past|previous)\s+(?P<unit>week|weekend|month|year)\b", _last_week_month_or_year),
        (rf"\b(?P<year>{_YEAR})\b", _year),
    )
)
