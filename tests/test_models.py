"""Recurrent models of train/models: shapes, determinism, the stack and tape equations against
slow references written from the module docstrings, gradients, and tiny training runs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from expressivity import languages as L
from expressivity.train import RunConfig, build_model, train_run
from expressivity.train.models import MODELS, StackRNN, TapeRNN, stack_update, tape_update
from expressivity.train.models.stack_rnn import NOOP, POP, PUSH
from expressivity.train.models.tape_rnn import (
    JUMP_LEFT,
    JUMP_RIGHT,
    LEFT,
    RIGHT,
    STAY,
    input_length,
)

ALL = ("transformer", "rnn", "lstm", "stack_rnn", "tape_rnn")


def cfg_of(model: str, **kw) -> RunConfig:
    base = dict(task="parity", model=model, layers=1, heads=2, d_model=16, train_lengths=(2, 8),
                test_lengths=(10,), steps=3, batch_size=4, eval_batch=4)
    return RunConfig(**(base | kw))


def onehot(i: int, n: int, batch: int = 1) -> torch.Tensor:
    return torch.nn.functional.one_hot(torch.full((batch,), i), n).double()


def test_registry_lists_every_model():
    assert tuple(MODELS) == ALL


@pytest.mark.parametrize("model", ALL)
def test_shapes_and_determinism(model):
    x = torch.randint(4, 6, (3, 9))
    a, b = build_model(cfg_of(model, seed=1), 6, 2), build_model(cfg_of(model, seed=1), 6, 2)
    c = build_model(cfg_of(model, seed=2), 6, 2)
    assert a(x).shape == (3, 9, 2)
    assert torch.equal(a(x), b(x))
    assert not torch.equal(a(x), c(x))


@pytest.mark.parametrize("model", ["rnn", "stack_rnn", "tape_rnn"])
def test_gradients_reach_every_parameter(model):
    m = build_model(cfg_of(model), 6, 2)
    m(torch.randint(4, 6, (4, 7))).square().sum().backward()
    for name, p in m.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, name


def test_recurrent_models_are_causal():
    """o_t depends on s_1..s_t only: changing the last token leaves earlier outputs alone."""
    for model in ("rnn", "stack_rnn"):
        m = build_model(cfg_of(model), 6, 2)
        x = torch.randint(4, 6, (2, 8))
        y = x.clone()
        y[:, -1] = 9 - x[:, -1]
        assert torch.equal(m(x)[:, :-1], m(y)[:, :-1])


# ------------------------------------------------------------------------------- stack
def stack_reference(S, a, v):
    """S_t[i] = a_push·S[i−1] + a_pop·S[i+1] + a_noop·S[i] cell by cell (S[−1] := v, S[K] := 0)."""
    B, K, m = S.shape
    out = torch.zeros_like(S)
    for b in range(B):
        for i in range(K):
            above = v[b] if i == 0 else S[b, i - 1]
            below = S[b, i + 1] if i + 1 < K else torch.zeros(m, dtype=S.dtype)
            out[b, i] = a[b, PUSH] * above + a[b, POP] * below + a[b, NOOP] * S[b, i]
    return out


def test_stack_push_push_pop_leaves_the_first_value_on_top():
    K, m = 5, 3
    va, vb = torch.tensor([[1.0, 2.0, 3.0]]).double(), torch.tensor([[-4.0, 5.0, 0.5]]).double()
    S = torch.zeros(1, K, m, dtype=torch.float64)
    S = stack_update(S, onehot(PUSH, 3), va)
    S = stack_update(S, onehot(PUSH, 3), vb)
    assert torch.equal(S[0, 0], vb[0]) and torch.equal(S[0, 1], va[0])
    S = stack_update(S, onehot(POP, 3), vb * 7)  # the pushed value is ignored by a pop
    assert torch.equal(S[0, 0], va[0]) and torch.equal(S[0, 1:], torch.zeros(K - 1, m, dtype=torch.float64))
    assert torch.equal(stack_update(S, onehot(NOOP, 3), vb), S)
    S = stack_update(S, onehot(POP, 3), vb)
    assert torch.equal(S, torch.zeros_like(S))  # popping the last cell empties the stack


def test_stack_update_matches_the_cellwise_equations():
    g = torch.Generator().manual_seed(0)
    S = torch.randn(4, 6, 3, generator=g, dtype=torch.float64)
    a = torch.softmax(torch.randn(4, 3, generator=g, dtype=torch.float64), -1)
    v = torch.randn(4, 3, generator=g, dtype=torch.float64)
    assert torch.allclose(stack_update(S, a, v), stack_reference(S, a, v), atol=1e-14)


def test_stack_rnn_reads_the_top_it_wrote():
    """With the actions forced to push, the read r_t is the previous step's pushed value."""
    m = StackRNN(6, 8, 2, stack_size=4, cell=3).double()
    with torch.no_grad():
        m.W_a.weight.zero_()
        m.W_a.bias.copy_(torch.tensor([100.0, 0.0, 0.0]))  # a_t ≈ push
    reads = []
    m.W_core.register_forward_pre_hook(lambda mod, args: reads.append(args[0][:, 8:8 + 3].clone()))
    x = torch.randint(4, 6, (2, 3))
    m(x)
    # recompute v_1 from h_1 = tanh(W_core [x_1; 0; 0])
    e = m.embed(x[:, 0])
    h1 = torch.tanh(m.W_core(torch.cat([e, torch.zeros(2, 3 + 8, dtype=torch.float64)], -1)))
    assert torch.allclose(reads[1], m.W_v(h1), atol=1e-12) and torch.equal(reads[0], torch.zeros(2, 3).double())


# -------------------------------------------------------------------------------- tape
def tape_reference(M, a, w, n):
    """M_t[j] = Σ_A a_A · W[(j + shift_A) mod K], W = M with cell 0 := w, shifts 0, +1, −1, +n, −n."""
    B, K, m = M.shape
    out = torch.zeros_like(M)
    for b in range(B):
        W = M[b].clone()
        W[0] = w[b]
        shifts = [0, 1, -1, int(n[b]), -int(n[b])][: a.shape[1]]
        for j in range(K):
            out[b, j] = sum(a[b, A] * W[(j + s) % K] for A, s in enumerate(shifts))
    return out


def test_tape_moves_write_and_come_back():
    K, m = 6, 2
    va, vb = torch.tensor([[1.0, -1.0]]).double(), torch.tensor([[2.0, 3.0]]).double()
    M = torch.zeros(1, K, m, dtype=torch.float64)
    M = tape_update(M, onehot(RIGHT, 5), va, 2)
    M = tape_update(M, onehot(RIGHT, 5), vb, 2)
    M = tape_update(M, onehot(LEFT, 5), M[:, 0], 2)  # write back what is read, move left
    assert torch.equal(M[0, 0], vb[0])
    M = tape_update(M, onehot(LEFT, 5), M[:, 0], 2)
    assert torch.equal(M[0, 0], va[0])
    assert torch.equal(M[0, K - 1], vb[0])  # b is one cell to the right of the head
    M = tape_update(M, onehot(STAY, 5), vb, 2)  # overwrite a under the head
    assert torch.equal(M[0, 0], vb[0]) and M.abs().sum() == 2 * vb.abs().sum()
    # jump right by n = 2 then jump left by n = 2: back over the same cell
    M = tape_update(M, onehot(JUMP_RIGHT, 5), M[:, 0], 2)
    assert torch.equal(M[0, 2], vb[0])
    M = tape_update(M, onehot(JUMP_LEFT, 5), M[:, 0], 2)
    assert torch.equal(M[0, 0], vb[0])


def test_tape_update_matches_the_cellwise_equations():
    g = torch.Generator().manual_seed(1)
    M = torch.randn(3, 7, 2, generator=g, dtype=torch.float64)
    w = torch.randn(3, 2, generator=g, dtype=torch.float64)
    n = torch.tensor([1, 3, 9])  # 9 > K wraps around
    for actions in (5, 3):
        a = torch.softmax(torch.randn(3, actions, generator=g, dtype=torch.float64), -1)
        assert torch.allclose(tape_update(M, a, w, n), tape_reference(M, a, w, n), atol=1e-14)


def test_tape_jump_length_is_the_input_length():
    ids = torch.tensor([[4, 5, 4, 3], [5, 2, 3, 3]])  # recognition s1 s2 s3 CLS; transduction s1 EOS CLS CLS
    assert input_length(ids).tolist() == [3, 1]
    task = L.get_task("reverse_string", "transduction")
    batch = task.sample_batch(np.random.default_rng(0), 2, 5)
    assert input_length(batch["input"]).tolist() == [5, 5]
    assert build_model(cfg_of("tape_rnn"), 6, 2).jumps
    lm = build_model(cfg_of("tape_rnn", task="dyck", kind="next_symbol"), 6, 3)
    assert isinstance(lm, TapeRNN) and not lm.jumps and lm.W_a.out_features == 3


# ------------------------------------------------------------------------------ training
@pytest.mark.parametrize("model,lr", [("rnn", 1e-2), ("stack_rnn", 1e-2), ("tape_rnn", 3e-3)])
def test_tiny_run_learns_parity_at_training_lengths(model, lr):
    cfg = RunConfig(task="parity", model=model, layers=1, d_model=32, train_lengths=(1, 6),
                    test_lengths=tuple(range(1, 7)), steps=150, lr=lr, batch_size=32, eval_batch=64, seed=0)
    result = train_run(cfg)
    acc = [m["accuracy"] for m in result.metrics]
    assert sum(acc) / len(acc) >= 0.9, acc


def test_checkpoint_resume_of_a_stack_rnn(tmp_path):
    cfg = cfg_of("stack_rnn", steps=6, checkpoint_every=3)
    whole = train_run(cfg, tmp_path / "whole")

    class Stop(Exception):
        pass

    def crash(step, loss):
        if step == 4:
            raise Stop

    with pytest.raises(Stop):
        train_run(cfg, tmp_path / "resumed", on_step=crash)
    resumed = train_run(cfg, tmp_path / "resumed")
    assert resumed.resumed_from == 3 and resumed.metrics == whole.metrics
