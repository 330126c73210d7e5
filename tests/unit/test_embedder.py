"""Choosing the local embedder by name, and the hash embedder's own promises."""

from __future__ import annotations

from pathlib import Path

import pytest

from memvault.adapters.local.embedder import HashEmbedder, MiniLmEmbedder, make_embedder, verified
from memvault.core.errors import InvalidInput
from memvault.core.settings import load_settings


def test_minilm_is_chosen_by_name_without_loading_the_model() -> None:
    embedder = make_embedder("minilm")
    assert isinstance(embedder, MiniLmEmbedder)
    assert embedder.dimension == 384
    assert "MiniLM" in embedder.model_id


def test_names_are_trimmed_and_case_insensitive() -> None:
    assert isinstance(make_embedder(" MiniLM "), MiniLmEmbedder)
    assert isinstance(make_embedder("HASH"), HashEmbedder)


def test_the_default_setting_selects_the_real_model() -> None:
    assert isinstance(make_embedder(load_settings({}).embedder), MiniLmEmbedder)


@pytest.mark.parametrize("name", ["", "openai", "mini-lm", "bge"])
def test_unknown_names_are_refused_not_replaced(name: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        make_embedder(name)
    assert repr(name) in caught.value.message
    assert "minilm" in caught.value.message and "hash" in caught.value.message


def test_hash_embedder_says_it_is_for_tests() -> None:
    assert "test" in HashEmbedder().model_id


def test_hash_embedder_dimension_is_configurable() -> None:
    embedder = HashEmbedder(dimension=64)
    assert embedder.dimension == 64
    assert len(embedder.embed_one("hello world")) == 64


def test_hash_embedder_refuses_a_tiny_dimension() -> None:
    with pytest.raises(InvalidInput):
        HashEmbedder(dimension=2)


def test_minilm_refuses_an_empty_batch_size() -> None:
    with pytest.raises(InvalidInput):
        MiniLmEmbedder(batch_size=0)


def test_a_changed_bundled_file_is_refused(tmp_path: Path) -> None:
    impostor = tmp_path / "tokenizer.json"
    impostor.write_text("{}")
    with pytest.raises(RuntimeError, match="not the file memvault expects"):
        verified(impostor)


def test_more_texts_than_lanes_give_every_lane_a_share_of_similar_lengths() -> None:
    from memvault.adapters.local.embedder import padded_batches, spread

    lengths = [3, 30, 4, 5, 31, 6, 7, 8]
    halves = spread(padded_batches(lengths, 64, 2048), 2)
    assert halves == [[0, 2, 3, 5], [6, 7, 1, 4]]  # shortest first, split where the lengths are
    assert sorted(i for batch in spread(padded_batches(lengths, 2, 2048), 3) for i in batch) == list(range(8))
    assert spread([[0]], 4) == [[0]]  # one text is one run, however many lanes
    assert [len(b) for b in spread([[0, 1, 2, 3, 4, 5, 6]], 4)] == [1, 2, 2, 2]


def test_lanes_side_by_side_embed_exactly_as_one_run_does() -> None:
    import numpy as np

    texts = [f"message {n}: we talked about {'the garden ' * (n % 7)}and the weather" for n in range(90)]
    alone = MiniLmEmbedder(lanes=1).embed_sync(texts)
    lanes = MiniLmEmbedder(lanes=3).embed_sync(texts)
    assert np.allclose(np.array(alone), np.array(lanes), atol=1e-6)
    with pytest.raises(InvalidInput):
        MiniLmEmbedder(lanes=0)
