"""persistVariables: the top-level plain-data variables of one execution are there in the
next, each execution still in a fresh worker, within persistVariablesMaxBytes, with a note
naming what was dropped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabric import ConfigError, Fabric, Limits

_LIMITS = Limits(timeout_s=10)


async def test_variables_carry_across_three_executions(tmp_path: Path) -> None:
    """Read, rebound, updated in place, closed over by a function, bound by `global` in a
    function: the names behave as the snippet's own; tuples come back as lists."""
    async with Fabric(workspace=tmp_path, persist_variables=True, limits=_LIMITS) as fab:
        one = await fab.exec("count = 1\nrows = ['a']\npair = (1, 2)\nreturn count")
        assert one.ok and one.value == 1 and one.warnings == (), one.text
        two = await fab.exec("count = count + 1\nrows.append('b')\nreturn count, rows")
        assert two.ok and two.value == [2, ["a", "b"]], two.text
        three = await fab.exec(
            "count += 1\ndef seen():\n    return len(rows)\nreturn count, seen(), pair"
        )
        assert three.ok and three.value == [3, 2, [1, 2]], three.text
        four = await fab.exec("def bump():\n    global total\n    total = count * 10\nbump()")
        assert four.ok, four.text
        five = await fab.exec(
            "def again():\n    global total\n    total += 1\nagain()\nreturn total"
        )
        assert five.ok and five.value == 31, five.text  # bound by a function: kept too
        status = fab.status()["variables"]
        assert status["names"] == ["count", "pair", "rows", "total"]
        assert "variables kept: count, pair, rows" in (await fab.ctx.status()).text


async def test_what_is_not_plain_data_or_too_large_is_dropped_with_a_note(tmp_path: Path) -> None:
    """A function, a class instance, NaN and a value past the cap are each named in the
    result's warning with the reason; modules are left out silently; the rest are kept."""
    (tmp_path / ".fabric").mkdir()
    (tmp_path / ".fabric" / "config.json").write_text(
        json.dumps({"persistVariables": True, "persistVariablesMaxBytes": 2048})
    )
    async with Fabric(workspace=tmp_path, limits=_LIMITS) as fab:
        first = await fab.exec(
            "import json\n"
            "class Box:\n"
            "    pass\n"
            "def helper():\n"
            "    return 1\n"
            "box = Box()\n"
            "odd = float('nan')\n"
            "big = 'x' * 5000\n"
            "small = {'k': [1, 2]}\n"
            "return 'ok'"
        )
        assert first.ok, first.text
        (note,) = first.warnings
        assert note.startswith("persistVariables: not kept for the next execution")
        assert "helper (a function, not plain data)" in note
        assert "box (a Box, not plain data)" in note
        assert "Box (a type, not plain data)" in note
        assert "odd (NaN or Infinity, which JSON lacks)" in note
        assert "big (" in note and "persistVariablesMaxBytes (2,048)" in note
        assert "json" not in note.split(":", 1)[1]
        assert "[note: persistVariables" in first.text
        second = await fab.exec("return small, [n for n in ('big', 'helper') if n in repr(small)]")
        assert second.ok and second.value == [{"k": [1, 2]}, []], second.text
        gone = await fab.exec("return big")
        assert not gone.ok and gone.error is not None and gone.error.type == "NameError"


async def test_the_cap_keeps_the_first_that_fit(tmp_path: Path) -> None:
    """Variables are kept in the order the snippet bound them until the cap is reached; each
    one after that which does not fit is dropped."""
    (tmp_path / ".fabric").mkdir()
    (tmp_path / ".fabric" / "config.json").write_text(
        json.dumps({"persistVariables": True, "persistVariablesMaxBytes": 1024})
    )
    async with Fabric(workspace=tmp_path, limits=_LIMITS) as fab:
        done = await fab.exec("a = 'x' * 600\nb = 'y' * 600\nc = 1\nreturn 0")
        assert done.ok, done.text
        assert (
            "b (609 bytes, past persistVariablesMaxBytes (1,024) with the variables kept"
            in (done.warnings[0])
        )
        kept = fab.status()["variables"]
        assert kept["names"] == ["a", "c"] and kept["bytes"] <= 1024


async def test_a_failed_execution_keeps_the_variables_as_they_were(tmp_path: Path) -> None:
    async with Fabric(workspace=tmp_path, persist_variables=True, limits=_LIMITS) as fab:
        assert (await fab.exec("n = 1\nreturn n")).ok
        failed = await fab.exec("n = 50\nm = 2\nraise ValueError('no')")
        assert not failed.ok
        after = await fab.exec("return n")
        assert after.ok and after.value == 1, after.text
        unbound = await fab.exec("return m")
        assert unbound.error is not None and unbound.error.type == "NameError"


async def test_off_by_default_and_each_execution_is_a_fresh_worker(tmp_path: Path) -> None:
    """Without the setting nothing carries over; with it, variables cross as data only (an
    execution's worker is gone when it ends)."""
    async with Fabric(workspace=tmp_path, limits=_LIMITS) as fab:
        assert (await fab.exec("x = 1\nreturn x")).ok
        later = await fab.exec("return x")
        assert not later.ok and later.error is not None and later.error.type == "NameError"
        assert "variables" not in fab.status()
    async with Fabric(workspace=tmp_path, persist_variables=True, limits=_LIMITS) as fab:
        first = await fab.exec("import random\nmark = random.random()\nreturn mark")
        again = await fab.exec("return mark")
        assert again.ok and again.value == first.value
        assert "variables" not in first.model_dump_json()


async def test_the_argument_is_a_bool_or_none(tmp_path: Path) -> None:
    """None lets config.json decide; anything but a bool is refused, naming the argument."""
    with pytest.raises(ConfigError, match="persist_variables must be True, False or None"):
        Fabric(workspace=tmp_path, persist_variables="yes")  # type: ignore[arg-type]
    (tmp_path / ".fabric").mkdir()
    (tmp_path / ".fabric" / "config.json").write_text(json.dumps({"persistVariables": True}))
    async with Fabric(workspace=tmp_path, spares=0) as on:
        assert on.config.persist_variables is True
    async with Fabric(workspace=tmp_path, spares=0, persist_variables=False) as off:
        assert off.config.persist_variables is False
        assert off.sources["persistVariables"] == "argument"
