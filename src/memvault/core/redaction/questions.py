"""Answers to an account's security questions: what a bank or a mail provider asks to let someone
in without their password, so as much a secret as the password. An answer counts when the text
ties it to a security question: after an ``answer`` label or "security answer", or, when it is a
name, a place or a number, after what such a question asks ("my mother's maiden name is …", "first
pet: …") within a short reach after the words "security question", or on the "A:" line after a
"Q:" line asking it, the form a security question is written down in. The same facts told without that context are a memory's ordinary
content and are kept, but for a mother's maiden name: so many banks ask it that it is an answer
wherever it is told."""

from __future__ import annotations

import re
from collections.abc import Iterator

from memvault.core.redaction.spans import Hit
from memvault.core.redaction.values import PROSE_WORDS, placeholder

SECURITY_ANSWER = "security_answer"

_QUESTION = re.compile(
    r"(?i)(?<![a-z])(?:(?:security|secret|challenge|verification)[ \t]+(?P<what>questions?|answers?)"
    # The same in other languages; what follows is read as after the English ("Antwort: Flocke").
    r"|(?P<abroad>questions?[ \t]+(?:secr[èe]tes?|de[ \t]+s[ée]curit[ée])|sicherheitsfragen?|preguntas?[ \t]+(?:de[ \t]+seguridad|secretas?)"
    r"|domand[ae][ \t]+(?:di[ \t]+sicurezza|segret[ae])|perguntas?[ \t]+(?:de[ \t]+seguran[çc]a|secretas?)"
    r"|beveiligingsvra(?:ag|gen)|pytani[ea][ \t]+bezpiecze[ńn]stwa))(?![a-z])"
)
_REACH = 160
# What the questions ask, then "is", "was" or a colon, then the answer up to the end of its clause.
_ASKED = (r"answer|r[ée]ponse|antwort|respuesta|risposta|resposta|antwoord|odpowied[źz]|maiden[ \t]+name|first[ \t]+(?:pet|car|school|teacher|job|boss|street|concert)|pet'?s?[ \t]+name"
          r"|(?:city|town|place)[ \t]+(?:of[ \t]+birth|(?:where[ \t]+|in[ \t]+which[ \t]+)?(?:you|I)[ \t]+(?:were|was)[ \t]+born)"
          r"|born[ \t]+in"
          r"|favou?rite[ \t]+[a-z]{2,12}|(?:childhood|best)[ \t]+friend|street[ \t]+(?:you|I)[ \t]+grew[ \t]+up[ \t]+on")
_ANSWER = re.compile(
    r"(?i:(?<![a-z])(?:" + _ASKED + r"))(?:[^\n.:?=]{0,40}?)(?:[ \t]+(?:is|was|=)[ \t]+|[ \t]*[:=][ \t]*"
    # Or the answer said after the question, a dash, or both ("first pet? it's Waffles", "first pet - Waffles").
    r"|[ \t]*\??[ \t]+(?:[-\u2013\u2014][ \t]+)?(?i:it(?:'s|\u2019s|[ \t]+(?:is|was))|that(?:'s|\u2019s|[ \t]+is))[ \t]+"
    r"|[ \t]+[-\u2013\u2014][ \t]+)"
    r"(?P<value>[^\s,.;!?()\"'][^\n,.;!?()\"]{0,39}?)(?=[ \t]*(?:[,.;!?()\"\n]|\Z))"
)
# "… has the answer Biscuit2004": the answer named with no "is" or colon.
_HAS_ANSWER = re.compile(r"(?i:(?:has|with|had)[ \t]+(?:the[ \t]+|an[ \t]+)?answer)[ \t]+"
                         r"(?P<value>[^\s,.;!?()\"'][^\n,.;!?()\"]{0,39}?)(?=[ \t]*(?:[,.;!?()\"\n]|\Z))")
_ASKED_OF_SECURITY = _ASKED.split("|", 1)[1]
_QUESTION_AND_ANSWER = re.compile(
    r"(?im)^[ \t]*Q[:.)][^\n?]{0,80}?(?<![a-z])(?:" + _ASKED_OF_SECURITY + r")[^\n?]{0,60}\??[ \t]*\r?\n"
    r"[ \t]*A[:.)][ \t]*(?P<value>[^\s,.;!?()\"'][^\n,.;!?()\"]{0,39}?)(?=[ \t]*(?:[,.;!?()\"\n]|\Z))"
)
_LABELLED = re.compile(r"[^\n:=]{0,60}?[ \t]*[:=][ \t]*(?P<value>[^\s,.;!?()\"'][^\n,.;!?()\"]{0,39}?)(?=[ \t]*(?:[,.;!?()\"\n]|\Z))")


# A mother's maiden name is asked by so many banks that it is an answer wherever it is told.
_MAIDEN_NAME = re.compile(
    r"(?i:(?<![a-z])(?:mother|mom|mum|mama|mommy)(?:'s|s)?[ \t]+maiden[ \t]+name)(?:[ \t]+(?:is|was|=)[ \t]+|[ \t]*[:=][ \t]*)"
    r"(?P<value>[A-Z\u00c0-\u024f][^\s,.;!?()\"]{1,30}(?:[ \t]+[A-Z][^\s,.;!?()\"]{1,30})?)(?=[ \t]*(?:[,.;!?()\"\n]|\Z)|[ \t]+[a-z])"
)


def security_answers(text: str) -> Iterator[Hit]:
    if "aiden" in text:
        for told in _MAIDEN_NAME.finditer(text):
            if _answer(told.group("value")):
                yield Hit(told.start("value"), told.end("value"), SECURITY_ANSWER)
    if "Q" in text and "A" in text:
        for pair in _QUESTION_AND_ANSWER.finditer(text):
            value = pair.group("value")
            if _answer(value) and (value[0].isupper() or value[0].isdigit()):
                yield Hit(pair.start("value"), pair.end("value"), SECURITY_ANSWER)
    lowered = text.lower()
    if not any(word in lowered for word in _QUESTION_STEMS):
        return  # a substring test costs far less than a scan for the words in every case
    scanned = 0
    for question in _QUESTION.finditer(text):
        if (question.group("what") or "").lower().startswith("answer") and (label := _LABELLED.match(text, question.end())):
            if _answer(label.group("value")):
                yield Hit(label.start("value"), label.end("value"), SECURITY_ANSWER)
            continue
        start, reach = max(question.end(), scanned), min(len(text), question.end() + _REACH)
        scanned = max(scanned, reach)
        for named in _HAS_ANSWER.finditer(text, start, reach):
            if _answer(value := named.group("value")) and (value[0].isupper() or value[0].isdigit()):
                yield Hit(named.start("value"), named.end("value"), SECURITY_ANSWER)
        # An answer that the sentence goes on from ("answer: my first pet was …") holds the next one.
        while (found := _ANSWER.search(text, start, reach)) is not None:
            start = found.start("value")
            # Told in a sentence, an answer is a name, a place or a number ("… maiden name is Kowalczyk"),
            # where a word in lower case is the sentence's ("… maiden name is public anyway").
            value = found.group("value")
            if _answer(value) and (value[0].isupper() or value[0].isdigit() or found.group(0).lower().startswith("answer")):
                yield Hit(found.start("value"), found.end("value"), SECURITY_ANSWER)
                start = found.end()


# What every name of a security question above holds, read in lower case.
_QUESTION_STEMS = ("question", "answer", "frage", "pregunta", "domand", "pergunta", "vraag", "pytani")


def _answer(value: str) -> bool:
    """A name, a place or a word chosen as an answer; not the sentence going on ("the same as")."""
    first = value.split()[0].lower()
    return first not in PROSE_WORDS and not placeholder(value) and len(value) >= 2
