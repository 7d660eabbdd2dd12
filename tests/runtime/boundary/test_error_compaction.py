"""A long error reaches the model whole or compacted, never cut: the exact original is stored
first; the compacted text keeps the first and last lines (the last always), the diagnostic
lines of the omitted middle once each with their counts, and says how many lines it shows."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric import Fabric, Limits
from runtime import ExecError, ExecResult
from runtime.boundary import Boundary, BoundaryConfig
from store import Store

MARKER = "PLANTED-FINAL-CAUSE: the disk is full"


def failed(text: str) -> ExecResult:
    return ExecResult(ok=False, text=text, error=ExecError(kind="runtime", message=text))


def shown_count(text: str) -> tuple[int, int]:
    found = re.search(r"\[error compacted, (\d+) of (\d+) lines shown", text)
    assert found, text
    return int(found[1]), int(found[2])


def stands_for(shown: str, line: str) -> bool:
    """Whether ``shown`` is ``line`` as a compacted error shows it: whole, or its start and
    end around the count of what was cut, or cut to fit; with its repeat counts."""
    shown = re.sub(r"^\[x\d+\] ", "", shown)
    shown = re.sub(r"  \[\+\d+ in the omitted lines\]$", "", shown)
    if shown == line:
        return True
    if shown.endswith("… (line cut to fit)"):
        return line.startswith(shown.removesuffix("… (line cut to fit)")[:40])
    cut = re.fullmatch(r"(.*) … \((\d+) characters cut\) … (.*)", shown, re.DOTALL)
    return bool(cut) and (
        line.startswith(cut[1])
        and line.endswith(cut[3])
        and len(cut[1]) + int(cut[2]) + len(cut[3]) == len(line)
    )


lines = st.text(
    st.characters(
        blacklist_categories=("Cs",),
        blacklist_characters="\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029",
    ),
    max_size=300,
)


@settings(max_examples=150, deadline=None)
@given(
    body=st.lists(
        lines | st.sampled_from(["ValueError: bad", "  File x", "ERROR x"]), max_size=400
    ),
    last=lines.filter(lambda line: line.strip() != ""),
    budget=st.integers(256, 8192),
)
def test_a_compacted_error_keeps_its_last_line_and_counts_truly(
    tmp_path_factory: pytest.TempPathFactory, body: list[str], last: str, budget: int
) -> None:
    text = "\n".join([*body, "x" * 5000, last])
    with Store(tmp_path_factory.mktemp("store")) as store:
        done = Boundary(
            store, BoundaryConfig(error_compaction_preview_bytes=budget, redact_secrets=False)
        ).finish(failed(text))
        assert done.policy_applied == "compact" and done.handle is not None
        assert store.get(done.handle) == text.encode()  # the exact original, stored first
    *shown, footer = done.text.split("\n")
    kept = shown[-1]
    assert stands_for(kept, last), (kept, last)
    count, total = shown_count(footer)
    assert total == len(text.splitlines()) and 1 <= count <= total
    essentials = len(footer.encode()) + len(kept.encode()) + 200
    assert len(done.text.encode()) <= max(budget, essentials)


def test_no_line_is_shown_twice_and_the_omission_is_counted(boundary: Boundary) -> None:
    text = "\n".join(
        ["Traceback (most recent call last):", "TypeError: first"]
        + [f'  File "/srv/app/pipeline/tool.py", line {i}, in step_{i}' for i in range(100)]
        + ["TypeError: first", "KeyError: 'a'", "KeyError: 'a'", "KeyError: 'a'"] * 5
        + [f"  step {i}" for i in range(10)]
        + ["KeyError: 'a'", MARKER]
    )
    done = boundary.finish(failed(text))
    shown = done.text.splitlines()[:-1]
    assert shown[0] == "Traceback (most recent call last):" and shown[-1] == MARKER
    assert "TypeError: first  [+5 in the omitted lines]" in shown
    assert "KeyError: 'a'  [+15 in the omitted lines]" in shown
    assert done.text.count("TypeError: first") == done.text.count("KeyError") == 1
    gap = next(line for line in shown if line.startswith("…"))
    assert (
        gap
        == "… 120 lines omitted; the diagnostics among them recur in the lines shown ([+N] counts)"
    )
    assert shown_count(done.text) == (8 + 6, 134)  # and 20 more as repeat counts
    assert "14 of 134 lines shown, 20 more as repeat counts;" in done.text


def test_a_long_single_line_keeps_its_start_and_end(boundary: Boundary) -> None:
    text = "ValueError: " + "x" * 30_000 + " " + MARKER
    done = boundary.finish(failed(text))
    assert done.text.startswith("ValueError: xxx") and f"{MARKER}\n[error compacted" in done.text
    assert re.search(r"… \(\d+ characters cut\) …", done.text)


def test_errors_below_the_threshold_are_whole(store: Store) -> None:
    """The reference compacts at 4096 bytes and more (``errorCompactionThreshold``)."""
    boundary = Boundary(store, BoundaryConfig())
    assert boundary.config.error_compaction_threshold == 4096
    assert boundary.finish(failed("e" * 4095)).policy_applied == "inline"
    assert boundary.finish(failed("e" * 4096)).policy_applied == "compact"


async def test_a_20_kb_error_arrives_whole_and_its_last_line_is_shown(tmp_path: object) -> None:
    """The worker sends the whole error (it used to cut it to 4,000 characters, losing the
    line that said what failed); the host stores it and compacts it with the handle."""
    code = (
        "lines = ['  File \"job.py\", line ' + str(i) + ', in step' for i in range(600)]\n"
        f"raise RuntimeError('\\n'.join(lines) + '\\n{MARKER}')\n"
    )
    async with Fabric(workspace=tmp_path, limits=Limits(timeout_s=10)) as fab:  # type: ignore[arg-type]
        result = await fab.exec(code)
        assert not result.ok and result.policy_applied == "compact"
        assert result.error is not None and result.error.message.endswith(MARKER)
        assert len(result.error.message) > 20_000
        assert MARKER in result.text.splitlines()[-2]
        assert result.handle is not None
        read = await fab.ctx.read(result.handle, query="PLANTED-FINAL-CAUSE")
        assert MARKER in read.text


async def test_an_error_beyond_the_result_limit_keeps_its_start_and_end(tmp_path: object) -> None:
    limits = Limits(timeout_s=10, max_result_bytes=64 * 1024)  # errors up to 8,192 characters
    code = f"raise ValueError('FIRST ' + 'x' * 50_000 + ' {MARKER}')"
    async with Fabric(workspace=tmp_path, limits=limits) as fab:  # type: ignore[arg-type]
        result = await fab.exec(code)
    assert result.error is not None
    message = result.error.message
    assert message.startswith("FIRST ") and message.endswith(MARKER)
    assert "characters cut here: the message is larger than the result limit allows" in message
    assert len(message) < 8_192 + 200


def test_a_huge_error_is_looked_at_by_its_start_and_end_only(boundary: Boundary) -> None:
    """Compaction reads the first and last MB line by line; the lines between are counted
    and said not looked at (the handle has them), so its cost is bounded."""
    text = "Traceback\n" + "".join(f"step {i} ok\n" for i in range(400_000)) + MARKER
    done = boundary.finish(failed(text))
    assert done.policy_applied == "compact" and done.text.splitlines()[-2] == MARKER
    gap = next(line for line in done.text.splitlines() if line.startswith("…"))
    unseen = int(re.search(r"\((\d+) of them not looked at", gap)[1])  # type: ignore[index]
    assert 0 < unseen < 400_000
    assert shown_count(done.text)[1] == 400_002


def test_the_workers_note_of_a_cut_is_shown(boundary: Boundary) -> None:
    note = "… [123 characters cut here: the message is larger than the result limit allows] …"
    text = "\n".join(
        [
            "ValueError: start",
            *(f"row {i}" for i in range(500)),
            note,
            *(f"row {i}" for i in range(500)),
            MARKER,
        ]
    )
    done = boundary.finish(failed(text))
    assert f"  {note}" in done.text.splitlines()


async def test_a_message_of_lone_surrogates_is_cut_before_it_is_spelled_out(
    tmp_path: object,
) -> None:
    """Spelling out 20 million lone surrogates (6 characters each) would take the worker
    past its memory limit; only what is kept is spelled out."""
    async with Fabric(workspace=tmp_path, limits=Limits(timeout_s=20)) as fab:  # type: ignore[arg-type]
        result = await fab.exec("raise ValueError('\\ud800' * 20_000_000 + 'END')")
        assert result.error is not None and result.error.kind == "runtime"
        assert "characters cut here" in result.error.message
        assert result.error.message.endswith("END")
        assert (await fab.exec("return 2")).value == 2
