"""One answer to "what kind of model is this" (``model_kinds.kind_of``), which regions' lowering,
the hub layout and the limits analyses all ask."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from expressivity import constructions, languages
from expressivity.compile import compile_maxout
from expressivity.cpwl import MaxoutNetwork
from expressivity.interop import model_kind
from expressivity.interop.runs import TrainedRun
from expressivity.limits.encoder import TokenEncoder, as_transformer, is_encoder
from expressivity.limits.trained import TrainedModel
from expressivity.model_kinds import KINDS, kind_of, register
from expressivity.regions import lower
from expressivity.train import RunConfig, build_model
from expressivity.transformer import Transformer, TransformerConfig


def _tokens() -> Transformer:
    return Transformer(TransformerConfig(d_model=4, n_layers=1, n_heads=1, d_head=4, d_mlp=4, d_vocab=3, n_ctx=6))


def _models() -> dict[str, object]:
    net = MaxoutNetwork.random(in_dim=2, widths=[3], ranks=[2], seed=0)
    parity = constructions.get("parity")
    config = RunConfig(task="parity", model="lstm", d_model=4, heads=1, layers=1, steps=1, train_lengths=(2, 3),
                       test_lengths=(4,))
    task = config.make_task()
    return {
        "transformer": _tokens(),
        "compiled": compile_maxout(net, (-1.0, 1.0)),
        "construction": parity,
        "trained": TrainedModel(_tokens(), languages.get("parity")),
        "run": TrainedRun(build_model(config, len(task.vocab), task.n_outputs), config),
        "network": net,
        "program": lower(net),
        "encoder": TokenEncoder(_tokens(), languages.get("parity")),
        "module": nn.Sequential(nn.Linear(2, 3), nn.ReLU()),
    }


def test_every_kind_is_answered_once():
    models = _models()
    assert sorted(models) == sorted(KINDS)
    for kind, model in models.items():
        assert kind_of(model) == kind


def test_the_hub_asks_the_same_question():
    for kind, model in _models().items():
        if kind in ("program", "encoder", "module"):
            with pytest.raises(ValueError, match="cannot save"):
                model_kind(model)
        else:
            assert model_kind(model) == kind


def test_limits_asks_the_same_question():
    models = _models()
    for kind in ("construction", "trained", "encoder"):
        assert is_encoder(models[kind]) and as_transformer(models[kind]) is models[kind].transformer
    for kind in ("transformer", "compiled", "run", "network", "module", "program"):
        assert not is_encoder(models[kind])
    assert as_transformer(models["transformer"]) is models["transformer"]
    with pytest.raises(ValueError, match="expected a Transformer"):
        as_transformer(models["module"])


def test_a_subclass_keeps_its_base_kind_and_protocols_are_seen():
    class Mine(Transformer):
        pass

    m = Mine(_tokens().cfg)
    assert kind_of(m) == "transformer"

    class Duck:  # the Encoder protocol, no registered class
        transformer = _tokens()

        def encode(self, strings):
            raise NotImplementedError

    assert kind_of(Duck()) == "encoder" and as_transformer(Duck()) is Duck.transformer
    assert kind_of(torch.nn.ReLU()) == "module"


def test_no_kind_is_one_line_error_or_the_default():
    with pytest.raises(ValueError, match="no kind of model") as info:
        kind_of(object())
    assert "\n" not in str(info.value)
    assert kind_of(3, default=None) is None
    with pytest.raises(ValueError, match="unknown model kind"):
        register("tensor", object)
