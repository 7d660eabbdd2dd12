"""tools.grep gives the same lines with ripgrep on PATH as with the Python search alone."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabric import ProviderCallError, ProviderRegistry
from fabric.providers import Workspace, register_file_tools

RG = shutil.which("rg", path=str(Path(sys.executable).parent)) or shutil.which("rg")
needs_rg = pytest.mark.skipif(
    RG is None, reason="ripgrep is not installed (pip install ripgrep: the test extras have it)"
)
WORDS = ["alpha", "Beta", "gamma", "ERROR", "x=1", "déjà", "tab\there", "end"]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Text in folders, CRLF endings, binary files, the store, skipped folders and symlinks."""
    root = tmp_path_factory.mktemp("grep") / "ws"
    files = {
        "a.txt": "alpha Beta\ngamma ERROR\nend",
        "dos.txt": "alpha\r\nERROR here\r\nend\r\n",
        "sub/b.py": "def f():\n    return 'ERROR'  # x=1\n",
        "sub/deeper/c.md": "déjà vu\ntab\there\nBeta\n",
        "sub/.hidden": "hidden alpha\n",
        "z.txt": "\n\nalpha\n",
        ".fabric/secret.txt": "alpha ERROR Beta gamma\n",
        "sub/.fabric/also.txt": "alpha ERROR\n",
        ".git/config": "alpha ERROR\n",
        "node_modules/m/index.js": "alpha ERROR\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(text.encode())
    (root / "bin.dat").write_bytes(b"\x00\x01alpha ERROR\n")
    (root / "late-nul.txt").write_bytes(b"alpha\n" + b"x" * 9000 + b"\x00ERROR\n")
    outside = root.parent / "outside"
    outside.mkdir()
    (outside / "o.txt").write_text("alpha ERROR Beta\n")
    os.symlink(outside, root / "out")
    os.symlink(outside / "o.txt", root / "o-link.txt")
    os.symlink(".fabric", root / "store")
    os.symlink("sub", root / "sub-link")
    return root


async def grep(
    tree: Path, monkeypatch: pytest.MonkeyPatch, rg: bool, **arguments: object
) -> object:
    """tools.grep with ripgrep on PATH (``rg``) or with no ripgrep anywhere on it."""
    monkeypatch.setenv("PATH", str(Path(RG).parent) if rg and RG else "/nonexistent")
    registry = ProviderRegistry()
    register_file_tools(registry, Workspace(tree))
    try:
        return await registry.call("tools", "grep", dict(arguments))
    except ProviderCallError as exc:
        return ("error", exc.code)


@needs_rg
@pytest.mark.parametrize(
    "arguments",
    [
        {"pattern": "ERROR"},
        {"pattern": "alpha"},
        {"pattern": "beta", "ignore_case": True},
        {"pattern": "^end$"},
        {"pattern": "x=1", "literal": True},
        {"pattern": "d.j."},
        {"pattern": "\\bgamma\\b"},
        {"pattern": "ERROR", "glob": "*.py"},
        {"pattern": "ERROR", "path": "sub"},
        {"pattern": "alpha", "max_results": 2},
        {"pattern": "(?<=tab)\\t"},  # look-behind: ripgrep refuses it, Python answers
        {"pattern": "("},
    ],
)
async def test_both_ways_give_the_same_lines(
    tree: Path, monkeypatch: pytest.MonkeyPatch, arguments: dict[str, object]
) -> None:
    """Same lines in the same order; never .fabric, a skipped folder, a binary file or
    anything behind a symlink."""
    with_rg = await grep(tree, monkeypatch, True, **arguments)
    without = await grep(tree, monkeypatch, False, **arguments)
    assert with_rg == without
    if isinstance(with_rg, list):
        paths = {hit["path"] for hit in with_rg}
        assert not any(
            ".fabric" in p
            or p.startswith(
                ("out", "o-link", "store", "sub-link", ".git", "node_modules", "bin.dat")
            )
            for p in paths
        )


@needs_rg
async def test_the_tree_is_searched_in_full(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What both find for ERROR, spelled out: CRLF lines lose their \\r; a NUL past the
    first 8 KiB does not make a file binary."""
    assert await grep(tree, monkeypatch, True, pattern="ERROR") == [
        {"path": "a.txt", "line": 2, "text": "gamma ERROR"},
        {"path": "dos.txt", "line": 2, "text": "ERROR here"},
        {"path": "late-nul.txt", "line": 2, "text": ("x" * 9000 + "\x00ERROR")[:500]},
        {"path": "sub/b.py", "line": 2, "text": "    return 'ERROR'  # x=1"},
    ]


@needs_rg
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    pattern=st.one_of(
        st.sampled_from(WORDS),
        st.text(st.sampled_from("aelphrERO .*^$\\bd[]|+?"), min_size=1, max_size=8),
    ),
    ignore_case=st.booleans(),
    literal=st.booleans(),
)
async def test_any_pattern_gives_the_same_lines(
    tree: Path, monkeypatch: pytest.MonkeyPatch, pattern: str, ignore_case: bool, literal: bool
) -> None:
    """Whatever the pattern, flags and literal mode: the same answer, error codes included."""
    arguments = {"pattern": pattern, "ignore_case": ignore_case, "literal": literal}
    assert await grep(tree, monkeypatch, True, **arguments) == await grep(
        tree, monkeypatch, False, **arguments
    )


@needs_rg
async def test_ripgrep_does_not_follow_a_swapped_in_folder(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A path through a symlink out is refused before ripgrep runs."""
    assert await grep(tree, monkeypatch, True, pattern="alpha", path="out") == (
        "error",
        "outside_workspace",
    )


@needs_rg
async def test_ripgrep_takes_the_first_pass_when_on_path(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With rg on PATH the Python search reads only the files ripgrep names; a pattern
    ripgrep refuses leaves the whole job to Python."""
    import fabric.providers._files as files

    answers: list[set[str] | None] = []
    real = files.candidates

    def spy(*args: object, **kwargs: object) -> set[str] | None:
        answers.append(real(*args, **kwargs))  # type: ignore[arg-type]
        return answers[-1]

    monkeypatch.setattr(files, "candidates", spy)
    await grep(tree, monkeypatch, True, pattern="ERROR")
    await grep(tree, monkeypatch, True, pattern="(?<=tab)\\t")
    await grep(tree, monkeypatch, False, pattern="ERROR")
    assert answers == [
        {"a.txt", "dos.txt", "late-nul.txt", "bin.dat", "sub/b.py"},  # bin.dat: Python drops it
        None,
    ]
