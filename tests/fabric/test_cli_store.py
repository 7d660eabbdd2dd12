"""`fabric store list|show|search|gc|clear` as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from store import Store

from .test_cli import fabric as run_cli


def fabric(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, stdin="")  # never a terminal: clear must ask for --yes


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    with Store(tmp_path) as store:
        store.put("line one\nERROR two\n", tool="tools.read", args={"path": "app.log"})
        store.put({"rows": [1, 2, 3]}, tool="tools.query", key="rows")
    return tmp_path


def test_list_shows_a_table_and_json(workspace: Path) -> None:
    table = fabric("store", "list", "--workspace", str(workspace))
    assert table.returncode == 0 and "read-app-log-" in table.stdout and "2 entries" in table.stdout
    listed = json.loads(fabric("store", "list", "--workspace", str(workspace), "--json").stdout)
    assert {e["key"] for e in listed["entries"]} == {None, "rows"}
    assert listed["usage"]["entries"] == 2


def test_show_prints_the_source_and_head(workspace: Path) -> None:
    shown = fabric("store", "show", "rows", "--workspace", str(workspace))
    assert shown.returncode == 0 and "tools.query()" in shown.stdout
    assert '{"rows":[1,2,3]}' in shown.stdout
    as_json = json.loads(
        fabric("store", "show", "rows", "--workspace", str(workspace), "--json").stdout
    )
    assert as_json["entry"]["key"] == "rows" and as_json["head"] == '{"rows":[1,2,3]}'
    raw = fabric("store", "show", "rows", "--raw", "--workspace", str(workspace))
    assert raw.stdout == '{"rows":[1,2,3]}'


def test_search_finds_the_line(workspace: Path) -> None:
    found = json.loads(
        fabric("store", "search", "error", "--workspace", str(workspace), "--json").stdout
    )
    assert [(h["line"], h["text"]) for h in found["hits"]] == [(2, "ERROR two")]


def test_store_search_scans_for_literal_text_and_fabric_search_asks_the_index(
    workspace: Path,
) -> None:
    """`fabric store search` reads every byte, so text inside a word is found; `fabric search`
    matches whole words from the index (ranked), so it is not: two questions, said in both
    commands' help."""
    scanned = json.loads(
        fabric("store", "search", "RROR tw", "--workspace", str(workspace), "--json").stdout
    )
    assert [h["text"] for h in scanned["hits"]] == ["ERROR two"]
    indexed = json.loads(fabric("search", "RROR", "--workspace", str(workspace), "--json").stdout)
    assert indexed["hits"] == [] and indexed["total"] == 0
    words = json.loads(fabric("search", "error", "--workspace", str(workspace), "--json").stdout)
    assert [(h["line"], h["text"]) for h in words["hits"]] == [(2, "ERROR two")]
    helped = fabric("store", "search", "--help").stdout
    assert "reading every byte" in helped and "`fabric search`" in helped


def test_unknown_handle_fails_with_the_reason(workspace: Path) -> None:
    done = fabric("store", "show", "nope-12345678", "--workspace", str(workspace))
    assert done.returncode == 1 and "no entry nope-12345678" in done.stderr
    as_json = json.loads(
        fabric("store", "show", "nope-12345678", "--workspace", str(workspace), "--json").stdout
    )
    assert as_json["error"]["code"] == "not_found"


def test_gc_reports_and_clear_needs_confirmation(workspace: Path) -> None:
    gc = json.loads(
        fabric("store", "gc", "--verify", "--workspace", str(workspace), "--json").stdout
    )
    assert gc["expired"] == 0 and gc["corrupt"] == 0
    refused = fabric("store", "clear", "--workspace", str(workspace))
    assert refused.returncode == 1 and "--yes" in refused.stderr
    cleared = json.loads(
        fabric("store", "clear", "--yes", "--workspace", str(workspace), "--json").stdout
    )
    assert cleared == {"cleared": 2}
    with Store(workspace) as store:
        assert store.usage().entries == 0


def test_the_workspace_and_json_flags_go_before_or_after_the_action(workspace: Path) -> None:
    before = fabric("store", "--workspace", str(workspace), "--json", "list")
    after = fabric("store", "list", "--workspace", str(workspace), "--json")
    assert before.returncode == after.returncode == 0
    assert json.loads(before.stdout)["usage"] == json.loads(after.stdout)["usage"]


def test_a_listing_fits_80_columns_and_never_breaks_a_handle(workspace: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "fabric._cli", "store", "list", "--workspace", str(workspace)],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "80"},
        timeout=60,
    )
    assert done.returncode == 0
    assert max(len(line) for line in done.stdout.splitlines()) <= 80
    with Store(workspace) as store:
        handles = [e.handle for e in store.list()]
    assert all(any(h in line for line in done.stdout.splitlines()) for h in handles)
