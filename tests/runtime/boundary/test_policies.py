"""Result policies: what reaches the model, and that the exact original is always stored."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from runtime import CallRecord, ExecError, ExecResult
from runtime.boundary import HEADER_BYTES, Boundary, BoundaryConfig, to_json
from store import Store

from .conftest import ok

BIG_LOG = "\n".join(f"2026-11-30 INFO request {i} served in {i % 97} ms" for i in range(5000))


def test_small_results_are_inlined_as_they_are(boundary: Boundary) -> None:
    """Under the threshold nothing is stored and the text is the rendered value."""
    done = boundary.finish(ok({"a": 1, "b": [1, 2]}))
    assert done.policy_applied == "inline" and done.handle is None
    assert done.text == "a: 1\nb: [1, 2]"
    assert done.bytes == len(done.text) and done.tokens > 0


def test_large_results_are_offloaded_with_handle_sizes_and_recipes(
    boundary: Boundary, store: Store
) -> None:
    """Over the threshold: the original is stored, the text names the handle, the size in
    bytes and tokens, says nothing is lost, and gives ctx.read calls by range and query."""
    calls = (CallRecord(tool="tools.read", args={"path": "logs/app.log"}),)
    done = boundary.finish(ok(BIG_LOG, calls=calls))
    assert done.policy_applied == "offload" and done.handle is not None
    assert done.handle.startswith("read-logs-app-log-")
    assert store.get(done.handle) == BIG_LOG.encode()
    text = done.text
    assert f"{len(BIG_LOG.encode())} bytes" in text and "tokens" in text
    assert "nothing is lost" in text and "do not re-run" in text
    assert f'ctx.read("{done.handle}", offset=0, length=4000)' in text
    assert f'ctx.read("{done.handle}", query=' in text
    assert len(text.encode()) <= BoundaryConfig().read_offload_threshold + HEADER_BYTES
    assert done.text_tokens < done.tokens


def test_json_offloads_suggest_a_json_path(boundary: Boundary) -> None:
    rows = {"ok": True, "items": [{"id": i, "name": f"user {i}"} for i in range(2000)]}
    done = boundary.finish(ok(rows))
    assert 'json_path="$.items[0:5]"' in done.text
    assert "$.ok = true" in done.text


def test_inline_never_rewrites(boundary: Boundary) -> None:
    done = boundary.finish(ok(BIG_LOG), policy="inline")
    assert done.text == BIG_LOG and done.handle is None and done.policy_applied == "inline"


def test_offload_always_stores(boundary: Boundary, store: Store) -> None:
    done = boundary.finish(ok("tiny"), policy="offload")
    assert done.policy_applied == "offload" and store.get(done.handle or "") == b"tiny"


def test_summarize_keeps_the_original_and_shows_a_structural_summary(
    boundary: Boundary, store: Store
) -> None:
    value = {"status": "done", "rows": list(range(10_000))}
    done = boundary.finish(ok(value), policy="summarize")
    assert done.policy_applied == "summarize"
    assert store.get(done.handle or "") == to_json(value).encode()
    assert "summary stored as" in done.text and "$.rows = array of 10000 numbers" in done.text


def test_summarize_leaves_a_result_under_the_threshold_inline(boundary: Boundary) -> None:
    """The reference's summarize is threshold-based: a 14-byte result became a 434-byte
    notice; it is now returned as it is."""
    done = boundary.finish(ok("fourteen bytes"), policy="summarize")
    assert done.policy_applied == "inline" and done.text == "fourteen bytes"


def test_printed_output_shares_the_budget(boundary: Boundary, store: Store) -> None:
    """A flood of print output is offloaded too; the small value stays inline."""
    done = boundary.finish(ok("the answer is 42", logs=BIG_LOG))
    assert done.text.startswith("the answer is 42")
    assert done.logs_handle is not None and store.get(done.logs_handle) == BIG_LOG.encode()
    assert len(done.text.encode()) <= BoundaryConfig().read_offload_threshold + HEADER_BYTES


def test_per_call_format(boundary: Boundary) -> None:
    assert boundary.finish(ok({"a": [1]}), fmt="json").text == '{"a": [1]}'
    assert boundary.finish(ok({"a": [1]}), fmt="yaml").text == "a:\n- 1\n"
    assert boundary.finish(ok(["x", "y"]), fmt="text").text == "x\ny"


def _nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = {"a": value}
    return value


def test_a_value_too_deep_for_yaml_is_shown_as_json_with_a_note(boundary: Boundary) -> None:
    """The model may ask for yaml; PyYAML recurses per level, one-line JSON goes deeper."""
    done = boundary.finish(ok(_nested(450)), fmt="yaml", policy="inline")
    assert done.ok and done.text.startswith('{"a":{"a":')
    assert "[note: shown as JSON: the value nests too deeply for yaml]" in done.text


def test_a_value_no_format_can_render_is_a_limit_error_not_a_crash(boundary: Boundary) -> None:
    """A library caller may hand the boundary anything: finish never raises for it."""
    done = boundary.finish(ok(_nested(50_000)), fmt="yaml")
    assert not done.ok and done.error is not None and done.value is None
    assert done.error.kind == "limit" and done.error.type == "ResultTooComplex"
    assert "nests too deeply" in done.text and "ctx.offload" in done.text


def test_auto_format_moves_long_strings_into_sections(boundary: Boundary) -> None:
    done = boundary.finish(ok({"exit_code": 1, "stderr": "line 1\nline 2\nline 3\nline 4"}))
    assert done.text == (
        "exit_code: 1\nstderr: (see [stderr] below, 4 lines)\n\n[stderr]\nline 1\nline 2\n"
        "line 3\nline 4"
    )


def test_edit_results_become_an_acknowledgement(boundary: Boundary, store: Store) -> None:
    diff = "".join(
        f"--- a/src/m{i}.py\n+++ b/src/m{i}.py\n@@ -1,3 +1,3 @@\n-old line\n+new line\n+more\n"
        for i in range(40)
    )
    value = {"ok": True, "path": "src", "diff": diff}
    done = boundary.finish(ok(value))
    assert done.policy_applied == "edit" and done.handle is not None
    assert "edit applied (ok: True; path: src)" in done.text
    assert "diff: 40 file(s), +80 -40" in done.text and "src/m0.py (+2 -1)" in done.text
    assert json.loads(store.get(done.handle)) == value
    assert len(done.text) < 1500


def test_compact_edit_results_can_be_turned_off(store: Store) -> None:
    quiet = Boundary(store, BoundaryConfig(compact_edit_results=False))
    value = {"ok": True, "diff": "+x\n" * 8000}
    assert quiet.finish(ok(value)).policy_applied == "offload"


def long_error() -> ExecResult:
    lines = ["Traceback (most recent call last):"] + [
        f'  File "tool.py", line {i}, in step{i}' for i in range(40)
    ]
    lines += ["ValueError: disk quota exceeded for /data"] * 200 + ["command failed with exit 1"]
    error = ExecError(kind="tool", type="ToolError", message="\n".join(lines))
    return ExecResult(ok=False, text="\n".join(lines), error=error)


def test_long_errors_are_compacted_with_the_original_stored(
    boundary: Boundary, store: Store
) -> None:
    failed = long_error()
    done = boundary.finish(failed)
    assert done.policy_applied == "compact" and done.handle is not None
    assert store.get(done.handle) == failed.text.encode()
    assert len(done.text.encode()) <= BoundaryConfig().error_compaction_preview_bytes + 64
    assert (
        "[x5] ValueError: disk quota exceeded for /data  [+195 in the omitted lines]" in done.text
    )
    assert done.text.splitlines()[0] == "Traceback (most recent call last):"
    assert "command failed with exit 1" in done.text
    assert f'ctx.read("{done.handle}", offset=' in done.text


def test_short_errors_are_left_alone(boundary: Boundary) -> None:
    failed = ExecResult(ok=False, text="NameError: x", error=ExecError(kind="runtime", message="x"))
    assert boundary.finish(failed).text == "NameError: x"


def test_without_a_store_errors_show_in_full_and_results_warn() -> None:
    """If storing fails the original error is shown as it is; a result gets a preview and a
    warning that names the problem."""
    bare = Boundary(None)
    failed = long_error()
    assert bare.finish(failed).text == failed.text
    done = bare.finish(ok(BIG_LOG))
    assert done.handle is None and "could not be stored" in done.text
    assert done.warnings == ("no store is configured",)


@pytest.mark.parametrize("threshold", [10, 2 * 1024**3])
def test_a_threshold_out_of_bounds_is_refused_naming_the_field(threshold: int) -> None:
    """Bounds are declared once, on the model; the config file clamps to them (with a
    warning), the Python API refuses what is outside them."""
    with pytest.raises(ValidationError) as caught:
        BoundaryConfig(read_offload_threshold=threshold)
    assert "read_offload_threshold" in str(caught.value)


def test_a_small_threshold_bounds_the_text(store: Store) -> None:
    tight = Boundary(store, BoundaryConfig(read_offload_threshold=300, offload_preview_bytes=256))
    done = tight.finish(ok(BIG_LOG))
    assert len(done.text.encode()) <= 300 + HEADER_BYTES
