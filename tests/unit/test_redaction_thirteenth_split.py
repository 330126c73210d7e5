"""The secret gate on shapes a thirteenth probe exposed: a secret in a disguise the text gives away
(ROT13 with the credential's word turned too, a sentence written backwards, HTML's character
references, a value "backwards" after its label), cards grouped by bars, cut into two runs of eight
after the card's name, read out a digit at a time, said in words or written backwards, an Amex
``cid`` in lower case and a German ``Prüfziffer``, a token cut over two lines, a password put
right in the same breath, a PIN after an ellipsis, a safe's combination, a mother's maiden name,
Mapbox's secret tokens, WordPress's salts, and one-word and spaced-digit replies to a question
asking for a password or a PIN. Each keeps the look-alikes beside it: Dutch prose after
"wachtwoord is", a model's name on the line after an API key, ROT13 and reversed text with no
credential's word, characters written as references that hold none, a list of ids of eight
digits, counting a digit at a time, a lock's or a locker's combination, a safe combination of
drugs, another's maiden name, an ellipsis before words, and replies about a password policy or
a network's name."""

from __future__ import annotations

import pytest
from redaction_shapes import reply_checks, shape_checks

from memvault.core.redaction import redact

SECRETS = [
    ("ROT13 so nobody reads it: zl cnffjbeq vf Ubarlor4rire", "Ubarlor4rire"),
    ("frperg gbxra = d8Kx2LmQ9vTz4WpR", "d8Kx2LmQ9vTz4WpR"),
    ("1202nagioPlaC si drowssap liame ym", "1202nagioPlaC"),
    ("nekot ym si 9mQ2xV7kLp3zR8tW: ti daer", "9mQ2xV7kLp3zR8tW"),
    ("the password is &#84;&#97;&#110;&#103;&#111;&#50;&#48;&#50;&#49;&#33; (HTML so the bot skips it)",
     "&#84;&#97;&#110;&#103;&#111;&#50;&#48;&#50;&#49;&#33;"),
    ("<td>&#x70;&#x61;&#x73;&#x73;&#x77;&#x6f;&#x72;&#x64;&#x3a;&#x20;&#x4b;&#x69;&#x77;&#x69;&#x21;&#x37;&#x37;</td>",
     "&#x4b;&#x69;&#x77;&#x69;&#x21;&#x37;&#x37;"),
    ("wifi password reversed: 8102ognaMyknuF", "8102ognaMyknuF"),
    ("paste of the form field: 4539|1488|0343|6467", "4539|1488|0343|6467"),
    ("Visa card 45391488\n03436467 exp 09/29", "45391488"),
    ("Visa card 45391488\n03436467 exp 09/29", "03436467"),
    ("reading it out: 4 5 3 9 1 4 8 8 0 3 4 3 6 4 6 7", "4 5 3 9 1 4 8 8 0 3 4 3 6 4 6 7"),
    ("the card is four five three nine one four eight eight zero three four three six four six seven",
     "four five three nine one four eight eight zero three four three six four six seven"),
    ("the card number reversed 7646343088419354, don't judge", "7646343088419354"),
    ("AmEx 3714 496353 98431, cid 8812", "8812"),
    ("Visa 4539 1488 0343 6467 – Prüfziffer 318", "318"),
    ("cvv three one eight", "three one eight"),
    ("deploy token: glpat-Qx7vLm2KpR9s\nWz4TnY8bHc3D", "Wz4TnY8bHc3D"),
    ("first half of the key sk-ant-api03-Hq2Lm9Vx7KpR4sTz8WnY3bCd6FgJ1\nthe rest: Qx5Mv8Nz2Lp7Rk4Wt9Ys3Hd6Bf1Gj0",
     "Qx5Mv8Nz2Lp7Rk4Wt9Ys3Hd6Bf1Gj0"),
    ("router password is Falcon2020, no wait, it's Falcon2021!", "Falcon2021!"),
    ("pw: Tundra#77 sorry I mean Tundra#78", "Tundra#78"),
    ("the PIN on the debit card... 6 2 9 1", "6 2 9 1"),
    ("the combination for the hotel safe is 28-15-4", "28-15-4"),
    ("Gun safe (basement) combination: 31 7 22", "31 7 22"),
    ("Tresor-Kombination 19-42-6, bitte nicht weitersagen", "19-42-6"),
    ("Security stuff: Mum's maiden name: Abernathy", "Abernathy"),
    ("MAPBOX_TOKEN=sk.eyJ1IjoibWFwcGVyIiwiYSI6ImNrdzl4eTEyMzQ1Njc4In0.Xy9Kq2LmPz7WvR4TnB8hCd", "sk.eyJ1IjoibWFwcGVy"),
    ("define('SECURE_AUTH_SALT', 'q%7Lz{M2&x@R^v9)P#t!W~k<3]n=Y8;b*J|f+D');", "q%7Lz{M2&x@R^v9)P#t!W~k<3]n=Y8;b*J|f+D"),
]

# A reply and the message said before it.
REPLIES = [
    ("Which PIN did you set on the new card?", "6 2 9 1", "6 2 9 1"),
    ("what's the password for the guest network?", "Lantern77", "Lantern77"),
    ("wie lautet das Passwort fürs Büro-WLAN?", "Kaffee2019", "Kaffee2019"),
    ("quel est le mot de passe du routeur ?", "Soleil!88", "Soleil!88"),
]

LOOK_ALIKES = [
    "Het wachtwoord is verlopen; je krijgt een mail met een nieuwe link.",
    "Het wachtwoord is gewijzigd door de beheerder.",
    "Uryyb jbeyq, guvf vf whfg n EBG13 chmmyr.",
    "!dlrow olleh si siht dna sdrawkcab gnitirw evol I",
    "&#169; 2025 Example Corp &#8212; all rights reserved &#8482;",
    "order ids:\n45391488\n03436467\n",
    "counting: 4 5 3 9 1 4 8 8 0 3 4 3 6 4 6 7 8 9 10",
    "the locker combination is 12-30-7, third row",
    "a safe combination of 2 drugs at 5 mg each",
    "my mother's maiden name is hard to spell",
    "her maiden name was Fischer before the wedding",
    "password... I forgot it again, resetting now",
    "part 2 of the tutorial covers keys\nRead chapter three next",
    "Prüfziffer 7 (ISBN)",
    "Reversed list: 3, 2, 1",
]

LOOK_ALIKE_REPLIES = [
    ("what is the password policy here?", "NIST800-63B"),
    ("What's the wifi network called?", "Vodafone-4G7X"),
    ("Which key type did you generate?", "id_ed25519"),
    ("What's the wifi password?", "ask Sam for it"),
    ("How many digits does the PIN have?", "4 or 6"),
]

test_each_shape_loses_its_secret, test_each_look_alike_comes_back_verbatim = shape_checks(SECRETS, LOOK_ALIKES)


(test_a_reply_loses_the_secret_it_was_asked_for,
 test_a_reply_that_gives_no_secret_comes_back_verbatim) = reply_checks(REPLIES, LOOK_ALIKE_REPLIES)


# A secret, and beside it what must stay.
KEPT_BESIDE = [
    ("OPENAI_API_KEY=sk-proj-Hq2Lm9Vx7KpR4sTz8WnY3bCd\nOPENAI_MODEL=gpt-4o-mini-2024-07-18\n",
     "OPENAI_MODEL=gpt-4o-mini-2024-07-18"),
    ("the password is Falcon2020, no wait, it's fine, I remember it", "no wait, it's fine, I remember it"),
    ("token: glpat-Qx7vLm2KpR9sWz4TnY8bHc3D\nThanks for the quick review yesterday", "Thanks for the quick review"),
]


@pytest.mark.parametrize(("text", "kept"), KEPT_BESIDE, ids=range(len(KEPT_BESIDE)))
def test_what_follows_a_secret_stays(text: str, kept: str) -> None:
    result = redact(text)
    assert result.kinds and kept in result.text, result.text
