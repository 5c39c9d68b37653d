"""The confidence ``scale`` s of the PARITY and FIRST constructions (issue 13; Chiang & Cholak's
``--big``): z_s = s·z_1 on every string, so the logit margin is multiplied by s, and on every
correctly classified string CE = log2(1 + e^(−s·|z_1|)) falls strictly as s grows. Membership
comes from the brute-force oracles below, not from the constructions."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from expressivity import constructions
from expressivity.constructions import first, parity

ORACLE = {"parity": lambda s: s.count("1") % 2 == 1, "first": lambda s: s[:1] == "1"}
MARGIN = {"parity": parity.logit_margin, "first": first.logit_margin}
SCALES = (0.25, 1.0, 3.0, 40.0)
VARIANTS = [{"layer_norm": False}, {"layer_norm": True, "eps": 0.0}]


def all_strings(n: int) -> list[str]:
    return ["".join(t) for t in itertools.product("01", repeat=n)]


@pytest.mark.parametrize("name", ["parity", "first"])
@pytest.mark.parametrize("variant", VARIANTS, ids=["plain", "ln"])
def test_scale_multiplies_every_logit_and_the_margin(name, variant):
    strings = [s for n in range(1, 8) for s in all_strings(n)]
    z1 = constructions.get(name, **variant).logits(strings)
    for s in SCALES:
        c = constructions.get(name, **variant, scale=s)
        zs = c.logits(strings)
        np.testing.assert_allclose(zs, s * z1, rtol=1e-12, atol=0.0)
        assert c.params["scale"] == s
        for n in range(1, 8):  # the margin of length n: s·margin_1(n), s·√(d/2) with layer norm
            idx = [i for i, w in enumerate(strings) if len(w) == n]
            expect = s * math.sqrt(c.transformer.cfg.d_model / 2) if variant["layer_norm"] else MARGIN[name](n, s)
            np.testing.assert_allclose(np.abs(zs[idx]), expect, rtol=1e-9)


@pytest.mark.parametrize("name", ["parity", "first"])
@pytest.mark.parametrize("variant", VARIANTS, ids=["plain", "ln"])
def test_cross_entropy_falls_with_scale_on_correct_strings(name, variant):
    strings = [s for n in (3, 6) for s in all_strings(n)]
    labels = np.array([ORACLE[name](s) for s in strings])
    ce = []
    for s in SCALES:
        c = constructions.get(name, **variant, scale=s)
        assert (c.predict(strings) == labels).all()  # every string correctly classified
        ce.append(c.cross_entropy_bits(strings))
        margins = [s * math.sqrt(c.transformer.cfg.d_model / 2) if variant["layer_norm"] else MARGIN[name](len(w), s)
                   for w in strings]
        assert ce[-1] == pytest.approx(np.mean([math.log2(1 + math.exp(-m)) for m in margins]), rel=1e-9)
    assert all(a > b for a, b in zip(ce, ce[1:])), ce


def test_default_scale_is_the_unscaled_construction():
    strings = all_strings(5)
    for name in ("parity", "first"):
        np.testing.assert_array_equal(constructions.get(name).logits(strings),
                                      constructions.get(name, scale=1.0).logits(strings))
        assert "scale" in constructions.allowed_params(name)


def test_cli_construct_takes_scale_and_reports_the_smaller_cross_entropy():
    from typer.testing import CliRunner

    from expressivity.cli import app

    runner = CliRunner()
    rows = {}
    for s in ("1", "8"):
        res = runner.invoke(app, ["construct", "first", "-p", "layer_norm=true", "-p", f"scale={s}",
                                  "--lengths", "10", "--samples", "16"], terminal_width=200)
        assert res.exit_code == 0, res.output
        assert f"'scale': {float(s)}" in res.output
        rows[s] = res.output
    expect = {s: math.log2(1 + math.exp(-float(s) * math.sqrt(6))) for s in ("1", "8")}
    for s, ce in expect.items():
        assert f"{ce:.6f}" in rows[s]
