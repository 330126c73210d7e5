"""Measures the secret gate on the corpus in tests/data/secrets: per split and family, how many
secrets it caught and how many look-alikes it kept verbatim, beside the targets (97 % caught, at
most 2 % touched). ``--split NAME`` limits it to one split; ``--show`` prints each miss and each
touched look-alike as the gate returned it.

    .venv/bin/python scripts/secret_gate_probe.py --split heldout2 --show
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from memvault.core.redaction import redact
from secret_corpus import HARMLESS, SECRETS, caught, report, shares


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", help="one split only (tuned, heldout, heldout2, heldout3)")
    parser.add_argument("--show", action="store_true", help="print each miss and each touched look-alike")
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
