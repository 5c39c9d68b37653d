"""CompiledModel: a Transformer built from a MaxoutNetwork, with what it needs to be checked."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ..cpwl import MaxoutNetwork
from ..cpwl.hub import net_from_tensors, net_record, net_tensors
from ..cpwl.maxout import as_points, sample_box
from ..fileio import check_path
from ..memory import chunk_rows
from ..pretrained import (
    CONFIG_NAME,
    SOURCE_NET_NAME,
    WEIGHTS_NAME,
    PretrainedMixin,
    read_tensors,
    record,
)
from ..rules import as_real_array, check_choice, check_float, check_int
from ..transformer import (
    ChannelMap,
    Transformer,
    load_transformer,
    metadata_json,
    read_aux,
    read_metadata,
    save_transformer,
)
from ..transformer.config import ATTENTIONS
from ..transformer.hub import state, transformer_from_config, transformer_records
from .bounds import DOMAIN_SLACK, STATED_BOUND_RTOL

SOURCE_NET = "source_net"  # the metadata key and tensor prefix of a compiled model's source network
_CACHE_BYTES = 8 << 18  # one evaluate chunk's float64 activations, about 2^18 numbers: they stay in cache


@dataclass(frozen=True)
class CompiledModel(PretrainedMixin):
    """The result of :func:`~expressivity.compile.compile_maxout`.

    ``transformer`` reads x ∈ [lo, hi]^d copied to each of the T tokens and returns f(x) at
    every token (``evaluate`` reads token 0). ``layer_errors[k]`` bounds ‖h^(k)_σλ − h^(k)‖_∞
    (0 for hardmax); ``error_bound()`` bounds the output error.
    """

    transformer: Transformer
    net: MaxoutNetwork | None  # the source network (None when loaded without its spec)
    lo: np.ndarray  # domain box, (d,)
    hi: np.ndarray
    attention: str  # "hardmax" | "softmax"
    lam: float | None  # λ of σ_λ (None for hardmax)
    layer_errors: tuple[float, ...]  # ε_1..ε_D: bounds on the hidden-layer errors
    output_error: float  # bound on the output error, ‖A‖_∞·ε_D
    big_m: tuple[float, ...]  # the largest big-M constant used per layer (for the record)
    roundoff_error: float = 0.0  # bound on the float64 round-off of the output (see compile_maxout)

    # save_pretrained / from_pretrained (expressivity.pretrained): config.json's "compiled" is
    # the compile record, "source_net" (when the model has its net) the record of source_net.safetensors
    hub_kind = "compiled"
    hub_keys = frozenset({"compiled", SOURCE_NET})
    hub_optional = frozenset({SOURCE_NET})

    @property
    def channels(self) -> ChannelMap:
        return self.transformer.channels

    @property
    def n_blocks(self) -> int:
        return self.transformer.cfg.n_layers

    @property
    def n_tokens(self) -> int:
        return self.transformer.cfg.n_ctx

    @property
    def in_dim(self) -> int:
        return self.transformer.cfg.d_input

    def error_bound(self) -> float:
        """sup_x |F(x) − f(x)| ≤ this, in float64: the σ_λ term ``output_error`` (0 for
        hardmax, ∝ 1/λ) plus the round-off term ``roundoff_error`` (see ``compile_maxout``)."""
        return self.output_error + self.roundoff_error

    def tolerance(self) -> float:
        """What ``verify`` allows between F and f in float64: ``output_error + 2·roundoff_error``
        (the reference f(x) is computed in float64 too, so its round-off counts again)."""
        return self.output_error + 2 * self.roundoff_error

    def measured_error(self, points: int = 256, seed: int = 0) -> float:
        """max |F(x) − f(x)| over ``points`` uniform points of the domain and its corners
        (d ≤ 10), against the source network (NaN if any output is not finite)."""
        if self.net is None:
            raise ValueError("measured_error needs the source network (net); this model was loaded without it")
        points = check_int(points, "points", min=1)
        x = sample_box(self.lo, self.hi, points, check_int(seed, "seed", min=0))
        diff = np.abs(self.evaluate(x) - self.net(x))
        return float(diff.max()) if np.all(np.isfinite(diff)) else float("nan")

    def check_net(self, where: str, points: int = 256) -> None:
        """Refuse a model and source network that disagree: the error measured on sample points
        (:meth:`measured_error`) must be finite and within :meth:`tolerance`, and a softmax
        record's ``output_error`` at least the bound its net and λ give — a model or net edited
        after compiling, or a compile record that understates the bound, is refused."""
        if self.attention == "softmax":  # a bound the measurement could still meet may be understated
            from .maxout_to_transformer import softmax_bounds

            _, stated = softmax_bounds(self.net, self.lo, self.hi, self.lam)
            if self.output_error < stated * (1 - STATED_BOUND_RTOL):
                raise ValueError(f"{where}: the compile record states output_error {self.output_error:.3g}, below the "
                                 f"bound {stated:.3g} that compiling its source network with λ = {self.lam:g} gives; "
                                 "the record was changed after compiling")
        err = self.measured_error(points)
        if not err <= self.tolerance():  # NaN fails too
            raise ValueError(f"{where}: the model is {err:.3g} from its source network on {points} sample points of its "
                             f"domain, over its error bound {self.error_bound():.3g} (tolerance {self.tolerance():.3g}): "
                             "the weights, the network or the compile record were changed after compiling; compile "
                             "it again from its spec")

    def inputs(self, x: np.ndarray) -> torch.Tensor:
        """x (N, d) → the transformer's input (N, T, d): x copied to every token."""
        x = self._check(x)
        t = torch.as_tensor(x, dtype=self.transformer.dtype)
        return t[:, None, :].expand(-1, self.n_tokens, -1)

    def evaluate(self, x: np.ndarray, batch_size: int | None = None) -> np.ndarray:
        """F(x) read at token 0: (N, out).

        Points go through in chunks (default: sized so one chunk's activations, about
        2^18 numbers, stay in cache — measured 2× faster than one 4096-point batch).
        """
        x = self._check(x)
        if batch_size is not None:
            batch_size = check_int(batch_size, "batch_size", min=1)
        if batch_size is None:
            cfg = self.transformer.cfg
            widest = max(cfg.d_mlp, cfg.d_model, self.n_tokens * cfg.n_heads)
            batch_size = max(16, chunk_rows(8 * self.n_tokens * widest, budget=_CACHE_BYTES))
        outs = []
        with torch.no_grad():
            for start in range(0, len(x), batch_size):
                y = self.transformer(self.inputs(x[start:start + batch_size]))  # (B, T, out)
                outs.append(y[:, 0, :].cpu().numpy())
        if not outs:
            return np.zeros((0, self.transformer.cfg.d_out))
        return np.concatenate(outs).astype(np.float64)

    def _check(self, x) -> np.ndarray:
        x = as_points(x, self.in_dim)
        slack = DOMAIN_SLACK * (1 + np.maximum(np.abs(self.lo), np.abs(self.hi)))
        if np.any(x < self.lo - slack) or np.any(x > self.hi + slack):
            raise ValueError(
                "x: input lies outside the compiled domain "
                f"[{self.lo.tolist()}, {self.hi.tolist()}]: the construction is only exact there"
            )
        return x

    # ------------------------------------------------------------------ persistence
    def metadata(self) -> dict:
        return {
            "lo": self.lo.tolist(),
            "hi": self.hi.tolist(),
            "attention": self.attention,
            "lam": self.lam,
            "layer_errors": list(self.layer_errors),
            "output_error": self.output_error,
            "roundoff_error": self.roundoff_error,
            "big_m": list(self.big_m),
        }

    def save(self, path: str | Path) -> None:
        """Weights + config + channel map + compile record, in one safetensors file (the same
        model gives the same bytes; written atomically). The source network, when the model
        has it, travels in the same file (float64 tensors ``source_net.layers.k.W`` / ``.b``,
        ``source_net.readout.A`` / ``.c``; metadata ``source_net``), so ``load_compiled(path)``
        gives back a model that can be re-measured and re-compiled (e.g. as σ_λ for
        TransformerLens) without its spec."""
        extra = {"compiled": json.dumps(self.metadata(), sort_keys=True)}
        aux = None
        if self.net is not None:
            extra[SOURCE_NET] = json.dumps(net_record(self.net), sort_keys=True)
            aux = {f"{SOURCE_NET}.{k}": v for k, v in net_tensors(self.net).items()}
        save_transformer(self.transformer, path, extra=extra, aux=aux)

    def _hub_records(self):
        records = {**transformer_records(self.transformer), "compiled": self.metadata()}
        files = {WEIGHTS_NAME: state(self.transformer)}
        if self.net is not None:
            records[SOURCE_NET] = net_record(self.net)
            files[SOURCE_NET_NAME] = net_tensors(self.net)
        return records, files

    @classmethod
    def _from_hub(cls, config, directory):
        d = Path(directory)
        tr = transformer_from_config(config, d)
        fields = check_record(config["compiled"], d / CONFIG_NAME, tr)
        return assemble(tr, fields, _hub_source_net(config, d), f"{d / WEIGHTS_NAME}", f"its {SOURCE_NET_NAME}")




_RECORD = ("lo", "hi", "attention", "lam", "layer_errors", "output_error", "big_m")


def check_record(rec, path, model) -> dict:
    """The compile record of ``path`` (a ``.safetensors`` file or a hub ``config.json``),
    checked against its transformer: every field present and known, lo < hi of the model's
    input size, the transformer's attention and λ, error bounds finite and ≥ 0, one per
    layer. The CompiledModel fields, or one line per problem."""
    where = f"{path}: compile record"
    if not isinstance(rec, dict):
        raise ValueError(f"{where} must be a JSON object")
    missing = [k for k in _RECORD if k not in rec]
    if missing:
        raise ValueError(f"{where} misses {', '.join(missing)} (incomplete metadata 'compiled')")
    unknown = sorted(set(rec) - set(_RECORD) - {"roundoff_error"})
    if unknown:
        raise ValueError(f"{where} has unknown fields {unknown}")
    cfg = model.cfg
    d = cfg.d_input
    if d is None:
        raise ValueError(f"{where}: the transformer takes token ids, not a compiled model's continuous input")
    try:
        lo = as_real_array(rec["lo"], f"{where} lo", shape=(d,))
        hi = as_real_array(rec["hi"], f"{where} hi", shape=(d,))
        if np.any(lo >= hi):
            raise ValueError(f"{where}: the domain is empty (need lo < hi)")
        attention = check_choice(rec["attention"], f"{where} attention", ATTENTIONS)
        if attention != cfg.attention:
            raise ValueError(f"{where} says attention {attention} but the transformer uses {cfg.attention}")
        lam = rec["lam"]
        if attention == "softmax":
            lam = check_float(lam, f"{where} lam", min=0.0, min_open=True)
            if lam != cfg.lam:
                raise ValueError(f"{where} says lam {lam:g} but the transformer uses λ = {cfg.lam:g}")
        elif lam is not None:
            raise ValueError(f"{where}: lam must be null for hardmax, got {lam!r}")
        errs = rec["layer_errors"]
        if not isinstance(errs, list) or len(errs) != cfg.n_layers - 1:
            raise ValueError(f"{where}: layer_errors must list {cfg.n_layers - 1} numbers")
        errs = tuple(check_float(e, f"{where} layer_errors[{i}]", min=0.0) for i, e in enumerate(errs))
        out_err = check_float(rec["output_error"], f"{where} output_error", min=0.0)
        roundoff = check_float(rec.get("roundoff_error", 0.0), f"{where} roundoff_error", min=0.0)
        big_m = rec["big_m"]
        if not isinstance(big_m, list) or len(big_m) != cfg.n_layers - 1:
            raise ValueError(f"{where}: big_m must list {cfg.n_layers - 1} numbers")
        big_m = tuple(check_float(v, f"{where} big_m[{i}]", min=0.0) for i, v in enumerate(big_m))
    except ValueError as exc:
        msg = str(exc)
        raise ValueError(msg if msg.startswith(str(path)) else f"{where}: {msg}") from None
    return dict(lo=lo, hi=hi, attention=attention, lam=lam, layer_errors=errs, output_error=out_err,
                roundoff_error=roundoff, big_m=big_m)


def load_compiled(path: str | Path, net: MaxoutNetwork | None = None) -> CompiledModel:
    """Reload a model written by :meth:`CompiledModel.save`, with its source network: the one
    saved in the file (``expressivity compile`` saves it) or ``net`` when given (it replaces the
    saved one; files of older versions hold none).

    The file is checked whole (see :func:`~expressivity.transformer.load_transformer`), and so
    is its compile record (domain, attention, λ, error bounds: finite, non-negative, matching
    the transformer); the source network must have the model's input and output sizes and is
    measured against the model (:meth:`CompiledModel.check_net`)."""
    path = check_path(path, "path")
    if net is not None and not isinstance(net, MaxoutNetwork):
        raise ValueError(f"net must be a MaxoutNetwork or None, got {type(net).__name__}")
    meta = read_metadata(path)
    if "compiled" not in meta:
        raise ValueError(f"{path} holds a transformer but not a compiled model (no 'compiled' metadata)")
    try:
        rec = json.loads(meta["compiled"])
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: metadata 'compiled' is not valid JSON ({exc.msg})") from None
    model = load_transformer(path)
    fields = check_record(rec, path, model)
    net_name = "the net given"
    if net is None and SOURCE_NET in meta:
        tensors = {k.removeprefix(SOURCE_NET + "."): v for k, v in read_aux(path).items()}
        net = net_from_tensors(metadata_json(meta, SOURCE_NET, path), tensors, f"{path}: metadata", str(path))
        net_name = "its saved source network"
    return assemble(model, fields, net, str(path), net_name)


def _hub_source_net(config: dict, d: Path) -> MaxoutNetwork | None:
    """The source network of a compiled hub directory (``source_net`` + its tensors), checked."""
    rec = config.get(SOURCE_NET)
    if rec is None:
        return None
    where, path = d / CONFIG_NAME, d / SOURCE_NET_NAME
    record(rec, {"depth", "readout"}, where, SOURCE_NET)
    if not path.is_file():
        raise ValueError(f"directory {d} has no {SOURCE_NET_NAME}, which {CONFIG_NAME} says it has (source_net)")
    return net_from_tensors(rec, read_tensors(path), str(where), str(path))


def assemble(transformer: Transformer, fields: dict, net: MaxoutNetwork | None, where: str,
             net_name: str) -> CompiledModel:
    """The CompiledModel of a loaded transformer and its checked record (:func:`check_record`),
    with its source network ``net`` (or None): of the model's sizes, and measured against the
    model (:meth:`CompiledModel.check_net`). ``net_name`` says where the net came from."""
    cfg = transformer.cfg
    if net is not None and (net.in_dim != cfg.d_input or net.out_dim != cfg.d_out):
        raise ValueError(f"{net_name} has input/output sizes ({net.in_dim}, {net.out_dim}) but {where} was compiled "
                         f"for ({cfg.d_input}, {cfg.d_out})")
    cm = CompiledModel(transformer=transformer, net=net, **fields)
    if net is not None:
        cm.check_net(f"{where} with {net_name}")
    return cm
