"""Tokenisation and task batches: shapes, targets and determinism."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from expressivity import languages as L
from expressivity.languages import BOS, CLS, PAD, Vocab


def test_vocab_roundtrip_and_specials():
    v = Vocab("()[]")
    assert len(v) == 8 and v.tokens[:4] == ("<pad>", "<bos>", "<eos>", "<cls>")
    ids = v.encode(["([])", "()"], bos=True, cls=True)
    assert ids.dtype == torch.long and ids.shape == (2, 6)
    assert ids[0, 0] == BOS and ids[0, 5] == CLS and ids[1, 3] == CLS and ids[1, 5] == PAD
    assert v.decode(ids) == ["([])", "()"]
    with pytest.raises(ValueError, match="not in the alphabet"):
        v.encode(["(x)"])


@pytest.mark.parametrize("name,params", [("parity", {}), ("majority", {}), ("dyck", {"k": 2}),
                                         ("dyck", {"k": 2, "max_depth": 3})])
def test_next_symbol_batch_targets_are_the_language_distributions(name, params):
    task = L.get_task(name, "next_symbol", **params)
    rng = np.random.default_rng(0)
    b = task.sample_batch(rng, 4, 6)
    assert b["input"].shape == (4, 7) and b["output"].shape == (4, 7, len(task.language.alphabet) + 1)
    assert b["mask"].all() and (b["input"][:, 0] == BOS).all()
    for row, target in zip(task.vocab.decode(b["input"]), b["output"]):
        assert task.language.accepts(row) and len(row) == 6
        for t in range(7):  # target at position t = p*(· | first t symbols)
            dist = task.language.next_symbol_distribution(row[:t])
            assert torch.allclose(target[t], torch.tensor(list(dist.values()), dtype=torch.float32))


def test_recognition_reads_label_at_cls():
    task = L.get_task("dyck", "recognition", k=2)
    b = task.sample_batch(np.random.default_rng(1), 10, 8)
    assert (b["input"][:, -1] == CLS).all()
    assert b["mask"][:, -1].all() and not b["mask"][:, :-1].any()
    assert torch.equal(b["output"][:, -1].argmax(-1), b["label"])


def test_batches_deterministic_given_rng():
    task = L.get_task("dyck", "recognition", k=2, max_depth=4)
    a = task.sample_batch(np.random.default_rng(9), 16, 12)
    b = task.sample_batch(np.random.default_rng(9), 16, 12)
    c = task.sample_batch(np.random.default_rng(10), 16, 12)
    assert torch.equal(a["input"], b["input"]) and not torch.equal(a["input"], c["input"])


def test_task_lengths():
    dyck = L.get_task("dyck", "next_symbol")
    assert dyck.valid_lengths(range(1, 7)) == [2, 4, 6]
    with pytest.raises(ValueError, match="no positive strings of length 5"):
        dyck.sample_batch(np.random.default_rng(0), 2, 5)
    assert L.get_task("parity", "recognition").valid_lengths(range(3)) == [1, 2]
