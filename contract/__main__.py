"""``python -m contract README.md``: regenerate the README's contract lists."""

from __future__ import annotations

import sys
from pathlib import Path

from contract._docs import write_readme

if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m contract README.md")
    changed = write_readme(Path(sys.argv[1]))
    print(f"{sys.argv[1]}: {'updated' if changed else 'already up to date'}")
