"""Every failure is one line on stderr and a non-zero exit, never a traceback; a refused import
stores nothing."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

from cli_support import (
    MEMVAULT,
    Shell,
    assert_fails,
    conversation,
    created_key,
    memvault,
    user_environment,
    write_jsonl,
)


def test_a_missing_file_a_usage_mistake_and_a_missing_key_as_a_user_meets_them(tmp_path: Path) -> None:
    key = created_key(tmp_path / "data", tmp_path)
    folder = ("--data-dir", str(tmp_path / "data"))
    assert_fails(memvault("import", "nowhere.jsonl", "--key", key, *folder, cwd=tmp_path), 2, "nowhere.jsonl",
                 "No such file or directory")
    assert_fails(memvault("search", "x", "--frobnicate", *folder, cwd=tmp_path), 2, "No such option", "--frobnicate",
                 "see memvault search --help")
    assert_fails(memvault("search", *folder, cwd=tmp_path), 2, "Missing argument 'QUERY'")
    assert_fails(memvault("search", "x", *folder, cwd=tmp_path), 2, "a memory key is required", "MEMVAULT_KEY")
    assert_fails(memvault("serve", "--port", "99999", cwd=tmp_path), 2, "99999")


def test_bad_lines_are_refused_before_anything_is_stored(shell: Shell, tmp_path: Path) -> None:
    key = shell("keys", "create").out.strip()
    good = [json.dumps(line) for line in conversation()]
    cases = {
        "not JSON": [*good[:3], "{oops", *good[3:]],
        "line 2: role must be one of": [good[0], json.dumps({"role": "robot", "content": "hi"})],
        "line 1: content must be non-empty text": [json.dumps({"role": "user", "content": " "})],
        "line 1: vault must be 'core' or 'session:<id>'": [json.dumps({"role": "user", "content": "x", "vault": "attic"})],
        "line 1: type must be one of pending, message, chunk": [json.dumps({"type": "fact", "role": "user", "content": "x"})],
        "line 1: said_again must be a list of ids": [json.dumps({"role": "user", "content": "x", "said_again": "y"})],
        "line 1: source_ids must hold the one id": [json.dumps({"type": "message", "role": "user", "text": "x"})],
    }
    for fragment, lines in cases.items():
        source = tmp_path / "bad.jsonl"
        source.write_text("\n".join(lines) + "\n")
        assert_fails(shell("import", str(source), "--key", key), 2, fragment, "nothing was imported")
    (tmp_path / "binary.jsonl").write_bytes(b'{"role": "user", "content": "ok"}\n\xff\xfe\x00garbage\n')
    assert_fails(shell("import", str(tmp_path / "binary.jsonl"), "--key", key), 2, "line 2: not UTF-8 text")
    exported = shell("export", "--key", key)
    assert exported.code == 0 and exported.out == ""


def test_unknown_and_revoked_keys_and_ids(shell: Shell) -> None:
    assert_fails(shell("stats", "--key", "mk_not-a-key"), 2)  # no data folder yet
    key = shell("keys", "create", "--label", "soon revoked").out.strip()
    key_id = json.loads(shell("keys", "list", "--json").out)[0]["id"]
    assert_fails(shell("export", "--key", "mk_not-a-key"), 2, "unknown or revoked memory key")
    assert_fails(shell("search", "x", "--key", "not-even-a-key"), 2, "a memory key (mk_…) is required")
    assert_fails(shell("keys", "revoke", "key_nope"), 2, "no active key key_nope")
    assert shell("keys", "revoke", key_id).code == 0
    assert_fails(shell("keys", "revoke", key_id), 2, f"no active key {key_id}")
    assert_fails(shell("search", "x", "--key", key), 2, "unknown or revoked memory key")
    assert shell("keys", "list").out.strip() == f"{key_id}\trevoked\tsoon revoked"


def test_restore_refuses_what_is_not_a_backup(shell: Shell, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert_fails(shell("restore", str(empty)), 2, f"no backup at {empty}")
    assert_fails(shell("restore", str(tmp_path / "absent")), 2, "does not exist")
    chat = write_jsonl(tmp_path / "chat.jsonl", conversation())
    assert_fails(shell("restore", str(chat)), 2, "not a memvault backup")
    (tmp_path / "binary.jsonl").write_bytes(b"\xff\xfe\x00")
    assert_fails(shell("restore", str(tmp_path / "binary.jsonl")), 2, "is not a backup")


def _interruptible() -> None:
    # As in a terminal's foreground: a suite started in the background (`cmd &` without job
    # control) hands its children SIGINT ignored, and an ignored signal survives exec.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_is_one_line_and_exit_130(tmp_path: Path) -> None:
    key = created_key(tmp_path / "data", tmp_path)
    process = subprocess.Popen(
        [str(MEMVAULT), "import", "-", "--key", key, "--data-dir", str(tmp_path / "data")], cwd=tmp_path,
        env=user_environment(), stdin=subprocess.PIPE, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        preexec_fn=_interruptible,
    )
    assert process.stderr is not None and process.stdin is not None
    try:
        # Waiting on stdin, once it says so: then the interrupt.
        assert process.stderr.readline().startswith("reading ")
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=60)
    finally:
        process.stdin.close()
        if process.poll() is None:
            process.kill()
    err = process.stderr.read()
    assert code == 130 and "Traceback" not in err and err.strip().splitlines()[-1] == "error: interrupted", err


def test_a_reader_that_stops_early_gets_no_traceback(tmp_path: Path) -> None:
    key = created_key(tmp_path / "data", tmp_path)
    lines = [{"role": "user", "content": f"Line {i} of a long history about the lighthouse at Skerry {'x' * 200}."}
             for i in range(600)]
    source = write_jsonl(tmp_path / "long.jsonl", lines)
    assert memvault("import", str(source), "--key", key, "--data-dir", str(tmp_path / "data"), cwd=tmp_path).code == 0
    process = subprocess.Popen([str(MEMVAULT), "export", "--key", key, "--data-dir", str(tmp_path / "data")],
                               cwd=tmp_path, env=user_environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    process.stdout.close()  # as `memvault export | head -1` does
    deadline = time.monotonic() + 120
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    err = process.stderr.read().decode()
    assert json.loads(first)["type"] in ("chunk", "message") and process.returncode is not None
    assert "Traceback" not in err and "Exception ignored" not in err, err


def test_serve_on_a_port_something_listens_on_is_one_error_line_before_it_says_it_serves(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        ran = memvault("serve", "--port", str(port), "--data-dir", str(tmp_path / "data"), cwd=tmp_path)
    assert_fails(ran, 2, f"cannot serve on 127.0.0.1:{port}", "--port N")
    assert "serving on" not in ran.err
