"""Position encodings of the Transformer (transformer/positions.py), each against a slow
reference written from its published formula, plus length extrapolation, saving and the
RunConfig / CLI surface."""

from __future__ import annotations

import math

import pytest
import torch

from expressivity.train import RunConfig, build_model, train_run
from expressivity.transformer import (
    Transformer,
    TransformerConfig,
    load_transformer,
    save_transformer,
)
from expressivity.transformer import positions as P

ENCODINGS = ("none", "sinusoidal", "learned", "relative", "rope", "alibi", "i_over_n")
UNLIMITED = tuple(e for e in ENCODINGS if e != "learned")


def _scale_free(positional: str, kw: dict) -> bool:
    """Hardmax without a score bias has no λ (TransformerConfig refuses one)."""
    return kw.get("attention") == "hardmax" and positional not in ("alibi", "relative")


def model(positional: str, causal: bool = False, n_ctx: int = 12, H: int = 2, d_head: int = 4,
          dtype: str = "float64", seed: int = 0, **kw) -> Transformer:
    cfg = TransformerConfig(d_model=8, n_layers=2, n_heads=H, d_head=d_head, d_mlp=16, d_vocab=6, d_out=3,
                            n_ctx=n_ctx, positional=positional, causal=causal, dtype=dtype,
                            **{"lam": None if _scale_free(positional, kw) else 0.5, **kw})
    m = Transformer(cfg)
    m.reset_parameters(seed)
    return m


def ids(T: int, B: int = 3, seed: int = 0) -> torch.Tensor:
    return torch.randint(0, 6, (B, T), generator=torch.Generator().manual_seed(seed))


def qk(attn, y):
    """Unrotated q, k: (B, H, T, d_head) straight from the weights."""
    q = torch.einsum("btd,hde->bhte", y, attn.W_Q) + attn.b_Q[None, :, None]
    k = torch.einsum("btd,hde->bhte", y, attn.W_K) + attn.b_K[None, :, None]
    return q, k


# ------------------------------------------------------------------------------ RoPE
def rotate_reference(x: torch.Tensor) -> torch.Tensor:
    """Su et al.: (x_{2i}, x_{2i+1}) at position t times the 2×2 rotation R(t·θ_i), θ_i = 10000^{−2i/d}."""
    *_, T, d = x.shape
    out = torch.empty_like(x)
    for t in range(T):
        for i in range(d // 2):
            angle = t * 10000.0 ** (-2 * i / d)
            R = torch.tensor([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]],
                             dtype=x.dtype)
            out[..., t, 2 * i:2 * i + 2] = x[..., t, 2 * i:2 * i + 2] @ R.T
    return out


def test_rope_rotates_pairs_by_explicit_2x2_rotations():
    x = torch.randn(2, 3, 7, 6, dtype=torch.float64)
    cos, sin = P.rope_tables(7, 6, torch.float64)
    assert torch.allclose(P.rope_rotate(x, cos, sin), rotate_reference(x), atol=1e-13)


def test_rope_scores_depend_on_the_offset_only():
    q, k = torch.randn(1, 1, 1, 8, dtype=torch.float64), torch.randn(1, 1, 1, 8, dtype=torch.float64)
    cos, sin = P.rope_tables(40, 8, torch.float64)

    def score(t, s):
        return (P.rope_rotate(q, cos[t:t + 1], sin[t:t + 1]) * P.rope_rotate(k, cos[s:s + 1], sin[s:s + 1])).sum()

    assert torch.allclose(score(5, 2), score(35, 32)) and torch.allclose(score(0, 9), score(20, 29))
    assert not torch.allclose(score(5, 2), score(5, 3))


@pytest.mark.parametrize("causal", [False, True])
def test_rope_attention_scores_match_the_reference(causal):
    m = model("rope", causal)
    attn, y = m.blocks[0].attn, m.embed(ids(9))
    q, k = qk(attn, y)
    ref = 0.5 * rotate_reference(q) @ rotate_reference(k).transpose(-1, -2)
    if causal:
        ref = ref.masked_fill(~torch.ones(9, 9, dtype=torch.bool).tril(), float("-inf"))
    assert torch.allclose(attn.scores(y), ref, atol=1e-12)


def test_rope_needs_an_even_head_width():
    with pytest.raises(ValueError, match="d_head must be even"):
        model("rope", d_head=3)


# ----------------------------------------------------------------------------- ALiBi
def test_alibi_slopes_as_published():
    assert P.alibi_slopes(8) == [2.0 ** -k for k in range(1, 9)]  # Press et al.: 1/2, 1/4, …, 1/256
    assert P.alibi_slopes(4) == [2.0 ** -k for k in (2, 4, 6, 8)]
    assert P.alibi_slopes(1) == [2.0 ** -8]
    # not a power of 2: the 4-head slopes, then every other one of the 8-head slopes
    assert P.alibi_slopes(6) == [2.0 ** -k for k in (2, 4, 6, 8)] + [2.0 ** -1, 2.0 ** -3]


@pytest.mark.parametrize("causal", [False, True])
def test_alibi_bias_matches_the_formula(causal):
    H, T = 3, 6
    bias = P.alibi_bias(H, T, causal, torch.float64)
    m = P.alibi_slopes(H)
    for h in range(H):
        for t in range(T):
            for s in range(T):
                want = -m[h] * (t - s) if causal else -m[h] * (abs(t - s) - 0.5 * (s < t))
                assert bias[h, t, s].item() == pytest.approx(want, abs=1e-15)


@pytest.mark.parametrize("causal", [False, True])
def test_alibi_attention_scores_match_the_reference(causal):
    m = model("alibi", causal, H=2)
    attn, y = m.blocks[1].attn, m.embed(ids(7))
    q, k = qk(attn, y)
    t = torch.arange(7.0, dtype=torch.float64)
    diff = t[:, None] - t[None, :]
    dist = diff if causal else diff.abs() - 0.5 * (diff > 0)
    slopes = torch.tensor(P.alibi_slopes(2), dtype=torch.float64)
    ref = 0.5 * q @ k.transpose(-1, -2) - slopes[:, None, None] * dist
    if causal:
        ref = ref.masked_fill(~torch.ones(7, 7, dtype=torch.bool).tril(), float("-inf"))
    assert torch.allclose(attn.scores(y), ref, atol=1e-12)


# ------------------------------------------------------------------- relative (T5)
def t5_bucket(rel: int, bidirectional: bool, n_buckets: int = 32, max_distance: int = 128) -> int:
    """Raffel et al.'s _relative_position_bucket for one relative position s − t."""
    ret = 0
    if bidirectional:
        n_buckets //= 2
        ret += n_buckets if rel > 0 else 0
        n = abs(rel)
    else:
        n = max(-rel, 0)
    exact = n_buckets // 2
    if n < exact:
        return ret + n
    large = exact + int(math.log(n / exact) / math.log(max_distance / exact) * (n_buckets - exact))
    return ret + min(large, n_buckets - 1)


@pytest.mark.parametrize("causal", [False, True])
def test_relative_buckets_match_t5(causal):
    T = 300
    got = P.relative_buckets(T, causal)
    for t in (0, 1, 7, 150, 299):
        assert got[t].tolist() == [t5_bucket(s - t, not causal) for s in range(T)]
    if not causal:  # known values: exact below 8, log-spaced to 128, then the last bucket
        assert [t5_bucket(r, True) for r in (0, -1, -7, -8, -200, 1, 200)] == [0, 1, 7, 8, 15, 17, 31]


def test_relative_bias_is_the_learned_table_and_trains():
    m = model("relative")
    attn, y = m.blocks[0].attn, m.embed(ids(10))
    q, k = qk(attn, y)
    b = P.relative_buckets(10, False)
    ref = 0.5 * q @ k.transpose(-1, -2) + attn.W_rel[b].permute(2, 0, 1)
    assert torch.allclose(attn.scores(y), ref, atol=1e-12)
    m(ids(10)).sum().backward()
    assert attn.W_rel.grad is not None and attn.W_rel.grad.abs().sum() > 0


# ------------------------------------------------------------------------------ i/n
def test_i_over_n_adds_the_position_over_the_length():
    m = model("i_over_n")
    x = ids(5)
    want = m.W_E[x] + (torch.arange(1, 6, dtype=torch.float64) / 5)[None, :, None] * m.W_frac
    assert torch.allclose(m.embed(x), want)
    mask = torch.tensor([[True] * 5, [True] * 4 + [False]] * 1 + [[True] * 5])
    y = m.embed(x, mask)
    assert torch.allclose(y[1, 3], m.W_E[x[1, 3]] + m.W_frac[0])  # i = n = 4 on the padded row
    assert torch.allclose(m.embed(x, torch.ones(3, 5, dtype=torch.bool)), want)


def test_sinusoidal_is_the_vaswani_table_at_any_length():
    short, long = model("sinusoidal", n_ctx=6), model("sinusoidal", n_ctx=64)
    x = ids(20)
    assert torch.allclose(short(x), long(x), atol=1e-12)
    t, i, d = 13, 2, 8
    assert (short.embed(x)[0, t, 2 * i] - short.W_E[x[0, t], 2 * i]).item() == pytest.approx(math.sin(t / 10000 ** (2 * i / d)))


# ----------------------------------------------------------------- shared behaviour
@pytest.mark.parametrize("positional", ENCODINGS)
@pytest.mark.parametrize("causal", [False, True])
def test_fast_path_equals_the_hooked_path(positional, causal):
    """SDPA (no cache) and the explicit pattern (cache) compute the same function."""
    m = model(positional, causal, layer_norm="pre")
    x = ids(10)
    cache: dict = {}
    assert torch.allclose(m(x), m(x, cache=cache), atol=1e-12)
    assert cache["blocks.0.attn.hook_pattern"].shape == (3, 2, 10, 10)


@pytest.mark.parametrize("positional", ENCODINGS)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype,tol", [("float64", 1e-10), ("float32", 2e-4)])
def test_fast_path_gradients_equal_the_hooked_paths(positional, causal, dtype, tol):
    """The same gradients through SDPA (whichever kernel it picks for the bias mask) as through
    the explicit pattern, for every parameter (the relative table W_rel included)."""
    m = model(positional, causal, layer_norm="pre", dtype=dtype)
    x = ids(10)
    w = torch.randn(m(x).shape, generator=torch.Generator().manual_seed(3)).to(m(x).dtype)
    grads = []
    for cache in (None, {}):
        m.zero_grad()
        (m(x, cache=cache) * w).sum().backward()
        grads.append({n: p.grad.clone() for n, p in m.named_parameters() if p.grad is not None})
    assert grads[0].keys() == grads[1].keys() and grads[0]
    for name in grads[0]:
        scale = grads[1][name].abs().max().clamp_min(1.0)
        assert (grads[0][name] - grads[1][name]).abs().max() <= tol * scale, name


@pytest.mark.parametrize("positional", ["alibi", "relative", "none", "i_over_n"])
def test_one_wide_heads_and_hardmax_see_the_same_biases(positional):
    """d_head = 1 (the compiled-model layout) and hardmax use the same logits."""
    m = model(positional, d_head=1, attention="hardmax")
    x = ids(8)
    cache: dict = {}
    m(x, cache=cache)
    scores = cache["blocks.0.attn.hook_scores"]
    assert torch.allclose(scores, m.blocks[0].attn.scores(m.embed(x)), atol=1e-12)


@pytest.mark.parametrize("positional", UNLIMITED)
def test_encodings_without_n_ctx_run_past_it(positional):
    m = model(positional, n_ctx=8)
    assert m(ids(30)).shape == (3, 30, 3)


def test_learned_keeps_its_limit_with_a_clear_error():
    with pytest.raises(ValueError, match=r"sequence length 30 exceeds n_ctx = 8 \(positional='learned'"):
        model("learned", n_ctx=8)(ids(30))


def test_default_stays_learned_and_unknown_names_list_the_valid_ones():
    assert TransformerConfig(d_model=4, n_layers=1, n_heads=1, d_head=4, d_mlp=0, d_vocab=3).positional == "learned"
    with pytest.raises(ValueError, match="positional must be one of .*'rope'.*'i_over_n'"):
        model("xpos")


@pytest.mark.parametrize("positional", ENCODINGS)
def test_saved_models_load(tmp_path, positional):
    m = model(positional, dtype="float32")
    save_transformer(m, tmp_path / "m.safetensors")
    back = load_transformer(tmp_path / "m.safetensors")
    x = ids(7)
    assert torch.equal(m(x), back(x))


# --------------------------------------------------------------- RunConfig and CLI
@pytest.mark.parametrize("positional", ENCODINGS)
def test_runconfig_trains_with_every_encoding(positional):
    cfg = RunConfig(task="parity", positional=positional, layers=1, heads=2, d_model=8, train_lengths=(2, 6),
                    test_lengths=(20,), steps=2, batch_size=4, eval_batch=4)
    assert build_model(cfg, 6, 2).cfg.positional == positional
    if positional != "learned":  # tested past n_ctx = 8 (learned: the test lengths bound n_ctx)
        assert train_run(cfg).metrics[0]["length"] == 20


def test_runconfig_refuses_bad_encodings():
    base = dict(task="parity", train_lengths=(2, 6), test_lengths=(8,))
    with pytest.raises(ValueError, match="unknown RunConfig.positional 'xpos'; choose one of: .*rope, alibi, i_over_n"):
        RunConfig(**base, positional="xpos")
    with pytest.raises(ValueError, match="i_over_n.*next-symbol"):
        RunConfig(**base | {"task": "dyck", "test_lengths": (8,)}, kind="next_symbol", positional="i_over_n")


def test_cli_train_accepts_a_new_model_and_encoding(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from expressivity.cli import app

    monkeypatch.chdir(tmp_path)
    for extra in (["--positional", "alibi"], ["--model", "stack_rnn"]):
        res = CliRunner().invoke(app, ["train", "--task", "parity", "--steps", "2", "--d-model", "8", "--layers", "1",
                                       "--train-lengths", "2-4", "--test-lengths", "6", "--eval-batch", "4",
                                       "--batch-size", "4", *extra])
        assert res.exit_code == 0, res.output


def test_fused_rope_equals_the_pairwise_rotation():
    """The model's complex product and the ONNX export's x·C + swap(x)·S both equal the
    explicit pairwise rotation, on contiguous and strided inputs, in float64 and float32,
    and the complex product's gradient is the rotation's."""
    x = torch.randn(2, 5, 3, 8, dtype=torch.float64)
    cos, sin = P.rope_tables(5, 8, torch.float64)
    C, S = P.rope_factors(5, 8, torch.float64)
    swap = x.transpose(1, 2).unflatten(-1, (-1, 2)).flip(-1).flatten(-2)
    want = P.rope_rotate(x.transpose(1, 2), cos, sin)
    assert torch.allclose(x.transpose(1, 2) * C + swap * S, want, atol=1e-14)
    R = P.rope_phases(5, 8, torch.float64)
    assert R.dtype == torch.complex128 and P.rope_phases(5, 8, torch.float32).dtype == torch.complex64
    assert torch.allclose(P.rope_apply(x.transpose(1, 2), R), want, atol=1e-14)  # strided input
    assert torch.allclose(P.rope_apply(x.transpose(1, 2).contiguous(), R), want, atol=1e-14)
    wide = torch.randn(2, 3, 5, 9, dtype=torch.float64)[..., 1:]  # odd storage offset
    assert torch.allclose(P.rope_apply(wide, R), P.rope_rotate(wide, cos, sin), atol=1e-14)
    x32 = x.float().transpose(1, 2)
    assert torch.allclose(P.rope_apply(x32, P.rope_phases(5, 8, torch.float32)), want.float(), atol=1e-5)
    a, b = x.clone().requires_grad_(), x.clone().requires_grad_()
    w = torch.randn(2, 3, 5, 8, dtype=torch.float64)
    (P.rope_apply(a.transpose(1, 2), R) * w).sum().backward()
    (P.rope_rotate(b.transpose(1, 2), cos, sin) * w).sum().backward()
    assert torch.allclose(a.grad, b.grad, atol=1e-14)
