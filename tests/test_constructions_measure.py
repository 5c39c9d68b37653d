"""constructions.measure: per-length accuracy / CE of a construction, and the registry listing."""

import inspect

import numpy as np
import pytest

from expressivity import constructions, languages
from expressivity.constructions.measure import measure_by_length, registry_rows


def test_measure_by_length_agrees_with_cross_entropy_bits_and_membership():
    c = constructions.get("first")
    rows = measure_by_length(c, [5, 9], samples=16, seed=1)
    rng = np.random.default_rng(1)
    for row in rows:
        strings = c.language.sample_mixed(rng, 16, row["n"])  # the same draws, in the same order
        truth = np.array([s[0] == "1" for s in strings])  # FIRST, by hand
        assert row["members"] == truth.sum() == 8
        assert row["accuracy"] == np.mean(c.predict(strings) == truth) == 1.0
        assert row["ce_bits"] == pytest.approx(c.cross_entropy_bits(strings), rel=1e-12)
        assert row["layers"] == c.transformer.cfg.n_layers


def test_measure_by_length_calls_progress_per_length():
    ticks = []
    measure_by_length(constructions.get("parity"), [4, 6, 8], samples=4, progress=lambda: ticks.append(1))
    assert len(ticks) == 3


def test_registry_rows_lists_every_construction_with_its_defaults():
    rows = {name: (params, doc) for name, params, doc in registry_rows()}
    assert set(rows) == set(constructions.REGISTRY)
    params, doc = rows["dyck"]
    assert params["k"] == inspect.signature(constructions.REGISTRY["dyck"]).parameters["k"].default
    assert doc and "\n" not in doc


def test_sample_mixed_fills_from_the_class_that_exists():
    dyck = languages.get("dyck", k=1)
    rng = np.random.default_rng(0)
    odd = dyck.sample_mixed_ids(rng, 5, 7)  # odd length: no members, all five are non-members
    assert odd.shape == (5, 7) and not dyck.accepts_ids(odd).any()
    even = dyck.sample_mixed_ids(rng, 5, 8)  # both classes: ⌈5/2⌉ members first
    assert dyck.accepts_ids(even).tolist() == [True] * 3 + [False] * 2
    assert dyck.sample_mixed_ids(rng, 0, 8).shape == (0, 8)
