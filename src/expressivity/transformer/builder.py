"""The weight builder: every hand-set or compiled weight is written through it, by channel name.

:class:`Weights` holds the dense arrays of a :class:`~expressivity.transformer.Transformer`
indexed by the residual channels of a :class:`~expressivity.transformer.channels.ChannelMap`;
the compiler and every hand-built construction use it. :func:`load_arrays` copies such arrays
into a model's parameters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import torch

from .channels import ChannelMap
from .config import TransformerConfig
from .model import Transformer

Terms = Mapping[str, float]  # a linear form Σ_c coef_c·y_c over the residual channels, by name

# the residual (d_model) axis of each parameter and whether the sublayer reads it (rows of a
# map out of the stream) or writes it (what is added to the stream)
_READS = {"W_Q": -2, "W_K": -2, "W_V": -2, "W_in": -2, "W_U": -2}
_WRITES = {"W_E": -1, "W_pos": -1, "W_O": -1, "b_O": -1, "W_out": -1, "b_out": -1}
_FREE = {"b_Q", "b_K", "b_V", "b_in", "b_U"}  # no residual axis


def each(names: Sequence[str], coef: float = 1.0) -> dict[str, float]:
    """The linear form coef·Σ_{c ∈ names} y_c, e.g. ``each(ch.names_of("open"))`` = Σ_t open[t]."""
    return {n: float(coef) for n in names}


def _axis(param: str) -> tuple[str, int | None]:
    short = param.rsplit(".", 1)[-1]
    if short in _READS:
        return "read", _READS[short]
    if short in _WRITES:
        return "write", _WRITES[short]
    if short in _FREE:
        return "free", None
    raise ValueError(f"Weights: parameter {param!r} has no channel layout (layer-norm gains, relative-position "
                     "tables and i/n features are not written by the builder)")


class Weights:
    """Dense weights of a :class:`~expressivity.transformer.Transformer`, written by channel name.

    The model (see :mod:`.model`) adds to the residual y ∈ R^{d_model}, d_model = |channels|:
    embedding y^(0)_t = W_E[token_t] + W_pos[t]; head h of block k with query/key/value
    q = W_Q^h y, k = W_K^h y, v = W_V^h y (one coordinate e per head dimension) writes
    W_O^h·(Σ_j â_ij v_j); the FFN unit u writes W_out[u]·ReLU(W_in[:, u]·y + b_in[u]); the
    output is W_U·y + b_U. Every coordinate is set by naming the channels it reads or writes
    (a :data:`Terms` form {name: coef}); ``+=`` semantics, so writes compose.

    Pieces: :meth:`embed`, :meth:`position`, :meth:`head`, :meth:`unit` (one FFN unit),
    :meth:`mlp_columns` (a dense slab of FFN units for vectorised gadgets), :meth:`readout`.
    Gadgets: :meth:`ramp` (exact step on integer-spaced inputs). Growing the model:
    :meth:`relabel` (onto a larger channel map, by name), :meth:`doubled` ([x, −x] for post
    layer norm), :meth:`repeat_position`, :meth:`reset_embedding`. :meth:`transformer` builds
    the model (FFN width = the units written, or a given ``d_mlp`` ≥ that).

    >>> ch = ChannelMap.build(("bit", 2), ("one!", 1), ("out!", 1))
    >>> w = Weights(ch, n_layers=1, d_vocab=2, n_ctx=3)
    >>> w.embed(0, {"bit[0]": 1.0}); w.embed(1, {"bit[1]": 1.0}); w.position("one", 1.0)
    >>> w.head(0, 0, value={"bit[1]": 1.0}, out={"out": 1.0})  # uniform attention: out = #1s / T
    >>> w.unit(0, read={"out": 2.0, "one": -1.0}, write={"out": 1.0})
    0
    >>> w.readout({"out": 1.0})
    >>> m = w.transformer(positional="learned", attention="hardmax", dtype="float64")
    >>> (m.cfg.d_model, m.cfg.d_mlp, m.channels.index("out"))
    (4, 1, 3)
    """

    def __init__(self, channels: ChannelMap, *, n_layers: int, n_heads: int = 1, d_head: int = 1,
                 d_vocab: int | None = None, d_input: int | None = None, n_ctx: int | None = None,
                 d_out: int | None = 1) -> None:
        if not isinstance(channels, ChannelMap):
            raise ValueError(f"Weights: channels must be a ChannelMap, got {type(channels).__name__}")
        if (d_vocab is None) == (d_input is None):
            raise ValueError("Weights: give exactly one of d_vocab (token ids) and d_input (feature vectors)")
        self.channels = channels
        self.dims = {"n_layers": n_layers, "n_heads": n_heads, "d_head": d_head, "d_vocab": d_vocab,
                     "d_input": d_input, "d_out": d_out}
        if n_ctx is not None:
            self.dims["n_ctx"] = n_ctx
        d, H, e = len(channels), n_heads, d_head
        A = {"W_E": np.zeros((d_vocab or d_input, d))}
        if n_ctx is not None:
            A["W_pos"] = np.zeros((n_ctx, d))
        for k in range(n_layers):
            a, f = f"blocks.{k}.attn.", f"blocks.{k}.mlp."
            for p in ("W_Q", "W_K", "W_V"):
                A[a + p] = np.zeros((H, d, e))
            A[a + "W_O"] = np.zeros((H, e, d))
            for p in ("b_Q", "b_K", "b_V"):
                A[a + p] = np.zeros((H, e))
            A[a + "b_O"] = np.zeros(d)
            A[f + "W_in"], A[f + "b_in"], A[f + "W_out"] = np.zeros((d, 0)), np.zeros(0), np.zeros((0, d))
            A[f + "b_out"] = np.zeros(d)
        if d_out is not None:
            A["W_U"], A["b_U"] = np.zeros((d, d_out)), np.zeros(d_out)
        self.arrays: dict[str, np.ndarray] = A
        self._units = [0] * n_layers

    # ------------------------------------------------------------------ reading names
    def index(self, name: str) -> int:
        return self.channels.index(name)

    def rows(self, base: str) -> np.ndarray:
        """Residual indices of ``base[0], base[1], ...`` (for vectorised gadgets)."""
        return np.asarray(self.channels.group(base), dtype=np.int64)

    def _terms(self, terms: Terms) -> list[tuple[int, float]]:
        return [(self.channels.index(c), float(v)) for c, v in terms.items()]

    # ------------------------------------------------------------------ pieces
    def embed(self, row: int, write: Terms) -> None:
        """W_E[row] += Σ coef·e_c: token id (or input feature) ``row`` writes ``write``."""
        for i, v in self._terms(write):
            self.arrays["W_E"][row, i] += v

    def position(self, channel: str, values, rows=slice(None)) -> None:
        """W_pos[rows, channel] += values: a positional feature (scalar or one value per row)."""
        self.arrays["W_pos"][rows, self.channels.index(channel)] += values

    def head(self, layer: int, h: int, *, query: Terms | Sequence[Terms] = (), key: Terms | Sequence[Terms] = (),
             value: Terms | Sequence[Terms] = (), out: Terms | Sequence[Terms] = ()) -> None:
        """Head h of block ``layer``: coordinate e of q/k/v reads ``query[e]``/``key[e]``/``value[e]``
        and coordinate e of the head's output is written to ``out[e]``.

        A single form stands for coordinate 0. Score λ·Σ_e q_e·k_e; no Q = K writes = uniform
        attention (over the causal prefix if causal).
        """
        a = f"blocks.{layer}.attn."
        for p, forms in (("W_Q", query), ("W_K", key), ("W_V", value)):
            for e, form in enumerate([forms] if isinstance(forms, Mapping) else forms):
                for i, v in self._terms(form):
                    self.arrays[a + p][h, i, e] += v
        for e, form in enumerate([out] if isinstance(out, Mapping) else out):
            for i, v in self._terms(form):
                self.arrays[a + "W_O"][h, e, i] += v

    def mlp_columns(self, layer: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The next ``n`` FFN units of block ``layer`` as views (W_in (d_model, n), b_in (n,),
        W_out (n, d_model)) to fill by channel index (:meth:`rows`)."""
        f = f"blocks.{layer}.mlp."
        j = self._units[layer]
        if j + n > self.arrays[f + "b_in"].shape[0]:
            grow = max(j + n, 2 * self.arrays[f + "b_in"].shape[0])
            d = len(self.channels)
            for p, shape in (("W_in", (d, grow)), ("b_in", (grow,)), ("W_out", (grow, d))):
                new = np.zeros(shape)
                old = self.arrays[f + p]
                new[tuple(slice(0, s) for s in old.shape)] = old
                self.arrays[f + p] = new
        self._units[layer] = j + n
        cols = slice(j, j + n)
        return self.arrays[f + "W_in"][:, cols], self.arrays[f + "b_in"][cols], self.arrays[f + "W_out"][cols]

    def unit(self, layer: int, read: Terms, write: Terms, bias: float = 0.0) -> int:
        """One FFN unit of block ``layer``: y_c += write[c]·ReLU(Σ read[c']·y_c' + bias). Returns its column."""
        W_in, b_in, W_out = self.mlp_columns(layer, 1)
        for i, v in self._terms(read):
            W_in[i, 0] += v
        b_in[0] += bias
        for i, v in self._terms(write):
            W_out[0, i] += v
        return self._units[layer] - 1

    def readout(self, read: Terms, bias: float = 0.0, out: int = 0) -> None:
        """Output coordinate ``out``: z += Σ read[c]·y_c + bias (W_U, b_U)."""
        for i, v in self._terms(read):
            self.arrays["W_U"][i, out] += v
        self.arrays["b_U"][out] += bias

    # ------------------------------------------------------------------ gadgets
    def ramp(self, layer: int, read: Terms, bias: float, write: Terms) -> None:
        """Two units adding coef·clip(y + 1, 0, 1) to each written channel, y = read·x + bias:
        ReLU(y + 1) − ReLU(y). On inputs with y ∈ (−∞, −1] ∪ [0, ∞) it is the exact step [y ≥ 0]."""
        if not write:
            return
        self.unit(layer, read, write, bias + 1.0)
        self.unit(layer, read, {c: -v for c, v in write.items()}, bias)

    # ------------------------------------------------------------------ growing the model
    def relabel(self, channels: ChannelMap) -> Weights:
        """The same model on a larger channel map: every channel keeps its name (and its reads and
        writes); channels new in ``channels`` are zero."""
        missing = [n for n in self.channels.names if n not in channels]
        if missing:
            raise ValueError(f"relabel: the new channel map lacks {missing[:5]}")
        to = np.array([channels.index(n) for n in self.channels.names], dtype=np.int64)
        out = self._like(channels)
        for p, a in self.arrays.items():
            kind, axis = _axis(p)
            if kind == "free":
                out.arrays[p] = a.copy()
                continue
            shape = list(a.shape)
            shape[axis] = len(channels)
            new = np.zeros(shape)
            idx = [slice(None)] * a.ndim
            idx[axis] = to
            new[tuple(idx)] = a
            out.arrays[p] = new
        return out

    def doubled(self, prefix: str = "−") -> Weights:
        """The doubled stream y = [x, −x] (channels c and ``prefix + c``), Chiang & Cholak 2022 §5:
        sublayers read the first copy and write [v, −v], so mean(y) = 0 at every position."""
        channels = ChannelMap(self.channels.names + tuple(prefix + n for n in self.channels.names))
        out = self._like(channels)
        for p, a in self.arrays.items():
            kind, axis = _axis(p)
            if kind == "read":
                out.arrays[p] = np.concatenate([a, np.zeros_like(a)], axis=axis)
            elif kind == "write":
                out.arrays[p] = np.concatenate([a, -a], axis=axis)
            else:
                out.arrays[p] = a.copy()
        return out

    def reset_embedding(self, d_vocab: int | None = None, d_input: int | None = None) -> None:
        """A new, zero W_E for another input: ``d_vocab`` token ids or ``d_input`` features."""
        if (d_vocab is None) == (d_input is None):
            raise ValueError("reset_embedding: give exactly one of d_vocab and d_input")
        self.dims.update(d_vocab=d_vocab, d_input=d_input)
        self.arrays["W_E"] = np.zeros((d_vocab or d_input, len(self.channels)))

    def repeat_position(self, n_ctx: int, row: int = 0) -> None:
        """W_pos grown to ``n_ctx`` rows; every new position copies position ``row``."""
        old = self.arrays["W_pos"]
        new = np.empty((n_ctx, old.shape[1]))
        new[: len(old)] = old[:n_ctx]
        new[len(old):] = old[row]
        self.arrays["W_pos"] = new
        self.dims["n_ctx"] = n_ctx

    def _like(self, channels: ChannelMap) -> Weights:
        out = object.__new__(Weights)
        out.channels, out.dims, out.arrays, out._units = channels, dict(self.dims), {}, list(self._units)
        return out

    @classmethod
    def from_model(cls, model) -> Weights:
        """The weights of a channel-named Transformer, to edit and rebuild."""
        if model.channels is None:
            raise ValueError("Weights.from_model: the model has no channel map")
        cfg = model.cfg
        out = cls(model.channels, n_layers=cfg.n_layers, n_heads=cfg.n_heads, d_head=cfg.d_head,
                  d_vocab=cfg.d_vocab, d_input=cfg.d_input,
                  n_ctx=cfg.n_ctx if cfg.positional == "learned" else None, d_out=cfg.d_out)
        for name, p in model.named_parameters():
            _axis(name)  # refuses parameters without a channel layout
            out.arrays[name] = p.detach().cpu().numpy().astype(np.float64)
        out._units = [cfg.d_mlp] * cfg.n_layers
        return out

    # ------------------------------------------------------------------ the model
    @property
    def d_mlp(self) -> int:
        """FFN units written in the widest block."""
        return max(self._units, default=0)

    def transformer(self, d_mlp: int | None = None, **config):
        """``Transformer(TransformerConfig(...), channels)`` with these weights.

        ``config``: the remaining TransformerConfig fields (positional, attention, causal,
        layer_norm, ...); d_model, n_layers, n_heads, d_head, input and output sizes come from
        the builder, ``d_mlp`` defaults to :attr:`d_mlp` (a larger value leaves zero units)."""
        if d_mlp is None:
            d_mlp = self.d_mlp
        if d_mlp < self.d_mlp:
            raise ValueError(f"d_mlp = {d_mlp} is below the {self.d_mlp} FFN units written")
        dims = {k: v for k, v in self.dims.items() if v is not None or k == "d_out"}
        cfg = TransformerConfig(d_model=len(self.channels), d_mlp=d_mlp, **dims, **config)
        arrays = {}
        for name, a in self.arrays.items():  # FFN arrays: the units written (their capacity may be larger)
            short, block = name.rsplit(".", 1)[-1], name.split(".")
            if block[2:3] == ["mlp"] and d_mlp == 0:
                continue  # no FFN sublayer
            if short in ("W_in", "b_in", "W_out"):
                n = self._units[int(block[1])]
                a = a[:, :n] if short == "W_in" else a[:n]
            arrays[name] = a
        return load_arrays(Transformer(cfg, self.channels), arrays)


def load_arrays(model, arrays: Mapping[str, np.ndarray]):
    """Copy float64 arrays into ``model``'s parameters (eval mode): FFN arrays narrower than
    d_mlp are padded with zero units, missing parameters are 0 and layer-norm gains 1."""
    params = dict(model.named_parameters())
    unknown = set(arrays) - set(params)
    if unknown:
        raise ValueError(f"unknown parameter names {sorted(unknown)}")
    with torch.no_grad():
        for name, p in params.items():
            if name in arrays:
                w = np.asarray(arrays[name], dtype=np.float64)
                short = name.rsplit(".", 1)[-1]
                if short in ("W_in", "b_in", "W_out") and w.shape != tuple(p.shape):
                    axis = 0 if short == "W_out" or w.ndim == 1 else 1
                    pad = [(0, 0)] * w.ndim
                    pad[axis] = (0, p.shape[axis] - w.shape[axis])
                    if pad[axis][1] >= 0:
                        w = np.pad(w, pad)
                if w.shape != tuple(p.shape):
                    raise ValueError(f"{name}: shape {w.shape} != {tuple(p.shape)}")
                p.copy_(torch.from_numpy(w))
            elif name.endswith(".w"):
                p.fill_(1.0)
            else:
                p.zero_()
    model.eval()
    return model
