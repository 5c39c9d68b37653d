"""Delétang et al.'s own JAX training step, timed: steps per second of one run per model kind.

    /path/to/jax/python bench/chomsky_peer.py CHECKOUT [--models transformer,lstm,...]
        [--steps 15] [--d-model 64] [--layers 2] [--heads 2] [--batch 64] [--lengths 2-12] [--lr 3e-3]

CHECKOUT is a google-deepmind/neural_networks_chomsky_hierarchy checkout; this script runs under a
python with jax, dm-haiku, optax, chex and einshape (not torch) and imports the peer's code as it
is: its model builders (``experiments.constants.MODEL_BUILDERS``, ``experiments.utils``
``make_model_with_empty_targets``), its parity_check task and its jitted step
(``experiments.training._update_parameters``: clip the global norm to 1, then Adam), the loss and
accuracy of its ``experiments/example.py``. Our model names map to theirs (transformer →
``transformer_encoder``, widening 4, no dropout, as ours; the recurrent ones take
``hidden_size`` = d_model, stacks of 30 cells of 8, a tape of 40 cells of 8, their defaults).
XLA runs on one CPU thread (set here before jax is imported).

The loop is theirs: a length from their uniform curriculum over ``--lengths``, a batch from their
task, one jitted update. Every length is compiled first (``compile_s``, not timed); then
``--steps`` steps are timed in process CPU time, blocking on the last result. Prints one JSON
object: ``{"jax": version, "models": {model: {"steps_per_s", "compile_s", "params"}}}``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ONE_THREAD = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"  # XLA_FLAGS
PACKAGE = "neural_networks_chomsky_hierarchy"  # the name the peer's imports use
THEIR_NAME = {"transformer": "transformer_encoder"}  # ours → theirs; the others are the same


def import_peer(checkout: str):
    """The peer's modules (constants, curriculum, training, utils), imported from ``checkout``."""
    path = Path(checkout).resolve()
    if not (path / "experiments" / "training.py").is_file():
        raise ValueError(f"{checkout} is not a neural_networks_chomsky_hierarchy checkout (no experiments/training.py)")
    root = path.parent
    if path.name != PACKAGE:  # their imports need the package name: link it under a temporary root
        root = Path(tempfile.mkdtemp(prefix="chomsky_peer_"))
        (root / PACKAGE).symlink_to(path)
    sys.path.insert(0, str(root))
    from neural_networks_chomsky_hierarchy.experiments import constants, curriculum, training, utils
    return constants, curriculum, training, utils


def model_kwargs(model: str, args) -> dict:
    """Their builder's keyword arguments for our ``model`` at the sizes of ``args``."""
    if model == "transformer":
        return dict(embedding_dim=args.d_model, num_layers=args.layers, num_heads=args.heads, widening_factor=4,
                    dropout_prob=0.0)
    if model in ("rnn", "lstm"):
        return dict(hidden_size=args.d_model)
    if model == "tape_rnn":
        return dict(hidden_size=args.d_model, memory_cell_size=8, memory_size=40)
    return dict(hidden_size=args.d_model, stack_cell_size=8, stack_size=30)


def time_model(peer, model: str, args) -> dict:
    """Compile every length, then time ``args.steps`` of their update steps (see the module docstring)."""
    import haiku as hk
    import jax
    import jax.numpy as jnp
    import optax

    constants, curriculum, training, utils = peer
    task = constants.TASK_BUILDERS["parity_check"]()
    build = constants.MODEL_BUILDERS[THEIR_NAME.get(model, model)]
    net = build(output_size=task.output_size, return_all_outputs=True, **model_kwargs(model, args))
    net = hk.transform(utils.make_model_with_empty_targets(net, task, 0, task.output_length(10) == 1))

    def loss_fn(output, target):
        return jnp.mean(jnp.sum(task.pointwise_loss_fn(output, target), axis=-1)), {}

    def accuracy_fn(output, target):
        mask = task.accuracy_mask(target)
        return jnp.sum(mask * task.accuracy_fn(output, target)) / jnp.sum(mask)

    optimizer = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(args.lr))
    rngs = hk.PRNGSequence(0)
    lo, hi = args.lengths
    params = net.init(jax.random.PRNGKey(0), task.sample_batch(next(rngs), length=lo, batch_size=args.batch)["input"])
    state = [params, optimizer.init(params)]

    def step(length: int):
        batch = task.sample_batch(next(rngs), length=length, batch_size=args.batch)
        state[0], state[1], (loss, _, _) = training._update_parameters(  # noqa: SLF001 (their step)
            params=state[0], rng_key=next(rngs), batch=batch, model_apply_fn=net.apply, loss_fn=loss_fn,
            accuracy_fn=accuracy_fn, optimizer=optimizer, opt_state=state[1])
        return loss

    t0 = time.perf_counter()
    for length in range(lo, hi + 1):
        step(length).block_until_ready()
    compile_s = time.perf_counter() - t0
    lengths = curriculum.UniformCurriculum(values=list(range(lo, hi + 1)))
    t0 = time.process_time()
    for i in range(args.steps):
        loss = step(lengths.sample_sequence_length(i))
    jax.block_until_ready((loss, state[0]))
    elapsed = time.process_time() - t0
    n_params = sum(int(x.size) for x in jax.tree_util.tree_leaves(params))
    return {"steps_per_s": args.steps / max(elapsed, 1e-9), "compile_s": compile_s, "params": n_params}


def length_range(text: str) -> tuple[int, int]:
    lo, _, hi = text.partition("-")
    if not (lo.isdigit() and hi.isdigit()) or not 1 <= int(lo) <= int(hi):
        raise argparse.ArgumentTypeError(f"--lengths must be LO-HI with 1 <= LO <= HI, got {text!r}")
    return int(lo), int(hi)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checkout", help="path of a neural_networks_chomsky_hierarchy checkout")
    ap.add_argument("--models", default="transformer,rnn,lstm,stack_rnn,stack_lstm,tape_rnn")
    ap.add_argument("--steps", type=int, default=15)
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2, help="transformer blocks (their recurrent models have one core)")
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lengths", type=length_range, default=(2, 12))
    ap.add_argument("--lr", type=float, default=3e-3)
    args = ap.parse_args(argv)
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {ONE_THREAD}".strip()  # before jax is imported
    try:
        peer = import_peer(args.checkout)
    except ValueError as e:
        ap.error(str(e))
    import jax

    out = {"jax": jax.__version__, "models": {}}
    for model in args.models.split(","):
        out["models"][model] = time_model(peer, model, args)
        print(f"chomsky_peer: {model} {out['models'][model]}", file=sys.stderr, flush=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
