from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from fabric import Fabric, Limits


@pytest.fixture(scope="session")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("workspace")
    (root / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("async def main():\n    return 1\n")
    return root


@pytest.fixture(scope="session")
async def fab(workspace: Path) -> AsyncIterator[Fabric]:
    """One Fabric shared by the tests that only run snippets."""
    async with Fabric(workspace=workspace, limits=Limits(timeout_s=10)) as session:
        yield session
