"""Recurrent models of train/models: shapes, determinism, the stack and tape equations against
slow references written from the module docstrings, gradients, and tiny training runs."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from expressivity import languages as L
from expressivity.train import RunConfig, build_model, train_run
from expressivity.train.models import (
    MODELS,
    StackLSTM,
    StackRNN,
    TapeRNN,
    stack_update,
    tape_update,
)
from expressivity.train.models.stack_rnn import NOOP, POP, PUSH
from expressivity.train.models.tape_rnn import (
    JUMP_LEFT,
    JUMP_RIGHT,
    LEFT,
    RIGHT,
    STAY,
    input_length,
)

ALL = ("transformer", "rnn", "lstm", "stack_rnn", "stack_lstm", "tape_rnn")


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


@pytest.mark.parametrize("model", ["rnn", "stack_rnn", "stack_lstm", "tape_rnn"])
def test_gradients_reach_every_parameter(model):
    m = build_model(cfg_of(model), 6, 2)
    m(torch.randint(4, 6, (4, 7))).square().sum().backward()
    for name, p in m.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, name


def test_recurrent_models_are_causal():
    """o_t depends on s_1..s_t only: changing the last token leaves earlier outputs alone."""
    for model in ("rnn", "stack_rnn", "stack_lstm"):
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
    controller = m.controller

    def reading(u, r, state, w):  # records the top r_{t−1} the core reads at each step
        reads.append(r.clone())
        return controller(u, r, state, w)

    m.controller = reading
    x = torch.randint(4, 6, (2, 3))
    m(x)
    # recompute v_1 from h_1 = tanh(W_core [x_1; 0; 0])
    e = m.embed(x[:, 0])
    h1 = torch.tanh(m.W_core(torch.cat([e, torch.zeros(2, 3 + 8, dtype=torch.float64)], -1)))
    assert torch.allclose(reads[1], m.W_v(h1), atol=1e-12) and torch.equal(reads[0], torch.zeros(2, 3).double())


def list_stack(ops, values, K: int, m: int) -> list[torch.Tensor]:
    """Reference: a Python list as the stack (index 0 = top) for hard actions; a push beyond K
    cells drops the bottom one, a pop of an empty stack leaves it empty. The (K, m) array after
    each op, zeros below the stack."""
    stack: list[torch.Tensor] = []
    out = []
    for op, v in zip(ops, values):
        if op == PUSH:
            stack = [v] + stack[: K - 1]
        elif op == POP:
            stack = stack[1:]
        S = torch.zeros(K, m, dtype=torch.float64)
        for i, cell in enumerate(stack):
            S[i] = cell
        out.append(S)
    return out


@settings(max_examples=40, deadline=None)
@given(ops=st.lists(st.sampled_from([PUSH, POP, NOOP]), min_size=1, max_size=25), K=st.integers(1, 6),
       seed=st.integers(0, 2**31))
def test_stack_update_with_one_hot_actions_is_a_list_stack(ops, K, seed):
    m = 3
    values = torch.randn(len(ops), m, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    S = torch.zeros(1, K, m, dtype=torch.float64)
    for t, (op, ref) in enumerate(zip(ops, list_stack(ops, values, K, m))):
        S = stack_update(S, onehot(op, 3), values[t : t + 1])
        assert torch.equal(S[0], ref)


class Scripted:
    """Stands in for the heads (W_a, W_v): returns row t of ``logits`` and of ``values`` at its
    t-th call (one call per step), whatever h_t."""

    def __init__(self, logits: torch.Tensor, values: torch.Tensor) -> None:
        self.logits, self.values, self.t = logits, values, 0

    def __call__(self, h: torch.Tensor, W: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        rows = self.logits[self.t], self.values[self.t]
        self.t += 1
        return tuple(row.expand(h.shape[0], -1) for row in rows)


@pytest.mark.parametrize("cls", [StackRNN, StackLSTM])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_models_stack_with_hard_actions_is_a_list_stack(cls, seed):
    """Both models drive the one stack step: with the actions scripted as one-hot (logits ±1e4:
    softmax is exactly one-hot in float64) the stack after every step equals the list stack."""
    K, m, T = 4, 3, 14
    g = torch.Generator().manual_seed(seed)
    ops = torch.randint(0, 3, (T,), generator=g).tolist()
    values = torch.randn(T, m, generator=g, dtype=torch.float64)
    model = cls(6, 8, 2, stack_size=K, cell=m).double()
    model.read_heads = Scripted(1e4 * torch.nn.functional.one_hot(torch.tensor(ops), 3).double(), values)
    stacks = model.stacks(torch.randint(4, 6, (2, T), generator=g))  # (B, T, K, m)
    for t, ref in enumerate(list_stack(ops, values, K, m)):
        assert torch.equal(stacks[0, t], ref) and torch.equal(stacks[1, t], ref), t


def test_stack_lstm_controller_is_an_lstm_reading_the_top():
    """h_1 = LSTMCell([x_1; r_0 = 0], (0, 0)); h_2 reads r_1 = the top after step 1."""
    m = StackLSTM(6, 8, 2, stack_size=4, cell=3).double()
    ids = torch.randint(4, 6, (2, 2))
    x = m.embed(ids)
    h, stacks = m.run(ids)
    h1, c1 = m.lstm(torch.cat([x[:, 0], torch.zeros(2, 3, dtype=torch.float64)], -1))
    assert torch.allclose(h[:, 0], h1, atol=1e-14)
    h2, _ = m.lstm(torch.cat([x[:, 1], stacks[:, 0, 0]], -1), (h1, c1))
    assert torch.allclose(h[:, 1], h2, atol=1e-14)


def test_stack_lstm_in_config_errors_and_memory():
    from expressivity.train import memory_estimate

    with pytest.raises(ValueError, match="stack_lstm"):
        cfg_of("stack_lstmm")
    assert memory_estimate(cfg_of("stack_lstm"))["training"] > memory_estimate(cfg_of("lstm", layers=1))["training"]


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
@pytest.mark.parametrize("model,lr", [("rnn", 1e-2), ("stack_rnn", 1e-2), ("stack_lstm", 1e-2), ("tape_rnn", 3e-3)])
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


def test_stack_model_without_history_gives_the_same_outputs():
    """``run(keep_stacks=False)`` (what ``core`` uses) holds one stack, not T, and returns the
    same outputs bit for bit."""
    m = StackLSTM(6, 8, 2, stack_size=5, cell=3).double()
    x = torch.randint(0, 6, (3, 9))
    h, stacks = m.run(x)
    h2, none = m.run(x, keep_stacks=False)
    assert none is None and stacks.shape == (3, 9, 5, 3) and torch.equal(h, h2)



@pytest.mark.parametrize("model", ["stack_rnn", "stack_lstm", "tape_rnn"])
def test_evaluation_memory_is_one_memory_state_not_one_per_step(model, monkeypatch):
    """Under no_grad a recurrent model holds one stack / tape, not T of them (``run`` keeps no
    history), so the evaluation estimate grows with the memory's size K plus the length T, not
    with K·T: a full-budget run whose memory is sized to length-500 strings (K = 501) is not
    refused on a machine with a 1 GiB budget — the per-step count (the training one) would
    have put its evaluation above 1 GiB."""
    from expressivity.train import check_run_memory, memory_estimate

    def est(K, n):
        return memory_estimate(RunConfig(task="duplicate_string", kind="transduction", model=model, d_model=256,
                                         layers=1, memory_size=K, train_lengths=(1, 40), test_lengths=(n,),
                                         eval_batch=32))["evaluation"]
    grow_k = est(1000, 100) - est(500, 100)
    grow_t = est(500, 200) - est(500, 100)
    assert est(1000, 200) - est(500, 200) == pytest.approx(grow_k)  # the K term does not depend on T
    assert grow_k < 100 * 32 * 500 * 8 * 4  # far below one K-cell memory per step
    assert grow_t > 0
    monkeypatch.setenv("EXPRESSIVITY_MEMORY_BUDGET", str(2**30))
    check_run_memory(RunConfig(task="duplicate_string", kind="transduction", model=model, d_model=256, layers=1,
                               memory_size=501, train_lengths=(1, 40), test_lengths=(500,), eval_batch=32))


# ---------------------------------------------------------------- memory at evaluation
@pytest.mark.parametrize("model", ["stack_rnn", "stack_lstm", "tape_rnn"])
def test_memory_resized_equals_a_model_built_with_those_cells(model):
    """The same weights with K' cells inside ``memory_resized`` give exactly what a model built
    with K' cells gives, and K is restored after; the small memory differs on long strings."""
    from expressivity.train.models import memory_resized

    small, big = (RunConfig(task="duplicate_string", kind="transduction", model=model, d_model=8, seed=1,
                            memory_size=k) for k in (3, 64))
    m_small, m_big = build_model(small, 6, 2), build_model(big, 6, 2)
    m_big.load_state_dict(m_small.state_dict())
    ids = torch.randint(4, 6, (3, 20))
    ids[:, 10] = L.EOS_TOKEN
    with torch.no_grad():
        with memory_resized(m_small, 64):
            resized = m_small(ids)
        after = m_small(ids)
        assert torch.equal(resized, m_big(ids))
        assert not torch.allclose(after, resized)  # 3 cells forget what 64 keep
    assert all(mod.K == 3 for mod in m_small.modules() if hasattr(mod, "K"))


def test_eval_memory_size_is_used_in_evaluation_only():
    """``eval_memory_size`` changes the test metrics of the same trained weights, not training;
    at 0 it is left out of the run id; models without memory refuse it."""
    from dataclasses import replace

    from expressivity.train import evaluate_lengths

    cfg = RunConfig(task="duplicate_string", kind="transduction", model="stack_rnn", d_model=8, steps=3,
                    train_lengths=(1, 3), test_lengths=(24,), eval_batch=16, memory_size=2, seed=0)
    assert "eval_memory_size" not in cfg.to_dict()
    wide = replace(cfg, eval_memory_size=48)
    assert wide.run_id != cfg.run_id
    task = cfg.make_task()
    m = build_model(cfg, len(task.vocab), task.n_outputs)
    with torch.no_grad():  # a stack that pushes every step: only 2 cells keep what it pushed
        for p in m.parameters():
            p.normal_(0, 1.0, generator=torch.Generator().manual_seed(2))
    narrow_rows, wide_rows = evaluate_lengths(m, cfg, task), evaluate_lengths(m, wide, task)
    assert narrow_rows != wide_rows and m.K == 2
    with pytest.raises(ValueError, match="eval_memory_size sizes the stack or tape"):
        RunConfig(task="parity", model="lstm", eval_memory_size=8)


# ----------------------------------------------------------- the fast loops against the equations
def elman_reference(model, ids):
    """The rnn's outputs from torch.nn.RNN itself on the embedded ids (torch's kernel)."""
    return model.unembed(torch.relu(model.rnn(model.embed(ids))[0]))


def stack_core_reference(model, ids):
    """h_1..h_T of a StackRNN / StackLSTM from the module docstrings, step by step: the whole
    W_core (or LSTMCell) on [x_t; r_{t−1}; h_{t−1}], a_t = softmax(W_a h_t + b_a), v_t = W_v h_t + b_v,
    the cell-wise stack update."""
    x = model.embed(ids)
    B, T, d = x.shape
    S = torch.zeros(B, model.K, model.m, dtype=x.dtype)
    h = c = torch.zeros(B, d, dtype=x.dtype)
    outs = []
    for t in range(T):
        if isinstance(model, StackRNN):
            h = torch.tanh(model.W_core(torch.cat([x[:, t], S[:, 0], h], -1)))
        else:
            h, c = model.lstm(torch.cat([x[:, t], S[:, 0]], -1), (h, c))
        S = stack_reference(S, torch.softmax(model.W_a(h), -1), model.W_v(h))
        outs.append(h)
    return torch.stack(outs, 1)


def tape_core_reference(model, ids):
    """h_1..h_T of a TapeRNN from its docstring: W_core on [x_t; M[0]; h], a_t = softmax(W_a h),
    w_t = write(h), the cell-wise tape update with n = input_length(ids)."""
    x = model.embed(ids)
    B, T, d = x.shape
    n = input_length(ids) if model.jumps else torch.zeros(B, dtype=torch.int64)
    M = torch.zeros(B, model.K, model.m, dtype=x.dtype)
    h = torch.zeros(B, d, dtype=x.dtype)
    outs = []
    for t in range(T):
        h = torch.tanh(model.W_core(torch.cat([x[:, t], M[:, 0], h], -1)))
        M = tape_reference(M, torch.softmax(model.W_a(h), -1), model.write(h), n)
        outs.append(h)
    return torch.stack(outs, 1)


def _values_and_gradients(model, f, g, ids):
    """(f − g)'s largest difference in value, and in every parameter's gradient of a random
    projection of the outputs."""
    w = torch.randn(f(model, ids).shape, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    out = []
    for fn in (f, g):
        model.zero_grad()
        y = fn(model, ids)
        (y * w).sum().backward()
        out.append((y.detach(), {k: p.grad.clone() for k, p in model.named_parameters() if p.grad is not None}))
    (ya, ga), (yb, gb) = out
    assert ga.keys() == gb.keys()
    return float((ya - yb).abs().max()), max(float((ga[k] - gb[k]).abs().max()) for k in ga)


@pytest.mark.parametrize("layers", [1, 2])
def test_rnn_loop_is_torch_rnn(layers):
    """ElmanScan and the input part looked up through the embedding give torch.nn.RNN's values
    and gradients (float64, to round-off)."""
    m = build_model(cfg_of("rnn", layers=layers), 6, 2).double()
    ids = torch.randint(0, 6, (3, 9), generator=torch.Generator().manual_seed(0))
    dv, dg = _values_and_gradients(m, lambda mod, i: mod(i), elman_reference, ids)
    assert dv < 1e-12 and dg < 1e-12, (dv, dg)


@pytest.mark.parametrize("layers", [1, 2])
def test_lstm_on_one_hot_tokens_is_torch_lstm_on_the_embedding(layers):
    """The LSTM kernel on one-hot ids with W_ih W_Eᵀ gives torch.nn.LSTM on the embedded ids:
    values and gradients (float64, to round-off)."""
    m = build_model(cfg_of("lstm", layers=layers), 6, 2).double()
    ids = torch.randint(0, 6, (3, 9), generator=torch.Generator().manual_seed(0))
    dv, dg = _values_and_gradients(m, lambda mod, i: mod(i), lambda mod, i: mod.unembed(mod.lstm(mod.embed(i))[0]),
                                   ids)
    assert dv < 1e-12 and dg < 1e-12, (dv, dg)


def test_elman_scan_gradient_is_the_numerical_one():
    from expressivity.train.models._recurrent import ElmanScan

    g = torch.Generator().manual_seed(3)
    U = torch.randn(5, 2, 4, generator=g, dtype=torch.float64, requires_grad=True)
    W = torch.randn(4, 4, generator=g, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(ElmanScan.apply, (U, W))


@pytest.mark.parametrize("cls", [StackRNN, StackLSTM])
def test_stack_models_are_their_equations(cls):
    m = cls(6, 8, 2, stack_size=5, cell=3).double()
    ids = torch.randint(0, 6, (4, 11), generator=torch.Generator().manual_seed(1))
    dv, dg = _values_and_gradients(m, lambda mod, i: mod.run(i)[0], stack_core_reference, ids)
    assert dv < 1e-12 and dg < 1e-12, (dv, dg)


@pytest.mark.parametrize("jumps", [True, False])
def test_tape_rnn_is_its_equations(jumps):
    m = TapeRNN(6, 8, 2, tape_size=7, cell=3, jumps=jumps).double()
    ids = torch.tensor([[4, 5, 4, 5, 5, 3], [5, 4, 2, 3, 3, 3], [4, 4, 4, 4, 4, 3]])  # n = 5, 2 (EOS), 5
    dv, dg = _values_and_gradients(m, lambda mod, i: mod.core(i).transpose(0, 1), tape_core_reference, ids)
    assert dv < 1e-12 and dg < 1e-12, (dv, dg)
