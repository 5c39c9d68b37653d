"""Many runs at once (issue 21): ``train_many`` trains a group of runs as one batched model,
and every run's result — losses step by step, final weights, per-length metrics, divergence,
checkpoints — equals ``train_run(config)`` alone up to float round-off, for every model kind
of the registry. Runs on ``--device`` (default cpu)."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from safetensors.torch import load_file

from expressivity.train import MODELS, ResultStore, RunConfig, train_run
from expressivity.train.many import group_configs, group_key, length_buckets, train_many
from expressivity.train.sweep import plan_groups, run_sweep

TOL = 2e-5  # float32 round-off over a few steps (batched kernels sum in another order)
TINY = dict(task="parity", layers=1, heads=2, d_model=8, train_lengths=(1, 7), test_lengths=(8, 9), steps=4,
            batch_size=4, eval_batch=4, checkpoint_every=2)
VARY = [dict(seed=0, lr=1e-3, grad_clip=1.0), dict(seed=1, lr=3e-3, grad_clip=0.0),
        dict(seed=2, lr=1e-2, grad_clip=0.05)]  # a small clip bites: per-run norms are tested


def _runs(device, **fields) -> list[RunConfig]:
    base = RunConfig(**{**TINY, **fields}, device=device)
    return [replace(base, **v) for v in VARY]


def _assert_same_as_alone(cfgs, tmp_path, buckets: int | None = 1) -> list:
    """train_many vs train_run run by run: results, and the checkpoints' losses and weights.
    ``buckets=1``: every step pads all runs' batches to the longest (what an accelerator does)."""
    many = train_many(cfgs, [tmp_path / "many" / str(i) for i in range(len(cfgs))], buckets=buckets)
    for i, (cfg, got) in enumerate(zip(cfgs, many)):
        alone = train_run(cfg, tmp_path / "one" / str(i))
        assert got.config == cfg and got.status == alone.status and got.diverged_at == alone.diverged_at
        assert got.resumed_from == alone.resumed_from == 0 and got.n_params == alone.n_params
        if alone.status == "diverged":
            continue
        assert got.final_loss == pytest.approx(alone.final_loss, abs=TOL)
        assert len(got.metrics) == len(alone.metrics)
        for a, b in zip(got.metrics, alone.metrics):
            assert a["length"] == b["length"] and a["n_strings"] == b["n_strings"]
            for key in ("ce_bits", "excess_bits", "optimal_bits"):
                assert a[key] == pytest.approx(b[key], abs=TOL), (cfg.label(), key)
        losses = [torch.load(tmp_path / d / str(i) / "trainer.pt", weights_only=True)["losses"] for d in ("many", "one")]
        assert losses[0] == pytest.approx(losses[1], abs=TOL)
        w_many, w_one = (load_file(str(tmp_path / d / str(i) / "model.safetensors")) for d in ("many", "one"))
        assert w_many.keys() == w_one.keys()
        for k in w_one:
            if k.endswith("attn.b_K"):  # q·b_K is the same for every key, softmax ignores it: its gradient is
                continue  # 0 up to round-off, which Adam's m/√v scales up to ±lr a step — noise, not a result
            torch.testing.assert_close(w_many[k], w_one[k], atol=TOL, rtol=1e-4, msg=k)
    return many


@pytest.mark.parametrize("model", sorted(MODELS))
def test_every_model_kind_matches_its_runs_alone(model, device, tmp_path):
    _assert_same_as_alone(_runs(device, model=model), tmp_path)


@pytest.mark.parametrize("fields", [
    dict(positional="learned", layer_norm="post"),
    dict(positional="rope", causal=True),
    dict(positional="alibi", log_length_scaling=True),
    dict(positional="relative"),
    dict(positional="i_over_n", layer_norm="none"),
    dict(task="dyck", kind="next_symbol", train_lengths=(2, 8), test_lengths=(10,)),
    dict(task="reverse_string", kind="transduction", train_lengths=(1, 5), test_lengths=(6,)),
    dict(task="majority", kind="recognition", layers=2, positional="none"),
], ids=lambda f: ",".join(f"{k}={v}" for k, v in f.items()))
def test_transformer_variants_match_their_runs_alone(fields, device, tmp_path):
    """Padding to the longest of the runs' lengths is exact: key masks, positions, i/n, log n."""
    _assert_same_as_alone(_runs(device, model="transformer", **fields), tmp_path)


@pytest.mark.parametrize("model", ["tape_rnn", "stack_lstm"])
def test_recurrent_transduction_matches(model, device, tmp_path):
    """The tape's jump length n is read past the padding (the first PAD)."""
    _assert_same_as_alone(_runs(device, model=model, task="reverse_string", kind="transduction", train_lengths=(1, 5),
                         test_lengths=(6,)), tmp_path)


@pytest.mark.parametrize("model", ["transformer", "lstm", "rnn", "stack_lstm"])
@pytest.mark.parametrize("buckets", [2, 4])
def test_length_buckets_change_nothing(model, buckets, device, tmp_path):
    """Runs split by length into buckets per step (the CPU's default) give the same results."""
    cfgs = _runs(device, model=model) + [replace(_runs(device, model=model)[0], seed=3)]
    _assert_same_as_alone(cfgs, tmp_path, buckets=buckets)


def test_length_buckets_are_a_partition_shortest_first():
    buckets = length_buckets([5, 3, 9, 3, 7], 2)
    assert buckets == [[1, 3, 0], [4, 2]]
    assert length_buckets([4, 2], 5) == [[1], [0]] and length_buckets([4, 2], 1) == [[0, 1]]
    # the written-out losses' packed steps: each bucket longest first, ties (and k = 1 too) in row order
    assert length_buckets([5, 3, 9, 3, 7], 2, longest_first=True) == [[0, 1, 3], [2, 4]]
    assert length_buckets([2, 4, 4], 1, longest_first=True) == [[1, 2, 0]]
    assert length_buckets([4, 4], 1, longest_first=True) == [[0, 1]]


def test_a_diverging_run_stops_alone_and_the_others_go_on(device, tmp_path):
    cfgs = _runs(device, model="transformer")
    cfgs[1] = replace(cfgs[1], lr=1e30)  # Adam steps of 1e30: NaN at step 2
    many = _assert_same_as_alone(cfgs, tmp_path)
    assert [r.status for r in many] == ["done", "diverged", "done"] and many[1].diverged_at == 2


@pytest.mark.parametrize("model, fields", [
    ("rnn", dict(layers=2)), ("rnn", dict(task="dyck", kind="next_symbol", train_lengths=(2, 8), test_lengths=(10,))),
    ("stack_rnn", dict(task="dyck", kind="next_symbol", train_lengths=(2, 8), test_lengths=(10,))),
    ("stack_lstm", {}), ("lstm", dict(layers=2)),
    ("tape_rnn", dict(task="duplicate_string", kind="transduction", train_lengths=(1, 5), test_lengths=(6,))),
    ("tape_rnn", dict(task="dyck", kind="next_symbol", train_lengths=(2, 8), test_lengths=(10,))),
], ids=lambda f: f if isinstance(f, str) else ",".join(f"{k}={v}" for k, v in f.items()))
def test_written_out_losses_of_many_runs_match_their_runs_alone(model, fields, device, tmp_path, monkeypatch):
    """The rnn's, the lstm's, the stack models' and the Tape-RNN's (with jumps on a
    transduction, without on next-symbol) runs train through RunsLoss.runs_loss_and_grads (no
    vmap, no autograd), and a diverging run stops alone there too."""
    from expressivity.train.models._recurrent import RunsLoss
    calls = []
    real = RunsLoss.runs_loss_and_grads
    monkeypatch.setattr(RunsLoss, "runs_loss_and_grads", lambda self, *a: calls.append(1) or real(self, *a))
    cfgs = _runs(device, model=model, **fields)
    diverging = model == "rnn" and fields.get("layers") == 2  # Adam steps of 1e30 (tanh keeps one layer's loss finite)
    if diverging:
        cfgs[1] = replace(cfgs[1], lr=1e30)
    many = _assert_same_as_alone(cfgs, tmp_path)
    assert calls and [r.status for r in many] == ["done", "diverged" if diverging else "done", "done"]


def test_runs_of_different_lengths_of_training_share_a_group(device, tmp_path):
    cfgs = [replace(c, steps=s) for c, s in zip(_runs(device, model="lstm"), (5, 2, 7))]
    assert len(group_configs(cfgs)) == 1
    _assert_same_as_alone(cfgs, tmp_path)


def test_an_interrupted_group_resumes_run_by_run(device, tmp_path):
    """Each run of a group checkpoints on its own; after a kill, one resumes alone under
    train_run, the others together under train_many, and all equal uninterrupted runs."""
    cfgs = [replace(c, steps=6, checkpoint_every=3) for c in _runs(device, model="stack_rnn")]
    outs = [tmp_path / "ck" / str(i) for i in range(3)]

    def stop(cfg, step, loss):
        if step == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_many(cfgs, outs, on_step=stop)
    first = train_run(cfgs[0], outs[0])
    rest = train_many(cfgs[1:], outs[1:])
    for cfg, got in zip(cfgs, [first, *rest]):
        alone = train_run(cfg)
        assert got.resumed_from == 3
        assert got.final_loss == pytest.approx(alone.final_loss, abs=TOL)
        for a, b in zip(got.metrics, alone.metrics):
            assert a["ce_bits"] == pytest.approx(b["ce_bits"], abs=TOL)


def test_group_configs_never_mixes_runs_that_cannot_share():
    a = RunConfig(**TINY, model="lstm")
    runs = [a, replace(a, seed=1), replace(a, d_model=16), replace(a, seed=2, lr=0.1), replace(a, model="rnn"),
            replace(a, train_lengths=(1, 9)), replace(a, seed=3, device="cpu"),
            RunConfig(task="parity", init="construction:parity", perturb=0.1),
            RunConfig(task="parity", model="lstm", aux=("lm",)), RunConfig(task="parity", model="lstm", aux=("lm",), seed=1)]
    groups = group_configs(runs)
    assert [[runs.index(c) for c in g] for g in groups] == [[0, 1, 3], [2], [4], [5], [6], [7], [8], [9]]
    assert group_key(runs[7]) is None and group_key(runs[8]) is None
    assert [len(g) for g in group_configs([replace(a, seed=s) for s in range(7)], max_runs=3)] == [3, 3, 1]


def test_plan_groups_keeps_every_worker_busy():
    a = RunConfig(**TINY, model="lstm")
    plan = plan_groups([replace(a, seed=s) for s in range(6)], workers=4)
    assert len(plan) == 4 and sorted(len(g) for g in plan) == [1, 1, 2, 2]
    assert sorted(c.seed for g in plan for c in g) == list(range(6))


def test_worth_grouping_on_the_cpu_follows_each_models_measured_limit():
    """On the CPU a run is grouped up to batch_size × d_model ≤ CPU_GROUP_WORK, or its model's
    larger limit (the packed recurrent losses: the quick size, batch 64 × d_model 64), never
    above; on a device this machine lacks, never (each run fails on its own)."""
    from expressivity.train.many import CPU_GROUP_WORK, CPU_GROUP_WORK_BY_MODEL, worth_grouping

    quick = {"batch_size": 64, "d_model": 64, "device": "cpu"}
    assert 64 * 64 > CPU_GROUP_WORK
    for model in ("rnn", "lstm", "stack_rnn", "stack_lstm", "tape_rnn", "transformer"):
        limit = CPU_GROUP_WORK_BY_MODEL.get(model, CPU_GROUP_WORK)
        a = RunConfig(task="parity", model=model, **quick)
        assert worth_grouping(a) == (64 * 64 <= limit), model
        assert worth_grouping(replace(a, batch_size=limit // 64))
        assert not worth_grouping(replace(a, batch_size=limit // 64 + 1))
        assert worth_grouping(replace(a, d_model=16, batch_size=8))
    assert {m for m in ("rnn", "stack_rnn", "stack_lstm", "tape_rnn")
            if worth_grouping(RunConfig(task="parity", model=m, **quick))} == set(CPU_GROUP_WORK_BY_MODEL)
    assert not worth_grouping(RunConfig(task="parity", model="lstm", **quick))
    assert not worth_grouping(RunConfig(task="parity", model="transformer", **quick))
    assert not worth_grouping(RunConfig(task="parity", model="rnn", batch_size=128, d_model=256, device="cpu"))
    assert not worth_grouping(RunConfig(task="parity", model="rnn", d_model=16, batch_size=8, device="cuda:7"))


def test_bad_input_is_one_line(tmp_path):
    a = RunConfig(**TINY)
    for call, text in ((lambda: train_many([a, a]), "repeated run ids"),
                       (lambda: train_many([a], [tmp_path / "x", tmp_path / "y"]), "one directory"),
                       (lambda: train_many([a, replace(a, seed=1)], [tmp_path / "x"] * 2), "its own directory"),
                       (lambda: train_many("parity"), "list of RunConfig"),
                       (lambda: group_configs([a], max_runs=0), "max_runs")):
        with pytest.raises(ValueError, match=text):
            call()


def test_a_grouped_sweep_records_what_an_ungrouped_one_does(tmp_path):
    a = RunConfig(**{**TINY, "steps": 3}, model="rnn")
    cfgs = [replace(a, seed=s) for s in range(3)] + [replace(a, model="lstm", seed=s) for s in range(2)]
    rows = {}
    for group in (True, False):
        db = tmp_path / f"{group}.sqlite"
        summary = run_sweep(cfgs, db, workers=1, out_dir=tmp_path / f"ck{group}", group=group)
        assert summary.done == 5 and summary.errors == 0
        store = ResultStore(db)
        rows[group] = {(r["run_id"], r["length"]): r["ce_bits"] for r in store.rows()}
        store.close()
    assert rows[True].keys() == rows[False].keys() and len(rows[True]) == 10
    for k, v in rows[False].items():
        assert rows[True][k] == pytest.approx(v, abs=TOL)
    assert sorted(p.name for p in (tmp_path / "ckTrue").iterdir()) == sorted(c.run_id for c in cfgs)


def test_reproduce_groups_training_units_that_share_and_each_keeps_its_result():
    """``reproduce`` merges training units whose runs differ only in seed into one unit of
    ``group_unit``; its results, split back, are what each unit gives alone."""
    from expressivity.report import training_claims as tc
    from expressivity.report.reproduce import group_units
    from expressivity.runs import Unit

    sizes = dict(tc._SIZES["parity"])
    sizes["tiny"] = ((1, 5), (6,), 3, (0, 1, 2), 4)
    tc._SIZES["parity"] = sizes
    try:
        units = [Unit(f"train.parity|tiny|{m}/s{s}", tc.train_unit, ("parity", m, s, "tiny"))
                 for m in ("lstm", "transformer") for s in (0, 1, 2)]
        units.append(Unit("other", len, ((),)))
        todo, members = group_units(units, timeout=10.0)
        assert len(todo) == 3 and len(members) == 2 and todo[-1].key.startswith("group:")
        assert {u.key for g in members.values() for u in g} == {u.key for u in units[:6]}
        group = next(u for u in todo if u.key in members)
        assert group.timeout == 30.0 and len(members[group.key]) == 3
        got = group.fn(*group.args)
        for unit, result in zip(members[group.key], got):
            alone = unit.fn(*unit.args)
            assert result.config.run_id == alone.config.run_id
            assert result.final_loss == pytest.approx(alone.final_loss, abs=TOL)
            assert [m["ce_bits"] for m in result.metrics] == pytest.approx([m["ce_bits"] for m in alone.metrics],
                                                                           abs=TOL)
    finally:
        tc._SIZES["parity"] = {k: v for k, v in sizes.items() if k != "tiny"}


def test_a_bfloat16_group_trains_like_its_runs_alone(device):
    from expressivity.train import devices as D

    if D.resolve_device(device).type == "cpu" and not D.cpu_has_bfloat16():
        pytest.skip("this CPU has no native bfloat16")
    cfgs = _runs(device, model="transformer", dtype="bfloat16")
    for got, cfg in zip(train_many(cfgs, buckets=1), cfgs):
        alone = train_run(cfg)
        assert got.status == "done" and abs(got.final_loss - alone.final_loss) < 0.05  # bfloat16: 3 digits


def test_a_run_that_cannot_start_fails_alone_in_its_group(device, tmp_path):
    """A corrupt checkpoint of one run: train_many raises by default; with on_error="return"
    (a sweep's unit) that run is a RunFailure and the others train as alone."""
    from expressivity.train.many import RunFailure

    cfgs = _runs(device, model="rnn")
    outs = [tmp_path / str(i) for i in range(3)]
    outs[1].mkdir()
    (outs[1] / "model.safetensors").write_bytes(b"not a checkpoint")
    (outs[1] / "trainer.pt").write_bytes(b"nor this")
    with pytest.raises(ValueError, match="restart"):
        train_many(cfgs, outs)
    got = train_many(cfgs, outs, on_error="return")
    assert isinstance(got[1], RunFailure) and "--restart" in got[1].error
    for i in (0, 2):
        assert got[i].final_loss == pytest.approx(train_run(cfgs[i]).final_loss, abs=TOL)
