"""train/optim.py: LeanAdam's direct fused step and clip_grad_norm's direct kernels give torch's
update bit for bit (torch.optim.Adam(fused=True), clip_grad_norm_(foreach=True)) on random
models and seeds, take torch's own path wherever the direct one does not apply, and keep torch's
state_dict (a checkpoint resumes to the same bits)."""

from __future__ import annotations

import copy

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from expressivity.train.optim import LeanAdam, adam_step, clip_grad_norm, make_adam


def _net(seed: int, width: int, depth: int, dtype=torch.float32) -> torch.nn.Module:
    torch.manual_seed(seed)
    layers: list[torch.nn.Module] = [torch.nn.Embedding(7, width)]
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.Tanh()]
    layers.append(torch.nn.Linear(width, 3))
    return torch.nn.Sequential(*layers).to(dtype)


def _loss(net: torch.nn.Module, seed: int, step: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed * 1000 + step)
    x = torch.randint(0, 7, (5, 4), generator=g)
    scale = 1.0 + 50.0 * (step % 2)  # every other step's gradient is large enough to be clipped
    return scale * net(x).square().mean()


def _train(net, opt, clip, seed, steps, ours: bool) -> None:
    for s in range(steps):
        opt.zero_grad()
        _loss(net, seed, s).backward()
        if clip > 0:
            if ours:
                clip_grad_norm(list(net.parameters()), clip)
            else:
                torch.nn.utils.clip_grad_norm_(net.parameters(), clip, foreach=True)
        adam_step(opt) if ours else opt.step()


def _differing(a: torch.nn.Module, b: torch.nn.Module) -> list[str]:
    """The parameters whose bits differ between two nets of one shape."""
    return [name for (name, p), q in zip(a.named_parameters(), b.parameters(), strict=True) if not torch.equal(p, q)]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), width=st.integers(1, 24), depth=st.integers(0, 3),
       lr=st.sampled_from([1e-4, 3e-3, 0.1]), clip=st.sampled_from([0.0, 0.05, 1.0, 1e6]))
def test_lean_adam_and_clip_equal_torchs_fused_adam_and_foreach_clip_bit_for_bit(seed, width, depth, lr, clip):
    ours, theirs = _net(seed, width, depth), _net(seed, width, depth)
    _train(ours, LeanAdam(ours.parameters(), lr), clip, seed, 6, ours=True)
    _train(theirs, torch.optim.Adam(theirs.parameters(), lr=lr, fused=True), clip, seed, 6, ours=False)
    assert not _differing(ours, theirs)


def test_the_direct_step_is_taken_after_the_first_and_torchs_step_otherwise(monkeypatch):
    """The first step (no state yet) and a step with a missing gradient go through
    torch.optim.Adam.step; a full step after the first does not — and all equal torch's bits."""
    ours, theirs = _net(1, 8, 2), _net(1, 8, 2)
    opt, ref = LeanAdam(ours.parameters(), 3e-3), torch.optim.Adam(theirs.parameters(), lr=3e-3, fused=True)
    calls = []
    real = opt.step
    monkeypatch.setattr(opt, "step", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    for s in range(3):
        for net, o in ((ours, opt), (theirs, ref)):
            o.zero_grad()
            _loss(net, 2, s).backward()
        n = len(calls)
        opt.lean_step()
        assert len(calls) == n + (1 if s == 0 else 0)  # torch's step made the state, then the direct one
        ref.step()
    # a parameter without a gradient (unused this step): torch's step, which skips it
    for net, o in ((ours, opt), (theirs, ref)):
        o.zero_grad()
        _loss(net, 2, 3).backward()
        net[1].weight.grad = None
    n = len(calls)
    opt.lean_step()
    assert len(calls) == n + 1
    ref.step()
    assert not _differing(ours, theirs)


def test_zero_grad_sets_none_and_the_state_dict_resumes_to_the_same_bits():
    net = _net(3, 6, 1)
    opt = LeanAdam(net.parameters(), 1e-2)
    _train(net, opt, 1.0, 3, 3, ours=True)
    opt.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    saved_net, saved_opt = copy.deepcopy(net.state_dict()), copy.deepcopy(opt.state_dict())
    _train(net, opt, 1.0, 4, 4, ours=True)  # the run without interruption
    resumed = _net(99, 6, 1)
    resumed.load_state_dict(saved_net)
    opt2 = LeanAdam(resumed.parameters(), 1e-2)
    opt2.load_state_dict(saved_opt)
    assert opt2._direct()  # the loaded state takes the direct path at once
    _train(resumed, opt2, 1.0, 4, 4, ours=True)
    assert not _differing(net, resumed)


def test_mixed_dtypes_and_extra_groups_take_torchs_path():
    a = torch.nn.Linear(3, 3)
    b = torch.nn.Linear(3, 3).double()
    mixed = LeanAdam(list(a.parameters()) + list(b.parameters()), 1e-2)
    groups = LeanAdam([{"params": a.weight}, {"params": a.bias, "lr": 1e-3}], 1e-2)
    for opt in (mixed, groups):
        assert not opt._one_kind
    x = torch.randn(2, 3)
    for _ in range(2):
        mixed.zero_grad()
        (a(x).sum() + b(x.double()).sum()).backward()
        clip_grad_norm(list(a.parameters()) + list(b.parameters()), 0.1)  # torch's clip across dtypes
        adam_step(mixed)
    assert all(torch.isfinite(p).all() for p in list(a.parameters()) + list(b.parameters()))


def test_clip_grad_norm_equals_torchs_with_missing_gradients_and_mixed_dtypes():
    torch.manual_seed(0)
    ps = [torch.randn(4, 5, requires_grad=True), torch.randn(5, requires_grad=True), torch.randn(3, requires_grad=True)]
    qs = [p.detach().clone().requires_grad_() for p in ps]
    for group in (ps, qs):
        (group[0].sum() * 30 + group[1].square().sum()).backward()  # ps[2] gets no gradient
    clip_grad_norm(ps, 0.5)
    total = torch.nn.utils.clip_grad_norm_(qs, 0.5, foreach=True)
    assert total > 0.5
    assert ps[2].grad is None
    for p, q in zip(ps[:2], qs[:2]):
        assert torch.equal(p.grad, q.grad)
    assert torch.linalg.vector_norm(torch.cat([p.grad.flatten() for p in ps[:2]])) == pytest.approx(0.5, rel=1e-5)
    clip_grad_norm([torch.randn(2, requires_grad=True)], 1.0)  # no gradients at all: nothing to do
    mixed = [torch.randn(3, requires_grad=True), torch.randn(3, dtype=torch.float64, requires_grad=True)]
    ref = [m.detach().clone().requires_grad_() for m in mixed]
    for group in (mixed, ref):
        (group[0].sum() * 10 + group[1].sum() * 10).backward()
    clip_grad_norm(mixed, 1.0)
    torch.nn.utils.clip_grad_norm_(ref, 1.0, foreach=True)
    for m, r in zip(mixed, ref):
        assert torch.equal(m.grad, r.grad)


def test_make_adam_is_lean_on_cpu_and_torchs_foreach_adam_elsewhere():
    net = _net(0, 4, 1)
    assert isinstance(make_adam(net.parameters(), 1e-3, torch.device("cpu")), LeanAdam)
    other = make_adam(net.parameters(), 1e-3, torch.device("meta"))
    assert type(other) is torch.optim.Adam and other.defaults["foreach"]
