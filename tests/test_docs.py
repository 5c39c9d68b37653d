"""Every code block of README.md and docs/*.md runs as written (issue 23).

One test per page: its blocks run in order (python blocks in one namespace) in a fresh
temporary directory, and print what their comments say. The rules are in tests/_docblocks.py
and docs/extending.md ("Docs that run"); the checker itself is tested below on small pages.
"""

from __future__ import annotations

import textwrap

import pytest
from _docblocks import NOT_RUN, PAGES, RUN, fences, is_not_run, literal, run_page, same
from sybil.example import SybilFailure


@pytest.fixture
def one_thread(monkeypatch):
    """One torch thread, here and in the shell blocks: on a shared 2-core machine two threads
    spin against other jobs (a 300-step training of docs/training.md: 6 s of CPU on one
    thread, 52 s on two)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("page", PAGES)
def test_page_runs_as_written(page, tmp_path, monkeypatch, one_thread):
    monkeypatch.chdir(tmp_path)
    runnable = sum(info.split(" ")[0] in RUN for _, info in fences(page))
    assert run_page(page) == runnable, f"{page}: a {RUN} block was not parsed, so it never ran"


@pytest.mark.parametrize("page", PAGES)
def test_every_fence_names_its_language(page):
    bad = [(line, info) for line, info in fences(page) if info.split(" ")[0] not in RUN + NOT_RUN]
    assert not bad, f"{page}: fences without a known language {RUN + NOT_RUN}: {bad}"


def test_a_block_not_run_says_why():
    from _docblocks import NOT_RUN_MARK, ROOT, SYBIL

    marked = [str(ex.parsed).lstrip().splitlines()[0] for p in PAGES for ex in SYBIL.parse(ROOT / p)
              if is_not_run(str(ex.parsed))]
    assert all(len(m) > len(NOT_RUN_MARK) + 5 for m in marked), marked


# --- the checker, on pages written here --------------------------------------------------------

def _page(tmp_path, monkeypatch, text: str):
    import _docblocks

    monkeypatch.setattr(_docblocks, "ROOT", tmp_path)
    (tmp_path / "page.md").write_text(textwrap.dedent(text), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return "page.md"


def test_blocks_share_one_namespace_in_order(tmp_path, monkeypatch):
    page = _page(tmp_path, monkeypatch, """
        ```python
        x = 40
        ```
        text
        ```python
        x + 2  # 42
        print(x / 3)  # 13.33
        ```
    """)
    assert run_page(page) == 2


@pytest.mark.parametrize("line", ["x + 1  # 42", "print(x)  # 41", "print('a b')  # 'a c'",
                                  "x / 3  # 13.34", "(x, x > 1)  # 40, False"])
def test_a_wrong_literal_comment_fails(tmp_path, monkeypatch, line):
    page = _page(tmp_path, monkeypatch, f"""
        ```python
        x = 40
        {line}
        ```
    """)
    with pytest.raises(SybilFailure, match="the comment says"):
        run_page(page)


def test_prose_comments_are_not_checked_and_errors_propagate(tmp_path, monkeypatch):
    page = _page(tmp_path, monkeypatch, """
        ```python
        y = 3            # three, as an int
        y + 1            # 4 and more prose
        undefined_name   # a NameError, as a reader would get
        ```
    """)
    with pytest.raises(NameError, match="undefined_name"):
        run_page(page)


def test_same_compares_to_the_digits_shown():
    def says(actual, comment: str) -> bool:
        ok, expected = literal(comment)
        assert ok, comment
        return same(actual, expected)

    assert says(0.05981, "0.0598") and not says(0.0599, "0.0598")
    assert says(81, "81") and not says(81.5, "81") and not says(True, "1")
    assert says({"a": 0.25, "b": 0}, "{'a': .25, 'b': 0}") and not says({"a": 1}, "{'b': 1}")
    assert not says(2.06e-07, "2.0e-07") and says(2.04e-07, "2.0e-07") and says(-1.021, "-1.02")
    assert says((1.0, "x"), "1.0, 'x'") and not literal("81 pieces")[0]


def test_shell_and_console_blocks(tmp_path, monkeypatch):
    page = _page(tmp_path, monkeypatch, """
        ```python
        # hello.py
        print("hello", 3)
        ```
        ```sh
        test -f hello.py
        ```
        ```console
        $ python hello.py
        hello 4
        $ echo one two \\
            three
        one … three
        ```
        ```sh
        # not run: would take minutes
        exit 1
        ```
    """)
    assert run_page(page) == 4
    (tmp_path / "page.md").write_text(
        (tmp_path / "page.md").read_text().replace("hello 4", "goodbye"), encoding="utf-8")
    with pytest.raises(SybilFailure, match="does not read as shown"):
        run_page(page)


@pytest.mark.parametrize(("line", "code"), [("false", 1), ("expressivity verify none.safetensors x.json", 2),
                                         ("expressivity no-such-command", 2)])
def test_a_failing_shell_command_fails(tmp_path, monkeypatch, line, code):
    page = _page(tmp_path, monkeypatch, f"""
        ```sh
        true
        expressivity --help
        {line}
        echo never > never.txt
        ```
    """)
    with pytest.raises(SybilFailure, match=f"exit {code}"):
        run_page(page)
    assert not (tmp_path / "never.txt").exists()


def test_only_plain_cli_lines_run_in_process():
    from _docblocks import plain_cli

    assert plain_cli("expressivity regions n.json --domain '{\"lo\": -1}'  # prose") == [
        "regions", "n.json", "--domain", '{"lo": -1}']
    for line in ("expressivity results --db x > out.txt", "expressivity a | head", "echo expressivity",
                 "expressivity train --out $HOME/x", "cd d && expressivity --help"):
        assert plain_cli(line) is None, line
