"""The words other languages use for a credential and for "is", which the labels read beside the
English ones. A word here ends a label as its English counterpart does ("mein Passwort ist …",
"كلمة السر: …", "APIキーは …"); the tables are data, the rules that use them are in ``labels``."""

from __future__ import annotations

# "Password" (and a PIN, which many languages call a secret number) in the languages people write
# their notes in; a label ending in one is a password's.
PASSWORD_ABROAD = (
    "mot de passe", "passwort", "kennwort", "contraseña", "contrasena", "senha", "wachtwoord", "salasana",
    "hasło", "haslo", "lösenordet", "losenordet", "lösenord", "losenord", "passordet", "passord", "adgangskoden",
    "adgangskode", "şifre", "sifre", "şifresi", "sifresi", "şifrem", "sifrem", "şifreniz", "sifreniz", "parola",
    "parolası", "parolam",
    "jelszó", "jelszo", "пароль", "密码", "密碼", "口令", "パスワード", "暗証番号", "비밀번호", "암호", "clave",
    "palavra-passe", "heslo", "kata sandinya", "kata sandi", "kata laluan", "mật khẩu", "mat khau", "पासवर्ड", "कूटशब्द",
    "كلمة المرور", "كلمة السر", "الرقم السري", "رمز المرور", "رمز عبور", "گذرواژه", "סיסמה", "סיסמא", "รหัสผ่าน",
    "συνθηματικό", "κωδικός πρόσβασης", "κωδικό πρόσβασης", "κωδικός", "κωδικό", "geheimzahl", "geheimnummer",
    "pincode", "pin-nummer", "pinnummer", "пин-код", "пін-код", "пін", "पिन",
    "mdp", "парола", "лозинка", "lozinka", "гасло", "geslo", "parool", "parole", "slaptažodis", "slaptazodis",
    "lykilorð", "lykilord", "contrasenya", "pasahitza", "cyfrinair", "nenosiri", "পাসওয়ার্ড", "கடவுச்சொல்",
    "پاس ورڈ", "құпия сөз", "የይለፍ ቃል", "pasfhocal", "fjalëkalimi", "fjalekalimi", "პაროლი", "գաղտնաբառ",
    "pinkoden", "pinkod",
    # Transliterated, as people type the word of a language whose script their keyboard lacks.
    "parol", "pasuwaado", "pasuwado", "bimilbeonho", "bimilbunho", "kalimat al-sir", "kalimat as-sir",
    "kalimat el sir", "kalimat al sir", "kalimat al-murur", "kalimat al murur", "kalimat el-murur", "kalimat el murur",
    # A wireless network's password, as the languages that put the noun first name it.
    "code wifi", "clé wifi", "cle wifi", "clave wifi", "chiave wifi", "wlan-schlüssel", "netzwerkschlüssel",
    # A safe's combination guards valuables as a PIN does; a lock's, like a door's code, is household knowledge.
    "safe combination",
)
# A PIN in those languages: its value is digits, as under the English word.
PIN_ABROAD = ("pincode", "pin-nummer", "pinnummer", "пин-код", "пін-код", "пін", "पिन", "geheimzahl", "geheimnummer", "pinkoden", "pinkod")
# Words that name a password and any code besides (Greek's κωδικός is also a postal code): a value
# of digits alone under one is that other code.
PASSWORD_OR_CODE_ABROAD = ("κωδικός", "κωδικό")
# What makes a code a secret's, said after "code" in the languages that put it there ("code
# d'accès", "código de acceso", "codice di sblocco"), by its English word.
SECRET_CODE_WORDS_ABROAD = {
    "accès": "access", "acces": "access", "acceso": "access", "acesso": "access", "accesso": "access",
    "déverrouillage": "unlock", "deverrouillage": "unlock", "desbloqueo": "unlock", "desbloqueio": "unlock",
    "sblocco": "unlock", "alarme": "alarm", "alarma": "alarm", "allarme": "alarm", "alarmanlage": "alarm", "sécurité": "security",
    "securite": "security", "seguridad": "security", "segurança": "security", "seguranca": "security",
    "sicurezza": "security",
}
# A token or a key in other languages. A token is made by a machine: whatever the label, its value
# must look generated (these words also name a lock's key and a token of speech).
TOKEN_ABROAD = ("токен", "ключ", "令牌", "密钥", "秘钥", "密鑰", "トークン", "キー", "토큰", "키", "टोकन", "رمز مميز", "klíč", "klucz")
KEY_ABROAD = ("ключ", "密钥", "秘钥", "密鑰", "キー", "키", "klíč", "klucz")
# "is" as those languages say it, and a spaced dash, which sets a value after its label in any of them.
IS_ABROAD = (
    r"ist|lautet|war|c'est|c'était|est|était|es|era|è|é|är|er|on|jest|to|je|это|olduğu|는|은|이|είναι|ήταν|هي|هو|है|था|היא|הוא"
    r"|là|adalah|ialah|este|hai|ko[ \t]+ay|ay|wa|-"
)
# Those of them that are English words as well ("the root pw on build02"): after an English label
# they go on an English sentence.
IS_ABROAD_AND_ENGLISH = frozenset({"war", "era", "on"})
# Languages that write "is" between label and value unspaced.
IS_UNSPACED = "是|为|為|は|는|은|คือ"
