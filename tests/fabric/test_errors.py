"""One translation of errors (``error_payload``): every bad input, from Python, the CLI or an
MCP client, names what the user typed, what it accepts and what it got; nothing internal
leaks, and no traceback reaches a user for a mistake of theirs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from pydantic import ValidationError

from fabric import ConfigError, Fabric, Limits, ProviderCallError, error_payload
from fabric._translate import describe
from runtime import SandboxError
from store import NotFound, StoreError

LIMIT_FIELDS = {"timeout_s": (0.1, 3600), "memory_mb": (16, 65536), "max_calls": (0, 1_000_000)}


@settings(max_examples=200, deadline=None)
@example(field="max_calls", value="http")  # a value that reads like a link
@given(
    field=st.sampled_from(sorted(LIMIT_FIELDS)),
    value=st.one_of(
        st.integers(-(10**9), 10**9),
        st.floats(allow_nan=False),
        st.text(max_size=20),
        st.none(),
        st.lists(st.integers(), max_size=3),
    ),
)
def test_a_bad_limit_reads_in_the_users_terms(field: str, value: Any) -> None:
    flag = f"--{field.replace('_', '-')}"
    try:
        Limits.model_validate({field: value})
    except ValidationError as exc:
        payload = error_payload(ConfigError(describe(exc, {field: flag})))
    else:
        return
    assert payload.code == "bad_arguments" and payload.usage
    assert payload.message.startswith(f"{flag} must be ")
    said = payload.message.replace(repr(value), "")  # the user's own value may say anything
    assert "pydantic" not in said and "http" not in said
    assert "Input should" not in said


def test_a_validation_error_of_fabrics_own_is_internal(caplog: pytest.LogCaptureFixture) -> None:
    """Input a user typed is validated where it arrives; a bare ValidationError reaching the
    translation is Fabric's own bug, not the caller's mistake."""
    try:
        Limits.model_validate({"timeout_s": "soon"})
    except ValidationError as exc:
        payload = error_payload(exc)
    assert payload.code == "internal" and not payload.usage and "timeout_s" not in payload.message
    assert any(r.exc_info for r in caplog.records)


def test_each_error_tree_has_its_codes() -> None:
    cases: list[tuple[BaseException, str, bool]] = [
        (ConfigError("timeout: must be positive"), "bad_arguments", True),
        (ProviderCallError("no such file", code="not_found"), "not_found", False),
        (NotFound("gone", ref="x", reason="expired"), "not_found", False),
        (StoreError("broken"), "store_error", False),
        (SandboxError("down"), "sandbox_error", False),
        (OSError(36, "File name too long", "x" * 300), "os_error", False),
    ]
    for exc, code, usage in cases:
        payload = error_payload(exc)
        assert (payload.code, payload.usage) == (code, usage), exc
    assert not issubclass(ProviderCallError, SandboxError)


def test_an_unexpected_error_shows_nothing_internal(caplog: pytest.LogCaptureFixture) -> None:
    payload = error_payload(KeyError("secret internal detail"))
    assert payload.code == "internal" and "secret" not in payload.message
    assert "KeyError" in payload.message and "report" in payload.message
    assert any(r.exc_info for r in caplog.records)


async def test_exec_names_the_parameter_it_was_given(tmp_path: Path) -> None:
    async with Fabric(tmp_path, spares=0) as fab:
        with pytest.raises(ConfigError) as caught:
            await fab.exec("return 1", timeout=-1)
        assert str(caught.value) == "timeout must be at least 0.1, not -1"
        empty = await fab.exec("   \n")
        assert empty.error is not None and empty.error.type == "EmptySnippet"


async def test_mcp_tools_answer_bad_arguments_in_the_same_words(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hi\n")
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "fabric._cli", "mcp", "--workspace", str(tmp_path)]
    )
    calls = {
        ("fabric_exec", "timeout_s must be at least 0.1, not -1"): {"code": "1", "timeout_s": -1},
        ("fabric_exec", "timeout_s must be a number, not 'abc'"): {"code": "1", "timeout_s": "abc"},
        ("ctx_read", "max_matches must be a whole number, not 'many'"): {
            "handle": "a.txt",
            "query": "h",
            "max_matches": "many",
        },
        ("ctx_recall", "max_tokens must be at least 1, not -1"): {"max_tokens": -1},
        ("fabric_exec", "timeout_s must be a number, not True"): {"code": "1", "timeout_s": True},
        ("ctx_read", "max_matches must be a whole number, not True"): {
            "handle": "a.txt",
            "max_matches": True,
        },
        ("ctx_read", "maxMatch is not a parameter here; did you mean max_matches?"): {
            "handle": "a.txt",
            "maxMatch": 3,
        },
    }
    async with Client(server) as client:
        for (tool, words), arguments in calls.items():
            done = await client.call_tool(tool, arguments)
            text = "".join(block.text for block in done.content)  # type: ignore[union-attr]
            assert done.is_error and words in text, text
            assert "pydantic" not in text and "Traceback" not in text and "internal" not in text
            assert done.structured_content["error"]["code"] in ("bad_arguments", "invalid_request")


def test_the_cli_reports_a_bad_handle_without_a_traceback(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "fabric._cli", "read", "x" * 300, "--workspace", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "error (" in done.stderr and "is not a handle" in done.stderr
