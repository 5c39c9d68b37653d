"""Function tasks (Delétang et al. 2023) against independent references on all short inputs;
samplers, batches and bad input. One table of named cases (tests/_task_references.py)."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
import torch
from _task_references import FUNCTION_CASES, words

from expressivity import languages as L
from expressivity.languages import CLS, EOS_TOKEN

IDS = [c.id for c in FUNCTION_CASES]


def encode(fn, outputs, n):
    return fn.encode_outputs(outputs, n) if fn.kind == "transduction" else np.array(outputs, dtype=np.int64)


@pytest.mark.parametrize("case", FUNCTION_CASES, ids=IDS)
def test_oracle_matches_reference_on_every_input(case):
    fn = L.get(case.name, **case.params)
    checked = 0
    for n in range(1, case.max_len + 1):
        domain = case.domain(n)
        assert fn.supports(n) == bool(domain), n
        for s, expected in domain.items():
            assert fn.output(s) == expected, (s, expected)
        checked += len(domain)
    assert checked >= 50


@pytest.mark.parametrize("case", FUNCTION_CASES, ids=IDS)
def test_oracle_rejects_exactly_the_invalid_strings(case):
    """Every string over the alphabet (up to a budget): ValueError iff it is not a valid input."""
    fn = L.get(case.name, **case.params)
    budget = 6_000
    for n in range(1, case.max_len + 1):
        if len(fn.alphabet) ** n > budget:
            break
        budget -= len(fn.alphabet) ** n
        valid = case.domain(n)
        for s in words(fn.alphabet, n):
            if s in valid:
                continue
            with pytest.raises(ValueError):
                fn.output(s)
    with pytest.raises(ValueError, match="not in the alphabet"):
        fn.output("?")


@pytest.mark.parametrize("case", FUNCTION_CASES, ids=IDS)
def test_sampler_covers_its_support_at_short_lengths(case):
    """At short lengths the sampler produces exactly the inputs it documents (all, or e.g.
    non-zero operands only), and its vectorised outputs equal the reference."""
    fn = L.get(case.name, **case.params)
    rng = np.random.default_rng(0)
    tested = 0
    for n in range(1, case.max_len + 1):
        support = {s: y for s, y in case.domain(n).items() if case.sampled(s)}
        if not support or len(support) > 64 or tested == 3:
            continue
        ids = fn.sample_ids(rng, 30 * len(support), n)
        strings = fn.to_strings(ids)
        assert set(strings) == set(support), n
        assert (fn.outputs_ids(ids) == encode(fn, [support[s] for s in strings], n)).all(), n
        tested += 1
    assert tested >= 1


@pytest.mark.parametrize("case", FUNCTION_CASES, ids=IDS)
@pytest.mark.parametrize("length", [13, 40])
def test_sampler_outputs_agree_with_oracle_at_longer_lengths(case, length):
    fn = L.get(case.name, **case.params)
    if not fn.supports(length):
        length += 1
    ids = fn.sample_ids(np.random.default_rng(length), 64, length)
    assert ids.shape == (64, length)
    strings = fn.to_strings(ids)
    assert all(case.sampled(s) for s in strings)
    assert (fn.outputs_ids(ids) == encode(fn, [fn.output(s) for s in strings], length)).all()


@pytest.mark.parametrize("case", FUNCTION_CASES, ids=IDS)
def test_batches_have_the_documented_layout(case):
    fn = L.get(case.name, **case.params)
    task = L.get_task(case.name, fn.kind, **case.params)
    n = next(m for m in range(7, 12) if task.valid_length(m))
    b = task.sample_batch(np.random.default_rng(1), 16, n)
    T = task.n_tokens(n)
    assert b["input"].shape == (16, T) and b["input"].dtype == torch.long
    assert b["output"].shape == (16, T, task.n_outputs) and b["output"].dtype == torch.float32
    assert b["mask"].shape == (16, T) and b["mask"].dtype == torch.bool
    assert torch.equal(b["output"].sum(-1), b["mask"].float())  # one-hot exactly where scored
    inputs = task.vocab.decode(b["input"])
    assert all(len(s) == n for s in inputs)
    target = b["output"].argmax(-1)
    if fn.kind == "classification":
        assert T == n + 1 and (b["input"][:, -1] == CLS).all() and b["mask"][:, -1].all()
        assert not b["mask"][:, :-1].any()
        assert target[:, -1].tolist() == [fn.output(s) for s in inputs]
    else:
        m = fn.output_length(n)
        assert T == n + 1 + m and (b["input"][:, n] == EOS_TOKEN).all() and (b["input"][:, n + 1:] == CLS).all()
        assert not b["mask"][:, : n + 1].any()
        for row, s in enumerate(inputs):
            y = fn.output(s)
            want = [fn.output_alphabet.index(c) for c in y] + ([fn.end_index] if fn.terminated else [])
            scored = b["mask"][row].nonzero().flatten().tolist()
            assert scored == list(range(n + 1, n + 1 + len(want)))  # a prefix of the placeholders
            assert target[row, scored].tolist() == want


@pytest.mark.parametrize("case", FUNCTION_CASES, ids=IDS)
def test_batches_use_only_the_given_rng(case):
    fn = L.get(case.name, **case.params)
    task = L.get_task(case.name, fn.kind, **case.params)
    n = next(m for m in range(9, 14) if task.valid_length(m))
    np_state, py_state = np.random.get_state()[1].copy(), random.getstate()
    a = task.sample_batch(np.random.default_rng(3), 16, n)
    b = task.sample_batch(np.random.default_rng(3), 16, n)
    c = task.sample_batch(np.random.default_rng(4), 16, n)
    assert all(torch.equal(a[key], b[key]) for key in ("input", "output", "mask"))
    assert not torch.equal(a["input"], c["input"])
    assert (np.random.get_state()[1] == np_state).all() and random.getstate() == py_state


def test_worked_examples_from_the_docstrings():
    g = L.get
    assert g("parity_check").output("1010100") == 1 and g("parity_check").output("01111") == 0
    assert g("even_pairs").output("001110") == 0 and g("even_pairs").output("0101001") == 1
    assert g("cycle_navigation").output("+-0--") == 3 and g("cycle_navigation").output("+++-") == 2
    ma = g("modular_arithmetic")
    assert (ma.output("1+2*3"), ma.output("1-1-1"), ma.output("0*1+4*3-2")) == (2, 4, 0)
    assert g("stack_manipulation").output("0110bpp") == "110" and g("stack_manipulation").output("110ppp") == ""
    assert g("reverse_string").output("011010") == "010110"
    assert g("reverse_string", vocab_size=4).output("123021") == "120321"
    assert g("modular_arithmetic_brackets").output("((1+2)-(-3))") == 1
    assert g("modular_arithmetic_brackets").output("(-4)") == 1
    assert g("modular_arithmetic_brackets").output("(3*(2+4))") == 3  # multiplication is in by default
    assert "*" not in g("modular_arithmetic_brackets", mult=False).alphabet
    assert g("solve_equation").output("((x+2)-(-3))=1") == 1
    assert g("duplicate_string").output("101") == "101101"
    assert g("missing_duplicate").output("01100_10") == 1 and g("missing_duplicate").output("1011_1#") == 0
    assert g("odds_first").output("00110101") == "01110100" and g("odds_first").output("110") == "110"  # code order
    paper = g("odds_first", order="paper")
    assert paper.output("00110101") == "01000111" and paper.output("110") == "101"
    assert g("binary_addition").output("001+01101") == "01011"  # 4 + 22 = 26
    assert g("binary_addition").output("1001+000001") == "100101"  # 9 + 32 = 41
    assert g("binary_multiplication").output("001*01101") == "0001101"  # 88
    assert g("binary_multiplication").output("1001*000001") == "000001001"  # 288
    assert g("compute_sqrt").output("100101") == "110" and g("compute_sqrt").output("111") == "10"
    assert g("bucket_sort").output("10204112") == "00111224"


def test_class_balance_of_uniform_inputs():
    """Uniform inputs: parity check is balanced, cycle navigation near uniform over 5 classes."""
    rng = np.random.default_rng(5)
    parity = L.get("parity_check")
    assert abs(parity.outputs_ids(parity.sample_ids(rng, 4000, 12)).mean() - 0.5) < 0.05
    cyc = L.get("cycle_navigation")
    counts = Counter(cyc.outputs_ids(cyc.sample_ids(rng, 5000, 20)).tolist())
    assert set(counts) == set(range(5)) and min(counts.values()) > 800


def test_bad_input_is_one_line_and_names_the_choice():
    cases = [
        (lambda: L.get("palindrome"), "unknown language or task 'palindrome'; choose one of"),
        (lambda: L.get("modular_arithmetic", modulo=5), r"unknown parameters \['modulo'\]; valid parameters"),
        (lambda: L.get("modular_arithmetic", modulus=1), "modulus must be >= 2"),
        (lambda: L.get("modular_arithmetic", operators="/"), "operators must be"),
        (lambda: L.get("cycle_navigation", modulus=True), "modulus must be an integer"),
        (lambda: L.get("reverse_string", vocab_size=11), "vocab_size must be <= 10"),
        (lambda: L.get("modular_arithmetic_brackets", mult="yes"), "mult must be a bool"),
        (lambda: L.get("odds_first", order="1-based"), "unknown odds_first: order '1-based'; choose one of: code, paper"),
        (lambda: L.get_task("reverse_string", "classification"), r"supports kinds \('transduction',\)"),
        (lambda: L.get_task("parity_check", "recognition"), r"supports kinds \('classification',\)"),
        (lambda: L.get_task("dyck", "transduction"), r"supports kinds \('recognition', 'next_symbol'\)"),
        (lambda: L.get_task("parity_check", "translation"), "unknown task kind 'translation'; choose one of"),
        (lambda: L.make_task(L.get("reverse_string"), "next_symbol"), "is a transduction task"),
        (lambda: L.make_task(L.get("parity"), "classification"), "is a language"),
        (lambda: L.get_task("modular_arithmetic", "classification").sample_batch(np.random.default_rng(0), 2, 4),
         "no inputs of length 4"),
        (lambda: L.get("solve_equation").sample(np.random.default_rng(0), 2, 2), "no inputs of length 2"),
        (lambda: L.get("missing_duplicate").sample(np.random.default_rng(0), -1, 4), "count must be"),
    ]
    for call, pattern in cases:
        with pytest.raises(ValueError, match=pattern) as info:
            call()
        assert "\n" not in str(info.value)


def test_every_registered_task_builds_batches_for_each_of_its_kinds():
    rng = np.random.default_rng(0)
    for name in L.REGISTRY:
        assert name in L.LEVELS
        for kind in L.kinds_of(name):
            task = L.get_task(name, kind)
            n = next(m for m in range(5, 10) if task.valid_length(m))
            b = task.sample_batch(rng, 3, n)
            assert b["input"].shape == (3, task.n_tokens(n)) and b["mask"].any(), (name, kind)
