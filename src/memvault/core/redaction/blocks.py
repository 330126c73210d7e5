"""Private keys in every common format: PEM blocks of any type (``-----BEGIN … PRIVATE KEY-----``,
PGP's ``PRIVATE KEY BLOCK``, SSH2's four-dash frame, a framed seed or static key; a pasted block cut short too), the raw
OpenSSH key body, a private key's DER in base64 without its frame (a PKCS#12 bundle's too), PuTTY's
``Private-Lines``, a Kerberos keytab in base64, age identities, kubeconfig ``client-key-data``, the private members of a JWK and
of .NET's XML key, a Tor onion service's key, a key pair as a list of 64 bytes, wallet keys (WIF and
extended ``xprv`` keys, checked by their base58check checksum; hex keys that a wallet or signer is
made from), BIP-39 seed phrases, and a seed phrase of another word list (Electrum's, Monero's)
given under its label. Certificates and public keys are kept."""

from __future__ import annotations

import bisect
import hashlib
import re
from collections.abc import Iterator

from memvault.core.redaction.bip39 import BIP39_WORDS
from memvault.core.redaction.spans import Hit
from memvault.core.redaction.values import PROSE_WORDS

PRIVATE_KEY = "private_key"
SEED_PHRASE = "seed_phrase"

# Besides a private key, a frame may hold a seed a key is made from (NATS' ``USER NKEY SEED``) or a
# shared secret key (OpenVPN's ``Static key V1``): what the frame names is no public half.
_FRAMED = r"(?P<label>[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?|[A-Z0-9 ]*SEED|(?i:[a-z0-9]+ static key v\d|[a-z0-9 ]*secret key))"
_BEGIN = re.compile(r"-{4,5} ?BEGIN " + _FRAMED + r" ?-{4,5}")
_END = re.compile(r"-{4,5} ?END " + _FRAMED + r" ?-{4,5}")
# What follows a BEGIN line when no END does (a paste cut short): header lines and base64 runs,
# across line breaks and JSON's escaped ones.
_BODY = re.compile(r"(?:(?:\s|\\[nr])*(?:[A-Za-z0-9+/=]{16,}|(?:Proc-Type|DEK-Info|Comment|Version|Hash):[^\n\\]*))+")
# The same read backwards from an END, on the reversed text before it: a line break (or JSON's
# escaped one, reversed ``n\``), then one base64 line.
_REVERSED_BODY_LINE = re.compile(r"(?:[ \t\r\n]|[nr]\\){0,8}(?P<line>[A-Za-z0-9+/=]{16,1024}?)(?=[nr]\\|[^A-Za-z0-9+/=]|\Z)")
_BODY_RUN = re.compile(r"[A-Za-z0-9+/=]{16}")
_BODY_LINE_REACH = 1024 + 16
_MOST_BODY_LINES = 256
_SHAPES = re.compile(
    r"(?P<putty>Private-Lines:[ \t]*\d+[ \t]*\r?\n(?:(?!Private-MAC)[A-Za-z0-9+/=]+[ \t]*\r?\n?)+(?:Private-MAC:[ \t]*[0-9a-fA-F]+)?)"
    r"|(?<![A-Za-z0-9])(?P<age>AGE-SECRET-KEY-1[0-9A-Z]{50,})"
    # A Tor onion service's key as its control port takes and prints it (``ADD_ONION ED25519-V3:…``).
    r"|(?<![A-Za-z0-9])(?:ED25519-V3|RSA1024):(?P<onion>[A-Za-z0-9+/]{80,}={0,2})"
    # The private members of .NET's XML key (``<RSAKeyValue>…<D>…</D>``).
    r"|<(?:D|P|Q|DP|DQ|InverseQ)>(?P<xml>[A-Za-z0-9+/]{20,}={0,2})</"
    r"|(?i:client-key-data|private-key-data)[\"']?[ \t]*:[ \t]*[\"']?(?P<kube>[A-Za-z0-9+/=]{16,})"
    r"|\\?\"(?:d|p|q|dp|dq|qi|k)\\?\"[ \t]*:[ \t]*\\?\"(?P<jwk>[" r"A-Za-z0-9_-]{20,})\\?\""
    r"|(?<![A-Za-z0-9+/])(?P<openssh>b3BlbnNzaC1rZXktdjE[A-Za-z0-9+/=]{20,})"
    # A Kerberos keytab in base64: its version bytes 5, 2 and the first entry's length open it.
    r"|(?<![A-Za-z0-9+/])(?P<keytab>BQIAAA[A-Za-z0-9+/]{60,}={0,2})"
    r"|(?<![A-Za-z0-9])(?P<xprv>[xyzt]prv[1-9A-HJ-NP-Za-km-z]{100,112})(?![A-Za-z0-9])"
    r"|(?<![A-Za-z0-9])(?P<wif>[59c][1-9A-HJ-NP-Za-km-z]{50}|[KLc][1-9A-HJ-NP-Za-km-z]{51})(?![A-Za-z0-9])"
)
# A key's DER in base64 without its PEM frame (an APNs ``.p8`` pasted as one line): a private key
# opens with a sequence whose first member is the version 0 (PKCS#8, PKCS#1), 1 (SEC1's EC key) or
# 3 (a PKCS#12 ``.pfx``/``.p12`` bundle, which holds its key); a public key or a certificate opens
# with another sequence instead.
_DER_KEY = re.compile(r"(?<![A-Za-z0-9+/])(?:MIG[A-Za-z0-9+/]AgEA|MII[A-Za-z0-9+/]{3}IBA[A-Dz]|MHcCAQEE)[A-Za-z0-9+/]{40,}={0,2}")
# An Ed25519 key pair as 64 byte values in a list (Solana's CLI keypair file, ``[u8; 64]``): its
# first 32 bytes are the private seed. A list of that many numbers, each at most 255, is no prose.
_BYTE_LIST = re.compile(r"\[[ \t]*(?P<bytes>(?:\d{1,3}[ \t]*,[ \t]*){63}\d{1,3})[ \t]*\]")
_KEY_PAIR_BYTES = 64
# An Ethereum-style private key is 32 bytes of hex, the same shape as a transaction or block hash:
# only the words just before it (a wallet or signer made from it, not a hash) tell them apart.
_HEX_KEY = re.compile(r"(?<![0-9A-Za-z])0x(?P<hex>[0-9a-fA-F]{64})(?![0-9A-Za-z])")
# A wallet app's name says the same as the word wallet ("metamask export: 0x…").
_WALLET_WORDS = re.compile(r"(?i)wallet|signer|private|priv|secret|mnemonic|metamask|phantom|rabby|exodus|trust ?wallet")
_HASH_WORDS = re.compile(r"(?i)(?<![a-z])(?:tx|txn|transaction|hash|block|commit|digest|receipt|event|topic)")
_HEX_KEY_CONTEXT = 40
_BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
# Seed words as people write them down: any case, and between them spaces, commas, dashes, bars,
# a JSON list's quotes or line breaks, each maybe numbered.
_SEED_RUN = re.compile(r"(?<![A-Za-z])(?:[A-Za-z]{3,8}(?:[ \t,;|/\"'-]+|[ \t\"',]*\r?\n[ \t\"']*)"
                       r"(?:(?:\d{1,2}[.):]|#\d{1,2}|[IVXL]{1,5}[.)])[ \t]*)?){11,}"
                       r"[A-Za-z]{3,8}(?![A-Za-z])")
_WORD = re.compile(r"[A-Za-z]+")
_ROMAN = re.compile(r"[IVXL]{1,5}")
SEED_WORDS = 12
_PROSE_LIST = re.compile(r"[A-Za-z]+(?:,[ \t]*[A-Za-z]+)+")
_SEED_CONTEXT = re.compile(r"(?i)seed|mnemonic|phrase|recovery|wallet|words|backup|secret|ledger|trezor|metamask"
                           r"|semilla|semente|frase|graine|palabras|palavras|mots|w[öo]rter|wiederherstellung|herstel")
_SEED_CONTEXT_REACH = 80
# Another wallet's seed phrase (Electrum's own words, Monero's) is told by the label just before
# it, and by being words and not a sentence: twelve or more in lower case, at most two of them words
# prose is made of ("again", "also"), where a sentence of as many holds several.
_SEED_LABEL = re.compile(r"(?i)(?<![a-z])(?:(?:seed|mnemonic)(?:[ \t]+(?:phrase|words))?|(?:recovery|backup|secret|wallet)[ \t]+(?:phrase|words))"
                         r"(?![a-z])")
# Between the label and the words: a remark after a comma or in brackets ("seed words, in order:"),
# then a colon, "=" or "is", and the first word's number.
_SEED_LABEL_END = re.compile(r"(?:[ \t]*[,(][^:=\n]{0,24})?[ \t]*(?:[:=]|is|are|was|were)?[ \t\"'`]*(?:\r?\n[ \t]*)?(?:\d{1,2}[.):][ \t]*)?")
_SEED_LABEL_REACH = 40
_MOST_PROSE_IN_SEED = 2


def base58check(text: str) -> bool:
    """Whether ``text`` is base58 whose last four bytes are the double SHA-256 of the rest."""
    number = 0
    for char in text:
        number = number * 58 + _BASE58.index(char)
    raw = number.to_bytes((number.bit_length() + 7) // 8, "big")
    raw = b"\0" * (len(text) - len(text.lstrip("1"))) + raw
    body, check = raw[:-4], raw[-4:]
    return len(raw) > 4 and hashlib.sha256(hashlib.sha256(body).digest()).digest()[:4] == check


def pem_blocks(text: str) -> Iterator[Hit]:
    """From BEGIN to its END, or to where the key's characters stop when the paste was cut short;
    and from an END that no BEGIN opens back to where the key's characters start (the block's
    start cut off, as when stored text was split into passages)."""
    if "BEGIN " not in text and "END " not in text:
        return
    begins = list(_BEGIN.finditer(text))
    ends = list(_END.finditer(text))
    starts = [end.start() for end in ends]
    closed = set()
    for number, begin in enumerate(begins):
        following = begins[number + 1].start() if number + 1 < len(begins) else len(text)
        index = bisect.bisect_left(starts, begin.end())
        if index < len(ends) and ends[index].start() < following:
            closed.add(index)
            # A frame around "…" or a placeholder shows where a key goes; a key has a body.
            if _BODY_RUN.search(text, begin.end(), ends[index].start()):
                yield Hit(begin.start(), ends[index].end(), PRIVATE_KEY)
            continue
        body = _BODY.match(text, begin.end())
        yield Hit(begin.start(), body.end() if body else begin.end(), PRIVATE_KEY)
    for index, end in enumerate(ends):
        if index not in closed:
            start = _body_start(text, end.start())
            if start < end.start():
                yield Hit(start, end.end(), PRIVATE_KEY)


def _body_start(text: str, end: int) -> int:
    """Where the run of base64 lines that ends at ``end`` begins (``end`` when there is none)."""
    start = end
    for _ in range(_MOST_BODY_LINES):
        line = _REVERSED_BODY_LINE.match(text[max(0, start - _BODY_LINE_REACH):start][::-1])
        if line is None:
            break
        start -= line.end("line")
    return start


def key_shapes(text: str) -> Iterator[Hit]:
    for match in _SHAPES.finditer(text):
        group = next(name for name, value in match.groupdict().items() if value is not None)
        value = match.group(group)
        if group == "wif" and not base58check(value):
            continue
        if group == "xprv" and not base58check(value):
            continue
        yield Hit(match.start(group), match.end(group), PRIVATE_KEY)
    if "MI" in text or "MHcC" in text:
        for match in _DER_KEY.finditer(text):
            yield Hit(match.start(), match.end(), PRIVATE_KEY)
    if "," in text and "[" in text:
        for match in _BYTE_LIST.finditer(text):
            values = [int(value) for value in match.group("bytes").split(",")]
            if len(values) == _KEY_PAIR_BYTES and max(values) <= 255:
                yield Hit(match.start("bytes"), match.end("bytes"), PRIVATE_KEY)


def hex_wallet_keys(text: str) -> Iterator[Hit]:
    for match in _HEX_KEY.finditer(text):
        before = text[max(0, match.start() - _HEX_KEY_CONTEXT):match.start()]
        if _WALLET_WORDS.search(before) and not _HASH_WORDS.search(before):
            yield Hit(match.start("hex"), match.end("hex"), PRIVATE_KEY)


def seed_phrases(text: str) -> Iterator[Hit]:
    """Twelve or more BIP-39 words in a row (numbered or not): a wallet's seed phrase; or twelve
    or more words of another list right after a seed's label."""
    for run in _SEED_RUN.finditer(text):
        # A list numbered in Roman numerals ("IV. index") has its numbers among the words.
        words = [word for word in _WORD.finditer(run.group(0))
                 if not (_ROMAN.fullmatch(word.group(0)) and run.group(0)[word.end():word.end() + 1] in ".)")]
        first = count = 0
        found = False
        for index, word in enumerate(words):
            if word.group(0).lower() in BIP39_WORDS:
                if count == 0:
                    first = index
                count += 1
                continue
            if count >= SEED_WORDS:
                found = True
                yield from _seed(run, words, first, index - 1)
            count = 0
        if count >= SEED_WORDS:
            found = True
            yield from _seed(run, words, first, len(words) - 1)
        if not found:
            yield from _labelled_seed(run, words)


def _labelled_seed(run: re.Match[str], words: list[re.Match[str]]) -> Iterator[Hit]:
    text = run.string
    label = _SEED_LABEL.search(text, max(0, run.start() - _SEED_LABEL_REACH), run.end())
    if label is None:
        return
    # The label's own words, and "is" or "are" after it, may begin the run.
    kept = [word for word in words if run.start() + word.start() >= label.end()]
    while kept and kept[0].group(0).lower() in ("is", "are", "was", "were"):
        kept.pop(0)
    if not kept or _SEED_LABEL_END.fullmatch(text, label.end(), run.start() + kept[0].start()) is None:
        return
    if len(kept) < SEED_WORDS or not all(word.group(0)[1:].islower() and word.group(0)[0].isalpha() for word in kept) \
            or any(word.group(0)[0].isupper() for word in kept[1:]):
        return
    if sum(word.group(0).lower() in PROSE_WORDS for word in kept) > _MOST_PROSE_IN_SEED:
        return
    yield Hit(run.start() + kept[0].start(), run.start() + kept[-1].end(), SEED_PHRASE)


def _seed(run: re.Match[str], words: list[re.Match[str]], first: int, last: int) -> Iterator[Hit]:
    start, end = run.start() + words[first].start(), run.start() + words[last].end()
    text = run.string
    # Words listed as prose lists them ("apple, banana, butter, …") are a list of things unless
    # a word before says a wallet's words follow.
    if _PROSE_LIST.fullmatch(text, start, end) and not _SEED_CONTEXT.search(text, max(0, start - _SEED_CONTEXT_REACH), start):
        return
    yield Hit(start, end, SEED_PHRASE)
