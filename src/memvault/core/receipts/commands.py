"""What reading receipts takes, and the one parser of each."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime

from memvault.core.contract import Identifier, Spec, Text, WholeNumber
from memvault.core.errors import InvalidField

MAX_DAY_RECEIPTS = 500

RECEIPT_REQUEST = Spec("ReceiptRequest", (
    Identifier("id", "The receipt's id, as a routed call's response or a search's `receipt` named it.", required=True),
))
RECEIPTS_REQUEST = Spec("ReceiptsRequest", (
    Text("day", "The UTC day, YYYY-MM-DD (default: today).", max_chars=10),
    WholeNumber("limit", "At most this many receipts, newest first.", least=1, most=MAX_DAY_RECEIPTS, default=100),
))


@dataclass(frozen=True)
class ReceiptCommand:
    id: str


@dataclass(frozen=True)
class ReceiptsCommand:
    day: str
    limit: int


def day_of(moment: float) -> str:
    return datetime.fromtimestamp(moment, tz=UTC).date().isoformat()


def parse_receipt(data: object, now: float, text: bool = False) -> ReceiptCommand:
    return ReceiptCommand(**RECEIPT_REQUEST.values(data, text=text))


def parse_receipts(data: object, now: float, text: bool = False) -> ReceiptsCommand:
    values = RECEIPTS_REQUEST.values(data, text=text)
    day = values["day"]
    if day is None:
        return ReceiptsCommand(day_of(now), values["limit"])
    try:
        parsed = date.fromisoformat(day)
    except ValueError:
        parsed = None
    if parsed is None or parsed.isoformat() != day:
        raise InvalidField("day must be a date written YYYY-MM-DD")
    return ReceiptsCommand(day, values["limit"])
