"""Named residual-stream channels.

A compiled or hand-built model labels every residual dimension (``x[0]``, ``onehot[2]``,
``one``, ``z[3]``, ``h[3]``, ...). Weights are written by name, never by raw row index, and
the map travels with the weights when a model is saved. The weights themselves are written
by name through :class:`~expressivity.transformer.builder.Weights` (see :mod:`.builder`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

_INDEXED = re.compile(r"^(?P<base>[^\[\]]+)\[(?P<i>\d+)\]$")


@dataclass(frozen=True)
class ChannelMap:
    """An ordered list of channel names; position in the list = residual dimension."""

    names: tuple[str, ...]
    _index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names = tuple(self.names)
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"ChannelMap: duplicate channel names {dup}")
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "_index", {n: i for i, n in enumerate(names)})

    @classmethod
    def build(cls, *groups: tuple[str, int]) -> ChannelMap:
        """Channels from (base, size) groups: ``base[0..size−1]``; a size-1 group whose base ends
        in ``!`` is one bare channel named ``base`` without the ``!``.

        >>> ChannelMap.build(("x", 3), ("one!", 1), ("z", 1)).names
        ('x[0]', 'x[1]', 'x[2]', 'one', 'z[0]')
        """
        names: list[str] = []
        for base, size in groups:
            if size == 1 and base.endswith("!"):
                names.append(base[:-1])
            else:
                names.extend(f"{base}[{i}]" for i in range(size))
        return cls(tuple(names))

    def __len__(self) -> int:
        return len(self.names)

    def __contains__(self, name: str) -> bool:
        return name in self._index

    def index(self, name: str) -> int:
        try:
            return self._index[name]
        except KeyError:
            raise KeyError(f"no residual channel named {name!r}") from None

    def group(self, base: str) -> list[int]:
        """Indices of ``base[0], base[1], ...`` in order of their subscript."""
        found = []
        for i, n in enumerate(self.names):
            m = _INDEXED.match(n)
            if m and m.group("base") == base:
                found.append((int(m.group("i")), i))
        return [i for _, i in sorted(found)]

    def names_of(self, base: str) -> list[str]:
        """Names ``base[0], base[1], ...`` in order of their subscript."""
        return [self.names[i] for i in self.group(base)]

    def to_json(self) -> str:
        return json.dumps(list(self.names))

    @classmethod
    def from_json(cls, text: str) -> ChannelMap:
        return cls(tuple(json.loads(text)))

    def __str__(self) -> str:
        rows = []
        runs: list[tuple[str, int, int]] = []  # (base, first dim, count)
        for i, n in enumerate(self.names):
            m = _INDEXED.match(n)
            base = m.group("base") if m else n
            if runs and m and runs[-1][0] == base and runs[-1][1] + runs[-1][2] == i:
                runs[-1] = (base, runs[-1][1], runs[-1][2] + 1)
            else:
                runs.append((base if m else n, i, 1) if m else (n + "\0", i, 1))
        for base, start, count in runs:
            label = base.rstrip("\0")
            if base.endswith("\0"):
                rows.append(f"  {start:>5}        {label}")
            else:
                rows.append(f"  {start:>5}–{start + count - 1:<5}  {label}[0..{count - 1}]")
        return f"residual channels (d_model = {len(self)}):\n" + "\n".join(rows)
