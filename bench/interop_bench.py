"""Interop errors: ONNX (onnxruntime) and TransformerLens against our forward.

Run: python bench/interop_bench.py   (needs the extras: pip install -e '.[onnx,tl]')
Prints one markdown table per format (the tables in docs/interop.md).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from expressivity import constructions
from expressivity.compile import compile_maxout
from expressivity.cpwl import MaxoutNetwork
from expressivity.interop.onnx_export import check_onnx, export_onnx
from expressivity.interop.transformer_lens import to_transformer_lens
from expressivity.transformer import Transformer, TransformerConfig


def models():
    net = MaxoutNetwork.random(in_dim=2, widths=[8, 8], ranks=[3, 3], seed=0)
    plain = Transformer(TransformerConfig(d_model=16, n_layers=2, n_heads=2, d_head=8, d_mlp=32, d_vocab=5, d_out=3,
                                          n_ctx=16, layer_norm="pre", causal=True))
    plain.reset_parameters(seed=0)
    plain64 = Transformer(TransformerConfig(**{**plain.cfg.to_dict(), "dtype": "float64"}))
    plain64.load_state_dict({k: v.double() for k, v in plain.state_dict().items()})
    encoded = []
    for positional in ("rope", "alibi", "relative", "i_over_n"):
        m = Transformer(TransformerConfig(**{**plain64.cfg.to_dict(), "positional": positional, "n_heads": 3,
                                             "causal": positional != "i_over_n"}))
        m.reset_parameters(seed=0)
        if positional == "relative":  # its bias tables start at zero
            with torch.no_grad():
                for block in m.blocks:
                    block.attn.W_rel.normal_(generator=torch.Generator().manual_seed(1))
        encoded.append((f"plain pre-LN, {positional}, 3 heads, float64", m))
    return net, [
        ("compiled 2→[8,8] rank 3, hardmax", compile_maxout(net, (-1.0, 1.0))),
        ("compiled 2→[8,8] rank 3, softmax λ=1e3", compile_maxout(net, (-1.0, 1.0), "softmax", lam=1e3)),
        ("parity (Chiang & Cholak), softmax", constructions.get("parity")),
        ("parity, post-LN ε = 0 (--allow-zero-eps)", constructions.get("parity", layer_norm=True)),
        ("first, softmax", constructions.get("first")),
        ("parity-compiled N=12, hardmax", constructions.get("parity-compiled")),
        ("dyck-(2,2) depth-lookup, hardmax", constructions.get("dyck")),
        ("plain pre-LN causal, float32", plain),
        ("plain pre-LN causal, float64", plain64),
        *encoded,
    ]


def main() -> None:
    net, rows = models()
    print("| model | dtype | inputs | max abs error (ONNX vs ours) | outputs up to | s |\n|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        for name, m in rows:
            path = Path(d) / "m.onnx"
            export_onnx(m, path, allow_zero_eps=True)
            r = check_onnx(m, path, n_inputs=10_000)
            print(f"| {name} | {r.dtype} | {r.n_inputs} × {r.n_tokens} tokens | {r.max_abs_error:.2e} | "
                  f"{r.max_abs_output:.3g} | {r.seconds:.1f} |")
    print("\n| model | max abs logit error (TL vs ours) | max abs residual error, all layers | bound | s |\n|---|---|---|---|---|")
    for name, m in rows:
        tr = getattr(m, "transformer", m)
        if tr.cfg.layer_norm == "post" or tr.cfg.dtype != "float64":
            continue
        t0 = time.perf_counter()
        try:
            tl = to_transformer_lens(m, lam=1e4 if tr.cfg.attention == "hardmax" else None, n_ctx=min(tr.cfg.n_ctx, 64))
        except ValueError as exc:
            print(f"| {name} | refused: {str(exc).split(';')[0]} | | | |")
            continue
        if hasattr(m, "lo"):
            x = np.random.default_rng(0).uniform(-1, 1, (1000, 2))
            inputs = m.inputs(x)
        elif hasattr(m, "encode"):
            rng = np.random.default_rng(0)
            inputs = m.encode(["".join(rng.choice(list(m.language.alphabet), 8)) for _ in range(1000)]).inputs
        else:
            inputs = torch.randint(0, 5, (1000, 16), generator=torch.Generator().manual_seed(0))
        cache: dict = {}
        with torch.no_grad():
            ours = tl.transformer(inputs, cache=cache)
            logits, tc = tl.bridge.run_with_cache(tl.tl_input(inputs))
        resid = max((cache[o] - tc[t]).abs().max().item() for o, t in tl.hooks.items() if "resid" in o or o == "hook_embed")
        extra = ""
        if tl.lam is not None:
            measured = np.abs(logits[:, 0, :].numpy() - net(x)).max()
            extra = f"σ_λ, λ=1e4: measured max abs(TL − net) = {measured:.2e} ≤ error_bound() = {tl.error_bound:.2e}"
        print(f"| {name} | {(logits - ours).abs().max().item():.2e} | {resid:.2e} | {extra or 0} | "
              f"{time.perf_counter() - t0:.1f} |")


if __name__ == "__main__":
    main()
