"""Measures the secret gate on the corpus in tests/data/secrets: per split and family, how many
secrets it caught and how many look-alikes it kept verbatim, beside the targets (97 % caught, at
most 2 % touched). ``--split NAME`` limits it to one split; ``--show`` prints each miss and each
touched look-alike as the gate returned it. ``--locomo FILE`` also times the gate on every turn of
the LoCoMo conversations in FILE (CPU milliseconds per text, best of three passes), beside the
target of 0.25 ms: the gate reads every recalled text; and counts the turns it changes, which
should be none (ordinary conversation holds no secret).

    .venv/bin/python scripts/secret_gate_probe.py --split heldout3 --show
    .venv/bin/python scripts/secret_gate_probe.py --locomo ../shared/bench/locomo/locomo-dev.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from memvault.core.redaction import redact
from secret_corpus import HARMLESS, SECRETS, caught, report, shares


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", help="one split only (tuned, heldout, heldout2 … heldout10)")
    parser.add_argument("--show", action="store_true", help="print each miss and each touched look-alike")
    parser.add_argument("--locomo", type=Path, help="time the gate on the turns of this LoCoMo file")
    args = parser.parse_args()
    if args.locomo:
        turns = locomo_turns(args.locomo)
        print(f"{milliseconds_per_text(turns):.3f} ms per text on LoCoMo turns (target <= 0.25)")
        changed = [turn for turn in turns if redact(turn).text != turn]
        print(f"{len(changed)}/{len(turns)} LoCoMo turns changed (target 0)")
        if args.show:
            for turn in changed:
                print(f"\nCHANGED LoCoMo turn: {redact(turn).text!r}")
    secrets = [case for case in SECRETS if args.split in (None, case.split)]
    harmless = [case for case in HARMLESS if args.split in (None, case.split)]
    missed = [case for case in secrets if not caught(case, redact(case.text).text)]
    touched = [case for case in harmless if redact(case.text).text != case.text]
    print(report("secrets caught", shares(secrets, lambda case: case not in missed)))
    print(report("look-alikes kept", shares(harmless, lambda case: case not in touched)))
    print(f"caught {len(secrets) - len(missed)}/{len(secrets)} = {100 * (1 - len(missed) / max(1, len(secrets))):.1f}%"
          " (target >= 97%)")
    print(f"touched {len(touched)}/{len(harmless)} = {100 * len(touched) / max(1, len(harmless)):.1f}%"
          " (target <= 2%)")
    if args.show:
        for case in missed:
            print(f"\nMISSED {case.split}/{case.family}: {redact(case.text).text!r}")
        for case in touched:
            print(f"\nTOUCHED {case.split}/{case.family}: {redact(case.text).text!r}")


def locomo_turns(path: Path) -> list[str]:
    return [turn["text"] for sample in json.loads(path.read_text()) for name, session in sample["conversation"].items()
            if name.startswith("session_") and isinstance(session, list) for turn in session if turn.get("text")]


def milliseconds_per_text(turns: list[str]) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        for text in turns:
            redact(text)
        best = min(best, time.process_time() - started)
    return 1000 * best / max(1, len(turns))


if __name__ == "__main__":
    main()
