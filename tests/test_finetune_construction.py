"""Fine-tuning from a construction (Chiang & Cholak 2022, §6): the run starts at the hand-built
weights plus N(0, σ²) noise; σ = 0 before any step is the construction itself."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from expressivity import constructions as C
from expressivity.train import RunConfig, build_model, expand_grid, memory_estimate, train_run
from expressivity.train.models.construction import ConstructionModel, get_construction


def cfg_for(init: str = "construction:parity", task: str = "parity", **kw) -> RunConfig:
    base = dict(task=task, init=init, train_lengths=(2, 8), test_lengths=(9, 10), steps=3, batch_size=8,
                eval_batch=8)
    base.update(kw)
    return RunConfig(**base)


def model_logit(model, cfg, strings: list[str]) -> np.ndarray:
    """z = logit(accept) − logit(reject) at CLS of the run's model."""
    task = cfg.make_task()
    ids = task.vocab.encode(strings, cls=True)
    with torch.no_grad():
        y = model(ids)
    return (y[:, -1, 1] - y[:, -1, 0]).double().numpy()


@pytest.mark.parametrize("name, task, params", [("parity", "parity", {}), ("first", "first", {}),
                                                ("parity", "parity", {"layer_norm": True}),
                                                ("parity", "parity", {"scale": 20.0}), ("first", "first", {"scale": 5.0}),
                                                ("dyck", "dyck", {"max_length": 40})])
def test_sigma_zero_and_no_step_is_the_construction(name, task, params):
    task_params = {"k": 2, "max_depth": 2} if task == "dyck" else {}
    cfg = cfg_for(f"construction:{name}", task, init_params=params, task_params=task_params)
    model = build_model(cfg, len(cfg.make_task().vocab), 2)
    c = C.get(name, **params)
    rng = np.random.default_rng(0)
    lang = c.language
    for n in (4, 7, 10) if task != "dyck" else (4, 10):
        strings = lang.sample(rng, 6, n, positive=True) + lang.sample(rng, 6, n, positive=False)
        assert np.abs(model_logit(model, cfg, strings) - c.logits(strings)).max() <= 1e-9
    # the copy is the model's own: training it does not touch the registry's construction
    assert model.transformer is not c.transformer and isinstance(model, ConstructionModel)


def test_the_distance_grows_with_sigma():
    c = C.get("parity")
    base = torch.cat([p.detach().flatten() for _, p in sorted(c.transformer.named_parameters())])
    dists = []
    for sigma in (0.0, 0.01, 0.1, 1.0):
        cfg = cfg_for(perturb=sigma)
        m = build_model(cfg, 6, 2)
        theta = torch.cat([p.detach().flatten() for _, p in sorted(m.transformer.named_parameters())])
        dists.append(float((theta - base).norm()))
        # ‖σε‖ ≈ σ·√N for N parameters
        assert dists[-1] == pytest.approx(sigma * np.sqrt(base.numel()), rel=0.3)
    assert dists[0] == 0.0 and dists == sorted(dists) and dists[1] < dists[2] < dists[3]
    # seeded by the run's seed: same seed, same weights; another seed, others
    a, b, d = (build_model(cfg_for(perturb=0.1, seed=s), 6, 2) for s in (0, 0, 1))
    pa, pb, pd = (torch.cat([p.flatten() for p in m.parameters()]) for m in (a, b, d))
    assert torch.equal(pa, pb) and not torch.equal(pa, pd)
    # outputs move away from the construction's as σ grows
    strings = c.language.sample(np.random.default_rng(1), 20, 8, positive=True)
    gaps = [np.abs(model_logit(build_model(cfg_for(perturb=s), 6, 2), cfg_for(), strings)
                   - c.logits(strings)).mean() for s in (0.0, 1e-3, 1e-1)]
    assert gaps[0] <= 1e-9 < gaps[1] < gaps[2]


def test_fine_tuning_trains_resumes_and_records(tmp_path):
    cfg = cfg_for(perturb=0.01, steps=4, checkpoint_every=2, lr=1e-3)
    result = train_run(cfg, tmp_path / "run")
    assert [m["length"] for m in result.metrics] == [9, 10] and result.n_params > 0
    again = train_run(cfg, tmp_path / "run")  # finished checkpoint: resumes at the last step
    assert again.resumed_from == 4 and again.metrics == result.metrics
    # the weights moved away from the perturbed start
    start = build_model(cfg, 6, 2)
    from safetensors.torch import load_file
    saved = load_file(str(tmp_path / "run" / "model.safetensors"))
    assert any(not torch.equal(saved[k], v) for k, v in start.state_dict().items())
    # ... while the construction the run started from (cached for every run) is untouched
    cached = get_construction("parity", {})
    fresh = C.get("parity")
    assert all(torch.equal(p, q) for p, q in zip(cached.transformer.parameters(), fresh.transformer.parameters()))


def test_run_ids_of_random_init_configs_are_unchanged_and_init_is_in_the_json():
    plain = RunConfig(task="parity")
    assert "init" not in plain.to_dict() and "perturb" not in plain.to_dict()
    ft = cfg_for(perturb=0.5)
    d = ft.to_dict()
    assert d["init"] == "construction:parity" and d["perturb"] == 0.5
    assert RunConfig.from_dict(d) == ft and RunConfig.from_dict(d).run_id == ft.run_id
    assert "construction:parity" in ft.label()


def test_sweeps_set_init_and_perturb_as_grid_fields():
    cfgs = expand_grid({"base": {"task": "parity", "init": "construction:parity", "train_lengths": "2-8",
                                 "test_lengths": "9"}, "grid": {"perturb": [0.0, 0.1, 1.0]}})
    assert [c.perturb for c in cfgs] == [0.0, 0.1, 1.0] and len({c.run_id for c in cfgs}) == 3


def test_memory_estimate_uses_the_construction_sizes():
    small = memory_estimate(cfg_for())
    big = memory_estimate(cfg_for(init="random", d_model=512, layers=8, heads=8))
    assert small["parameters"] < big["parameters"]


@pytest.mark.parametrize("kw, match", [
    (dict(init="construction:nope"), ("construction:parity", "construction:dyck", "random")),
    (dict(init="parity"), ("construction:parity",)),
    (dict(perturb=-0.1), ("perturb", ">= 0")),
    (dict(perturb=float("nan")), ("perturb", "finite")),
    (dict(model="lstm"), ("lstm", "transformer")),
    (dict(task="first"), ("first", "parity")),
    (dict(kind="next_symbol"), ("recognition",)),
    (dict(init="random", perturb=0.1), ("construction:",)),
    (dict(init_params={"scale_typo": 2}), ("scale_typo", "allowed")),
    (dict(init="construction:dyck", task="dyck", task_params={"k": 3, "max_depth": 2}), ("k=2",)),
    (dict(init="construction:dyck", task="dyck", task_params={"k": 2, "max_depth": 2}, init_params={"max_length": 8}),
     ("max_length",)),
])
def test_bad_init_gives_one_line(kw, match):
    with pytest.raises(ValueError) as err:
        cfg_for(**kw)
    msg = str(err.value)
    assert "\n" not in msg and all(m in msg for m in match), msg


def test_cli_trains_from_a_construction(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from expressivity.cli import app
    from expressivity.train import ResultStore

    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(app, ["train", "--task", "parity", "--init", "construction:parity", "--perturb", "0.1",
                                   "--train-lengths", "2-6", "--test-lengths", "8", "--steps", "2",
                                   "--batch-size", "4", "--eval-batch", "4", "--db", "r.sqlite"])
    assert out.exit_code == 0, out.output
    with ResultStore(tmp_path / "r.sqlite") as store:
        (run,) = store.runs()
    cfg = RunConfig.from_dict(__import__("json").loads(run["config"]))
    assert cfg.init == "construction:parity" and cfg.perturb == 0.1
