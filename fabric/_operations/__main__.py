"""``python -m fabric._operations README.md``: regenerate the README's table of operations."""

from __future__ import annotations

import sys
from pathlib import Path

from contract import write_block
from fabric._operations._docs import END, START, readme_table

if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m fabric._operations README.md")
    changed = write_block(Path(sys.argv[1]), readme_table(), START, END)
    print(f"{sys.argv[1]}: {'updated' if changed else 'already up to date'}")
