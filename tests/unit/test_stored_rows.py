from __future__ import annotations

import json
import random

from memvault.core.memory.rows import source_ids


def test_stored_source_ids_read_back_as_written_whatever_the_ids_hold() -> None:
    rng = random.Random(7)
    alphabet = 'ab7_-"\\[],: é\u2028\u00a0'
    for _ in range(20_000):
        ids = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6))) for _ in range(rng.randint(0, 3))]
        for stored in (json.dumps(ids), json.dumps(ids, ensure_ascii=False)):
            assert source_ids(stored) == tuple(ids), stored


def test_common_shapes_of_stored_ids() -> None:
    assert source_ids('["m-1"]') == ("m-1",)
    assert source_ids('["a", "b"]') == ("a", "b")
    assert source_ids('["a\\"b"]') == ('a"b',)
    assert source_ids("[]") == ()
