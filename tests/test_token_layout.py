"""One token layout writer (``languages.token_layout``): the tasks, the hand-built constructions
and the limits' token-id adapter all write their layouts through it, and it agrees with the
independent per-string reference ``Vocab.encode``."""

from __future__ import annotations

import doctest

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from expressivity import constructions, languages
from expressivity.languages import BOS, CLS, EOS_TOKEN, PAD, Vocab, token_layout, vocab
from expressivity.languages.tasks import bos_tokens, cls_tokens
from expressivity.limits import TokenEncoder
from expressivity.limits.models import random_transformer


def test_docstring_example_holds():
    result = doctest.testmod(vocab)
    assert result.attempted >= 1 and result.failed == 0


@settings(max_examples=60, deadline=None)
@given(alphabet=st.sampled_from(["01", "ab", "()[]"]), B=st.integers(0, 4), n=st.integers(0, 6),
       bos=st.booleans(), eos=st.booleans(), cls=st.booleans(), seed=st.integers(0, 2**16))
def test_layout_matches_the_per_string_encoder(alphabet, B, n, bos, eos, cls, seed):
    v = Vocab(alphabet)
    ids = np.random.default_rng(seed).integers(0, len(alphabet), (B, n))
    strings = ["".join(alphabet[i] for i in row) for row in ids]
    got = token_layout(v.ids_of(ids), prefix=(BOS,) * bos, suffix=(EOS_TOKEN,) * eos + (CLS,) * cls)
    assert got.dtype == np.int64 and got.shape == (B, n + bos + eos + cls)
    if B:
        assert got.tolist() == v.encode(strings, bos=bos, eos=eos, cls=cls).tolist()


def test_a_batch_must_be_two_dimensional():
    import pytest

    with pytest.raises(ValueError, match="batch, length"):
        token_layout(np.arange(3))


def test_every_writer_is_this_layout():
    v = Vocab("01")
    ids = np.array([[0, 1, 1], [1, 0, 0]])
    body = v.ids_of(ids)
    assert cls_tokens(v, ids).tolist() == token_layout(body, suffix=(CLS,)).tolist()
    assert bos_tokens(v, ids).tolist() == token_layout(body, prefix=(BOS,)).tolist()
    strings = ["011", "100"]
    pc = constructions.get("parity-compiled", max_length=5)
    T = pc.transformer.cfg.n_ctx
    assert pc.encode(strings).inputs.tolist() == token_layout(body, (CLS,), (PAD,) * (T - 4)).tolist()
    dyck = constructions.get("dyck")
    brackets = ["()(", "(()"]
    d_ids = dyck.language.to_ids(brackets)
    enc = dyck.encode(brackets)
    n_bos = enc.inputs.shape[1] - 4
    assert enc.inputs.tolist() == token_layout(Vocab(dyck.language.alphabet).ids_of(d_ids), (BOS,) * n_bos,
                                               (CLS,)).tolist()
    t = random_transformer(seed=0, n_ctx=8, vocab=6)
    adapter = TokenEncoder(t, languages.get("parity"), symbols=(4, 5), prefix=(1,), suffix=(3, 3))
    assert adapter.encode_ids(ids).inputs.tolist() == token_layout(ids + 4, (1,), (3, 3)).tolist()
