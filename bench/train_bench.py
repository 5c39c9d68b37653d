"""Training throughput: our Transformer vs torch.nn.TransformerEncoder (same size, same batches),
plus the Dyck generator's sampling speed.

    OMP_NUM_THREADS=1 python bench/train_bench.py [--steps 30] [--length 40] [--batch 32]
        [--kind recognition|next_symbol] [--repeats 3] [--rows ours,torch,rope,...]

Training time is process CPU time (time.process_time) with one torch thread, best of
interleaved repeats (each repeat starts at another row, so no row is always timed first),
so that other load on a shared machine does not distort the ratio.

Rows: ours (expressivity.transformer.Transformer as is: fused Q/K/V projections and
F.scaled_dot_product_attention for softmax — the former ours+fused / ours+sdpa patches are
now the model's own forward, see Attention.project); torch (nn.TransformerEncoder, pre-LN, ReLU, no dropout, causal mask for next-symbol prediction).
Then our Transformer with each position encoding (``pos:<name>``; ``pos:sinusoidal`` is
``ours``, the run's default) and each other model of train/models (``rnn``, ``lstm``,
``stack_rnn``, ``stack_lstm``, ``tape_rnn``; hidden size d_model, the same batches). The last column is the
time relative to ``ours`` (sinusoidal): RoPE and ALiBi must stay within 1.2×.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import replace

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from expressivity import languages as L
from expressivity.train import RunConfig, build_model
from expressivity.train.config import MODELS
from expressivity.transformer.model import sinusoidal_positions
from expressivity.transformer.positions import POSITIONALS


class TorchEncoder(nn.Module):
    """Embedding + sinusoidal positions → nn.TransformerEncoder (pre-LN, final LN; causal mask for
    next-symbol prediction) → linear."""

    def __init__(self, d_vocab, d_model, n_layers, n_heads, d_mlp, d_out, n_ctx, causal=False):
        super().__init__()
        self.causal = causal
        self.embed = nn.Embedding(d_vocab, d_model)
        self.register_buffer("pos", sinusoidal_positions(n_ctx, d_model))
        layer = nn.TransformerEncoderLayer(d_model, n_heads, d_mlp, dropout=0.0, activation="relu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, norm=nn.LayerNorm(d_model), enable_nested_tensor=False)
        self.unembed = nn.Linear(d_model, d_out)

    def forward(self, ids):
        y = self.embed(ids) + self.pos[: ids.shape[1]]
        T = ids.shape[1]
        mask = nn.Transformer.generate_square_subsequent_mask(T) if self.causal else None
        return self.unembed(self.encoder(y, mask=mask, is_causal=self.causal))


def time_training(model, batches, n_outputs):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    losses = []

    def step(batch):
        logits = model(batch["input"])
        loss = -(batch["output"] * F.log_softmax(logits, -1)).sum(-1)[batch["mask"]].mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    step(batches[0])  # warm-up
    t0 = time.process_time()  # CPU time of this (single-threaded) process: robust on a shared machine
    for b in batches:
        losses.append(step(b))
    return time.process_time() - t0, losses


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--length", type=int, default=40)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--kind", default="recognition")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rows", default="all", help="comma-separated row names (default: all)")
    args = ap.parse_args()
    torch.manual_seed(0)
    cfg = RunConfig(task="dyck", kind=args.kind, layers=args.layers, heads=args.heads, d_model=args.d_model,
                    train_lengths=(args.length, args.length), test_lengths=(args.length,), steps=args.steps,
                    batch_size=args.batch)
    task = cfg.make_task()
    rng = np.random.default_rng(0)
    batches = [task.sample_batch(rng, args.batch, args.length) for _ in range(args.steps)]
    tokens = sum(b["input"].numel() for b in batches)
    d_vocab, d_out = len(task.vocab), task.n_outputs

    def ours():
        return build_model(cfg, d_vocab, d_out)

    def torch_enc():
        return TorchEncoder(d_vocab, args.d_model, args.layers, args.heads, 4 * args.d_model, d_out, cfg.max_length + 2,
                            causal=args.kind == "next_symbol")

    makers = {"ours": ours, "torch": torch_enc}
    for pos in POSITIONALS:
        try:
            pos_cfg = replace(cfg, positional=pos)
        except ValueError:  # e.g. i_over_n is refused for next-symbol prediction
            continue
        if pos != cfg.positional:
            makers[f"pos:{pos}"] = lambda c=pos_cfg: build_model(c, d_vocab, d_out)
    for name in MODELS:
        if name != "transformer":
            makers[name] = lambda name=name: build_model(replace(cfg, model=name), d_vocab, d_out)
    if args.rows != "all":
        keep = {r.strip() for r in args.rows.split(",")} | {"ours", "torch"}
        makers = {k: v for k, v in makers.items() if k in keep}
    best = {k: math.inf for k in makers}
    params = {k: sum(p.numel() for p in makers[k]().parameters()) for k in makers}
    order = list(makers)
    for r in range(args.repeats):  # interleaved repeats, best time kept (shared machine); the order rotates
        for name in order[r % len(order):] + order[: r % len(order)]:  # so that no row is always first
            t, _ = time_training(makers[name](), batches, d_out)
            best[name] = min(best[name], t)
    print(f"# {args.kind} Dyck-2, batch {args.batch}, T = {batches[0]['input'].shape[1]}, d_model {args.d_model}, "
          f"{args.layers} layers, {args.heads} heads, d_mlp {4 * args.d_model}; {args.steps} steps, "
          f"best of {args.repeats} (process CPU time); torch {torch.__version__}, threads {torch.get_num_threads()}")
    print("| model | params | steps/s | tokens/s | ratio vs torch | time / ours (sinusoidal) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in makers:
        sps = args.steps / best[name]
        print(f"| {name} | {params[name]} | {sps:.1f} | {tokens / best[name]:.0f} | {best['torch'] / best[name]:.2f} "
              f"| {best[name] / best['ours']:.2f} |")

    dyck = L.get("dyck", k=2)
    g = np.random.default_rng(1)
    dyck.sample(g, 100, 500, True)  # warm the completion table
    rates = []
    for _ in range(3):
        t0 = time.perf_counter()
        dyck.sample(g, 2000, 500, True)
        rates.append(2000 / (time.perf_counter() - t0))
    t0 = time.perf_counter()
    dyck.sample(g, 2000, 500, False)
    neg = 2000 / (time.perf_counter() - t0)
    print()
    print("| Dyck-2 sampler, length 500 | strings/s |")
    print("|---|---:|")
    print(f"| positives (process conditioned on length) | {max(rates):.0f} |")
    print(f"| negatives (half near-misses) | {neg:.0f} |")


if __name__ == "__main__":
    main()
