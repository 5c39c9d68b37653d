"""The training loss at the scored positions only (train/loop.training_loss, the recurrent
models' ``scored_loss``, the written-out losses as one autograd node) equals the soft
cross-entropy of the full forward pass averaged over the mask — value and every parameter's
gradient, float64, random models, masks and soft targets — and train_run's losses stay those of
the full forward pass."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from expressivity.train import RunConfig, build_model, train_run
from expressivity.train.loop import soft_cross_entropy, training_loss
from expressivity.train.models._recurrent import WrittenOutLoss
from expressivity.train.models.rnn import RNNModel

RECURRENT = ("rnn", "lstm", "stack_rnn", "stack_lstm", "tape_rnn")


def _model(model: str, seed: int, layers: int = 1, d_out: int = 3) -> torch.nn.Module:
    cfg = RunConfig(task="parity", model=model, layers=layers, d_model=8, train_lengths=(2, 6), test_lengths=(8,),
                    steps=3, batch_size=4, eval_batch=4, seed=seed)
    return build_model(cfg, 5, d_out).double()


def _batch(seed: int, B: int, T: int, C: int, p_scored: float) -> dict:
    g = torch.Generator().manual_seed(seed)
    mask = torch.rand(B, T, generator=g) < p_scored
    mask[0, -1] = True  # at least one scored position
    target = torch.softmax(3 * torch.randn(B, T, C, generator=g, dtype=torch.float64), -1)
    target[: B // 2, :, 0] = 0.0  # some classes with probability 0 (one-hot rows among them)
    target = target / target.sum(-1, keepdim=True)
    return {"input": torch.randint(0, 5, (B, T), generator=g), "output": target, "mask": mask}


def _full(model, batch):
    mask = batch["mask"]
    return soft_cross_entropy(model(batch["input"]), batch["output"], mask).sum() / mask.sum()


def _value_and_grads(model, fn, batch):
    model.zero_grad()
    loss = fn(model, batch)
    loss.backward()
    return loss.detach(), {k: p.grad.clone() for k, p in model.named_parameters() if p.grad is not None}


@settings(max_examples=30, deadline=None)
@given(model=st.sampled_from(RECURRENT), seed=st.integers(0, 1000), layers=st.integers(1, 2),
       B=st.integers(1, 5), T=st.integers(1, 7), p_scored=st.sampled_from([0.0, 0.3, 1.0]))
def test_scored_loss_equals_the_full_forward_passes_loss(model, seed, layers, B, T, p_scored):
    net = _model(model, seed, layers if model in ("rnn", "lstm") else 1)
    batch = _batch(seed, B, T, 3, p_scored)
    assert hasattr(net, "scored_loss")
    v_full, g_full = _value_and_grads(net, _full, batch)
    v_ours, g_ours = _value_and_grads(net, training_loss, batch)
    assert abs(float(v_full - v_ours)) < 1e-12
    assert g_full.keys() == g_ours.keys()
    for k in g_full:
        assert torch.allclose(g_full[k], g_ours[k], rtol=0, atol=1e-12), k


def test_elman_written_out_loss_gradient_is_the_numerical_one():
    g = torch.Generator().manual_seed(2)
    T, B, d, V, C = 4, 3, 3, 4, 2

    def w(*shape):
        return torch.randn(*shape, generator=g, dtype=torch.float64, requires_grad=True)

    ids = torch.randint(0, V, (T, B), generator=g)
    rows = torch.tensor([1, 5, 9, 11])
    p = torch.softmax(torch.randn(len(rows), C, generator=g, dtype=torch.float64), -1)
    params = (w(V, d), w(C, d), w(C), w(d, d), w(d, d), w(d), w(d), w(d, d), w(d, d), w(d), w(d))
    fns = (RNNModel._loss, RNNModel._loss_grads)
    assert torch.autograd.gradcheck(lambda *ps: WrittenOutLoss.apply(fns, (ids, rows, p), *ps), params)


@pytest.mark.parametrize("cls", ["LSTMModel", "StackRNN", "StackLSTM", "TapeRNN", "TapeRNN-nojumps"])
def test_written_out_loss_gradient_is_the_numerical_one(cls):
    """gradcheck of the LSTM's (two layers), the stack models' and the Tape-RNN's written-out
    losses (the Tape-RNN's write MLP shrunk to 3 → 4 → 4 → 2, with jumps read from EOS at
    random positions, and without jumps). gradcheck runs the node's backward pass many times on
    one forward pass: the LSTM cells' backward, which writes over the forward's buffers, must
    give the same gradient each time."""
    from expressivity.train import models

    if cls == "LSTMModel":
        net = models.LSTMModel(5, 3, 2, 2)
    elif cls.startswith("TapeRNN"):
        net = models.TapeRNN(5, 3, 2, tape_size=4, cell=2, jumps=cls == "TapeRNN")
        lin = torch.nn.Linear
        net.write = torch.nn.Sequential(lin(3, 4), torch.nn.ReLU(), lin(4, 4), torch.nn.ReLU(), lin(4, 2))
    else:
        net = getattr(models, cls)(5, 3, 2, stack_size=3, cell=2)
    net = net.double()
    g = torch.Generator().manual_seed(4)
    batch = {"input": torch.randint(0, 5, (2, 4), generator=g),
             "output": torch.softmax(torch.randn(2, 4, 2, generator=g, dtype=torch.float64), -1),
             "mask": torch.tensor([[False, True, False, True], [True, False, False, True]])}
    data, params = net._fused_arguments(batch["input"], batch["output"], batch["mask"])
    params = tuple(q.detach().clone().requires_grad_() for q in params)
    fns = (net._loss, net._loss_grads)
    assert torch.autograd.gradcheck(lambda *ps: WrittenOutLoss.apply(fns, data, *ps), params)


def test_the_transformer_and_aux_heads_keep_the_full_forward_pass():
    """Models without ``scored_loss`` (the transformer, a model with aux heads) get the soft
    cross-entropy of their logits (in float32, as train_run has always taken it)."""
    for cfg in (RunConfig(task="parity", model="transformer", layers=1, heads=2, d_model=8),
                RunConfig(task="parity", model="rnn", d_model=8, aux=("lm",))):
        from expressivity.train import recognizers

        task = cfg.make_task()
        net = recognizers.build(cfg, task).double()
        assert not hasattr(net, "scored_loss")
        batch = task.sample_batch(__import__("numpy").random.default_rng(0), 4, 5)
        want = soft_cross_entropy(net(batch["input"]).float(), batch["output"], batch["mask"]).sum() / batch["mask"].sum()
        assert torch.equal(training_loss(net, batch), want)


@pytest.mark.parametrize("model", RECURRENT)
def test_train_runs_losses_are_the_full_forward_passes(model, monkeypatch):
    """train_run with the scored loss against train_run with the full forward pass's (the
    models' ``scored_loss`` and ``loss_and_grads`` hidden): the same losses to float32
    round-off over a few steps."""
    cfg = RunConfig(task="parity", model=model, d_model=16, train_lengths=(2, 8), test_lengths=(10,), steps=6,
                    batch_size=8, eval_batch=4, lr=1e-2)
    ours: list[float] = []
    train_run(cfg, on_step=lambda step, loss: ours.append(loss))
    cls = type(build_model(cfg, 4, 2))
    for klass in cls.__mro__:
        for name in ("scored_loss", "loss_and_grads"):
            if name in vars(klass):
                monkeypatch.delattr(klass, name)
    net = build_model(cfg, 4, 2)
    assert not hasattr(net, "scored_loss") and not hasattr(net, "loss_and_grads")
    full: list[float] = []
    train_run(cfg, on_step=lambda step, loss: full.append(loss))
    assert len(ours) == len(full) == 6
    assert max(abs(a - b) for a, b in zip(ours, full)) < 1e-5


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 1000), layers=st.integers(1, 3), B=st.integers(1, 5), T=st.integers(1, 7),
       model=st.sampled_from(RECURRENT))
def test_loss_and_grads_is_scored_loss_and_backward_bit_for_bit(seed, layers, B, T, model):
    """A model's ``loss_and_grads`` (no autograd graph) leaves the gradients that
    ``scored_loss(...).backward()`` leaves, bit for bit, adding to gradients already there; the
    bias pair of a layer gets one gradient in two tensors (clipping scales each once)."""
    net = _model(model, seed, layers if model in ("rnn", "lstm") else 1)
    batch = _batch(seed, B, T, 3, 0.5)
    v_ref, g_ref = _value_and_grads(net, training_loss, batch)
    net.zero_grad()
    with torch.no_grad():  # without grad mode: scored_loss and backward, the same bits
        with pytest.raises(RuntimeError):
            net.loss_and_grads(batch["input"], batch["output"], batch["mask"])
    value = net.loss_and_grads(batch["input"], batch["output"], batch["mask"])
    assert torch.equal(value, v_ref) and not value.requires_grad
    grads = {k: p.grad for k, p in net.named_parameters() if p.grad is not None}  # None where autograd leaves None
    assert grads.keys() == g_ref.keys() and all(torch.equal(grads[k], g_ref[k]) for k in grads)
    assert len({id(g) for g in grads.values()}) == len(grads)
    net.loss_and_grads(batch["input"], batch["output"], batch["mask"])  # accumulates, as backward does
    assert all(torch.allclose(p.grad, 2 * g_ref[k], rtol=1e-12, atol=0) for k, p in net.named_parameters()
               if k in g_ref)


def test_loss_and_gradients_takes_the_direct_path_and_skips_a_non_finite_backward(monkeypatch):
    """train_run's step: the model's loss_and_grads where it has one (float32, no aux); else the
    loss and its backward pass — none when the loss is not finite (the run has diverged)."""
    from expressivity.train.loop import loss_and_gradients

    cfg = RunConfig(task="parity", model="rnn", d_model=8)
    net, batch, cpu = _model("rnn", 0), _batch(0, 3, 4, 3, 0.5), torch.device("cpu")
    want = training_loss(net, batch)
    assert loss_and_gradients(cfg, cfg.make_task(), net, batch, cpu) == want.item()
    assert all(p.grad is not None for p in net.parameters())
    calls = []
    monkeypatch.setattr(type(net), "loss_and_grads", lambda self, *a: calls.append(1) or torch.zeros(()))
    assert loss_and_gradients(cfg, cfg.make_task(), net, batch, cpu) == 0.0 and calls == [1]
    other = _model("transformer", 0)
    with torch.no_grad():
        next(other.parameters()).fill_(float("nan"))
    value = loss_and_gradients(RunConfig(task="parity", model="transformer", d_model=8), cfg.make_task(), other,
                               batch, cpu)
    assert value != value and all(p.grad is None for p in other.parameters())


def _runs_batches(model: str, seed: int, layers: int, R: int, B: int, lengths, p_scored: float):
    """R independent models and batches (run r: length lengths[r]), their weights stacked
    and the batches right-padded to the longest, as train_many gives them: (nets, batches,
    params, (inputs, target, mask))."""
    from torch.func import stack_module_state
    nets = [_model(model, seed + r, layers if model in ("rnn", "lstm") else 1) for r in range(R)]
    batches = [_batch(seed + r, B, lengths[r], 3, p_scored) for r in range(R)]
    T = max(lengths[:R])
    pad = lambda t, v: torch.nn.functional.pad(t, (0, 0) * (t.dim() - 2) + (0, T - t.shape[1]), value=v)  # noqa: E731
    padded = (torch.stack([pad(b["input"], 0) for b in batches]), torch.stack([pad(b["output"], 0.0) for b in batches]),
              torch.stack([pad(b["mask"], False) for b in batches]))
    return nets, batches, {k: v.detach() for k, v in stack_module_state(nets)[0].items()}, padded


@settings(max_examples=40, deadline=None)
@given(model=st.sampled_from(["rnn", "lstm", "stack_rnn", "stack_lstm", "tape_rnn"]), seed=st.integers(0, 1000),
       layers=st.integers(1, 3), R=st.integers(1, 4), B=st.integers(1, 4),
       lengths=st.lists(st.integers(1, 7), min_size=4, max_size=4), p_scored=st.sampled_from([0.0, 0.3, 1.0]))
def test_many_runs_written_out_loss_is_each_runs_own(model, seed, layers, R, B, lengths, p_scored):
    """runs_loss_and_grads on R runs' stacked weights, their batches right-padded to the
    longest (as train_many pads them), gives each run the loss and gradients of its own
    scored_loss and backward — an independent model and batch per run (a gradient autograd
    leaves None, the heads' when only t = 1 is scored, is zero)."""
    nets, batches, params, padded = _runs_batches(model, seed, layers, R, B, lengths, p_scored)
    losses, grads = nets[0].runs_loss_and_grads(params, *padded)
    assert losses.shape == (R,) and grads.keys() == params.keys()
    for r, (net, batch) in enumerate(zip(nets, batches)):
        value, own = _value_and_grads(net, training_loss, batch)
        assert abs(float(losses[r] - value)) < 1e-12
        for k in params:
            expected = own[k] if k in own else torch.zeros_like(params[k][r])
            torch.testing.assert_close(grads[k][r], expected, atol=1e-12, rtol=1e-10, msg=k)


@pytest.mark.parametrize("model", RECURRENT)
@pytest.mark.parametrize("lengths", [[9, 6, 6, 2], [3, 9, 1, 7]], ids=["longest-first", "any-order"])
def test_packed_steps_read_no_row_they_left_out(model, lengths, monkeypatch):
    """R runs of different lengths: each step computes only its leading runs still read
    (models/_runs.active_runs), and gives what stepping every run at every step gives —
    losses and gradients, with every buffer the losses leave uninitialised full of NaN, so a
    row read but never written shows."""
    from expressivity.train.models import _runs, _stack_loss, _tape_loss, lstm, rnn
    users = (rnn, lstm, _stack_loss, _tape_loss)
    nets, _, params, padded = _runs_batches(model, 11, 2, 4, 3, lengths, 0.3)
    shape = lambda size: tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else size  # noqa: E731
    monkeypatch.setattr(torch.Tensor, "new_empty", lambda self, *size, **kw: self.new_full(shape(size), float("nan"), **kw))
    monkeypatch.setattr(torch, "empty_like", lambda t, **kw: torch.full_like(t, float("nan"), **kw))
    seen = []
    for module in users:
        monkeypatch.setattr(module, "active_runs", lambda *a: seen.append(_runs.active_runs(*a)) or seen[-1])
    losses, grads = nets[0].runs_loss_and_grads(params, *padded)
    assert len(seen) == 1 and seen[0] is not None and min(seen[0]) < 4  # packed: some step leaves runs out
    for module in users:
        monkeypatch.setattr(module, "active_runs", lambda *a: None)  # every run at every step
    every_losses, every_grads = nets[0].runs_loss_and_grads(params, *padded)
    assert torch.isfinite(losses).all()
    torch.testing.assert_close(losses, every_losses, atol=1e-12, rtol=0)
    for k in params:
        torch.testing.assert_close(grads[k], every_grads[k], atol=1e-12, rtol=1e-10, msg=k)


def test_active_runs_are_each_steps_leading_runs_still_read():
    """a_t = #{r : max_{r' ≥ r} last_{r'} ≥ t}, last_r run r's last scored step; None when
    the last run is read to the end."""
    from expressivity.train.models._runs import active_runs
    B, T = 2, 5
    last = [4, 2, 3, 0]  # run 1 ends at 2, but run 2 (at 3) behind it keeps it in the prefix
    rows = torch.tensor([[t * B + 1] for t in last])
    assert active_runs(rows, torch.ones(4), B, T) == [4, 3, 3, 3, 1]
    assert active_runs(torch.tensor([[0], [9]]), torch.ones(2), B, T) is None
