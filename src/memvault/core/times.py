"""The one time parser of every surface: epoch seconds (0 included) or ISO 8601, a naive ISO
time being UTC. Anything that is not a finite moment between the years 1 and 9999 is refused,
naming the field."""

from __future__ import annotations

import math
from datetime import UTC, datetime

from memvault.core.errors import InvalidField

EARLIEST = datetime(1, 1, 1, tzinfo=UTC).timestamp()
# The first moment past year 9999: the last microsecond before it rounds to it as a float.
PAST_LATEST = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp() + 1


def parse_time(value: object, field: str) -> float | None:
    """``value`` as epoch seconds; None (or an empty string) when no time was given."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise InvalidField(f"{field} must be epoch seconds or an ISO 8601 time, not a boolean")
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        number = _from_text(value.strip(), field)
    else:
        raise InvalidField(f"{field} must be epoch seconds or an ISO 8601 time")
    if not math.isfinite(number):
        raise InvalidField(f"{field} must be a finite time")
    if not EARLIEST <= number < PAST_LATEST:
        raise InvalidField(f"{field} is outside the years 1 to 9999")
    return number


def require_time(value: object, field: str) -> float:
    """``value`` as epoch seconds, where a time must be given."""
    moment = parse_time(value, field)
    if moment is None:
        raise InvalidField(f"{field} is required")
    return moment


def _from_text(text: str, field: str) -> float:
    try:
        return float(text)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise InvalidField(f"{field} must be epoch seconds or an ISO 8601 time, got {text[:40]!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    stamp = moment.timestamp()
    # Year 9999's last microsecond rounds, as a float, to the first moment past it.
    return math.nextafter(stamp, 0.0) if stamp == PAST_LATEST else stamp
