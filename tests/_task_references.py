"""Independent brute-force references for the function tasks: every valid input of length n
with its expected output, enumerated from the definition (not from the task's code).

``domain(n) -> dict[input, expected output]``; ``sampled(s) -> bool`` marks the inputs the
task's sampler can produce (e.g. non-zero operands only).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass


def words(alphabet: str, n: int):
    return ("".join(t) for t in itertools.product(alphabet, repeat=n))


def total(alphabet: str, ref: Callable[[str], object]) -> Callable[[int], dict]:
    """A task defined on every string over ``alphabet``."""
    return lambda n: {s: ref(s) for s in words(alphabet, n)}


# ------------------------------------------------------------------ regular
def walk_cycle(s: str, m: int) -> int:
    pos = 0
    for c in s:
        pos = (pos + {"-": -1, "0": 0, "+": 1}[c]) % m
    return pos


def arithmetic_domain(m: int, ops: str) -> Callable[[int], dict]:
    def domain(n: int) -> dict:
        if n % 2 == 0:
            return {}
        out = {}
        for ds in itertools.product(range(m), repeat=n // 2 + 1):
            for os_ in itertools.product(ops, repeat=n // 2):
                s = str(ds[0]) + "".join(o + str(d) for o, d in zip(os_, ds[1:]))
                out[s] = eval(s) % m  # Python's precedence: * before + and -
        return out
    return domain


# -------------------------------------------------------------- context-free
def stack_reference(s: str) -> str:
    """Top-first list: push inserts at the front, pop drops the front."""
    k = 0
    while k < len(s) and s[k] in "01":
        k += 1
    top_first = list(reversed(s[:k]))
    for op in s[k:]:
        if op == "p":
            top_first = top_first[1:]
        else:
            top_first.insert(0, {"a": "0", "b": "1"}[op])
    return "".join(top_first)


def stack_domain(n: int) -> dict:
    return {a + b: stack_reference(a + b) for k in range(n + 1) for a in words("01", k) for b in words("pab", n - k)}


def stack_sampled(s: str) -> bool:
    k = len(s) - len(s.lstrip("01"))
    return (1 <= k <= len(s) - 1) or (len(s) == 1 and k == 1)


def bracket_expressions(m: int, ops: str, n: int) -> list[str]:
    """All expressions of E → d | -d | (d) | (-d) | (E∘E) with exactly n symbols."""
    digits = [str(d) for d in range(m)]
    if n == 1:
        return digits
    if n == 2:
        return ["-" + d for d in digits]
    if n == 3:
        return ["(" + d + ")" for d in digits]
    if n == 4:
        return ["(-" + d + ")" for d in digits]
    out = []
    for left in range(1, n - 3):
        for lhs in bracket_expressions(m, ops, left):
            for rhs in bracket_expressions(m, ops, n - 3 - left):
                out += ["(" + lhs + o + rhs + ")" for o in ops]
    return out


def brackets_domain(m: int, ops: str) -> Callable[[int], dict]:
    return lambda n: {e: eval(e) % m for e in bracket_expressions(m, ops, n)}


def equation_domain(m: int) -> Callable[[int], dict]:
    def domain(n: int) -> dict:
        out = {}
        for e in (bracket_expressions(m, "+-", n - 2) if n >= 3 else []):
            for i, c in enumerate(e):
                if c.isdigit():
                    lhs = e[:i] + "x" + e[i + 1:]
                    for v in range(m):  # brute force over the unknown
                        sols = [x for x in range(m) if eval(lhs.replace("x", str(x))) % m == v]
                        assert len(sols) == 1
                        out[f"{lhs}={v}"] = sols[0]
        return out
    return domain


# --------------------------------------------------------- context-sensitive
def missing_domain(n: int) -> dict:
    half, out = n // 2, {}
    for w in words("01", half):
        for i in range(2 * half):
            ww = list(w + w)
            hidden = ww[i]
            ww[i] = "_"
            out["".join(ww) + "#" * (n % 2)] = int(hidden)
    return out


def add_bits(a: list[int], b: list[int]) -> list[int]:
    """Grade-school addition of little-endian bit lists."""
    out, carry = [], 0
    for i in range(max(len(a), len(b))):
        t = (a[i] if i < len(a) else 0) + (b[i] if i < len(b) else 0) + carry
        out.append(t % 2)
        carry = t // 2
    return out + [carry] if carry else out


def strip(bits: list[int]) -> str:
    while len(bits) > 1 and bits[-1] == 0:
        bits = bits[:-1]
    return "".join(map(str, bits)) or "0"


def mul_bits(a: list[int], b: list[int]) -> list[int]:
    """Shift-and-add multiplication of little-endian bit lists."""
    acc = [0]
    for i, bit in enumerate(b):
        if bit:
            acc = add_bits(acc, [0] * i + a)
    return acc


def binary_op_domain(op: str, combine) -> Callable[[int], dict]:
    def domain(n: int) -> dict:
        out = {}
        for la in range(1, n - 1):
            for a in words("01", la):
                for b in words("01", n - 1 - la):
                    out[a + op + b] = strip(combine([int(c) for c in a], [int(c) for c in b]))
        return out
    return domain


def operands_nonzero(op: str) -> Callable[[str], bool]:
    return lambda s: all("1" in part for part in s.split(op))


def isqrt_reference(s: str) -> str:
    x = int(s, 2)
    r = 0
    while (r + 1) * (r + 1) <= x:
        r += 1
    width = (len(s) + 1) // 2
    digits = []
    for _ in range(width):
        digits.append(str(r % 2))
        r //= 2
    return "".join(reversed(digits))


@dataclass(frozen=True)
class FunctionCase:
    id: str
    name: str
    params: dict
    domain: Callable[[int], dict]
    max_len: int  # exhaustive up to this input length
    sampled: Callable[[str], bool] = lambda s: True


FUNCTION_CASES = [
    FunctionCase("parity_check", "parity_check", {}, total("01", lambda s: int(s, 2).bit_count() % 2), 10),
    FunctionCase("even_pairs", "even_pairs", {}, total("01", lambda s: int(s[0] != s[-1]) if s else 0), 10),
    FunctionCase("cycle_navigation", "cycle_navigation", {}, total("-0+", lambda s: walk_cycle(s, 5)), 7),
    FunctionCase("cycle_navigation_m3", "cycle_navigation", {"modulus": 3}, total("-0+", lambda s: walk_cycle(s, 3)), 6),
    FunctionCase("modular_arithmetic", "modular_arithmetic", {}, arithmetic_domain(5, "+-*"), 7),
    FunctionCase("modular_arithmetic_m7_plus_times", "modular_arithmetic", {"modulus": 7, "operators": "*+"},
                 arithmetic_domain(7, "+*"), 3),
    FunctionCase("stack_manipulation", "stack_manipulation", {}, stack_domain, 6, stack_sampled),
    FunctionCase("reverse_string", "reverse_string", {}, total("01", lambda s: "".join(s[i] for i in range(len(s) - 1, -1, -1))), 10),
    FunctionCase("reverse_string_v3", "reverse_string", {"vocab_size": 3}, total("012", lambda s: s[::-1]), 6),
    # the default includes multiplication, as the benchmark's task table builds it (mult=True)
    FunctionCase("modular_arithmetic_brackets", "modular_arithmetic_brackets", {}, brackets_domain(5, "+-*"), 9),
    FunctionCase("modular_arithmetic_brackets_no_mult", "modular_arithmetic_brackets", {"mult": False},
                 brackets_domain(5, "+-"), 10),
    FunctionCase("solve_equation", "solve_equation", {}, equation_domain(5), 9),
    FunctionCase("duplicate_string", "duplicate_string", {}, total("01", lambda s: s * 2), 10),
    FunctionCase("missing_duplicate", "missing_duplicate", {}, missing_domain, 10),
    # the default is the order of the benchmark's code (s₂s₄… first); "paper" is its text's (s₁s₃… first)
    FunctionCase("odds_first", "odds_first", {}, total("01", lambda s: "".join(
        s[i] for i in range(len(s)) if i % 2 == 1) + "".join(s[i] for i in range(len(s)) if i % 2 == 0)), 10),
    FunctionCase("odds_first_paper", "odds_first", {"order": "paper"}, total("01", lambda s: "".join(
        s[i] for i in range(len(s)) if i % 2 == 0) + "".join(s[i] for i in range(len(s)) if i % 2 == 1)), 10),
    FunctionCase("odds_first_v3", "odds_first", {"vocab_size": 3}, total("012", lambda s: "".join(
        s[i] for i in range(len(s)) if i % 2 == 1) + "".join(s[i] for i in range(len(s)) if i % 2 == 0)), 6),
    FunctionCase("binary_addition", "binary_addition", {}, binary_op_domain("+", add_bits), 9, operands_nonzero("+")),
    FunctionCase("binary_multiplication", "binary_multiplication", {}, binary_op_domain("*", mul_bits), 9,
                 operands_nonzero("*")),
    FunctionCase("compute_sqrt", "compute_sqrt", {}, total("01", isqrt_reference), 10, lambda s: "1" in s),
    FunctionCase("bucket_sort", "bucket_sort", {}, total("01234", lambda s: "".join(
        str(d) * s.count(str(d)) for d in range(5))), 6),
    FunctionCase("bucket_sort_v2", "bucket_sort", {"vocab_size": 2}, total("01", lambda s: "0" * s.count("0") + "1" * s.count("1")), 10),
]
