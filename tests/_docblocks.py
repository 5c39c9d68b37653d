"""Run the code blocks of a Markdown page as written (tests/test_docs.py): Sybil's Markdown
lexer finds the fenced blocks, the evaluators here run them.

Rules a page follows (docs/extending.md, "Docs that run"):

* every fence names its language: ``python``, ``sh`` (commands, run by bash; exit 0),
  ``console`` (a session: ``$ command`` lines, each followed by what it prints), or one that is
  not run: ``text``, ``json``, ``yaml``;
* a page's ``python`` blocks run in order in one namespace, all blocks of a page in one fresh
  temporary directory; a ``python`` block whose first line is ``# NAME.py`` is a file the
  reader saves: it is written to that file, and a later shell block must run it
  (``python NAME.py``);
* ``sh`` blocks run line by line (a trailing ``\\`` continues a line), each line on its own;
  a line that is only ``expressivity ARGS`` runs in the test's process (typer's CliRunner, the
  same app), any other through bash;
* a trailing comment that is a Python literal (``# 81``, ``# "softmax"``, ``# True, False``)
  is the value its line prints (``print(…)``) or evaluates to, and is checked; a number to the
  digits shown. Any other comment is prose;
* a ``console`` block's output reads as shown: ``…`` skips anything, numbers may differ
  (the docs show one run on one machine), table rules and runs of spaces count as one space;
* an ``sh`` or ``console`` block whose first line is ``# not run: WHY`` is not run (it takes
  minutes, or needs a cluster or your own data; the reason is shown on the page);
* shell blocks see this interpreter's ``python`` and ``expressivity`` first on PATH, a
  120-column terminal (COLUMNS) and the repository's ``examples/`` linked into the directory.
"""

from __future__ import annotations

import ast
import contextlib
import io
import math
import os
import re
import shlex
import subprocess
import sys
import tokenize
import traceback
from pathlib import Path

from sybil import Sybil
from sybil.parsers.markdown import CodeBlockParser
from sybil.parsers.markdown.lexers import FencedCodeBlockLexer

RUN = ("python", "sh", "console")
NOT_RUN = ("text", "json", "yaml")
NOT_RUN_MARK = "# not run:"
SHELL_TIMEOUT_S = 180
_FILE = re.compile(r"#\s*([\w.-]+\.py)\s*$")
NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


# --- python blocks --------------------------------------------------------------------------

def _trailing_comments(source: str) -> dict[int, str]:
    """Line (1-based, within the block) → text of a comment that follows code on that line."""
    out: dict[int, str] = {}
    code_lines: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            if tok.start[0] in code_lines:
                out[tok.start[0]] = tok.string[1:].strip()
        elif tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                              tokenize.ENDMARKER):
            code_lines.add(tok.start[0])
    return out


class Shown(float):
    """A float of a comment, with the text it was written as (its digits count)."""

    text: str


def _value(node: ast.AST, text: str):
    """The value of a literal's AST, floats as :class:`Shown`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, float):
        v = Shown(node.value)
        v.text = ast.get_source_segment(text, node) or repr(node.value)
        return v
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _value(node.operand, text)
        if isinstance(v, Shown):
            out = Shown(-v if isinstance(node.op, ast.USub) else v)
            out.text = v.text
            return out
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.Tuple):
        return tuple(_value(e, text) for e in node.elts)
    if isinstance(node, ast.List):
        return [_value(e, text) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {_value(k, text): _value(v, text) for k, v in zip(node.keys, node.values)}
    return ast.literal_eval(node)


def literal(text: str):
    """(True, value) when a comment is a Python literal, else (False, None)."""
    try:
        ast.literal_eval(text)
        return True, _value(ast.parse(text.strip(), mode="eval").body, text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None


def same(actual, expected) -> bool:
    """Whether a value is what a comment says: numbers to the digits the comment shows,
    sequences and dicts element by element, numpy values as Python ones."""
    if hasattr(actual, "tolist") and not isinstance(actual, (str, bytes)):
        actual = actual.tolist()  # numpy scalars and arrays, torch tensors
    if isinstance(expected, bool) or expected is None or isinstance(actual, bool):
        return actual is expected or actual == expected and type(actual) is type(expected)
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        if isinstance(expected, int):
            return actual == expected
        if not math.isfinite(expected):
            return actual == expected or (math.isnan(expected) and math.isnan(actual))
        return abs(actual - expected) <= _half_digit(expected) * (1 + 1e-9)
    if isinstance(expected, (tuple, list)) and isinstance(actual, (tuple, list)):
        return len(actual) == len(expected) and all(map(same, actual, expected))
    if isinstance(expected, dict) and isinstance(actual, dict):
        return actual.keys() == expected.keys() and all(same(actual[k], v) for k, v in expected.items())
    return type(actual) is type(expected) and actual == expected


def _half_digit(x: float) -> float:
    """Half a unit in the last digit of ``x`` as the comment shows it (0.0598 → 5e-5)."""
    mantissa, _, exp = getattr(x, "text", repr(x)).lower().lstrip("+-").partition("e")
    decimals = len(mantissa.partition(".")[2]) if "." in mantissa else 0
    return 0.5 * 10.0 ** (int(exp or 0) - decimals)


def _is_print(node: ast.AST) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name) and node.value.func.id == "print")


class _Tee(io.StringIO):
    def __init__(self, out) -> None:
        super().__init__()
        self.out = out

    def write(self, s: str) -> int:
        self.out.write(s)
        return super().write(s)


def run_python(example) -> str | None:
    """Run a python block statement by statement in the page's namespace; a statement whose
    line ends with a literal comment must print (``print``) or evaluate to it."""
    __tracebackhide__ = True
    source = str(example.parsed)
    first = example.line + example.parsed.line_offset  # 0-based line of the block's first line
    m = _FILE.match(source.splitlines()[0]) if source.strip() else None
    if m:  # a file the reader saves: a later `python NAME.py` runs it (run_page checks there is one)
        Path(m.group(1)).write_text(source, encoding="utf-8")
        return None
    tree = ast.parse(source)
    comments = _trailing_comments(source)
    last_on_line = {}
    for stmt in tree.body:
        last_on_line[stmt.end_lineno] = stmt
    ns = example.namespace
    ns.setdefault("__name__", "__main__")
    for stmt in tree.body:
        text = comments.get(stmt.end_lineno) if last_on_line[stmt.end_lineno] is stmt else None
        is_literal, expected = literal(text) if text is not None else (False, None)
        check = is_literal and isinstance(stmt, ast.Expr)
        where = f"{example.path}:{first + stmt.lineno}"
        line = ast.get_source_segment(source, stmt)
        if check and not _is_print(stmt):
            expr = ast.Expression(stmt.value)
            ast.increment_lineno(expr, first)
            value = eval(compile(expr, example.path, "eval"), ns)
            if not same(value, expected):
                return f"{where}: `{line}` is {value!r}, the comment says # {text}"
            continue
        module = ast.Module([stmt], type_ignores=[])
        ast.increment_lineno(module, first)
        code = compile(module, example.path, "exec")
        if not check:
            exec(code, ns)
            continue
        tee = _Tee(sys.stdout)
        with contextlib.redirect_stdout(tee):
            exec(code, ns)
        printed = tee.getvalue().strip()
        ok, value = literal(printed)
        if not (printed == text or (ok and same(value, expected))):
            return f"{where}: `{line}` prints {printed!r}, the comment says # {text}"
    ns.pop("__builtins__", None)
    return None


# --- shell blocks -----------------------------------------------------------------------------

def shell_env() -> dict[str, str]:
    """The environment of a shell block: this interpreter's bin first (``python`` and
    ``expressivity`` are the ones under test), no colours, 120 columns."""
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.update(NO_COLOR="1", TERM="dumb", PYTHONUNBUFFERED="1", COLUMNS="120")
    return env


def plain_cli(command: str) -> list[str] | None:
    """The arguments of a command line that is only ``expressivity ARGS`` (no pipes,
    redirections, substitutions or variables), else None."""
    if "$" in command or "`" in command:
        return None
    try:
        lex = shlex.shlex(command, posix=True, punctuation_chars=True)
        lex.whitespace_split, lex.commenters = True, "#"
        args = list(lex)
    except ValueError:
        return None
    if not args or args[0] != "expressivity" or any(set(a) <= set("();<>|&") for a in args):
        return None
    return args[1:]


def _shell(command: str, where: str) -> tuple[str, str | None]:
    """Run one command line: ``expressivity ARGS`` in this process (typer's CliRunner: the same
    app as the installed command, without a second import of torch), anything else by bash."""
    args = plain_cli(command)
    if args is not None:
        from typer.testing import CliRunner

        from expressivity.cli import app

        env = {k: v for k, v in shell_env().items() if k in ("COLUMNS", "NO_COLOR", "TERM")}
        r = CliRunner().invoke(app, args, env=env)
        output, code = r.output, r.exit_code
        if r.exception is not None and not isinstance(r.exception, SystemExit):
            output += "".join(traceback.format_exception(r.exception))
    else:
        try:
            proc = subprocess.run(["bash", "-eo", "pipefail", "-c", command], capture_output=True,
                                  text=True, env=shell_env(), timeout=SHELL_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            return "", (f"{where}: still running after {SHELL_TIMEOUT_S} s — mark the block "
                        f"'{NOT_RUN_MARK} WHY' or make it faster:\n{command}")
        output, code = proc.stdout + proc.stderr, proc.returncode
    if code != 0:
        return output, f"{where}: exit {code}:\n{command}\n{output[-3000:]}"
    return output, None


def is_not_run(source: str) -> bool:
    return source.lstrip().startswith(NOT_RUN_MARK)


def command_lines(source: str) -> list[str]:
    """An sh block's command lines: a trailing ``\\`` joins the next line; blank lines and
    comment lines are skipped."""
    lines: list[str] = []
    cont = False
    for line in source.splitlines():
        stripped = line.strip()
        if cont:
            lines[-1] = lines[-1][:-1].rstrip() + " " + stripped
        elif stripped and not stripped.startswith("#"):
            lines.append(stripped)
        else:
            continue
        cont = lines[-1].endswith("\\")
    return lines


def run_sh(example) -> str | None:
    """Run an sh block line by line (stop at the first failing one); each must exit 0."""
    source = str(example.parsed)
    if is_not_run(source):
        return None
    for line in command_lines(source):
        error = _shell(line, f"{example.path}:{example.line}")[1]
        if error:
            return error
    return None


def console_steps(source: str) -> list[tuple[str, str]]:
    """A console block as (command, shown output) pairs: ``$ `` starts a command (a trailing
    ``\\`` joins the next line), every other line is output."""
    steps: list[tuple[str, str]] = []
    cont = False
    for line in source.splitlines():
        if cont:
            steps[-1] = (steps[-1][0][:-1].rstrip() + " " + line.strip(), "")
        elif line.startswith("$ "):
            steps.append((line[2:].strip(), ""))
        elif steps and line.strip():
            steps[-1] = (steps[-1][0], (steps[-1][1] + "\n" + line).strip())
            cont = False
            continue
        else:
            continue
        cont = steps[-1][0].endswith("\\")
    return steps


def run_console(example) -> str | None:
    """Run each ``$`` command of a console block; each must exit 0 and read as shown."""
    source = str(example.parsed)
    if is_not_run(source):
        return None
    for command, shown in console_steps(source):
        where = f"{example.path}:{example.line}"
        output, error = _shell(command, where)
        if error:
            return error
        if not reads_as(output, shown):
            return f"{where}: `$ {command}` printed\n{output}\nwhich does not read as shown:\n{shown}"
    return None


def reads_as(output: str, shown: str) -> bool:
    """Whether ``output`` reads as the docs show it: "…" skips anything, numbers may differ
    (the docs show one run on one machine), table rules and runs of spaces count as one space,
    and every other character must be there, in order."""
    def flat(s: str) -> str:
        return " ".join(re.sub(r"[│┃]", " ", s).split())

    parts = []
    for piece in filter(None, (p.strip() for p in flat(shown).split("…"))):
        out, at = [], 0
        for m in NUMBER.finditer(piece):
            out += [re.escape(piece[at:m.start()]), NUMBER.pattern]
            at = m.end()
        parts.append("".join(out) + re.escape(piece[at:]))
    return re.search(".*?".join(parts), flat(output)) is not None


# --- pages ----------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["README.md"] + sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))

SYBIL = Sybil(parsers=[CodeBlockParser("python", run_python), CodeBlockParser("sh", run_sh),
                       CodeBlockParser("console", run_console)], path=str(ROOT))


def fences(page: str | Path) -> list[tuple[int, str]]:
    """Every fenced block of a page as (line, info string)."""
    from sybil import Document

    doc = Document((ROOT / page).read_text(encoding="utf-8"), str(ROOT / page))
    lexer = FencedCodeBlockLexer(language=r".*")
    return [(doc.text.count("\n", 0, r.start) + 1, r.lexemes["language"].strip()) for r in lexer(doc)]


def run_page(page: str | Path) -> int:
    """Run every block of a page in the current directory (``examples/`` linked in); returns
    how many blocks it evaluated."""
    __tracebackhide__ = True
    if (ROOT / "examples").is_dir() and not Path("examples").exists():
        Path("examples").symlink_to(ROOT / "examples", target_is_directory=True)
    n = 0
    doc = SYBIL.parse(ROOT / page)
    files = [m.group(1) for ex in doc if isinstance(ex.parsed, str)
             and (m := _FILE.match((str(ex.parsed).splitlines() or [""])[0]))]
    shell = "\n".join(str(ex.parsed) for ex in doc if ex.region.evaluator in (run_sh, run_console))
    missing = [f for f in files if f"python {f}" not in shell]
    assert not missing, f"{page}: no shell block runs the file block(s) {missing} (`python NAME.py`)"
    for example in doc:
        example.evaluate()
        n += 1
    return n
