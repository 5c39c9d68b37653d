"""count_regions(model, domain) → Regions: lower the model, dispatch on the domain type through
:data:`COUNTERS` (one :class:`Counter` per domain type: the result kind, the counter, its
picture and its progress style).

A new domain type is one module: the domain class (a frozen dataclass with ``dim`` and
``corners(in_dim)``, the points whose bounding box is the domain's — the compile-domain check
reads them), its counter and (optionally) its picture, registered with :func:`register_domain`;
then one import line in ``regions/__init__.py``. Everything else reads the registry:
``count_regions``, ``plot_domain`` (the CLI's ``--plot``), the CLI's progress bar, and
``domain_from_spec({"type": name, ...})`` (the CLI's ``--domain``). See docs/extending.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..memory import check_memory
from .domains import Box, Plane, Segment, Slice
from .lower import lower
from .result import CellPieces, Counted, CountOnly, PlanePieces, Regions, SegmentPieces, runs
from .tolerances import COMPILE_DOMAIN_SLACK, MAP_RTOL, RADIUS_RTOL

_kernels_loaded = False


def _load_kernels() -> None:
    """Load the compiled counting loops once per process (numba's on-disk cache; the first run
    after an install compiles them, ≈ 10 s) by counting two tiny programs, so that
    ``Regions.seconds`` measures the count itself."""
    global _kernels_loaded
    if _kernels_loaded:
        return
    _kernels_loaded = True
    from ..cpwl import MaxoutNetwork
    from .ir import Affine, Embed, Program, Read, ReLU

    rng = np.random.default_rng(0)
    relu = Program(2, (Embed(np.eye(2)[:, None, :], np.zeros((1, 2))),
                       Affine(rng.normal(size=(2, 64)), rng.normal(size=64)), ReLU(),
                       Affine(rng.normal(size=(64, 64)) / 8, rng.normal(size=64)), ReLU(), Read((0,))))
    maxout = MaxoutNetwork.random(2, [3, 3], 3, seed=0)
    for prog in (relu, maxout):
        count_regions(prog, Segment([-1.0, -1.0], [1.0, 1.0]))
        count_regions(prog, Plane.square(1.0))
        count_regions(prog, Box(-1.0, 1.0))  # the d-D subdivision kernels
    count_regions(relu, Box(-1.0, 1.0), stream=True, stream_rows=16)  # and a streamed count's splits


PROGRESS_STYLES = ("pieces", "fraction")
"""How a counter calls ``progress``: with the number of pieces finished so far, or with the
fraction of the work done (0 … 1)."""


@dataclass(frozen=True)
class Counter:
    """One entry of :data:`COUNTERS`: the result ``kind``, the counting function
    ``count(prog, domain, progress, general, method) -> Counted``, whether it runs the
    compiled loops for that ``method`` (loaded before the clock starts), the picture
    ``plot(model, domain, path, color_by, regions, **lower_kw) -> Regions`` (None: no picture),
    the ``progress`` style (one of :data:`PROGRESS_STYLES`) and whether ``count`` also takes
    ``stream=True, stream_rows=...`` (a count-only result in bounded memory)."""

    kind: str
    count: Callable[..., Counted]
    compiled: Callable[[str], bool] = lambda method: True
    plot: Callable[..., Regions] | None = None
    progress: str = "fraction"
    streams: bool = False


def _segment(prog, domain: Segment, progress, general: bool, method: str) -> Counted:
    from .segment import partition_segment
    from .segment_vertex import argmax_pattern_free, partition_segment_vertex

    if prog.in_dim != domain.dim:
        raise ValueError(f"segment has dimension {domain.dim} but the model's input dimension is {prog.in_dim}")
    if argmax_pattern_free(prog) and not general:
        p = partition_segment_vertex(prog, domain)  # every piece is one activation region
        region = np.arange(len(p["t0"]))
    else:
        p = partition_segment(prog, domain, progress)
        region = runs(p["code"])
    pieces = SegmentPieces(p["t0"], p["t1"], p["L"], p["R"], region, prog, domain)
    return Counted(int(region[-1]) + 1, len(region), pieces)


def _plane(prog, domain: Plane, progress, general: bool, method: str) -> Counted:
    from .plane import partition_plane

    p = partition_plane(prog, domain, progress)
    pieces = PlanePieces(p["vertices"], p["faces"], p["out"], p["region"], prog, p["plane"])
    return Counted(p["n_regions"], len(p["faces"]), pieces)


def _slice(prog, domain, progress, general: bool, method: str, stream: bool = False,
           stream_rows: int | None = None) -> Counted:
    from .subdivide import subdivide_regions

    return subdivide_regions(prog, domain, progress, stream, stream_rows)


def _box(prog, domain: Box, progress, general: bool, method: str, stream: bool = False,
         stream_rows: int | None = None) -> Counted:
    if stream and method != "subdivide":
        raise ValueError(f"stream=True counts with the subdivision counter (method='subdivide'), not method={method!r}")
    if prog.in_dim == 1:
        if stream:  # a 1-D box: the segment counter's pieces are few; the count alone is kept
            c = _box(prog, domain, progress, general, method)
            return Counted(c.activation_regions, c.n_pieces, CountOnly(c.n_pieces, 1, 0, 0), c.tolerances)
        # a 1-D box is a segment: use the exact breakpoint counter, report intervals as H-reps
        box = domain.with_dim(1)
        seg = count_regions(prog, Segment(box.lo, box.hi), progress)
        p, rid = seg.pieces, seg.pieces.region
        first = np.r_[0, np.nonzero(np.diff(rid))[0] + 1]
        last = np.r_[first[1:] - 1, len(rid) - 1]
        x0 = box.lo[0] + p.t0[first] * (box.hi[0] - box.lo[0])
        x1 = box.lo[0] + p.t1[last] * (box.hi[0] - box.lo[0])
        A = [np.array([[-1.0], [1.0]])] * len(first)
        b = [np.array([-a, c]) for a, c in zip(x0, x1)]
        lin = seg.linear_labels[first]
        _, lin = np.unique(lin, return_inverse=True)
        pieces = CellPieces(((x0 + x1) / 2)[:, None], np.arange(len(first)), prog, box, A=A, b=b, linear=lin,
                            maps=None)
        return Counted(len(first), len(first), pieces)
    if method == "subdivide":
        return _slice(prog, domain, progress, general, method, stream, stream_rows)
    from .box import partition_box

    box = domain.with_dim(prog.in_dim)
    p = partition_box(prog, box, progress)
    pieces = CellPieces(p["points"], np.arange(len(p["A"])), prog, box, A=p["A"], b=p["b"], maps=p["maps"],
                        linear=p["linear"], adjacent=p["adjacent"])
    return Counted(len(p["A"]), len(p["A"]), pieces, {"radius_rtol": RADIUS_RTOL, "map_rtol": MAP_RTOL})


def _plot_plane(model, domain: Plane, path, color_by: str = "linear", regions: Regions | None = None,
                **lower_kw) -> Regions:
    from .plot import plot_regions  # matplotlib is loaded only when a picture is drawn

    return plot_regions(model, domain, path, color_by=color_by, regions=regions, **lower_kw)


def _plot_box(model, domain: Box, path, color_by: str = "linear", regions: Regions | None = None,
              **lower_kw) -> Regions:
    from .plot import plot_box

    return plot_box(model, domain, path, color_by=color_by, regions=regions, **lower_kw)


COUNTERS: dict[type, Counter] = {}
"""Domain type → counter (filled by :func:`register_domain`)."""

DOMAIN_NAMES: dict[str, type] = {}
"""Name in a JSON domain spec (``{"type": name, ...}``) → domain type."""


def register_domain(domain_type: type, name: str, count: Callable[..., Counted], kind: str | None = None,
                    compiled: Callable[[str], bool] = lambda method: True,
                    plot: Callable[..., Regions] | None = None, progress: str = "fraction",
                    streams: bool = False) -> None:
    """Make ``domain_type`` countable, drawable and reachable from the CLI.

    ``count(prog, domain, progress, general, method) -> Counted`` counts on it, its pieces a
    :class:`~.result.SegmentPieces`, :class:`~.result.PlanePieces` or
    :class:`~.result.CellPieces` (anything with ``region``, ``linear`` and ``points`` works);
    ``kind`` (default ``name``) is the :class:`Regions` kind of its result (the ``kind`` of
    ``summary()`` and ``--json``); ``name`` is the spec's ``"type"`` (``--domain``).
    ``plot(model, domain, path, color_by="linear", regions=None, **lower_kw) -> Regions``
    draws it (``plot_domain``, ``--plot``; None: no picture). ``progress``: how ``count``
    calls its progress callback, ``"pieces"`` (pieces done so far) or ``"fraction"`` (of the
    work, 0 … 1) — the CLI's progress bar follows it. ``compiled(method)``: whether the
    count runs the compiled loops (loaded once, before the clock starts). ``streams``: ``count``
    also takes ``stream=True, stream_rows=None`` (``count_regions(..., stream=True)``: the
    counts only, in bounded memory, :class:`~.result.CountOnly` pieces)."""
    if not isinstance(domain_type, type):
        raise ValueError(f"register_domain: domain_type must be a class, got {domain_type!r}")
    if not callable(getattr(domain_type, "corners", None)):
        raise ValueError(f"register_domain: {domain_type.__name__} needs a corners(in_dim) method "
                         "(the compile-domain check reads it)")
    if name in DOMAIN_NAMES and DOMAIN_NAMES[name] is not domain_type:
        raise ValueError(f"register_domain: the name {name!r} is taken by {DOMAIN_NAMES[name].__name__}")
    if progress not in PROGRESS_STYLES:
        raise ValueError(f"register_domain: progress must be one of {', '.join(PROGRESS_STYLES)}, got {progress!r}")
    if plot is not None and not callable(plot):
        raise ValueError(f"register_domain: plot must be callable or None, got {plot!r}")
    COUNTERS[domain_type] = Counter(kind or name, count, compiled, plot, progress, streams)
    DOMAIN_NAMES[name] = domain_type


def counter_for(domain) -> Counter:
    """The :class:`Counter` registered for ``domain``'s type (or its nearest registered base
    class); ``ValueError`` listing the registered types otherwise."""
    counter = next((COUNTERS[t] for t in type(domain).__mro__ if t in COUNTERS), None)
    if counter is None:
        known = ", ".join(t.__name__ for t in COUNTERS)
        raise ValueError(f"domain must be one of the registered types ({known}), got {type(domain).__name__}")
    return counter


def drawn_domains() -> list[str]:
    """Names of the registered domains that have a picture (``register_domain(..., plot=...)``)."""
    return sorted(name for name, t in DOMAIN_NAMES.items() if COUNTERS[t].plot is not None)


register_domain(Segment, "segment", _segment, progress="pieces")
register_domain(Plane, "plane", _plane, plot=_plot_plane)
register_domain(Box, "box", _box, compiled=lambda method: method == "subdivide", plot=_plot_box, streams=True)
register_domain(Slice, "slice", _slice, kind="box", streams=True)  # a Slice's cells are reported like a Box's


def domain_from_spec(spec) -> object:
    """A domain from its JSON form ``{"type": name, **fields}`` (fields: the class's own, e.g.
    ``{"type": "segment", "a": [0, 0], "b": [1, 1]}``); unknown names list the known ones."""
    if not isinstance(spec, dict) or not isinstance(spec.get("type"), str):
        raise ValueError(f"domain: expected a JSON object with a 'type' field, got {spec!r:.60}")
    fields = {k: v for k, v in spec.items() if k != "type"}
    cls = DOMAIN_NAMES.get(spec["type"])
    if cls is None:
        raise ValueError(f"domain: unknown type {spec['type']!r}; choose one of {', '.join(sorted(DOMAIN_NAMES))}")
    try:
        return cls(**fields)
    except TypeError as exc:
        raise ValueError(f"domain {spec['type']}: {exc}") from None


def count_regions(model, domain, progress=None, general: bool = False, method: str = "subdivide",
                  stream: bool = False, stream_rows: int | None = None, **lower_kw) -> Regions:
    """Exact partition of ``model`` (anything :func:`~expressivity.regions.lower.lower`
    accepts) over ``domain`` (any type in :data:`COUNTERS`: :class:`Segment`, :class:`Plane`,
    :class:`Box`, :class:`Slice`).

    ``Regions.seconds`` is the counting time (without lowering and without the one-time load
    of the compiled loops). ``progress`` (optional) is called with the number of pieces finished so far (segment) or
    with the fraction of work done (plane, box). ``general=True`` forces the general 1-D
    counter (per-piece end values, pattern hashes) even for programs without hardmax.
    ``method`` (Box only): ``"subdivide"`` (default; :mod:`.subdivide`, d ≤ 6) or ``"lp"`` (the
    LP traversal of :mod:`.box`, the independent reference). A :class:`Slice` always subdivides.
    ``stream=True`` (Box, Slice): the activation-region count only, in bounded memory
    (:mod:`.stream`: groups of cells carried on one after the other, each counted and dropped;
    at most about ``stream_rows`` vertex rows per group, default a quarter of the memory
    budget's); the result keeps no cells (:class:`~.result.CountOnly`: no linear regions,
    points or pictures).
    """
    if method not in ("subdivide", "lp"):
        raise ValueError(f"method must be 'subdivide' or 'lp', got {method!r}")
    if stream_rows is not None and not stream:
        raise ValueError("stream_rows applies to stream=True (the vertex rows one streamed group may hold)")
    if getattr(domain, "input_shape", None) is not None and "input_shape" not in lower_kw:
        lower_kw["input_shape"] = domain.input_shape  # a plane through inputs knows their shape
    prog = lower(model, **lower_kw)
    check_compile_domain(prog, domain)
    counter = counter_for(domain)
    if stream and not counter.streams:
        streaming = ", ".join(t.__name__ for t, c in COUNTERS.items() if c.streams)
        raise ValueError(f"stream=True is for the d-D counter ({streaming}), not a {type(domain).__name__}; "
                         f"count without stream=True")
    if counter.compiled(method):
        _load_kernels()
    start = time.perf_counter()
    kw = {"stream": True, "stream_rows": stream_rows} if stream else {}
    c = counter.count(prog, domain, progress, general, method, **kw)
    return Regions(counter.kind, domain, c.activation_regions, c.n_pieces, c.pieces, time.perf_counter() - start,
                   tolerances=c.tolerances)


def check_pieces_memory(pieces: float, channels: int, what: str, hint: str = "") -> None:
    """Refuse a count of ``pieces`` pieces before it starts when they cannot be held in memory:
    every piece keeps its end points' states (2 × 8 bytes per channel, ``channels`` of them,
    plus the output) and 64 bytes of bookkeeping."""
    check_memory(pieces * (16 * (1 + channels) + 64), what, hint=hint)


def check_compile_domain(prog, domain) -> None:
    """Refuse a counting domain that leaves the box a compiled model was compiled on.

    A compiled transformer equals its source network only on its compile domain [lo, hi]
    (``Program.compile_domain``, set by :func:`lower` for compiled models); outside it
    the big-M gadgets are not exact, so a count there would describe neither the net nor the
    construction. The domains are convex and so is the box, so checking ``domain.corners``
    (segment ends, polygon vertices, box corners) suffices. Same slack as ``CompiledModel.evaluate``.
    """
    box = getattr(prog, "compile_domain", None)
    if box is None:
        return
    lo, hi = box.lo, box.hi
    pts = domain.corners(len(lo)) if callable(getattr(domain, "corners", None)) else None
    if pts is None or pts.shape[1] != len(lo):
        return  # dimension mismatch: reported by the counter
    slack = COMPILE_DOMAIN_SLACK * (1 + np.maximum(np.abs(lo), np.abs(hi)))
    if np.any(pts < lo - slack) or np.any(pts > hi + slack):
        def fmt(v):
            return "[" + ", ".join(f"{x:g}" for x in v) + "]"
        span = f"[{lo[0]:g}, {hi[0]:g}]" if np.all(lo == lo[0]) and np.all(hi == hi[0]) else f"lo {fmt(lo)}, hi {fmt(hi)}"
        raise ValueError(
            f"domain: the {type(domain).__name__.lower()} leaves the compile domain {span} of the compiled model "
            f"(corner range {fmt(pts.min(0))}..{fmt(pts.max(0))}); the transformer equals the net only there: "
            f"count on a domain inside {span} (--segment, --plane, --box --lo/--hi) or compile on a larger "
            f"domain (the spec's \"domain\", compile_maxout(domain=...))")
