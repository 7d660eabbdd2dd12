"""Each package exports a fixed public surface from its __init__."""

from __future__ import annotations

import subprocess
import sys

import fabric
import runtime
import runtime.worker


def test_fabric_exports() -> None:
    """fabric's public names all resolve."""
    assert sorted(fabric.__all__) == sorted(set(fabric.__all__))
    for name in fabric.__all__:
        assert getattr(fabric, name) is not None


def test_runtime_exports_resolve_lazily() -> None:
    """runtime's names load on first use."""
    for name in runtime.__all__:
        assert getattr(runtime, name) is not None


def test_worker_side_stays_lean() -> None:
    """The process that forks workers imports neither pydantic, rich, libcst nor fabric."""
    code = (
        "import sys, runtime.worker._zygote\n"
        "heavy = ('pydantic', 'rich', 'libcst', 'fabric', 'jsonschema')\n"
        "print([m for m in heavy if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_store_exports_and_imports_nothing_of_fabric() -> None:
    """store's names resolve, and importing it loads neither runtime, fabric nor analyzer."""
    code = (
        "import sys, store\n"
        "assert all(getattr(store, n) is not None for n in store.__all__)\n"
        "print([m for m in ('runtime', 'fabric', 'analyzer', 'rich') if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_analyzer_exports_and_imports_nothing_of_fabric() -> None:
    """analyzer's names resolve; it imports neither runtime, store nor fabric."""
    code = (
        "import sys, analyzer\n"
        "assert all(getattr(analyzer, n) is not None for n in analyzer.__all__)\n"
        "print([m for m in ('runtime', 'fabric', 'store', 'rich') if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_contract_exports_and_imports_only_the_standard_library() -> None:
    """contract's names resolve; it imports no other package of ours and nothing installed."""
    code = (
        "import sys, contract\n"
        "assert all(getattr(contract, n) is not None for n in contract.__all__)\n"
        "ours = ('runtime', 'fabric', 'store', 'analyzer', 'pydantic', 'libcst', 'RestrictedPython')\n"
        "print([m for m in ours if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
