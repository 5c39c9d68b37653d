"""Lowering torch modules by tracing (regions.lower_torch): the lowered program equals the module
in float64, and its region counts equal those of the same net written out as dense layers
(independent references: jacobian-built Linear layers, hand-built GroupMax / Residual programs,
a MaxoutNetwork for leaky ReLUs)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch import nn

from expressivity.cpwl import MaxoutNetwork
from expressivity.regions import Plane, Segment, count_regions, lower
from expressivity.regions.ir import Affine, Embed, GroupMax, Program, Read, ReLU, Residual

SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _randomise_bn(net: nn.Module, seed: int) -> nn.Module:
    g = torch.Generator().manual_seed(seed)
    for m in net.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=g))
            m.running_var.copy_(torch.rand(n, generator=g) + 0.5)
            m.weight.data.copy_(torch.randn(n, generator=g))
            m.bias.data.copy_(torch.randn(n, generator=g))
    return net.eval()


def _check_exact(net: nn.Module, shape, seed: int = 0, n: int = 40):
    prog = lower(net, input_shape=shape)
    x = np.random.default_rng(seed).normal(size=(n, math.prod(shape))) * 2
    with torch.no_grad():
        ref = net.double()(torch.tensor(x).reshape(n, *shape)).reshape(n, -1).numpy()
    got = prog(x)
    assert got.shape == ref.shape
    assert np.abs(got - ref).max() <= 1e-9 * (1 + np.abs(ref).max())
    return prog


class Res(nn.Module):
    def __init__(self, c, act):
        super().__init__()
        self.c1, self.bn, self.c2, self.act = nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c), nn.Conv2d(c, c, 1), act

    def forward(self, x):
        return self.act(x + self.c2(F.relu(self.bn(self.c1(x)))))


class Cat(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.a, self.b = nn.Conv2d(c, 2, 1), nn.Conv2d(c, 2, 3, padding=1)

    def forward(self, x):
        return torch.cat([F.leaky_relu(self.a(x), 0.2), torch.relu(self.b(x)) - x[:, :1]], dim=1)


ACTS = [lambda: nn.ReLU(), lambda: nn.LeakyReLU(0.1), lambda: nn.LeakyReLU(1.7), lambda: nn.ReLU6(),
        lambda: nn.Hardtanh(-0.5, 0.5), lambda: nn.PReLU(3, init=0.3)]


@st.composite
def cnn(draw):
    """A random small CNN (1-D, 2-D or 3-D conv; any stride/padding/dilation/groups) and its input shape."""
    dim = draw(st.sampled_from([1, 2, 2, 3]))
    side = {1: 7, 2: 5, 3: 3}[dim]
    cin = draw(st.sampled_from([1, 2]))
    groups = draw(st.sampled_from([1, cin]))
    cout = 3 * groups if groups > 1 else 3
    conv = [nn.Conv1d, nn.Conv2d, nn.Conv3d][dim - 1]
    bn = [nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d][dim - 1]
    k = draw(st.sampled_from([1, 2, 3]))
    stride, pad, dil = draw(st.sampled_from([1, 2])), draw(st.sampled_from([0, 1])), draw(st.sampled_from([1, 2]))
    if (side + 2 * pad - dil * (k - 1) - 1) < 0:
        dil = 1
    act = draw(st.sampled_from(range(len(ACTS))))
    act = ACTS[act]() if act != 5 else nn.PReLU(cout, init=0.3)
    pool = draw(st.sampled_from(["none", "max", "avg", "adaptive"]))
    if (side + 2 * pad - dil * (k - 1) - 1) // stride + 1 < 2:
        pool = "none"
    mods = [conv(cin, cout, k, stride=stride, padding=pad, dilation=dil, groups=groups), bn(cout), act]
    if pool == "max" and dim == 2:
        mods.append(nn.MaxPool2d(2, stride=1, padding=draw(st.sampled_from([0, 1]))))
    elif pool == "avg" and dim == 2:
        mods.append(nn.AvgPool2d(2, stride=1))
    elif pool == "adaptive":
        mods.append([nn.AdaptiveAvgPool1d, nn.AdaptiveAvgPool2d, nn.AdaptiveAvgPool3d][dim - 1](2))
    mods += [nn.Flatten(), nn.Dropout(0.3)]
    seed = draw(st.integers(0, 10_000))
    torch.manual_seed(seed)
    body = nn.Sequential(*mods)
    with torch.no_grad():
        n_flat = body.eval()(torch.zeros(1, cin, *(side,) * dim)).shape[1]
    net = nn.Sequential(body, nn.Linear(n_flat, 2))
    return _randomise_bn(net, seed), (cin, *(side,) * dim)


@SETTINGS
@given(cnn())
def test_random_cnns_lower_exactly(case):
    net, shape = case
    _check_exact(net, shape)


@SETTINGS
@given(st.integers(0, 10_000), st.sampled_from(range(len(ACTS) - 1)))
def test_residual_and_concatenation_lower_exactly(seed, act):
    torch.manual_seed(seed)
    net = _randomise_bn(nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.ReLU(), Res(3, ACTS[act]()), Cat(3),
                                      nn.MaxPool2d(2, ceil_mode=True), nn.Flatten(), nn.Linear(4 * 9, 2)), seed)
    _check_exact(net, (1, 5, 5), seed)


def test_functional_forms_lower_exactly():
    class Fn(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(4, 1, 3, 3))
            self.lin = nn.Linear(64, 3)

        def forward(self, x):
            h = F.conv2d(x, self.w, padding=1, stride=2)
            h = F.relu6(F.max_pool2d(h, 3, stride=1, padding=1)) + 0.5 * h.clamp(min=-0.1)
            h = F.hardtanh(F.avg_pool2d(h, 1), -2.0, 2.0) / 3 - torch.clamp(h, max=0.3)
            h = F.leaky_relu(h.view(h.size(0), -1), 0.05)
            return self.lin(torch.flatten(h, 1)) + F.dropout(h[:, :3], 0.5, training=False)

    torch.manual_seed(0)
    _check_exact(Fn().eval(), (1, 8, 8))


# ---------------------------------------------------------------- counts against dense references


def _dense(f, shape) -> nn.Linear:
    """The affine map f on inputs of ``shape`` as an nn.Linear, from torch's jacobian (float64)."""
    n = math.prod(shape)
    f64 = lambda v: f(v.reshape(1, *shape)).reshape(-1)  # noqa: E731
    J = torch.autograd.functional.jacobian(f64, torch.zeros(n, dtype=torch.float64))
    lin = nn.Linear(n, J.shape[0], dtype=torch.float64)
    with torch.no_grad():
        lin.weight.copy_(J)
        lin.bias.copy_(f64(torch.zeros(n, dtype=torch.float64)))
    return lin


def _planes(shape, seed: int):
    """A plane through three random inputs of ``shape`` and the segment through two of them."""
    rng = np.random.default_rng(seed)
    x1, x2, x3 = rng.normal(size=(3, *np.atleast_1d(shape)))
    return Plane.through(x1, x2, x3), Segment(x1.reshape(-1), x2.reshape(-1))


def _same_counts(a, b, dom, **kw):
    ra, rb = count_regions(a, dom, **kw), count_regions(b, dom)
    assert (ra.activation_regions, ra.linear_regions) == (rb.activation_regions, rb.linear_regions)
    return ra


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.sampled_from([1, 2]), st.sampled_from([0, 1]), st.sampled_from([1, 2]))
def test_conv_relu_counts_equal_the_dense_net(seed, stride, pad, groups):
    torch.manual_seed(seed)
    shape = (2, 6, 6)
    c1 = nn.Conv2d(2, 4, 3, stride=stride, padding=pad, groups=groups)
    body = nn.Sequential(c1, nn.BatchNorm2d(4), nn.ReLU(), nn.Conv2d(4, 2, 1), nn.ReLU(), nn.AvgPool2d(2, 1),
                         nn.Flatten())
    net = _randomise_bn(nn.Sequential(*body, nn.LazyLinear(2)), seed).double()
    with torch.no_grad():
        net(torch.zeros(1, *shape, dtype=torch.float64))
    net.eval()
    # the dense net: every affine stretch between two ReLUs as one Linear (from the jacobian)
    s1 = shape
    h1 = tuple(nn.Sequential(c1, body[1])(torch.zeros(1, *s1, dtype=torch.float64)).shape[1:])
    h2 = tuple(body[3](torch.zeros(1, *h1, dtype=torch.float64)).shape[1:])
    dense = nn.Sequential(_dense(nn.Sequential(c1, body[1]), s1), nn.ReLU(), _dense(body[3], h1), nn.ReLU(),
                          _dense(nn.Sequential(body[5], body[6], net[-1]), h2))
    plane, seg = _planes(shape, seed)
    _same_counts(net, dense, plane)
    _same_counts(net, dense, seg, input_shape=shape)


def _group_max_reference(W1, b1, windows, W2, b2, n) -> Program:
    """Affine → GroupMax(windows) → Affine, built by hand."""
    return Program(n, (Embed(np.eye(n)[:, None, :], np.zeros((1, n))), Affine(W1, b1), GroupMax(windows),
                       Affine(W2, b2), Read((0,))))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.sampled_from([1, 2]))
def test_maxpool_counts_equal_a_hand_built_group_max(seed, stride):
    torch.manual_seed(seed)
    conv, lin = nn.Conv2d(1, 2, 2), None
    pool = nn.MaxPool2d(2, stride=stride)
    H = 4  # conv output 2 × 4 × 4
    Ho = (H - 2) // stride + 1
    lin = nn.Linear(2 * Ho * Ho, 2)
    net = nn.Sequential(conv, pool, nn.Flatten(), lin).double().eval()
    # windows written out with loops (channel-major, C-order), independent of the lowering
    windows = [[c * H * H + (i * stride + di) * H + (j * stride + dj) for di in range(2) for dj in range(2)]
               for c in range(2) for i in range(Ho) for j in range(Ho)]
    dconv = _dense(conv, (1, 5, 5))
    ref = _group_max_reference(dconv.weight.detach().numpy().T, dconv.bias.detach().numpy(), np.array(windows),
                               lin.weight.detach().numpy().T, lin.bias.detach().numpy(), 25)
    plane, seg = _planes((1, 5, 5), seed)
    _same_counts(net, ref, plane)
    _same_counts(net, ref, seg, input_shape=(1, 5, 5))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000))
def test_residual_mlp_counts_equal_a_hand_built_residual(seed):
    class ResMLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.out = nn.Linear(3, 6), nn.Linear(6, 3), nn.Linear(3, 1)

        def forward(self, x):
            h = x + self.b(F.relu(self.a(x)))
            return self.out(F.relu(h))

    torch.manual_seed(seed)
    net = ResMLP().double()

    def np_(lin):
        return lin.weight.detach().numpy().T, lin.bias.detach().numpy()

    ref = Program(3, (Embed(np.eye(3)[:, None, :], np.zeros((1, 3))),
                      Residual((Affine(*np_(net.a)), ReLU(), Affine(*np_(net.b)))), ReLU(), Affine(*np_(net.out)),
                      Read((0,))))
    plane, seg = _planes(3, seed)
    _same_counts(net, ref, plane)
    _same_counts(net, ref, seg)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.floats(-0.5, 0.9))
def test_leaky_mlp_counts_equal_its_maxout_network(seed, a):
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Linear(2, 5), nn.LeakyReLU(a), nn.Linear(5, 4), nn.LeakyReLU(a), nn.Linear(4, 1)).double()
    Ws = [(m.weight.detach().numpy(), m.bias.detach().numpy()) for m in net if isinstance(m, nn.Linear)]
    layers = [(np.stack([W, a * W], axis=1), np.stack([b, a * b], axis=1)) for W, b in Ws[:-1]]
    maxout = MaxoutNetwork.from_weights(layers, Ws[-1])
    plane, seg = _planes(2, seed)
    _same_counts(net, maxout, plane)
    _same_counts(net, maxout, seg)


def test_counts_do_not_depend_on_the_float_dtype_or_train_flag_of_the_caller():
    torch.manual_seed(3)
    net = nn.Sequential(nn.Conv1d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(16, 1)).eval()
    plane, _ = _planes((1, 10), 3)
    a = count_regions(net, plane, input_shape=(1, 10))
    assert next(net.parameters()).dtype == torch.float32  # the caller's module is not converted
    b = count_regions(net.double(), plane, input_shape=(1, 10))
    assert (a.activation_regions, a.linear_regions) == (b.activation_regions, b.linear_regions)


# ---------------------------------------------------------------- refusals


def _assert_refused(net, match, shape=(4,)):
    with pytest.raises(ValueError, match=match):
        lower(net, input_shape=shape)


def test_not_piecewise_linear_and_batch_dependent_parts_are_refused():
    _assert_refused(nn.Sequential(nn.Linear(4, 4), nn.LayerNorm(4)), r"LayerNorm.*not piecewise linear")
    _assert_refused(nn.Sequential(nn.Linear(4, 4), nn.Softmax(-1)), r"Softmax.*not piecewise linear")
    _assert_refused(nn.Sequential(nn.Linear(4, 4), nn.GELU()), r"GELU.*not piecewise linear")
    _assert_refused(nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4)).train(), r"train mode depends on the batch")
    _assert_refused(nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4, track_running_stats=False)).eval(),
             "depends on the batch")
    _assert_refused(nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5)).train(), "Dropout in train mode is random")

    class Sq(nn.Module):
        def forward(self, x):
            return x * x

    _assert_refused(Sq(), "product of two input-dependent tensors")

    class Soft(nn.Module):
        def forward(self, x):
            return F.softmax(x, -1)

    _assert_refused(Soft(), r"softmax is not piecewise linear")

    class Branchy(nn.Module):
        def forward(self, x):
            return x if x.sum() > 0 else -x

    _assert_refused(Branchy(), "cannot trace Branchy with torch.fx")

    class MixBatch(nn.Module):
        def forward(self, x):
            return x.std(-1, keepdim=True)

    _assert_refused(MixBatch(), r"method .std\(\) is not in the supported set")

    class AllSum(nn.Module):
        def forward(self, x):
            return torch.sum(x)

    _assert_refused(AllSum(), "mixes the samples of a batch")


def test_subclasses_with_their_own_forward_are_refused_not_lowered_as_the_base():
    class DoubledReLU(nn.ReLU):
        def forward(self, x):
            return 2 * super().forward(x)

    class NoisyLinear(nn.Linear):
        def forward(self, x):
            return super().forward(x) + 1.0

    class PlainReLU(nn.ReLU):  # no forward of its own: it is an nn.ReLU
        pass

    _assert_refused(nn.Sequential(nn.Linear(4, 4), DoubledReLU()), "subclass of nn.ReLU with its own forward")
    _assert_refused(nn.Sequential(NoisyLinear(4, 4), nn.ReLU()), "subclass of nn.Linear with its own forward")
    torch.manual_seed(0)
    _check_exact(nn.Sequential(nn.Linear(4, 4), PlainReLU(), nn.Linear(4, 1)), (4,))
    from expressivity.cpwl import from_relu_mlp

    with pytest.raises(ValueError, match="subclasses nn.ReLU with its own forward"):
        from_relu_mlp(nn.Sequential(nn.Linear(4, 4), DoubledReLU(), nn.Linear(4, 1)))


def test_input_shape_is_inferred_from_a_first_linear_and_asked_for_otherwise():
    torch.manual_seed(0)
    assert lower(nn.Sequential(nn.Linear(3, 4), nn.LeakyReLU(), nn.Linear(4, 1))).in_dim == 3
    with pytest.raises(ValueError, match=r"input shape of the module is unknown.*input_shape=\(C, H, W\)"):
        lower(nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU()))
    with pytest.raises(ValueError, match="input_shape must be"):
        lower(nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU()), input_shape=(1, 0, 3))
    with pytest.raises(ValueError, match="Conv2d"):  # a wrong shape: torch's own error, one line, naming the node
        lower(nn.Sequential(nn.Conv2d(3, 2, 3), nn.ReLU()), input_shape=(1, 5, 5))


def test_identity_ops_sharing_a_tensor_and_long_skips_lower_exactly():
    class Shared(nn.Module):  # dropout (eval) returns its input itself: two names, one tensor
        def __init__(self):
            super().__init__()
            self.a, self.b, self.c, self.d = nn.Linear(3, 4), nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 4)
            self.drop = nn.Dropout(0.5)

        def forward(self, x):
            h1 = F.relu(self.a(x))
            h2 = F.relu(self.b(h1))  # h1 still needed: the state keeps its columns
            t = self.c(h2)           # depends on h2's columns only (not a prefix of the state)
            g = self.drop(t)
            return F.relu(self.d(g)) + g + t + h1

    torch.manual_seed(0)
    _check_exact(Shared().eval(), (3,))


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.sampled_from([0, 1]))
def test_conv_counts_in_a_box_equal_the_dense_net(seed, pad):
    from expressivity.regions import Box

    torch.manual_seed(seed)
    conv = nn.Conv1d(1, 3, 2, padding=pad)
    n_out = 3 * (4 + 2 * pad - 1)
    net = nn.Sequential(conv, nn.ReLU(), nn.Flatten(), nn.Linear(n_out, 3), nn.ReLU(), nn.Linear(3, 1)).double()
    dense = nn.Sequential(_dense(conv, (1, 4)), nn.ReLU(), *net[3:])
    _same_counts(net, dense, Box(-1.0, 1.0), input_shape=(1, 4))


def test_abs_and_global_average_pooling_lower_exactly():
    class GAP(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.lin = nn.Conv2d(1, 4, 3), nn.Linear(4, 2)

        def forward(self, x):
            h = self.conv(x).abs() + torch.abs(self.conv(x) - 0.1)
            return self.lin(h.mean((2, 3))) + h.sum(dim=-1).sum(-1)[:, :2]

    torch.manual_seed(0)
    _check_exact(GAP().eval(), (1, 5, 5))

    class Pooled(nn.Module):
        def forward(self, x):
            return x.mean(0)

    _assert_refused(Pooled(), r"over dim=0 mixes the samples")


def test_nets_whose_dense_matrices_do_not_fit_are_refused(monkeypatch):
    monkeypatch.setenv("EXPRESSIVITY_MEMORY_BUDGET", "1M")
    net = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 16 * 16, 1))
    with pytest.raises(ValueError, match=r"lowering module 0 \(Conv2d\) of Sequential to dense matrices .* over the "
                                         r"memory budget"):
        lower(net, input_shape=(1, 16, 16))


def test_saving_a_subclass_with_its_own_forward_is_refused(tmp_path):
    from expressivity.interop.torch_in import save_sequential

    class Shifted(nn.Linear):
        def forward(self, x):
            return super().forward(x) + 1.0

    with pytest.raises(ValueError, match=r"module 0 \(Shifted\) subclasses Linear with its own forward"):
        save_sequential(nn.Sequential(Shifted(2, 2), nn.ReLU()), tmp_path / "n.pt")


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.floats(-1.0, 0.0), st.floats(0.1, 1.0))
def test_hardtanh_counts_equal_a_two_layer_maxout_network(seed, lo, hi):
    """clamp(p, lo, hi) = −max(−max(p, lo), −hi): two rank-2 maxout layers with constant pieces."""
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Linear(2, 6), nn.Hardtanh(lo, hi), nn.Linear(6, 3), nn.Hardtanh(lo, hi),
                        nn.Linear(3, 1)).double()
    lins = [(m.weight.detach().numpy(), m.bias.detach().numpy()) for m in net if isinstance(m, nn.Linear)]
    layers, A = [], None
    for W, b in lins[:-1]:
        if A is not None:  # fold the previous clamp's sign (−1) into this layer: W (−h) + b
            W, b = W @ A, b
        m, d = W.shape
        layers.append((np.stack([W, np.zeros((m, d))], axis=1), np.stack([b, np.full(m, lo)], axis=1)))  # max(p, lo)
        layers.append((np.stack([-np.eye(m), np.zeros((m, m))], axis=1), np.stack([np.zeros(m), np.full(m, -hi)], 1)))
        A = -np.eye(m)  # the unit computes −clamp
    W, b = lins[-1]
    maxout = MaxoutNetwork.from_weights(layers, (W @ A, b))
    x = np.random.default_rng(seed).normal(size=(50, 2))
    with torch.no_grad():
        ref = net(torch.tensor(x)).numpy()
    assert np.allclose(np.asarray(maxout(x)).reshape(ref.shape), ref, atol=1e-9)
    plane, seg = _planes(2, seed)
    _same_counts(net, maxout, plane)
    _same_counts(net, maxout, seg)
