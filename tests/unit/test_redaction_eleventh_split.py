"""The secret gate on shapes an eleventh probe exposed: a password whose label and value are apart
by the words of a sentence that say who uses it or since when ("the password I use for everything:
…", "my password everywhere is …", "the PIN we share at home is …"), a code or a numeric password
told in groups of digits ("OTP 841 927", "8-4-1-9-2-7"), a seed phrase of another word list than
BIP-39's under its label, a key or a password named after it ("… is my API key", "hunter2 is my
password."), an address and its password joined by a colon as leaked lists give them, or a login as
a URL's userinfo without its scheme, a one-time code handed to its reader ("Enter … on the sign-in
page", "Your Lyft code: …"), a device's code ("the iPad code is …", "the code to get into my phone
is …"), a random run beside the name of a service whose keys have no prefix ("mistral …"), and
base64 standing alone that wraps a secret. Each keeps the look-alikes beside it: the same sentences
going on in words, a rule about a password, numbers in groups under a label that names no secret (a
zip code, an error, a length), a list or a sentence after a seed's word, a product or a format named
before a credential's word, a git remote, a port or a file after an address, numbers of an order or
a place, and base64 of plain words, of a header or of a digest."""

from __future__ import annotations

from redaction_shapes import shape_checks

SECRETS = [
    ("i always use the same password everywhere: Heron-Lake-62", "Heron-Lake-62"),
    ("my netflix password everywhere is quietfox1988", "quietfox1988"),
    ("the password I use for everything: Copper!Vale7", "Copper!Vale7"),
    ("the wifi password we share at home is lanternbay55", "lanternbay55"),
    ("The admin password you gave me was Sable#Road31", "Sable#Road31"),
    ("the login password that works = harbor-gull-09", "harbor-gull-09"),
    ("my bank password these days - Orchid7Tide", "Orchid7Tide"),
    ("the passcode he set: Pine&Step40", "Pine&Step40"),
    ("our router password nowadays is mossyfern2021", "mossyfern2021"),
    ("your one-time passcode is 8 4 1 9 2 7", "8 4 1 9 2 7"),
    ("verification code: 306 418", "306 418"),
    ("OTP 520 913, valid for five minutes", "520 913"),
    ("the verification code is 7-3-0-5-1-2", "7-3-0-5-1-2"),
    ("the access code is 61 48 27", "61 48 27"),
    ("my phone's PIN is 24 68", "24 68"),
    ("my password is 3141 5926", "3141 5926"),
    ("electrum seed: ribbon lantern orbit wisdom falcon meadow copper violet thunder pebble harbor quiet",
     "ribbon lantern orbit wisdom falcon meadow copper violet thunder pebble harbor quiet"),
    ("Recovery phrase, in order:\n1. ribbon\n2. lantern\n3. orbit\n4. wisdom\n5. falcon\n6. meadow\n7. copper\n"
     "8. violet\n9. thunder\n10. pebble\n11. harbor\n12. quiet", "ribbon"),
    ('mnemonic = "ribbon lantern orbit wisdom falcon meadow copper violet thunder pebble harbor quiet"', "orbit wisdom"),
    ("4be1c0d97a3f28e65b0d1c2a3f4e5d6c is my api key for the billing service", "4be1c0d97a3f28e65b0d1c2a3f4e5d6c"),
    ("Tq8nW3zKp5Rv7Lm2 was the staging token", "Tq8nW3zKp5Rv7Lm2"),
    ("hunter2 is my password.", "hunter2"),
    ("quokka-77 was the old passcode, now changed", "quokka-77"),
    ("found in a paste:\nmia.ross@example.org:Wh4le#Song\nleo@example.net:tundra88fox", "tundra88fox"),
    ("mia.ross@example.org:Wh4le#Song", "Wh4le#Song"),
    ("relay through mia:Wh4le#Song@smtp.example.org", "Wh4le#Song"),
    ("Use 605182 to verify your new device", "605182"),
    ("Enter 605182 on the sign-in page to continue", "605182"),
    ("Your Lyft code: 8093", "8093"),
    ("your code is 605182", "605182"),
    ("dad's ipad code is 080808", "080808"),
    ("the laptop code is 2580", "2580"),
    ("the code to get into my phone is 482913", "482913"),
    ("mistral Xk29Lm3pQr8sT4uV7wY2zA5bC6dE9fG1", "Xk29Lm3pQr8sT4uV7wY2zA5bC6dE9fG1"),
    ("cloudflare for the dns bot: aB3dE6gH9jK2mN5pQ8rS1tU4vW7xY0zA2cF5hJ8", "aB3dE6gH9jK2mN5pQ8rS1tU4vW7xY0zA2cF5hJ8"),
    # base64 of "ghp_aB3dE6gH9jK2mN5pQ8rS1tU4vW7xY0zA2cF5" and of "password=Zr7%kLp2Qw", standing alone
    ("keep this for me: Z2hwX2FCM2RFNmdIOWpLMm1ONXBROHJTMXRVNHZXN3hZMHpBMmNGNQ==",
     "Z2hwX2FCM2RFNmdIOWpLMm1ONXBROHJTMXRVNHZXN3hZMHpBMmNGNQ=="),
    ("cGFzc3dvcmQ9WnI3JWtMcDJRdw==", "cGFzc3dvcmQ9WnI3JWtMcDJRdw=="),
]

LOOK_ALIKES = [
    "the password you gave me was wrong",
    "the password I use for everything: the same one as my email",
    "my password everywhere is the same, I know that is bad",
    "the password that works is the old one",
    "the password we share is written on the fridge",
    "password policy everywhere: twelve characters at least",
    "password length 12 16",
    "the password length is 12 16 characters",
    "zip code 10 001",
    "error code 500 503",
    "postal code: 75 001",
    "the PIN has 4 or 6 digits",
    "PIN 4 6 8",
    "the code is 3 4 pages long",
    "verification code: 6 digits, sent by SMS",
    "OTP 3 attempts left",
    "the seed catalogue lists tomato pepper squash melon bean carrot onion garlic leek chard kale beet",
    "recovery phrase: write it down on paper and keep it somewhere safe away from the computer",
    "seed the lawn early in spring then water daily for two weeks until green shoots appear",
    "Bitwarden is my password manager",
    "OAuth2 is the token standard",
    "this is the password.",
    "UTF-8 is the password encoding",
    "git clone git@github.com:acme/memvault.git",
    "the dashboard runs at mia.ross@example.org:8080 for now",
    "scp notes mia@files.example.org:backup2024.tar",
    "re:thanks@mail.example.org",
    "meet at 10:30@cafe.example.com",
    "Use 1080 to set the resolution",
    "your order code is 123456",
    "Your zip code: 10001",
    "the phone code for the UK is 44",
    "screen code 404 error",
    "the code for the phone line is 44",
    "cloudflare ray id 7d5a1b2c3d4e5f60",
    "the mistral model mistral-large-2411 is good",
    "vercel deploy https://app-7f3k2m9.vercel.app",
    # base64 of a greeting, of a JWT's header, and the digest of nothing
    "aGVsbG8gd29ybGQsIGhvdyBhcmUgeW91IHRvZGF5Pw==",
    "the header eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9 names the algorithm",
    "sha256 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
]


test_each_shape_loses_its_secret, test_each_look_alike_comes_back_verbatim = shape_checks(SECRETS, LOOK_ALIKES)
