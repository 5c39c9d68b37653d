"""Dyck-2 cross-entropy experiment: P_0, the bound P_0·(1 − p), and a tiny training sweep."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from expressivity.languages import get as get_language
from expressivity.limits.dyck_ce import DyckCEConfig, closing_mass, dyck_ce

torch.set_num_threads(1)


@pytest.mark.parametrize("n,p", [(8, 0.5), (20, 0.3)])
def test_closing_mass_matches_depth_count(n, p):
    """Independent reference: depths from the ±1 walk of the same sampled strings."""
    P0, mass = closing_mass(n, p, count=500, seed=3)
    lang = get_language("dyck", k=2, p_open=p)
    ids = lang.sample_ids(np.random.default_rng(3), 500, n, True)
    step = np.where(ids % 2 == 0, 1, -1)
    depth = np.concatenate([np.zeros((500, 1), dtype=int), np.cumsum(step, axis=1)], axis=1)  # (B, n+1)
    assert P0 == pytest.approx(float((depth > 0).mean()), abs=1e-12)
    assert mass == pytest.approx(P0 * (1 - p), abs=1e-12)  # no depth cap: E[c_t] = P_0·(1 − p)


def test_tiny_sweep_rows_are_consistent():
    cfg = DyckCEConfig(lengths=(4, 8), models=("transformer", "lstm"), steps=3, d_model=8, heads=2,
                       eval_batch=16)
    rows = dyck_ce(cfg)
    assert [(r.model, r.n) for r in rows] == [("transformer", 4), ("transformer", 8), ("lstm", 4), ("lstm", 8)]
    for r in rows:
        assert r.excess_bits >= -1e-9  # cross-entropy never beats the entropy of the target
        assert r.excess_bits == pytest.approx(r.ce_bits - r.optimal_bits, abs=1e-9)
        assert 0 < r.bound_bits < 1 and r.bound_bits == pytest.approx(r.P0 * (1 - r.p), abs=1e-12)


def test_config_validation():
    with pytest.raises(ValueError, match="lengths"):
        DyckCEConfig(lengths=(7,))
    with pytest.raises(ValueError, match="models"):
        DyckCEConfig(models=("gru",))
    with pytest.raises(ValueError, match="p_open"):
        DyckCEConfig(p_open=1.0)
