"""The secret gate on shapes a fourteenth probe exposed: a card number pasted inside a URL with
its spaces escaped, a card written backwards in groups, a token wrapped with each dot starting its
line, a password cut into string literals that code joins, a password's label reaching its value
across "I use for …" in lower case, a safe's combination after where the safe stands, a security
answer after the question and "it's" or a dash, and backup codes after "codes, a few words:".
Each keeps the look-alikes beside it: escaped query words and paths, a Windows variable written
between percent signs, an OAuth request's escaped redirect, digits in reverse order that make no
card, joined literals of a name, a safe's age, a first pet's story, and backup codes as a topic."""

from __future__ import annotations

from redaction_shapes import shape_checks

SECRETS = [
    ("POST /checkout?pan=5425%202334%203010%209903&cur=EUR 200", "5425%202334%203010%209903"),
    ("curl 'https://shop.test/pay?number=4539%201488%200343%206467&name=Kim%20Lee'", "4539%201488%200343%206467"),
    ("debit card backwards: 7646 3430 8841 9354 (fun, right?)", "7646 3430 8841 9354"),
    ("visa in reverse 7646-3430-8841-9354", "7646-3430-8841-9354"),
    ("Authorization header:\neyJhbGciOiJSUzI1NiJ9\n.eyJzdWIiOiJ1c2VyLTQ0MSIsInJvbGUiOiJhZG1pbiJ9\n.Qm9Xk2LpR7sTz4WvY8nHc3DfG6",
     "eyJzdWIiOiJ1c2VyLTQ0MSIsInJvbGUiOiJhZG1pbiJ9"),
    ("$smtp_password = 'Rk4!' . 'zW9q' . 'Lm#2';", "zW9q"),
    ("$smtp_password = 'Rk4!' . 'zW9q' . 'Lm#2';", "Lm#2"),
    ('const adminPassword = "Tq8$vN" + "2xLp" + "!9Kw";', "!9Kw"),
    ("the password i gave the plumber was Walnut1987", "Walnut1987"),
    ("the combination of the wall safe behind the painting is 14-33-8", "14-33-8"),
    ("security question for the bank: city where I was born? it's Tamworth", "Tamworth"),
    ("my security question: first car - Corolla", "Corolla"),
    ("dropbox backup codes, print these:\n8841 2203\n1179 5520", "8841 2203"),
]

LOOK_ALIKES = [
    "GET /search?q=best%20pizza%20near%20me&page=2 HTTP/1.1",
    "see https://docs.example.com/guide/Getting%20Started%20Guide.pdf",
    "set DBPASSWORD=%DB_PASS% && run.bat",
    "echo %USERPROFILE%\\AppData and %APPDATA%",
    "https://login.example.com/authorize?client_id=app-42&redirect_uri=https%3A%2F%2Fapp.example.com%2Fcallback&scope=openid%20email",
    "read the numbers backwards: 1 2 3 4 5 6 7 8 9 10 11 12 13",
    "ids in reverse order: 2024 1128 0001 0002",
    "$greeting = 'Hello' . ' ' . 'World';",
    'const title = "Annual" + " " + "Report";',
    "the safe in the basement is 40 years old",
    "my first pet - a hamster - was called Nibbles's friend",
    "I lost my backup codes, help: what now?",
    "backup codes, invoices, receipts: all in the drawer",
    "50% off everything %ABC is not an escape",
]

test_each_shape_loses_its_secret, test_each_look_alike_comes_back_verbatim = shape_checks(SECRETS, LOOK_ALIKES)
