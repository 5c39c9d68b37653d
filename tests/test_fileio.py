"""The one safetensors writer, the one JSON reader and the one file-mode rule (expressivity.fileio)."""

from __future__ import annotations

import ast
import os
import stat
from pathlib import Path

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors import safe_open
from safetensors.torch import save as reference_save

from expressivity.fileio import file_mode, read_json, write_atomic, write_json, write_safetensors

SRC = Path(__file__).resolve().parents[1] / "src" / "expressivity"
DTYPES = [torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32,
          torch.int16, torch.int8, torch.uint8, torch.bool]


@pytest.fixture
def umask():
    def set_(mask):
        os.umask(mask)
    old = os.umask(0o022)
    yield set_
    os.umask(old)


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _read(path):
    with safe_open(str(path), framework="pt") as f:
        return {k: f.get_tensor(k) for k in f.keys()}, dict(f.metadata() or {})


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(DTYPES), st.lists(st.integers(0, 3), max_size=3)), min_size=1, max_size=5),
       st.dictionaries(st.text("abc", min_size=1, max_size=3), st.text(max_size=5), max_size=3), st.randoms())
def test_write_safetensors_round_trips_deterministically(tmp_path_factory, specs, meta, rnd):
    d = tmp_path_factory.mktemp("st")
    gen = torch.Generator().manual_seed(rnd.randint(0, 2**31))
    tensors = {}
    for i, (dtype, shape) in enumerate(specs):
        x = torch.randn(shape, generator=gen, dtype=torch.float64) * 50
        tensors[f"t{i}.w"] = x > 0 if dtype is torch.bool else x.to(dtype)
    write_safetensors(d / "a.safetensors", tensors, meta)
    shuffled = dict(rnd.sample(list(tensors.items()), len(tensors)))  # insertion order must not matter
    write_safetensors(d / "b.safetensors", shuffled, dict(reversed(list(meta.items()))))
    assert (d / "a.safetensors").read_bytes() == (d / "b.safetensors").read_bytes()
    got, got_meta = _read(d / "a.safetensors")
    assert got_meta == meta and set(got) == set(tensors)
    for k, t in tensors.items():  # the reference library reads what we wrote, bit for bit
        assert got[k].dtype == t.dtype and got[k].shape == t.shape and torch.equal(got[k], t)
    ref, _ = _read_bytes(reference_save(tensors, metadata=meta or None), d)
    assert all(torch.equal(ref[k], got[k]) for k in tensors)


def _read_bytes(data: bytes, d: Path):
    p = d / "ref.safetensors"
    p.write_bytes(data)
    return _read(p)


def test_write_safetensors_default_metadata_and_refusals(tmp_path):
    write_safetensors(tmp_path / "m.safetensors", {"w": torch.ones(2)})
    assert _read(tmp_path / "m.safetensors")[1] == {"format": "pt"}
    with pytest.raises(ValueError, match="dtype"):
        write_safetensors(tmp_path / "c.safetensors", {"w": torch.ones(2, dtype=torch.complex64)})
    with pytest.raises(ValueError, match="metadata"):
        write_safetensors(tmp_path / "c.safetensors", {"w": torch.ones(2)}, {"step": 3})
    assert not (tmp_path / "c.safetensors").exists()


@pytest.mark.parametrize("mask, want", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_one_file_mode_for_every_writer(tmp_path, umask, mask, want):
    umask(mask)
    assert file_mode() == want
    write_safetensors(tmp_path / "a.safetensors", {"w": torch.zeros(1)})
    write_json(tmp_path / "a.json", {"b": 1})
    write_atomic(tmp_path / "a.pt", lambda p: torch.save({"w": 1}, p))

    def private(p):  # a library that makes its files 0o600 (as some writers do)
        p.write_bytes(b"x")
        os.chmod(p, 0o600)

    write_atomic(tmp_path / "private.bin", private)
    for name in ("a.safetensors", "a.json", "a.pt", "private.bin"):
        assert _mode(tmp_path / name) == want, name


def test_hub_checkpoint_and_transformer_files_share_the_writer(tmp_path):
    """save_pretrained, save_transformer and a training checkpoint's tensors are the writer's bytes."""
    from expressivity.transformer import Transformer, TransformerConfig, save_transformer

    model = Transformer(TransformerConfig(d_model=4, n_heads=1, d_head=4, n_layers=1, d_mlp=4, n_ctx=3, d_vocab=5))
    model.save_pretrained(tmp_path / "hub")
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    write_safetensors(tmp_path / "direct.safetensors", state)
    assert (tmp_path / "hub" / "model.safetensors").read_bytes() == (tmp_path / "direct.safetensors").read_bytes()
    save_transformer(model, tmp_path / "t.safetensors")
    _, meta = _read(tmp_path / "t.safetensors")
    write_safetensors(tmp_path / "t2.safetensors", state, meta)
    assert (tmp_path / "t.safetensors").read_bytes() == (tmp_path / "t2.safetensors").read_bytes()


def test_no_other_safetensors_writer_in_the_package():
    """Only fileio writes safetensors bytes: nobody imports safetensors' save / save_file."""
    offenders = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("safetensors"):
                bad = {a.name for a in node.names} & {"save", "save_file", "save_model"}
                if bad:
                    offenders.append(f"{path.relative_to(SRC)}: {sorted(bad)}")
    assert not offenders, offenders


def test_read_json(tmp_path):
    write_json(tmp_path / "ok.json", {"b": [1, 2], "a": "é"})
    assert read_json(tmp_path / "ok.json", "config") == {"a": "é", "b": [1, 2]}
    assert (tmp_path / "ok.json").read_text(encoding="utf-8").startswith('{\n  "a"')  # sorted keys
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00")
    for name, words in (("missing.json", "does not exist"), ("bad.json", "is not valid JSON"),
                        ("bin.json", "not UTF-8")):
        with pytest.raises(ValueError, match=words) as err:
            read_json(tmp_path / name, "config")
        assert str(err.value).startswith("config ") and "\n" not in str(err.value)
    with pytest.raises(ValueError, match="directory"):
        read_json(tmp_path, "config")
