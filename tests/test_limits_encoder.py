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
