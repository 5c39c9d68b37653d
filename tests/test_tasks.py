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


# ---------------------------------------------------------------- computation steps (transduction)
@pytest.mark.parametrize("c", [0, 1, 3])
def test_computation_steps_repeat_eos_and_shift_the_targets(c):
    """s EOS^{1+c} CLS^m: the outputs move c positions right, everything else is unchanged."""
    from expressivity.languages import CLS, EOS_TOKEN, get_task

    base = get_task("duplicate_string", "transduction")
    task = get_task("duplicate_string", "transduction", computation_steps=c)
    n = 4
    b0, b = (t.sample_batch(np.random.default_rng(3), 5, n) for t in (base, task))
    assert b["input"].shape == (5, n + 1 + c + 2 * n) == (5, task.n_tokens(n))
    assert torch.equal(b["input"][:, :n], b0["input"][:, :n])  # the same strings from the same stream
    assert (b["input"][:, n:n + 1 + c] == EOS_TOKEN).all() and (b["input"][:, n + 1 + c:] == CLS).all()
    assert torch.equal(b["output"][:, n + 1 + c:], b0["output"][:, n + 1:])
    assert not b["mask"][:, :n + 1 + c].any() and b["mask"][:, n + 1 + c:].all()


def test_computation_steps_refused_outside_transductions():
    from expressivity.languages import get_task

    with pytest.raises(ValueError, match="computation_steps.*kind 'classification'"):
        get_task("parity_check", "classification", computation_steps=1)
    with pytest.raises(ValueError, match="computation_steps must be >= 0"):
        get_task("duplicate_string", "transduction", computation_steps=-1)
    with pytest.raises(ValueError, match="computation_steps must be an integer"):
        get_task("duplicate_string", "transduction", computation_steps=1.5)
