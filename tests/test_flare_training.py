"""FLaRe's protocol: auxiliary losses (RunConfig.aux), causal transformers, the ``flare`` preset,
cross-entropy by edit distance, and ``results --compare flare`` on a store of synthetic runs."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from typer.testing import CliRunner

from expressivity import languages as L
from expressivity.cli import app
from expressivity.train import ResultStore, RunConfig, RunResult, build_model, preset, train_run
from expressivity.train.flare_compare import ce_by_edits, compare_recognizers
from expressivity.train.published import published
from expressivity.train.recognizers import AuxHeads, aux_loss, build, edit_metrics


def tiny(**kw) -> RunConfig:
    base = dict(task="flare.parity", model="lstm", layers=1, d_model=8, heads=2, train_lengths=(1, 8),
                test_lengths=(9, 10), steps=2, batch_size=8, eval_batch=8)
    return RunConfig(**(base | kw))


def test_aux_is_normalized_and_left_out_of_old_run_ids():
    plain = tiny()
    assert "aux" not in plain.to_dict() and "causal" not in plain.to_dict()
    a = tiny(aux=("next_symbol", "lm"))
    assert a.aux == {"lm": 1.0, "next_symbol": 1.0} and a.to_dict()["aux"] == {"lm": 1.0, "next_symbol": 1.0}
    assert tiny(aux="lm,next_symbol") == a and tiny(aux={"lm": 0.5}).aux == {"lm": 0.5}
    assert a.run_id != plain.run_id and tiny(aux=()).run_id == plain.run_id
    assert RunConfig.from_dict(a.to_dict()) == a
    assert "+lm+next_symbol" in a.label()


@pytest.mark.parametrize(("fields", "pattern"), [
    (dict(aux=("lm", "copy")), "unknown RunConfig.aux loss 'copy'; choose one of: lm, next_symbol"),
    (dict(aux={"lm": 0}), "RunConfig.aux coefficient of 'lm' must be > 0"),
    (dict(aux=5), r"RunConfig.aux must name auxiliary losses \(lm, next_symbol\)"),
    (dict(aux=("lm",), model="transformer"), "needs causal=True .*models that carry aux losses: rnn, lstm, stack_rnn"),
    (dict(aux=("lm",), kind="next_symbol"), "adds losses to a recognizer; kind is 'next_symbol'"),
    (dict(aux=("lm",), task="parity_check", kind="classification"), "needs a language with next symbols"),
    (dict(aux=("lm",), task="parity", model="transformer", init="construction:parity"), "has no auxiliary heads"),
    (dict(causal=True), "RunConfig.causal masks a transformer's attention; model 'lstm' reads causally already"),
    (dict(causal=True, model="transformer", kind="next_symbol"), "a next_symbol transformer is causal already"),
    (dict(train_lengths=(2, 2), task="flare.marked_copy"), "holds no valid length for flare.marked_copy recognition; "
                                                           "its valid lengths start 1, 3, 5"),
    (dict(task="flare.palindrome"), "unknown FLaRe language 'flare.palindrome'; choose one of: flare.even_pairs"),
])
def test_bad_aux_and_causal_configs_are_one_line_errors(fields, pattern):
    with pytest.raises(ValueError, match=pattern) as info:
        tiny(**fields)
    assert "\n" not in str(info.value)


def test_causal_transformer_reads_no_later_symbol():
    cfg = tiny(model="transformer", causal=True)
    model = build_model(cfg, 6, 2).eval()
    ids = torch.randint(4, 6, (3, 9))
    other = ids.clone()
    other[:, 6:] = 9 - other[:, 6:]  # change the last three symbols
    with torch.no_grad():
        a, b = model(ids), model(other)
    assert torch.allclose(a[:, :6], b[:, :6], atol=1e-6) and not torch.allclose(a[:, 6:], b[:, 6:])
    bidirectional = build_model(tiny(model="transformer"), 6, 2).eval()
    with torch.no_grad():
        assert not torch.allclose(bidirectional(ids)[:, :6], bidirectional(other)[:, :6])


def test_aux_loss_is_their_two_losses_on_the_positives():
    """Recomputed by hand: LM cross-entropy of s_{t+2} (EOS last) and the mean binary
    cross-entropy against the valid next symbols, per position of s₁ … s_n, over positives."""
    cfg = tiny(task="flare.marked_copy", aux={"lm": 0.5, "next_symbol": 2.0})
    task = cfg.make_task()
    model = build(cfg, task)
    assert isinstance(model, AuxHeads)
    batch = task.sample_batch(np.random.default_rng(0), 8, 7)
    logits = model(batch["input"])
    assert logits.shape == (8, 8, 2) and model.aux_logits.shape == (8, 8, 2 * 4)
    got = aux_loss(cfg, task, model, batch)
    lang, K = task.language, 3
    lm, ns = [], []
    for b in range(8):
        if batch["label"][b] != 1:
            continue
        s = lang.to_strings((batch["input"][b, :7] - 4).numpy()[None])[0]
        sets = lang.next_symbol_sets(lang.to_ids([s]))[0]
        for t in range(7):
            head = model.aux_logits[b, t]
            nxt = K if t == 6 else lang.alphabet.index(s[t + 1])
            lm.append((b, -F.log_softmax(head[:4], -1)[nxt]))
            ns.append((b, F.binary_cross_entropy_with_logits(head[4:], torch.tensor(sets[t + 1], dtype=torch.float))))
    per = lambda xs: torch.stack([torch.stack([v for bb, v in xs if bb == b]).mean() for b in sorted({b for b, _ in xs})]).mean()  # noqa: E731
    assert torch.allclose(got, 0.5 * per(lm) + 2.0 * per(ns), atol=1e-6)
    got.backward()
    assert model.base.unembed.weight.grad[2:].abs().sum() > 0  # the aux rows of the read-out learn


def test_runs_with_aux_losses_train_checkpoint_and_resume(tmp_path):
    for cfg in (tiny(aux=("lm", "next_symbol")), tiny(model="transformer", causal=True, aux=("next_symbol",)),
                tiny(model="stack_rnn", aux=("lm",), task="flare.dyck_k_m", train_lengths=(2, 6), test_lengths=(8,))):
        first = train_run(cfg, tmp_path / cfg.run_id)
        again = train_run(cfg, tmp_path / cfg.run_id)  # resumes from the last checkpoint: nothing left to train
        assert again.resumed_from == cfg.steps and math.isfinite(first.final_loss)
        assert [m["accuracy"] for m in again.metrics] == [m["accuracy"] for m in first.metrics]


def test_edit_metrics_sum_over_the_negatives():
    task = L.get_task("flare.dyck_k_m", "recognition")
    batch = task.sample_batch(np.random.default_rng(1), 64, 10)
    logits = torch.randn(64, 11, 2)
    out = edit_metrics(task, logits, batch)
    neg = int((batch["label"] == 0).sum())
    assert sum(v for k, v in out.items() if k.startswith("edits_n_")) == neg
    assert sum(v for k, v in out.items() if k.startswith("edit_n_")) == neg
    assert min(int(k.split("_")[-1]) for k in out if k.startswith("edit_n_")) >= 1
    ce = F.cross_entropy(logits[:, 10], batch["label"], reduction="none") / math.log(2)
    total = float(ce[batch["label"] == 0].sum())
    assert sum(v for k, v in out.items() if k.startswith("edit_ce_")) == pytest.approx(total)
    assert edit_metrics(L.get_task("parity", "recognition"), logits, {"label": batch["label"]}) == {}


def test_flare_preset_uses_their_sizes_and_ranges():
    counts = {}
    for model in ("transformer", "rnn", "lstm"):
        cfg = preset("flare", "flare.parity", model=model)
        assert cfg.train_lengths == (0, 40) and cfg.test_lengths == tuple(range(0, 501)) and cfg.layers == 5
        counts[model] = sum(p.numel() for p in build_model(cfg, 6, 2).parameters())
    assert preset("flare", "flare.parity").causal and all(abs(c - 64_000) < 2_500 for c in counts.values()), counts
    assert not preset("flare", "flare.parity", kind="next_symbol").causal
    assert preset("flare", "flare.parity", model="lstm", aux=("lm",)).aux == {"lm": 1.0}


def _result(task, model, seed, accuracy, aux=(), extra=None):
    cfg = preset("flare", task, model=model, seed=seed, steps=1, layers=1, d_model=8, heads=2, aux=aux,
                 test_lengths=(5, 9))
    metrics = tuple({"length": n, "accuracy": a, "ce_bits": 1.0, "optimal_bits": 0.0, "excess_bits": 1.0,
                     "n_strings": 8} | (extra or {}) for n, a in zip((5, 9), accuracy))
    return RunResult(cfg, metrics, 0.1, 1.0, 10)


def test_compare_flare_takes_their_mean_and_max(tmp_path):
    runs = [_result("flare.marked_copy", "lstm", 0, (1.0, 0.6)), _result("flare.marked_copy", "lstm", 1, (1.0, 0.8)),
            _result("flare.marked_copy", "lstm", 0, (1.0, 1.0), aux=("lm",)),
            _result("flare.marked_copy", "lstm", 1, (0.5, 0.5), aux=("lm",)),
            _result("flare.parity", "rnn", 0, (1.0, 1.0), extra={"edit_ce_1": 2.0, "edit_n_1": 4.0,
                                                                  "edits_ce_0": 1.0, "edits_n_0": 2.0})]
    path = tmp_path / "r.sqlite"
    with ResultStore(path) as s:
        for r in runs:
            s.record_result(r)
        rows = s.rows()
    cells = {(c.task, c.model): c for c in compare_recognizers(rows, published("flare"))}
    copy = cells[("flare.marked_copy", "lstm")]
    assert copy.runs == 4 and copy.inductive_bias == pytest.approx(0.85)  # rec: (0.8 + 0.9)/2 beats rec+lm: 0.75
    assert copy.expressivity == 1.0 and copy.perfect and copy.published_perfect is False
    assert cells[("flare.parity", "transformer")].runs == 0 and cells[("flare.parity", "transformer")].expressivity is None
    assert ce_by_edits(rows)[("flare.parity", "rnn")] == {"distance": {1: 0.5}, "edits": {0: 0.5}}
    res = CliRunner().invoke(app, ["results", "--db", str(path), "--compare", "flare", "--plot", str(tmp_path / "c.png")])
    assert res.exit_code == 0, res.output
    assert "Butoi et al. 2025" in res.output and "marked_copy" in res.output and (tmp_path / "c.png").stat().st_size
    res = CliRunner().invoke(app, ["results", "--db", str(path), "--plot", str(tmp_path / "p.png")])
    assert res.exit_code == 0 and (tmp_path / "p.png").stat().st_size > 0


def test_recognizer_tables_are_checked(tmp_path):
    import json

    d = json.loads((published.__globals__["resources"].files("expressivity.train") / "data" / "butoi2025.json")
                   .read_text(encoding="utf-8"))
    d["tasks"]["flare.parity"]["scores"]["inductive_bias"]["rnn"] = 1.2
    bad = tmp_path / "t.json"
    bad.write_text(json.dumps(d))
    with pytest.raises(ValueError, match="inductive_bias score of rnn must be an accuracy in"):
        published(str(bad))
    d["tasks"]["flare.parity"]["scores"]["inductive_bias"]["rnn"] = 1.0
    bad.write_text(json.dumps(d))
    with pytest.raises(ValueError, match="every number and fact needs a known source"):
        published(str(bad))
    d["tasks"]["flare.parity"]["sources"]["inductive_bias/rnn"] = "figure1"
    bad.write_text(json.dumps(d))
    assert published(str(bad)).cell("flare.parity", "rnn").scores["inductive_bias"] == 1.0


def test_a_run_with_aux_heads_reloads_through_the_hub_and_limits(tmp_path):
    from expressivity.interop import from_pretrained, save_pretrained
    from expressivity.interop.runs import load_run
    from expressivity.limits.trained import TrainedModel, load_trained

    cfg = tiny(model="transformer", causal=True, aux=("lm",))
    train_run(cfg, tmp_path / "run")
    run = load_run(tmp_path / "run")
    assert isinstance(run.model, AuxHeads)
    save_pretrained(run, tmp_path / "hub")
    back = from_pretrained(tmp_path / "hub")
    x = run.sample_inputs(4)
    assert torch.equal(back(x), run(x))
    assert isinstance(load_trained(tmp_path / "run" / "model.safetensors"), TrainedModel)


@pytest.mark.parametrize(("args", "pattern"), [
    (["--task", "flare.copy"], "unknown FLaRe language 'flare.copy'; choose one of: flare.even_pairs"),
    (["--task", "flare.marked_copy", "--train-lengths", "2-2"], "its valid lengths start 1, 3, 5"),
    (["--task", "flare.parity", "--model", "transformer", "--aux", "lm"], "models that carry aux losses: rnn, lstm"),
    (["--task", "flare.parity", "--model", "lstm", "--aux", "lm,copy"], "choose one of: lm, next_symbol"),
])
def test_cli_refuses_bad_flare_runs_in_one_line(tmp_path, args, pattern):
    res = CliRunner().invoke(app, ["train", *args, "--steps", "1", "--db", str(tmp_path / "r.sqlite"),
                                   "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and res.output.startswith("error: "), res.output
    assert pattern in " ".join(res.output.split()) and len(res.output.strip().splitlines()) == 1
