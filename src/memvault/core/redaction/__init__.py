"""The secret gate every stored or logged text passes. A secret is replaced by a breadcrumb naming
its kind, never its value (``[redacted:password]``, ``[redacted:card_number ending 1111]``);
identifiers that hold one are refused instead, since a redacted identifier would silently name
something else.

What counts as a secret, each family in its own module: payment cards and SSNs (``numbers``);
other countries' identity numbers under their names (``national_ids``);
vendors' key and token shapes (``vendors``); values under a credential label in any
configuration or prose form (``labels``); what a header, a command line, ``.netrc`` or ``.pgpass``
puts in a credential's place (``positions``); URL userinfo and random runs beside a credential word
(``urls``); private keys of every common format and wallet seeds (``blocks``); authenticator
setup keys, recovery and one-time codes (``codes``); answers to security questions (``questions``);
values set apart from their label (``layouts``); base64
that the text decodes (``wrapped``); a secret in a disguise the text gives away, ROT13, backwards or
in HTML's character references (``disguised``); values no label names, known by their shape, by the question
they answer or by a label written wrong (``unlabelled``). What does not —
placeholders, masks, references, code, prose, vendors' documented example keys and ciphertext under
a mapping named encrypted — is decided in ``values``. Rules read the text normalised (``spans``: NFKC, format characters dropped, Unicode
spaces and dashes made plain), and what they find is cut from the text as it was sent. What they
found leads to two more things here: a key's rest on the line after it, and a password put right
after it in the same breath.

Every rule is linear in the text: variable runs are anchored where they start and bounded, and a
rule that looks around a word looks within a fixed distance."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import chain

from memvault.core.errors import InvalidInput
from memvault.core.redaction.blocks import (
    PRIVATE_KEY,
    SEED_PHRASE,
    hex_wallet_keys,
    key_shapes,
    pem_blocks,
    seed_phrases,
)
from memvault.core.redaction.codes import one_time_codes
from memvault.core.redaction.disguised import disguised
from memvault.core.redaction.labels import PASSWORD, TOKEN, assignments, elements, kind_of, value_is_secret
from memvault.core.redaction.layouts import (
    csv_columns,
    inserted_values,
    label_lines,
    login_pairs,
    next_line_values,
    printed_values,
    reversed_assignments,
    set_to,
    table_cells,
    told_values,
)
from memvault.core.redaction.national_ids import NATIONAL_ID, national_ids
from memvault.core.redaction.numbers import CARD_NUMBER, SSN, cards, luhn_valid, ssns
from memvault.core.redaction.positions import command_lines, cookies, credential_files, headers, password_arguments
from memvault.core.redaction.questions import security_answers
from memvault.core.redaction.spans import Hit, merged, normalise
from memvault.core.redaction.unlabelled import answers, answers_to, misspelt_labels, rule_shaped, spaced_groups
from memvault.core.redaction.urls import near_credential_words, userinfo
from memvault.core.redaction.values import CIPHERTEXT, classes, encrypted_mappings, generated, random_token
from memvault.core.redaction.vendors import API_KEY, vendor_tokens
from memvault.core.redaction.wrapped import base64_wrapped

__all__ = [
    "API_KEY", "CARD_NUMBER", "NATIONAL_ID", "PASSWORD", "PRIVATE_KEY", "SEED_PHRASE", "SSN", "TOKEN", "Redaction", "breadcrumb",
    "hits_in", "luhn_valid", "redact", "redact_field", "refuse_secret",
]

RULES: tuple[Callable[[str], Iterable[Hit]], ...] = (
    pem_blocks, key_shapes, hex_wallet_keys, seed_phrases, vendor_tokens, userinfo, headers, command_lines,
    password_arguments, cookies, credential_files, assignments, reversed_assignments, next_line_values, label_lines,
    login_pairs,
    one_time_codes, elements, near_credential_words, ssns, national_ids, cards, base64_wrapped, table_cells, security_answers,
    csv_columns, inserted_values, set_to, printed_values, told_values, rule_shaped, answers, misspelt_labels,
    spaced_groups, disguised,
)


_BREADCRUMB = re.compile(r"\[redacted:[a-z_]+(?: ending \d{4})?\]")


@dataclass(frozen=True)
class Redaction:
    text: str
    kinds: tuple[str, ...]

    @property
    def redacted(self) -> bool:
        return bool(self.kinds)


def breadcrumb(kind: str) -> str:
    return f"[redacted:{kind}]"


def holds_breadcrumb(text: str) -> bool:
    """Whether ``text`` went through the gate with something taken out of it."""
    return "[redacted:" in text and _BREADCRUMB.search(text) is not None


def redact(text: str, asked: str | None = None) -> Redaction:
    """``text`` through the gate; with ``asked``, the message said before it, as its reply too: the
    digits given alone in reply to a message whose last line asks for a PIN or a code ("What's the
    alarm code?", then "7305") are found, as on the lines after that question within one text."""
    hits = hits_in(text, asked)
    if not hits:
        return Redaction(text, ())
    pieces: list[str] = []
    done = 0
    for hit in hits:
        pieces += [text[done:hit.start], hit.replacement or breadcrumb(hit.kind)]
        done = hit.end
    pieces.append(text[done:])
    return Redaction("".join(pieces), tuple(sorted({hit.kind for hit in hits})))


def hits_in(text: str, asked: str | None = None) -> list[Hit]:
    """The secrets ``redact`` cuts from ``text``, where they stand in it, in order and apart."""
    normal = normalise(text)
    # A breadcrumb already in the text reads as a mask, so redacting twice changes nothing.
    scanned = _BREADCRUMB.sub(lambda crumb: "*" * len(crumb.group(0)), normal.text)
    ciphertext = encrypted_mappings(scanned)
    found = chain((hit for rule in RULES for hit in rule(scanned)), () if asked is None else answers_to(scanned, asked))
    hits = merged(hit for hit in found
                  if not (any(start <= hit.start and hit.end <= end for start, end in ciphertext)
                          and CIPHERTEXT.fullmatch(scanned, hit.start, hit.end)))
    hits = merged([*hits, *_continued(scanned, hits), *_corrected(scanned, hits), *_joined_on(scanned, hits)])
    return [Hit(*normal.original(hit.start, hit.end), hit.kind, hit.replacement) for hit in hits]


# The rest of a key or token cut over two lines: the next line is a random run alone, or one that
# says it is the rest ("and the rest: …", "part 2: …").
_REST_OF_KEY = re.compile(
    r"[ \t]*\r?\n[ \t]*(?:[-*\u2022][ \t]+)?(?:(?i:(?:and[ \t]+)?(?:the[ \t]+)?(?:rest|remainder|second[ \t]+(?:half|part)|part[ \t]+(?:2|two|ii)"
    r"|continued|cont'?d))[ \t]*[:=-]?[ \t]*)?(?P<rest>[A-Za-z0-9_+/.-]{12,512}={0,2})[ \t]*(?=\r?\n|\Z)"
)


# A password told and then put right ("… is zebra9320 no wait, it's orbitMatcha88").
_CORRECTED = re.compile(
    r"[ \t,.;-]*(?:(?i:(?:no|oh)[ \t,]+wait|wait[ \t,]+no|sorry|i[ \t]+mean|actually|correction|oops|scratch[ \t]+that)"
    r"[ \t,.!:;-]*){1,2}(?:(?i:it's|its|it[ \t]+is|it[ \t]+was|make[ \t]+that)[ \t]+)?"
    r"(?P<value>[^\s\"'`,;]{4,64}?)(?=[.!?]?(?:[\s\"'`,;]|\Z))"
)


# A string literal joined to the one before it by code's ``+`` or PHP's ``.`` (``'Gq7#' . 'mLz2'``).
_JOINED_LITERAL = re.compile(r"[\"'][ \t]*[+.][ \t]*(?:\\?\r?\n[ \t]*)?(?P<quote>[\"'])(?P<content>[^\"'\n]{1,200})(?P=quote)")
_MOST_JOINED = 16


def _joined_on(text: str, hits: list[Hit]) -> Iterator[Hit]:
    """A secret that is a whole string literal takes the literals code joins to it: the value was
    cut into pieces (``$db_pass = 'Gq7#' . 'mLz2' . 'Xv9!';``)."""
    for hit in hits:
        if hit.start > 0 and hit.end < len(text) and text[hit.start - 1] in "\"'" and text[hit.end] == text[hit.start - 1]:
            at = hit.end
            for _ in range(_MOST_JOINED):
                joined = _JOINED_LITERAL.match(text, at)
                if joined is None:
                    break
                yield Hit(joined.start("content"), joined.end("content"), hit.kind)
                at = joined.end("content")


def _corrected(text: str, hits: list[Hit]) -> Iterator[Hit]:
    for hit in hits:
        if hit.kind == PASSWORD and (correction := _CORRECTED.match(text, hit.end)) is not None:
            value = correction.group("value")
            if value_is_secret(PASSWORD, value, sentence=True) and generated(value, 6):
                yield Hit(correction.start("value"), correction.end("value"), PASSWORD)


def _continued(text: str, hits: list[Hit]) -> Iterator[Hit]:
    for hit in hits:
        if hit.kind in (API_KEY, TOKEN) and (rest := _REST_OF_KEY.match(text, hit.end)) is not None:
            run = rest.group("rest")
            if random_token(run) or (classes(run) >= 3 and generated(run, 12)):
                yield Hit(rest.start("rest"), rest.end("rest"), hit.kind)


def redact_field(name: str, value: str) -> Redaction:
    """A value kept under a field's ``name`` (a metadata key, an environment variable): all of it
    goes when the name says it is a credential and it is not a placeholder; otherwise the gate
    looks for secrets inside it as in any text."""
    if value_is_secret(name, value.strip()):
        kind = kind_of(name)
        return Redaction(breadcrumb(kind), (kind,))
    return redact(value)


def refuse_secret(name: str, value: str, refusal: type[InvalidInput] = InvalidInput) -> None:
    """Identifiers (sources, skill slugs, scopes, message and session ids) pass the same gate as
    text but are refused, never redacted: a redacted identifier would silently name something else.
    ``refusal`` is the error raised (a field of a command is refused as ``InvalidField``)."""
    kinds = redact(value).kinds
    if kinds:
        raise refusal(f"{name} looks like it contains a secret ({', '.join(kinds)}); {name}s are identifiers")
