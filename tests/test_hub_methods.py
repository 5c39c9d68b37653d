"""save_pretrained / from_pretrained / push_to_hub as methods of every model kind
(expressivity.pretrained): local directories offline, the free functions as thin wrappers, a
repo id through huggingface_hub (hf_hub_download and HfApi monkeypatched: no network)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from expressivity import constructions
from expressivity.compile import CompiledModel, compile_maxout
from expressivity.constructions import Construction
from expressivity.cpwl import MaxoutNetwork
from expressivity.cpwl.relu import from_relu_mlp
from expressivity.interop import TrainedRun, from_pretrained, load_run, save_pretrained
from expressivity.limits.trained import TrainedModel
from expressivity.transformer import Transformer, TransformerConfig

X = np.random.default_rng(0).uniform(-1, 1, (400, 2))


def _bits(a, b) -> bool:
    a, b = (x.detach().numpy() if isinstance(x, torch.Tensor) else np.asarray(x) for x in (a, b))
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _tr() -> Transformer:
    m = Transformer(TransformerConfig(d_model=8, n_layers=2, n_heads=2, d_head=4, d_mlp=8, d_vocab=5, d_out=3,
                                      n_ctx=12, layer_norm="pre", dtype="float64"))
    m.reset_parameters(seed=4)
    return m


def _net() -> MaxoutNetwork:
    return MaxoutNetwork.random(in_dim=2, widths=[4, 3], ranks=[3, 2], seed=2)


def _run(tmp_path: Path) -> TrainedRun:
    from expressivity.train import RunConfig, train_run

    cfg = RunConfig(task="parity", model="lstm", d_model=4, heads=1, layers=1, steps=2, batch_size=2,
                    train_lengths=(2, 3), test_lengths=(4,), eval_batch=2, checkpoint_every=1)
    train_run(cfg, out_dir=tmp_path / "run")
    return load_run(tmp_path / "run")


def _models(tmp_path):
    """(class, model, how to compare two of them)."""
    ids = torch.randint(0, 5, (3, 7), generator=torch.Generator().manual_seed(0))
    parity = constructions.get("parity")
    tm = TrainedModel(_tr(), parity.language)
    run = _run(tmp_path)
    return [
        (Transformer, _tr(), lambda a, b: _bits(a(ids), b(ids))),
        (CompiledModel, compile_maxout(_net(), (-1.0, 1.0)),
         lambda a, b: _bits(a.evaluate(X), b.evaluate(X)) and _bits(a.net(X), b.net(X))),
        (Construction, parity, lambda a, b: _bits(a.logits(["0110", "111"]), b.logits(["0110", "111"]))),
        (TrainedModel, tm, lambda a, b: _bits(a.transformer(ids), b.transformer(ids)) and a.kind == b.kind),
        (TrainedRun, run, lambda a, b: _bits(a(run.sample_inputs(4)), b(run.sample_inputs(4)))),
        (MaxoutNetwork, _net(), lambda a, b: _bits(a(X), b(X))),
    ]


def test_every_kind_round_trips_through_its_methods(tmp_path):
    for i, (cls, model, same) in enumerate(_models(tmp_path)):
        d = model.save_pretrained(tmp_path / f"m{i}")
        back = cls.from_pretrained(d)
        assert type(back) is type(model) and same(model, back), cls.__name__
        # the free functions are the same thing: identical bytes, the same model back
        save_pretrained(model, tmp_path / f"f{i}")
        for name in ("config.json", "model.safetensors"):
            assert (d / name).read_bytes() == (tmp_path / f"f{i}" / name).read_bytes()
        assert same(model, from_pretrained(tmp_path / f"f{i}"))


def test_relu_net_as_a_network(tmp_path):
    mlp = torch.nn.Sequential(torch.nn.Linear(2, 6), torch.nn.ReLU(), torch.nn.Linear(6, 1)).double()
    net = from_relu_mlp(mlp)
    back = MaxoutNetwork.from_pretrained(net.save_pretrained(tmp_path / "relu"))
    with torch.no_grad():
        want = mlp(torch.as_tensor(X)).numpy()
    assert _bits(back(X), net(X)) and np.abs(back(X) - want).max() < 1e-12


def test_a_class_refuses_another_kind(tmp_path):
    compile_maxout(_net(), (-1.0, 1.0)).save_pretrained(tmp_path / "cm")
    with pytest.raises(ValueError, match="holds a compiled model, not a transformer") as info:
        Transformer.from_pretrained(tmp_path / "cm")
    assert "\n" not in str(info.value) and "interop.from_pretrained" in str(info.value)
    assert isinstance(from_pretrained(tmp_path / "cm"), CompiledModel)


def test_a_training_output_directory_loads_as_a_run(tmp_path):
    run = _run(tmp_path)
    back = TrainedRun.from_pretrained(tmp_path / "run")
    assert _bits(back(run.sample_inputs(3)), run(run.sample_inputs(3)))


def test_a_network_record_is_checked(tmp_path):
    import json

    d = _net().save_pretrained(tmp_path / "n")
    doc = json.loads((d / "config.json").read_text())
    doc["network"]["depth"] = 3
    (d / "config.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="missing") as info:
        MaxoutNetwork.from_pretrained(d)
    assert "model.safetensors" in str(info.value)
    with pytest.raises(ValueError, match="not a transformer"):
        from expressivity.interop import transformer_of

        transformer_of(_net())


# --------------------------------------------------------------------------- the Hugging Face hub
pytest.importorskip("huggingface_hub", reason="repo ids need the extra: pip install 'expressivity[hub]'")


class FakeHub:
    """hf_hub_download over a local "remote" directory: copies the file into a snapshot dir."""

    def __init__(self, remote: Path, cache: Path):
        self.remote, self.cache, self.calls = remote, cache, []

    def __call__(self, repo_id, filename, **kw):
        self.calls.append((repo_id, filename, kw))
        src = self.remote / filename
        if not src.is_file():
            from huggingface_hub.errors import EntryNotFoundError

            raise EntryNotFoundError(f"{filename} not in {repo_id}")
        snap = self.cache / repo_id.replace("/", "--") / "snapshots" / "abc123"
        snap.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, snap / filename)
        return str(snap / filename)


def test_a_repo_id_goes_through_hf_hub_download(tmp_path, monkeypatch):
    import huggingface_hub

    cm = compile_maxout(_net(), (-1.0, 1.0))
    cm.save_pretrained(tmp_path / "remote")
    fake = FakeHub(tmp_path / "remote", tmp_path / "cache")
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake)
    monkeypatch.chdir(tmp_path)  # "someone/compiled" is no local path here
    back = CompiledModel.from_pretrained("someone/compiled", revision="v1", local_files_only=True)
    assert _bits(back.evaluate(X), cm.evaluate(X)) and back.net is not None
    assert [c[1] for c in fake.calls] == ["config.json", "model.safetensors", "source_net.safetensors"]
    assert all(c[0] == "someone/compiled" and c[2]["revision"] == "v1" and c[2]["local_files_only"]
               for c in fake.calls)
    assert isinstance(from_pretrained("someone/compiled"), CompiledModel)  # the free function too


def test_a_failed_download_is_one_line(tmp_path, monkeypatch):
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", FakeHub(tmp_path / "empty", tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError) as info:
        Transformer.from_pretrained("someone/missing")
    msg = str(info.value)
    assert "\n" not in msg and "does not exist" in msg and "someone/missing" in msg and "EntryNotFound" in msg


def test_local_paths_never_reach_the_hub(tmp_path, monkeypatch):
    import huggingface_hub

    def boom(**kw):
        raise AssertionError("hf_hub_download called for a local path")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", boom)
    (tmp_path / "org").mkdir()
    monkeypatch.chdir(tmp_path)
    for name in (tmp_path / "nope", "org/nope", "./nope", "../nope", "nope.safetensors"):
        with pytest.raises(ValueError, match="does not exist"):
            from_pretrained(name)


def test_without_huggingface_hub_a_repo_id_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # import fails
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=r"expressivity\[hub\]"):
        Transformer.from_pretrained("someone/model")
    _tr().save_pretrained(tmp_path / "local")  # local directories need nothing
    assert isinstance(Transformer.from_pretrained(tmp_path / "local"), Transformer)


def test_push_to_hub_uploads_the_saved_directory(tmp_path, monkeypatch):
    import huggingface_hub

    seen = {}

    class FakeApi:
        def __init__(self, token=None):
            seen["token"] = token

        def create_repo(self, repo_id, private=None, exist_ok=False):
            seen["repo"] = (repo_id, private, exist_ok)

        def upload_folder(self, folder_path, repo_id, commit_message, allow_patterns):
            seen["files"] = sorted(p.name for p in Path(folder_path).iterdir())
            seen["config"] = (Path(folder_path) / "config.json").read_text()
            return type("Info", (), {"commit_url": f"https://huggingface.co/{repo_id}/commit/1"})()

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    cm = compile_maxout(_net(), (-1.0, 1.0))
    url = cm.push_to_hub("someone/compiled", token="t", private=True)
    assert url.endswith("someone/compiled/commit/1") and seen["repo"] == ("someone/compiled", True, True)
    assert seen["files"] == ["config.json", "model.safetensors", "source_net.safetensors"] and seen["token"] == "t"
    assert '"kind": "compiled"' in seen["config"]
    with pytest.raises(ValueError, match="repo_id"):
        cm.push_to_hub("not a repo id")
    seen.clear()  # save_pretrained(..., push_to_hub=True) keeps the directory and uploads it
    d = cm.net.save_pretrained(tmp_path / "my-net", push_to_hub=True, repo_id="someone/net")
    assert seen["repo"][0] == "someone/net" and seen["files"] == ["config.json", "model.safetensors"]
    assert (d / "config.json").is_file()
