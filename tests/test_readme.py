"""The README's Python examples run as written: each block that is a program (not a snippet,
which starts ``# in a snippet``) runs as a script in a fresh workspace."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).parents[1] / "README.md"
BLOCKS = [
    block
    for block in re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    if not block.startswith("# in a snippet")
]


def test_the_readme_has_python_examples() -> None:
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{n}" for n in range(len(BLOCKS))])
def test_a_readme_example_runs_as_a_script(block: str, tmp_path: Path) -> None:
    (tmp_path / "main.py").write_text(block)
    done = subprocess.run(
        [sys.executable, "main.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    for expected in promised(block):
        assert expected in done.stdout.splitlines(), (expected, done.stdout)


def promised(block: str) -> list[str]:
    """What the block's ``print(...)  # <a Python literal>`` comments say it prints."""
    found = []
    for comment in re.findall(r"^\s*print\(.*\)\s*#\s*(.+)$", block, re.M):
        try:
            found.append(str(ast.literal_eval(comment.strip())))
        except (ValueError, SyntaxError):
            continue  # prose, not a value
    return found


def test_the_examples_promise_values() -> None:
    assert sum(len(promised(block)) for block in BLOCKS) >= 2
