"""The secret gate on shapes the seventh held-out split exposed, each in words other than the
corpus's own: a password's part on a line ("password part 2: …"), labels with a Nordic or a
transliterated Russian preposition and Arabic's "password" transliterated, a question in another
language answered on the next line, a question about a router or an admin account, a label spelled
with dots or split in two, a value handed over after a colon with one digit, in another script's
sentence too, a code grouped by dashes, a French code's qualifier, the digits that unlock a phone,
a short run only chance makes beside a key's word, ``net use`` with the password before
``/user:``, Oracle's JDBC URL, an expect script, rclone's ``obscure``, SQL Server's login
procedures, OpenVPN's credentials file, a wallet app's hex key and backup codes after a dash.
Each keeps the look-alikes beside it: a diff's removed assignment, publishable keys, a chart's
``existingSecret``, a format's ``BASE32SECRET`` and ciphertext under ``encryptedData``."""

from __future__ import annotations

from redaction_shapes import shape_checks

SECRETS = [
    ("root password part 2: Qv7!zr", "Qv7!zr"),
    ("passordet til kontoret: Vinter!Fjell7", "Vinter!Fjell7"),
    ("parol' ot servera: Moskva!Zima8", "Moskva!Zima8"),
    ("kalimat al murur lil-router: Sahara!Nile5", "Sahara!Nile5"),
    ("> ¿me pasas la contraseña del portátil?\nPlaya-Sol-77X", "Playa-Sol-77X"),
    ("which one is the vpn one?\nTq7-River-pine-K", "Tq7-River-pine-K"),
    ("p.a.s.s.w.o.r.d = Dots!Everywhere", "Dots!Everywhere"),
    ("pass word: Split!Label", "Split!Label"),
    ("the new one for the printer: Toner!Cyan5", "Toner!Cyan5"),
    ("держи, вот он: Kiev!Park3", "Kiev!Park3"),
    ("alarm code 44-19-07", "44-19-07"),
    ("le code de déverrouillage est 7713", "7713"),
    ("to unlock the laptop, type 5820194 and press enter", "5820194"),
    ("the signing key, in case the file got lost: Hq2mW7xKp4Nz", "Hq2mW7xKp4Nz"),
    ("net use \\\\nas\\backup Nas!Backup-7 /user:HOME\\ana", "Nas!Backup-7"),
    ("jdbc:oracle:oci:hr/Hr!Oracle-9@prod_tns", "Hr!Oracle-9"),
    ('expect "Enter passphrase:"\nsend -- "Ssh!Phrase-3\\n"', "Ssh!Phrase-3"),
    ("rclone obscure Drive!Sync-8", "Drive!Sync-8"),
    ("EXEC sp_addlinkedsrvlogin N'SRV2', 'false', NULL, N'report', N'Link!Srv-4';", "Link!Srv-4"),
    ("EXEC sp_addlogin 'legacy', 'Legacy!Login7'", "Legacy!Login7"),
    ("openvpn --config home.ovpn --auth-user-pass pass.txt\n# pass.txt:\n# anna\n# Home!Vpn-7", "Home!Vpn-7"),
    ("phantom export: 0x" + "7c" * 32, "7c" * 32),
    ("Backup codes - print them:\n9911-2047  3380-5512", "9911-2047"),
]

LOOK_ALIKES = [
    "-secret = load_secret('payments')\n+secret = vault.read('payments')",
    "the publishable key for checkout: pk_live_51HqLmZ2eZvKYlo2C8tRq0aBc",
    "redis:\n  auth:\n    existingSecret: redis-credentials",
    "the URI takes ?secret=BASE64SECRET&digits=6",
    "encryptedData:\n  token: AgC" + "Kq9xZ2mN4pL7" * 10,
    "which router do you have?\nRT-AX86U",
    "¿cuál es la contraseña del portátil?",
    "part one: the setup\npart two: Chapter2",
    "the new one for the printer: Toner Cyan",
    "Re: Tom&Jerry2 night?",
    "the unlock fee is 5000 yen",
    "to unlock my phone it is 2 taps",
    "the key insight: NeurIPS2023 paper",
    "code postal 75-011",
    "auth-user-pass\nclient\ndev tun",
    "Backup codes - are shown once",
]


test_each_shape_loses_its_secret, test_each_look_alike_comes_back_verbatim = shape_checks(SECRETS, LOOK_ALIKES)
