"""The Encoder protocol: constructions and trained checkpoints provide it; a Transformer does not."""


def test_constructions_and_trained_models_are_encoders():
    from expressivity import constructions
    from expressivity.constructions.base import Encoded, Encoder
    from expressivity.limits.trained import TrainedModel

    c = constructions.get("parity")
    assert isinstance(c, Encoder)
    t = TrainedModel(c.transformer, c.language)
    assert isinstance(t, Encoder)
    assert isinstance(t.encode(["0110"]), Encoded)
    assert not isinstance(c.transformer, Encoder)


def test_token_encoder_encodes_symbols_prefix_suffix_and_readout():
    import numpy as np

    from expressivity import languages
    from expressivity.limits import TokenEncoder
    from expressivity.limits.models import random_transformer

    t = random_transformer(seed=1, attention="hardmax", n_ctx=16, vocab=4)
    enc = TokenEncoder(t, symbols=(2, 3), prefix=(0,), suffix=(1,), readout=-1)
    out = enc.encode_ids(np.array([[0, 1, 1], [1, 0, 0]]))
    assert out.inputs.tolist() == [[0, 2, 3, 3, 1], [0, 3, 2, 2, 1]]
    assert out.key_mask is None and out.read.tolist() == [4, 4]
    parity = TokenEncoder(t, languages.get("parity"), symbols=(2, 3))
    assert parity.encode(["011"]).inputs.tolist() == [[2, 3, 3]]  # alphabet "01": '0' -> 2, '1' -> 3


def test_as_encoder_passes_encoders_through_and_wraps_transformers():
    import pytest

    from expressivity import constructions, languages
    from expressivity.limits import TokenEncoder, as_encoder
    from expressivity.limits.models import random_transformer

    c = constructions.get("parity")
    assert as_encoder(c) == (c, c.language)
    with pytest.raises(ValueError, match="not the model's"):
        as_encoder(c, languages.get("dyck", k=1))
    t = random_transformer(vocab=3)
    enc, lang = as_encoder(t, alphabet_size=2)
    assert isinstance(enc, TokenEncoder) and enc.symbols == (0, 1) and lang is None
    enc, lang = as_encoder(t, languages.get("parity"))
    assert enc.symbols == (0, 1) and lang.name == "parity"
    with pytest.raises(ValueError, match="d_vocab"):
        as_encoder(t, alphabet_size=5)


def test_model_outputs_reads_each_strings_own_position_for_an_encoder():
    """Restriction outputs through a construction: the value at its read position, equal to
    the construction's own logits."""
    import numpy as np

    from expressivity import constructions
    from expressivity.limits.restriction import model_outputs

    c = constructions.get("first")
    ids = np.array([[0, 1, 1, 0], [1, 0, 0, 0]])
    out = model_outputs(c.transformer, c, ids)
    np.testing.assert_allclose(out[:, 0], c.logits(c.language.to_strings(ids)), rtol=1e-12)


def test_resolve_model_by_name():
    import pytest

    from expressivity import constructions
    from expressivity.limits.models import resolve_model
    from expressivity.transformer import Transformer

    m = resolve_model("random", seed=3, attention="hardmax", n_ctx=9, vocab=3)
    assert isinstance(m, Transformer) and m.cfg.attention == "hardmax" and m.cfg.d_vocab == 3
    assert resolve_model("first").name == constructions.get("first").name
    with pytest.raises(ValueError, match="constructions only"):
        resolve_model("random", {"k": 2})
    with pytest.raises(ValueError, match="not 'random', a construction"):
        resolve_model("nope")


def test_a_trained_model_reads_the_tokens_its_task_trained_on():
    """TrainedModel.encode gives exactly the inputs of the task's batches (languages/tasks.py)."""
    import numpy as np

    from expressivity import constructions, languages
    from expressivity.limits.trained import TrainedModel

    c = constructions.get("parity")
    for kind in ("recognition", "next_symbol"):
        task = languages.get_task("dyck", kind, k=2)
        batch = task.sample_batch(np.random.default_rng(0), 6, 8)
        strings = task.vocab.decode(batch["input"])
        enc = TrainedModel(c.transformer, task.language, kind).encode(strings)
        assert enc.inputs.tolist() == batch["input"].tolist(), kind


def test_random_transformer_is_the_one_random_model():
    """The CLI's ``random`` model, the limits claims' models and the bench's are one factory:
    its options reach the config, one seed gives one set of weights, bad options are refused."""
    import numpy as np
    import pytest
    import torch

    from expressivity.limits.models import random_transformer
    from expressivity.report.limits_claims import _random_softmax

    a = random_transformer(seed=2, n_layers=3, n_ctx=9, positional="sinusoidal", dtype="float64")
    assert (a.cfg.n_layers, a.cfg.n_ctx, a.cfg.positional, a.cfg.dtype, a.cfg.lam) == (3, 9, "sinusoidal",
                                                                                     "float64", 0.1)
    b = random_transformer(seed=2, n_layers=3, n_ctx=9, positional="sinusoidal", dtype="float64")
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))
    claim = _random_softmax(2, 9)
    assert claim.cfg == random_transformer(2, lam=1 / np.sqrt(8), n_ctx=9, positional="sinusoidal",
                                           dtype="float64").cfg
    with pytest.raises(ValueError, match="n_layers"):
        random_transformer(n_layers=0)
