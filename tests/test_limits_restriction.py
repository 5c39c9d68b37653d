"""Hard attention, Theorem 1: random restrictions and the constructive depth reduction."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from expressivity.limits import (
    ReductionConfig,
    TokenEncoder,
    dependence_under_restriction,
    depth_reduction,
    influential_free_inputs,
)
from expressivity.limits.depth_reduction import SAME_OUTPUT_ATOL
from expressivity.transformer import Transformer, TransformerConfig

torch.set_num_threads(1)
def CLS(m):
    """``m`` reading {0, 1} strings at a CLS token 2 after them."""
    return TokenEncoder(m, symbols=(0, 1), suffix=(2,), readout=-1)


def leftmost_one(n_ctx: int = 32) -> Transformer:
    """1 layer, 1 head, hand-set: the CLS token attends to the leftmost 1 (score 10·is1 − t/n_ctx,
    unique maximum) and outputs its position t/n_ctx. Channels: is1, pos, cls, out."""
    cfg = TransformerConfig(d_model=4, n_layers=1, n_heads=1, d_head=1, d_mlp=0, d_vocab=3, d_out=1,
                            n_ctx=n_ctx, attention="hardmax", dtype="float64")
    m = Transformer(cfg)
    with torch.no_grad():
        for p in m.parameters():
            p.zero_()
        m.W_E[1, 0] = 1.0  # token 1 -> is1
        m.W_E[2, 2] = 1.0  # CLS -> cls
        m.W_pos[:, 1] = torch.arange(n_ctx, dtype=torch.float64) / n_ctx  # pos
        at = m.blocks[0].attn
        at.b_Q[0, 0] = 1.0  # constant query
        at.W_K[0, 0, 0], at.W_K[0, 1, 0] = 10.0, -1.0  # key = 10·is1 − pos
        at.W_V[0, 1, 0] = 1.0  # value = pos
        at.W_O[0, 0, 3] = 1.0  # -> out
        m.W_U[3, 0] = 1.0
    return m


def _outputs(m, ids):
    with torch.no_grad():
        return m(CLS(m).encode_ids(ids).inputs)[:, -1, 0].numpy()


def _brute_force_dependence(m, rho):
    """Free bits whose flip changes the output for SOME completion (all 2^F completions)."""
    free = np.flatnonzero(rho < 0)
    A = np.array(list(itertools.product([0, 1], repeat=len(free))))
    X = np.repeat(np.where(rho < 0, 0, rho)[None], len(A), axis=0)
    X[:, free] = A
    base = _outputs(m, X)
    dep = []
    for f in free:
        Y = X.copy()
        Y[:, f] ^= 1
        if np.any(np.abs(_outputs(m, Y) - base) > 1e-12):
            dep.append(int(f))
    return dep


def test_leftmost_one_brute_force_and_parity_counterexample():
    m = leftmost_one()
    res = depth_reduction(CLS(m), 20, seed=0)
    assert res.n_free == int((res.rho < 0).sum()) and res.n_free >= 4
    assert res.verified
    true_dep = _brute_force_dependence(m, res.rho)
    assert set(true_dep) <= set(res.dependency)  # soundness of the returned dependency set
    assert len(res.dependency) < res.n_free
    cex = res.counterexample
    assert cex is not None
    x, xp = np.array(cex["x"]), np.array(cex["x_prime"])
    fixed = res.rho >= 0
    assert np.array_equal(x[fixed], res.rho[fixed]) and np.array_equal(xp[fixed], res.rho[fixed])
    assert x.sum() % 2 != xp.sum() % 2
    out = _outputs(m, np.stack([x, xp]))
    assert abs(out[0] - out[1]) <= SAME_OUTPUT_ATOL and cex["output_gap"] <= SAME_OUTPUT_ATOL


@pytest.mark.parametrize("seed,n_layers", [(0, 1), (3, 1), (1, 2), (4, 2), (5, 2)])
def test_random_hardmax_models_dependency_is_sound(seed, n_layers):
    cfg = TransformerConfig(d_model=8, n_layers=n_layers, n_heads=2, d_head=4, d_mlp=8, d_vocab=3, d_out=1,
                            n_ctx=64, attention="hardmax", dtype="float64")
    m = Transformer(cfg)
    m.reset_parameters(seed)
    res = depth_reduction(CLS(m), 24, ReductionConfig(k=4, q=0.4), seed=seed)
    assert res.verified
    free = np.flatnonzero(res.rho < 0)
    outside = np.setdiff1d(free, res.dependency)
    # independent check: flipping any free bit outside the dependency set never changes the output
    rng = np.random.default_rng(seed)
    X = np.repeat(np.where(res.rho < 0, 0, res.rho)[None], 64, axis=0)
    X[:, free] = rng.integers(0, 2, size=(64, len(free)))
    base = _outputs(m, X)
    for f in outside:
        Y = X.copy()
        Y[:, f] ^= 1
        np.testing.assert_array_equal(_outputs(m, Y), base)
    assert res.n_free >= 0.15 * 24
    for log in res.layers:
        assert log.free_start >= log.free_after_stage1 >= log.free_after_stage2 >= log.free_after_stage3


def test_tied_attention_is_not_reduced():
    """W_Q = 0: every key ties, hardmax averages all of them — outside unique hard attention."""
    m = leftmost_one()
    with torch.no_grad():
        m.blocks[0].attn.b_Q.zero_()
        m.blocks[0].attn.W_V[0, 0, 0] = 1.0  # value = is1: the output is the mean of the bits
    try:
        res = depth_reduction(CLS(m), 12, seed=0)
    except ValueError as exc:
        assert "Moser" in str(exc)
        return
    assert res.verified
    assert set(res.dependency) == set(np.flatnonzero(res.rho < 0))
    assert res.counterexample is None and "ties" in res.note and "unique-hard-attention" in res.note
    assert res.extra["tie_fraction"] == 1.0


def test_softmax_model_is_refused_with_the_failing_assumption():
    m = leftmost_one()
    soft = Transformer(TransformerConfig(**{**m.cfg.to_dict(), "attention": "softmax"}))
    with pytest.raises(ValueError, match="hard attention.*softmax"):
        depth_reduction(CLS(soft), 8)
    with pytest.raises(ValueError, match="hard attention"):
        dependence_under_restriction(CLS(soft), [8])
    res = depth_reduction(CLS(soft), 8, as_hardmax=True)  # explicit opt-in works
    assert res.verified


def test_bad_input():
    m = leftmost_one()
    with pytest.raises(ValueError, match="binary"):
        depth_reduction(TokenEncoder(m, symbols=(0, 1, 2), readout=-1), 8)
    with pytest.raises(ValueError, match="eta"):
        ReductionConfig(eta=0.7)
    with pytest.raises(ValueError, match="n_ctx"):
        depth_reduction(CLS(m), 40)
    with pytest.raises(ValueError, match="C"):
        dependence_under_restriction(CLS(m), [8], C=0.0)


def test_influence_matches_brute_force_on_a_known_function():
    rho = np.array([-1, -1, 1, -1, 0, -1])
    comp = np.array(list(itertools.product([0, 1], repeat=4)))
    X = np.repeat(rho[None], len(comp), axis=0)
    X[:, rho < 0] = comp
    f = lambda x: (x[:, 0] & x[:, 2]) | x[:, 4]
    mask = influential_free_inputs(f, rho, X)
    assert np.flatnonzero(mask).tolist() == [0]


def test_empirical_dependence_next_to_parity_and_dyck():
    m = leftmost_one(n_ctx=64)
    rows = dependence_under_restriction(CLS(m), [8, 32], C=0.5, n_restrictions=3, n_completions=8)
    by = {(r.n, r.reference): r for r in rows}
    for n in (8, 32):
        assert by[(n, "parity")].dependent == by[(n, "parity")].free  # parity: every free bit
        assert by[(n, "dyck2")].dependent == by[(n, "dyck2")].free  # 2DYCK: every free symbol
        assert by[(n, "model")].dependent <= by[(n, "model")].free
    # the leftmost-1 model only looks up to the first 1: far fewer than all free inputs at n = 32
    assert by[(32, "model")].dependent < by[(32, "parity")].dependent


def test_model_outputs_batches_by_attention_memory(monkeypatch):
    """Batches shrink as T² grows (bounded score memory) and give the same outputs as one pass."""
    from expressivity.limits import encoder, restriction

    cfg = TransformerConfig(d_model=8, n_layers=2, n_heads=2, d_head=1, d_mlp=8, d_vocab=3, d_out=1,
                            n_ctx=130, attention="hardmax", dtype="float64")
    torch.manual_seed(0)
    m = Transformer(cfg)
    sizes = [encoder.rows_per_pass(3 * T * T * 2, total=4096) for T in (8, 64, 128, 4096)]
    assert sizes[0] == 4096 and sizes[1] >= sizes[2] >= sizes[3] >= 1
    assert 3 * 8 * 128 * 128 * 2 * sizes[2] <= encoder.SCORE_BUDGET
    ids = np.random.default_rng(1).integers(0, 2, size=(37, 128))
    whole = restriction.model_outputs(m, CLS(m), ids, batch=1000)
    seen = []
    forward = Transformer.forward

    def spy(self, x, *a, **k):
        seen.append(len(x))
        return forward(self, x, *a, **k)

    monkeypatch.setattr(encoder, "SCORE_BUDGET", 3 * 8 * 129 * 129 * 2 * 5)  # 5 strings
    monkeypatch.setattr(Transformer, "forward", spy)
    small = restriction.model_outputs(m, CLS(m), ids)
    assert max(seen) == 5 and sum(seen) == 37
    assert np.allclose(small, whole, rtol=1e-12, atol=1e-12)  # BLAS blocking differs by batch
