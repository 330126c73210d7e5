"""The secret gate on shapes a twelfth probe exposed: other countries' identity numbers under their
own names (a Canadian SIN, a UK National Insurance number, an Aadhaar, a CPF…), a system account's
password joined to its name (``root=…``, ``admin: …``), and a sign-in check's code of capitals and
digits ("Steam Guard code: 7K2QX") or a one-time code or a card's code under its name in another
language ("Bestätigungscode", "验证码", "cryptogramme"), and a password a chat tells in passing: as
"one" after its label, asked about ("is 'Tulip2020' a decent password?"), changed from one value to
another, after a lock emoji and a name, a PIN's digits on the line below it, and after a label that
says at length whose it is. Each keeps the look-alikes beside it: the same digits under no
such name or with a check that fails, a name that is also a word, an account's name set to a
setting, a path or code, a booking's or a door's code, a German compound noun after a password's
word, "one" meaning anything else, and a policy's years; and, from a probe of what developers paste:
a webhook whose slashes JSON escaped, recovery codes below the account and a blank line, a modem's
``AT+CPIN``, OpenWeather's ``appid``, a vendor's token printed a character at a time, beside a
keyring's path a command lists, sops' ciphertext, an ARN's secret name, a BuildKit secret's
reference, pods' names, an interpolated environment lookup and a UUID under a header's name."""

from __future__ import annotations

from redaction_shapes import shape_checks

SECRETS = [
    ("Here's my SIN for the tax form: 130 692 544", "130 692 544"),
    ("social insurance no. 193-456-787", "193-456-787"),
    ("mon NAS est 046 454 286", "046 454 286"),
    ("My TFN is 459 599 230 if the accountant asks", "459 599 230"),
    ("NI number - JG 10 37 56 A", "JG 10 37 56 A"),
    ("national insurance: ab123456c", "ab123456c"),
    ("Aadhaar no. 4991 1866 5246 (for the KYC)", "4991 1866 5246"),
    ("meu CPF é 529.982.247-25", "529.982.247-25"),
    ("DNI: 71234567W, caduca en 2030", "71234567W"),
    ("el NIE de mi madre es Y-2345678-Z", "Y-2345678-Z"),
    ("codice fiscale: BNCGVN80A01H501J", "BNCGVN80A01H501J"),
    ("mijn BSN is 1112.22.333", "1112.22.333"),
    ("personnummer 19811218-9876", "19811218-9876"),
    ("Meine Steuer-ID lautet 86 095 742 719.", "86 095 742 719"),
    ("numéro de sécu : 1 84 12 76 451 089 46", "1 84 12 76 451 089 46"),
    ("ITIN 912-71-4455 for the W-7", "912-71-4455"),
    ("box creds: root=Gr4nite!Moss, admin=Fj0rd#Lake9", "Gr4nite!Moss"),
    ("box creds: root=Gr4nite!Moss, admin=Fj0rd#Lake9", "Fj0rd#Lake9"),
    ("db01 postgres/Tq8$wLp2vX", "Tq8$wLp2vX"),
    ("ssh in as ubuntu: Cl0ud&Rain5", "Cl0ud&Rain5"),
    ("sa=Mssql!2019Prod;", "Mssql!2019Prod"),
    ("Your Steam Guard code: 4HQ7T", "4HQ7T"),
    ("verification code is F4K9PQ - it expires soon", "F4K9PQ"),
    ("sign-in code: 8RT2KX", "8RT2KX"),
    ("Mensaje del banco: tu código de verificación para Santander es 418 207", "418 207"),
    ("Dein Bestätigungscode: 603915 (gültig 10 Minuten)", "603915"),
    ("[카카오뱅크] 인증번호는 552019 입니다", "552019"),
    ("您的验证码是 884120，请勿告诉他人", "884120"),
    ("Ваш код подтверждения 7731", "7731"),
    ("Doğrulama kodu: 208 451", "208 451"),
    ("Use 204 866 to finish signing in", "204 866"),
    ("carte 4970 1012 3456 7899, cryptogramme visuel : 318", "318"),
    ("Kartenprüfnummer 552", "552"),
    ("tarjeta terminada en 4421, código de seguridad: 907", "907"),
    ("I saved my Costco password as Bulk!Buy22 and my Target one is Redcard2021x", "Redcard2021x"),
    ("my email password is fine but the current one is winter1999 for the bank", "winter1999"),
    ("would 'Tulip2020' be a decent password for my kid's tablet?", "Tulip2020"),
    ("I updated the router password from Linksys99 to L1nksys!99Home", "Linksys99"),
    ("I updated the router password from Linksys99 to L1nksys!99Home", "L1nksys!99Home"),
    ("\U0001f510 chase: Blue$Sky1977", "Blue$Sky1977"),
    ("Debit card PIN\n6028\n(don't lose it)", "6028"),
    ("la password di Gmail è Lupo_Grigio7", "Lupo_Grigio7"),
    ("the PIN for the grandkids' old Nintendo DS is 7391", "7391"),
    ('{"hook":"https:\\/\\/hooks.slack.com\\/services\\/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"}',
     "Qm7XvR2pLk9TnW4sHd3FgJ8c"),
    ("RECOVERY CODES\nops@example.org\n\n1. 5210 8834\n2. 7781 0092\n", "7781 0092"),
    ('modem.send(b\'AT+CPIN="7720"\\r\')', "7720"),
    ("GET https://api.openweathermap.org/data/2.5/forecast?lat=52.5&appid=5e1f0a9c3b7d4e2f8a6c1b9d0e3f7a21",
     "5e1f0a9c3b7d4e2f8a6c1b9d0e3f7a21"),
    ("the pass code for my voicemail is 4407", "4407"),
    ("banka şifrem Kartal.1903 olarak kaldı", "Kartal.1903"),
    ("الرقم السري للحساب هو 5821", "5821"),
    ("Der Code für unsere Alarmanlage ist 3307.", "3307"),
    ("I entered Mango7$pear as the password but it was rejected", "Mango7$pear"),
    ("the step printed: g i t h u b _ p a t _ 1 1 A B C D E F G 0 a b c d e f 1 2 3 4 5 6 X y Z q r 9 8 7 w v",
     "1 1 A B C D E F G 0 a b c d e f 1 2 3 4 5 6"),
]

LOOK_ALIKES = [
    "sin 130692544 problemas, gracias",
    "SIN: 130 692 545 (the form rejected it)",
    "the invoice 130 692 544 is paid",
    "my TFN application is pending, ref 459 599 231",
    "NI number unknown, call 0800 731 0469",
    "Aadhaar centre opens at 9, token 2345 6789 0123",
    "CPF 111.111.111-11 não é válido",
    "DNI 12345678A",
    "the cf card holds 64 GB",
    "BSN: 123456789",
    "personnummer saknas, ring 08-123 456 78",
    "Steuer-ID beantragt am 12.03.2024",
    "admin=true",
    "root = tree.getroot()",
    "root=/var/www/html",
    "admin: enabled",
    "root=Node(5)",
    "postgres/16 is installed",
    "admin:x:0:0:Admin:/home/admin:/bin/bash",
    "operator: OK-200",
    "confirmation code: QX7K2P",
    "access code: B7Q2X",
    "security code: ABCDE",
    "the login page returns HTTP 403",
    "Ich habe mein Passwort vergessen und die E-Mail zum Zurücksetzen kommt nicht an.",
    "el código de verificación no llegó, lo pedí tres veces",
    "Votre code de réservation : QX7K2P, vol AF 1234",
    "the new one is better than the old one",
    "my old password was weak, so the current one is longer",
    "is 'password' a good password?",
    "the password policy changed from 2019 to 2024",
    "\U0001f512 locked until Monday - see you then",
    "Zip code\n10001",
    "PIN\n2024 edition",
    "security code: none needed for gift cards",
    "$ gpg --list-secret-keys --keyid-format=long\n/home/ana/.gnupg/pubring.kbx\n---------",
    "kind: Secret\nstringData:\n  API_TOKEN: ENC[AES256_GCM,data:Zm9vYmFyYmF6cXV4MTIzNA==,iv:QUJDREVGR0hJSktMTU5PUA==,type:str]",
    '{"name": "DB_PASSWORD", "valueFrom": "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-Xy12Zw"}',
    "docker buildx build --secret id=pip,src=$HOME/.config/pip/pip.conf -t app .",
    "token-rotator-7c9f8d6b5-x2k4q   1/1   Running   0   2d\nbilling-5f6d7c8b9a-qq7zp   1/1   Running   0   2d",
    'STORE_PASSWORD=${System.getenv("STORE_PASSWORD")}',
    '{"headers":{"Authorization":"[REDACTED]","Idempotency-Key":"3b241101-e2bb-4255-8caf-4136c566a962"}}',
    "s p a c e d   o u t   w o r d s   a r e   n o   k e y",
    "my boarding pass code is on the app",
    "the answer is the password and the user name together",
]

test_each_shape_loses_its_secret, test_each_look_alike_comes_back_verbatim = shape_checks(SECRETS, LOOK_ALIKES)
