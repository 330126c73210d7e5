"""The secret gate where people and tools put secrets outside configuration files: typographic
and East Asian quotes, Markdown's backticks and bold, labels in scripts other than Latin with the
words of their own sentence between label and value, one-time codes a message puts first, backup
codes after a few words, security questions' answers, a CSV export's credential column, SQL's
``IDENTIFIED BY``, Redis's ``AUTH``, MQTT's ``-P``, login calls, an SDK client made with its key, a
private key's DER without its frame, and a key named only "key". Each rule keeps the look-alikes
beside it: the same seats holding no secret."""

from __future__ import annotations

import pytest

from memvault.core.redaction import redact

SECRETS = [
    ("Das Passwort lautet \u201eBergsee#2025\u201c.", "Bergsee#2025"),
    ("Mot de passe du wifi : \u00ab Chat-Noir-58 \u00bb", "Chat-Noir-58"),
    ("set the admin password to \u2018K9pl@ceHold\u2019 and restart", "K9pl@ceHold"),
    ("\u5bc6\u7801\uff1a\u300cAb12#cd\u300d", "Ab12#cd"),
    ("I set the password to `V3ry$ecretPass` in the dashboard", "V3ry$ecretPass"),
    ("**Password:** Br1ght!Star", "Br1ght!Star"),
    ("\u6211\u7684\u90ae\u7bb1\u5bc6\u7801\u662f Xq7#mLp2\uff0c\u5e2e\u6211\u8bb0\u4e00\u4e0b", "Xq7#mLp2"),
    ("\u670d\u52a1\u5668\u7684\u767b\u5f55\u53e3\u4ee4\uff1aTz9!kW4r", "Tz9!kW4r"),
    ("\u0432\u043e\u0442 \u0442\u043e\u043a\u0435\u043d: 1iYvOtfPU0CFRrMohbWFuFanyKjk", "1iYvOtfPU0CFRrMohbWFuFanyKjk"),
    ("\u041f\u0430\u0440\u043e\u043b\u044c \u043e\u0442 \u0432\u0430\u0439\u0444\u0430\u044f \u2014 Dacha2024#, \u043d\u0435 \u0442\u0435\u0440\u044f\u0439",
     "Dacha2024#"),
    ("\u0643\u0644\u0645\u0629 \u0627\u0644\u0645\u0631\u0648\u0631 \u0627\u0644\u062e\u0627\u0635\u0629 \u0628\u064a \u0647\u064a Qa7$mN2x",
     "Qa7$mN2x"),
    ("\u092e\u0947\u0930\u093e \u092a\u093e\u0938\u0935\u0930\u094d\u0921 \u0939\u0948 Raj@2024xy", "Raj@2024xy"),
    ("\u03bf \u03ba\u03c9\u03b4\u03b9\u03ba\u03cc\u03c2 \u03bc\u03bf\u03c5 \u03b5\u03af\u03bd\u03b1\u03b9 Ath3na!92", "Ath3na!92"),
    ("\u05d4\u05e1\u05d9\u05e1\u05de\u05d4 \u05e9\u05dc\u05d9 \u05d4\u05d9\u05d0 Yam#Kinneret5", "Yam#Kinneret5"),
    ("\u0e23\u0e2b\u0e31\u0e2a\u0e1c\u0e48\u0e32\u0e19\u0e04\u0e37\u0e2d Siam@4455", "Siam@4455"),
    ("m\u1eadt kh\u1ea9u c\u1ee7a t\u00f4i l\u00e0 PhoBo#2023", "PhoBo#2023"),
    ("kata sandi saya adalah Bali!Surf99", "Bali!Surf99"),
    ("\u0631\u0645\u0632 \u0639\u0628\u0648\u0631 \u0645\u0646 Tehran#909 \u0627\u0633\u062a", "Tehran#909"),
    ("API\u30ad\u30fc\u306f b6O30UmiiDrsULMNXS1bcDY2PKIt \u3067\u3059", "b6O30UmiiDrsULMNXS1bcDY2PKIt"),
    ("Geheimzahl der EC-Karte: 9034", "9034"),
    ("CVV2: 5520", "5520"),
    ("card ending 4471, the security code on the back is 918", "918"),
    ("SIM PUK 12345678 if it locks again", "12345678"),
    ("the safe combination is 12-34-56", "12-34-56"),
    ("Hotel safe code: 7391", "7391"),
    ("Your Acme login code: 482913. Don't share it with anyone.", "482913"),
    ("[Bank] Do not share: 904417 is your code to approve the payment", "904417"),
    ("G-482913 is your Google verification code.", "G-482913"),
    ("Save these backup codes somewhere safe:\n1. 8412 3390\n2. 5527 1184", "8412 3390"),
    ("my Google backup codes are 48213957, 11930284, 66021473", "48213957"),
    ("For the bank's security question, my mother's maiden name is Kowalczyk.", "Kowalczyk"),
    ("security question: name of first pet? answer: Biscuit", "Biscuit"),
    ("Security answer for Chase (first car): Corolla98", "Corolla98"),
    ("name,username,password,url\nGmail,ana@gmail.com,Csv!Export77,https://mail.google.com", "Csv!Export77"),
    ("title;login;pass\nBank;ana;Chq#Acct2026", "Chq#Acct2026"),
    ("CREATE USER 'report'@'%' IDENTIFIED BY 'My$ql2026';", "My$ql2026"),
    ("127.0.0.1:6379> AUTH default Kv9#pL2mQ\nOK", "Kv9#pL2mQ"),
    ("mosquitto_pub -h 192.168.1.20 -p 1883 -u sensors -P Mq77!tTz -t home/temp", "Mq77!tTz"),
    ('client.username_pw_set("esp32", "Zigb33!Home")', "Zigb33!Home"),
    ('requests.get(url, auth=("ana", "Pa55word!"))', "Pa55word!"),
    ('co = cohere.Client("cSgnMVcfbwF4BG2fdeDCsJviPc47ldSp78fejJo9")', "cSgnMVcfbwF4BG2fdeDCsJviPc47ldSp78fejJo9"),
    ("Here is the key you asked for: eEIxCtac4Vn4WVCE_JFUg-L3aWc34BeI", "eEIxCtac4Vn4WVCE_JFUg-L3aWc34BeI"),
    ("p8: MIGTAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBHkwdwIBAQQgGvo9LH2VHX67J1KRGoIZ0eft",
     "MIGTAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBHkwdwIBAQQgGvo9LH2VHX67J1KRGoIZ0eft"),
    ("Cerebras: csk-Q98bjjTlv6q7jBNr2mDxoG9osC6RiEVNOeTa4Npq2jKTx7zE", "csk-Q98bjjTlv6q7jBNr2mDxoG9osC6RiEVNOeTa4Npq2jKTx7zE"),
]

LOOK_ALIKES = [
    "She said \u201cthe password is the least of our worries\u201d and left.",
    "Token - Wikipedia",
    "Changed password - 2024-11-02",
    "Password - Forgotten?",
    "\u03a4\u03b1\u03c7\u03c5\u03b4\u03c1\u03bf\u03bc\u03b9\u03ba\u03cc\u03c2 \u03ba\u03c9\u03b4\u03b9\u03ba\u03cc\u03c2: 10557",
    "\u043a\u043b\u044e\u0447: \u0437\u043d\u0430\u0447\u0435\u043d\u0438\u0435",
    "\u6211\u7684\u5bc6\u7801\u662f\u4ec0\u4e48\uff1f",
    "m\u1eadt kh\u1ea9u c\u1ee7a t\u00f4i l\u00e0 g\u00ec",
    "\u0643\u0644\u0645\u0629 \u0627\u0644\u0645\u0631\u0648\u0631 \u0627\u0644\u062e\u0627\u0635\u0629 \u0628\u0643",
    "my password manager is 1Password",
    "I set the password to expire every 90 days",
    "set the API key to `<your key>`",
    "**Password:** see the vault entry `prod/db`",
    "the safe combination of speed and comfort",
    "The bike lock combination is 7-3-9-1, for the blue D-lock in the garage.",
    "The zip code is 94110 and the area code 415.",
    "the verification code expired",
    "2024 is your year",
    "recovery codes are stored in your vault",
    "Security questions are weak: the answers are often public.",
    "security questions are outdated; my mother's maiden name is public anyway",
    "The bank asked my mother's maiden name as a security question, which feels outdated.",
    "player,pass,shot\nMessi,85,70",
    "name,token_count,model\nrun1,4096,gpt-4o",
    "title,login,url\nBank,ana,https://bank.example.com",
    "AUTH failed\nretrying",
    "mosquitto_sub -h broker -p 1883 -t 'home/#'",
    'showLogin("Title", "Enter your password")',
    "login(user, password)",
    'client = bigquery.Client("my-project-id-123456789")',
    "the key to success is hard work",
    "Here is my key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKk3q5xJm0mH8cF2lQw9Yd0nT1pVzR8sW4uE6yB7aX3c ana@laptop",
    "key frame: data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kg",
    "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEq8mZb2tK0Yc4vWmGv7yX1Lr9sD3fQ2hP6nU8jE5kB0aR4wT7zC1xV9mN2bH6gF3dS5aQ8pL0o",
    "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2r8ZX0m4f1sW2pLq8kTn7uV3bA0wDQYJKoZIhvcNAQELBQAw\n-----END CERTIFICATE-----",
]


@pytest.mark.parametrize(("text", "secret"), SECRETS, ids=range(len(SECRETS)))
def test_a_secret_in_a_chat_a_message_or_a_tool_output_is_cut_and_its_surroundings_kept(text: str, secret: str) -> None:
    result = redact(text)
    assert secret not in result.text, result.text
    assert result.kinds
    before = text[:text.index(secret)]
    assert result.text.startswith(before.rstrip()), result.text


@pytest.mark.parametrize("text", LOOK_ALIKES, ids=range(len(LOOK_ALIKES)))
def test_the_same_seats_without_a_secret_come_back_verbatim(text: str) -> None:
    result = redact(text)
    assert result.text == text
    assert result.kinds == ()
