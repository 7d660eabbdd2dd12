"""tools.write, tools.edit, tools.read_json and tools.glob: changing and finding workspace files."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabric import Fabric, ProviderCallError, ProviderRegistry
from fabric.providers import Workspace, register_file_tools


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".fabric").mkdir()
    (ws / ".fabric" / "config.json").write_text("{}")
    (ws / "src").mkdir()
    (ws / "src" / "app.py").write_text("def main():\n    return 1\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("untouched")
    os.symlink(outside, ws / "out")
    os.symlink(outside / "victim.txt", ws / "victim.txt")
    os.symlink("src/app.py", ws / "inner.py")
    os.symlink(".fabric", ws / "store")
    return ws


@pytest.fixture
def tools(root: Path) -> ProviderRegistry:
    registry = ProviderRegistry()
    register_file_tools(registry, Workspace(root))
    return registry


async def call(tools: ProviderRegistry, name: str, **arguments: object) -> object:
    return await tools.call("tools", name, dict(arguments))


async def refused(tools: ProviderRegistry, name: str, **arguments: object) -> ProviderCallError:
    with pytest.raises(ProviderCallError) as info:
        await call(tools, name, **arguments)
    return info.value


# -- write -----------------------------------------------------------------------------------


async def test_write_creates_a_file_and_its_folders(tools: ProviderRegistry, root: Path) -> None:
    """A new file is made with the folders it needs and reported as created."""
    got = await call(tools, "write", path="docs/guide/intro.md", content="# Hi\n")
    assert got == {"ok": True, "path": "docs/guide/intro.md", "bytes": 5, "created": True}
    assert (root / "docs/guide/intro.md").read_text() == "# Hi\n"


async def test_write_replaces_and_keeps_the_mode(tools: ProviderRegistry, root: Path) -> None:
    """Overwriting keeps the file's mode and reports created=False."""
    script = root / "run.sh"
    script.write_text("old")
    script.chmod(0o751)
    got = await call(tools, "write", path="run.sh", content="#!/bin/sh\n")
    assert got == {"ok": True, "path": "run.sh", "bytes": 10, "created": False}
    assert script.read_bytes() == b"#!/bin/sh\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o751


async def test_write_through_a_symlink_inside_writes_its_target(
    tools: ProviderRegistry, root: Path
) -> None:
    """A symlink that stays in the workspace is written through, as an editor would."""
    got = await call(tools, "write", path="inner.py", content="x = 1\n")
    assert got["path"] == "src/app.py"  # type: ignore[index]
    assert (root / "src/app.py").read_text() == "x = 1\n"
    assert (root / "inner.py").is_symlink()


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("victim.txt", "outside_workspace"),
        ("out/new.txt", "outside_workspace"),
        ("../escape.txt", "outside_workspace"),
        ("/etc/fabric-test", "outside_workspace"),
        ("src/../../escape.txt", "outside_workspace"),
        (".fabric/config.json", "fabric_private"),
        (".fabric/new.json", "fabric_private"),
        (".fabric", "fabric_private"),
        ("store/config.json", "fabric_private"),
        ("sub/.fabric/x", "fabric_private"),
        ("src", "is_directory"),
        ("src/", "is_directory"),
        ("src/app.py/x", "not_found"),
        ("new/../../x", "bad_path"),
    ],
)
async def test_write_refuses_what_is_not_a_workspace_file(
    tools: ProviderRegistry, root: Path, path: str, code: str
) -> None:
    """Symlinks out, '..' above the root, absolute paths, .fabric and folders are refused."""
    error = await refused(tools, "write", path=path, content="x")
    assert error.code == code, error.message
    assert (root.parent / "outside" / "victim.txt").read_text() == "untouched"
    assert not (root.parent / "outside" / "new.txt").exists()
    assert not (root.parent / "escape.txt").exists()
    assert json.loads((root / ".fabric" / "config.json").read_text()) == {}
    assert not (root / "sub").exists() and not (root / "new").exists()


async def test_write_is_size_capped(tools: ProviderRegistry, root: Path) -> None:
    """Content above 16 MiB is refused before anything is written."""
    error = await refused(tools, "write", path="big.bin", content="x" * (16 * 1024 * 1024 + 1))
    assert error.code == "too_large" and "16777216-byte" in error.message
    assert not (root / "big.bin").exists()


async def test_write_leaves_no_temporary_file(tools: ProviderRegistry, root: Path) -> None:
    """The temporary file is renamed over the target: only the target is left."""
    await call(tools, "write", path="src/app.py", content="y = 2\n")
    assert sorted(p.name for p in (root / "src").iterdir()) == ["app.py"]


# -- edit ------------------------------------------------------------------------------------


async def test_edit_with_one_match_returns_a_diff(tools: ProviderRegistry, root: Path) -> None:
    """One match is replaced; the result carries a unified diff of the change."""
    (root / "src/app.py").chmod(0o640)
    got = await call(tools, "edit", path="src/app.py", old="return 1", new="return 2")
    assert got == {
        "ok": True,
        "path": "src/app.py",
        "replacements": 1,
        "diff": (
            "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,2 @@\n def main():\n"
            "-    return 1\n+    return 2\n"
        ),
    }
    assert (root / "src/app.py").read_text() == "def main():\n    return 2\n"
    assert stat.S_IMODE((root / "src/app.py").stat().st_mode) == 0o640


async def test_edit_with_zero_matches_says_where_the_nearest_is(
    tools: ProviderRegistry, root: Path
) -> None:
    """No match changes nothing and points at the closest line."""
    error = await refused(tools, "edit", path="src/app.py", old="retrun 1", new="return 2")
    assert error.code == "no_match"
    assert "line 2" in error.message and "'    return 1'" in error.message
    assert (root / "src/app.py").read_text() == "def main():\n    return 1\n"


async def test_edit_with_two_matches_refuses_and_counts(
    tools: ProviderRegistry, root: Path
) -> None:
    """More matches than count changes nothing and says how many; count=2 replaces both."""
    (root / "twice.txt").write_text("a = 1\nb = 1\n")
    error = await refused(tools, "edit", path="twice.txt", old="= 1", new="= 2")
    assert error.code == "ambiguous_match" and "occurs 2 times" in error.message
    assert "count=2" in error.message
    assert (root / "twice.txt").read_text() == "a = 1\nb = 1\n"
    fewer = await refused(tools, "edit", path="twice.txt", old="= 1", new="= 2", count=3)
    assert fewer.code == "match_count" and "pass count=2" in fewer.message
    got = await call(tools, "edit", path="twice.txt", old="= 1", new="= 2", count=2)
    assert got["replacements"] == 2  # type: ignore[index]
    assert (root / "twice.txt").read_text() == "a = 2\nb = 2\n"


async def test_edit_points_at_crlf_line_endings(tools: ProviderRegistry, root: Path) -> None:
    """An old text with \\n that the file has as \\r\\n is explained."""
    (root / "dos.txt").write_bytes(b"one\r\ntwo\r\n")
    error = await refused(tools, "edit", path="dos.txt", old="one\ntwo", new="x")
    assert error.code == "no_match" and "CRLF" in error.message


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"path": "src/app.py", "old": "", "new": "x"}, "bad_arguments"),
        ({"path": "src/app.py", "old": "main", "new": "main"}, "no_change"),
        ({"path": "src/app.py", "old": "main", "new": "x", "count": 0}, "bad_arguments"),
        ({"path": "missing.py", "old": "a", "new": "b"}, "not_found"),
        ({"path": "victim.txt", "old": "untouched", "new": "b"}, "outside_workspace"),
        ({"path": ".fabric/config.json", "old": "{}", "new": "[]"}, "fabric_private"),
        ({"path": "bin.dat", "old": "a", "new": "b"}, "not_text"),
        ({"path": "src", "old": "a", "new": "b"}, "is_directory"),
    ],
)
async def test_edit_refusals(
    tools: ProviderRegistry, root: Path, arguments: dict[str, object], code: str
) -> None:
    """Each bad edit fails with its code and changes nothing."""
    (root / "bin.dat").write_bytes(b"\xff\xfea")
    with pytest.raises(ProviderCallError) as info:
        await tools.call("tools", "edit", arguments)
    assert info.value.code == code, info.value.message
    assert (root.parent / "outside" / "victim.txt").read_text() == "untouched"
    assert (root / ".fabric" / "config.json").read_text() == "{}"


async def test_an_edit_that_would_grow_past_the_limit_is_refused_before_it_is_made(
    tools: ProviderRegistry, root: Path
) -> None:
    """100 replacements of one byte by 10 MB would make a 1 GB file: refused from the sizes
    alone, before any of that text is built, and the file is left as it was."""
    (root / "amp.txt").write_text("a" * 100)
    with pytest.raises(ProviderCallError) as info:
        await tools.call(
            "tools", "edit", {"path": "amp.txt", "old": "a", "new": "x" * 10_000_000, "count": 100}
        )
    assert info.value.code == "too_large"
    assert "would make 'amp.txt' 1000000000 bytes" in info.value.message
    assert (root / "amp.txt").read_text() == "a" * 100


async def test_the_diff_of_a_large_file_shows_the_file_line_numbers(
    tools: ProviderRegistry, root: Path
) -> None:
    """Only the changed span is compared, yet hunks carry the file's own line numbers."""
    lines = [f"line {n}\n" for n in range(1, 5001)]
    (root / "long.txt").write_text("".join(lines))
    got = await call(tools, "edit", path="long.txt", old="line 4000\n", new="LINE 4000\n")
    diff = got["diff"]  # type: ignore[index]
    assert "@@ -3997,7 +3997,7 @@" in diff
    assert "-line 4000\n+LINE 4000\n" in diff


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    before=st.text(st.sampled_from("ab\n x"), max_size=40),
    old=st.text(st.sampled_from("ab\n x"), min_size=1, max_size=4),
    new=st.text(st.sampled_from("cd\n "), max_size=4),
)
async def test_edit_agrees_with_str_replace_and_its_diff_applies(
    tmp_path: Path, before: str, old: str, new: str
) -> None:
    """Whatever the text: a unique match gives str.replace's result, and the diff applied to
    the old text gives the new one; any other count changes nothing."""
    ws = tmp_path / "prop"
    ws.mkdir(exist_ok=True)
    registry = ProviderRegistry()
    register_file_tools(registry, Workspace(ws))
    (ws / "f.txt").write_bytes(before.encode())
    found = before.count(old)
    if found != 1 or old == new:
        with pytest.raises(ProviderCallError):
            await registry.call("tools", "edit", {"path": "f.txt", "old": old, "new": new})
        assert (ws / "f.txt").read_bytes().decode() == before
        return
    got = await registry.call("tools", "edit", {"path": "f.txt", "old": old, "new": new})
    after = before.replace(old, new)
    assert (ws / "f.txt").read_bytes().decode() == after
    assert _apply(before, got["diff"]) == after


def _apply(before: str, diff: str) -> str:
    """A unified diff applied to ``before`` (a small patch(1) for the test)."""
    old = before.splitlines(keepends=True)
    out: list[str] = []
    at = 0
    lines = diff.splitlines(keepends=True)[2:]
    i = 0
    while i < len(lines):
        header = lines[i]
        assert header.startswith("@@")
        start = int(header.split()[1].lstrip("-").split(",")[0])
        length = header.split()[1].split(",")
        begin = start - 1 if len(length) == 1 or length[1] != "0" else start
        out += old[at:begin]
        at = begin
        i += 1
        kind = " "
        while i < len(lines) and not lines[i].startswith("@@"):
            line = lines[i]
            if line.startswith("\\"):  # the line before has no newline at the end
                if kind in " +":
                    out[-1] = out[-1].removesuffix("\n")
                i += 1
                continue
            kind, body = line[0], line[1:]
            if kind in " -":
                at += 1
            if kind in " +":
                out.append(body)
            i += 1
    return "".join(out + old[at:])


# -- read_json -------------------------------------------------------------------------------


async def test_read_json_parses(tools: ProviderRegistry, root: Path) -> None:
    """A JSON file comes back as plain data."""
    (root / "data.json").write_text('{"a": [1, 2, {"b": null}]}')
    assert await call(tools, "read_json", path="data.json") == {"a": [1, 2, {"b": None}]}


async def test_read_json_names_line_and_column(tools: ProviderRegistry, root: Path) -> None:
    """A syntax error says where it is."""
    (root / "bad.json").write_text('{\n  "a": 1,\n  "b": ,\n}')
    error = await refused(tools, "read_json", path="bad.json")
    assert error.code == "not_json"
    assert "line 3, column 8" in error.message


async def test_read_json_is_confined(tools: ProviderRegistry) -> None:
    """read_json refuses .fabric and symlinks out like every workspace tool."""
    assert (await refused(tools, "read_json", path=".fabric/config.json")).code == "fabric_private"
    assert (await refused(tools, "read_json", path="victim.txt")).code == "outside_workspace"


# -- glob ------------------------------------------------------------------------------------


@pytest.fixture
def tree(root: Path) -> Path:
    for name in [
        "README.md",
        "src/util.py",
        "src/pkg/deep.py",
        "docs/a.md",
        ".git/HEAD",
        "node_modules/x/index.js",
        ".hidden.py",
        "src/.fabric/x.py",
    ]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x")
    return root


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*.md", ".", ["README.md"]),
        ("**/*.md", ".", ["README.md", "docs/a.md"]),
        (
            "**/*.py",
            ".",
            [".hidden.py", "inner.py", "src/app.py", "src/pkg/deep.py", "src/util.py"],
        ),
        ("src/*.py", ".", ["src/app.py", "src/util.py"]),
        ("src/**", ".", ["src", "src/app.py", "src/pkg", "src/pkg/deep.py", "src/util.py"]),
        ("*.py", "src", ["src/app.py", "src/util.py"]),
        ("src/p?g/[a-d]*.py", ".", ["src/pkg/deep.py"]),
        ("src/[!a]*.py", ".", ["src/util.py"]),
        ("node_modules/**/*.js", ".", ["node_modules/x/index.js"]),
        ("**/*.js", ".", []),
        ("**/HEAD", ".", []),
        (".git/*", ".", [".git/HEAD"]),
        ("nothere/*.py", ".", []),
        ("out*", ".", ["out"]),
        ("store", ".", ["store"]),
        ("**/x.py", ".", []),
    ],
)
async def test_glob_matches_sorted_without_the_store(
    tools: ProviderRegistry, tree: Path, pattern: str, path: str, expected: list[str]
) -> None:
    """Sorted root-relative paths; .fabric never shows; symlinks are listed, never entered;
    skipped folders are entered only when named."""
    assert await call(tools, "glob", pattern=pattern, path=path) == expected


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"pattern": "/etc/*"}, "bad_arguments"),
        ({"pattern": "../*"}, "bad_arguments"),
        ({"pattern": ""}, "bad_arguments"),
        ({"pattern": "*", "path": "out"}, "outside_workspace"),
        ({"pattern": "out/*"}, "outside_workspace"),
        ({"pattern": "*", "path": ".fabric"}, "fabric_private"),
        ({"pattern": "*", "path": "README.md"}, "not_found"),
        ({"pattern": "*", "max_results": 0}, "bad_arguments"),
        ({"pattern": "**", "max_results": 2}, "too_many"),
    ],
)
async def test_glob_refusals(
    tools: ProviderRegistry, tree: Path, arguments: dict[str, object], code: str
) -> None:
    """Absolute or '..' patterns, paths out of bounds and too many results are refused."""
    with pytest.raises(ProviderCallError) as info:
        await tools.call("tools", "glob", arguments)
    assert info.value.code == code, info.value.message


async def test_a_session_registers_the_writing_tools(tmp_path: Path) -> None:
    """A snippet writes, edits and globs through its session."""
    async with Fabric(workspace=tmp_path) as fab:
        result = await fab.exec(
            "await tools.write(path='n/a.txt', content='one two')\n"
            "d = await tools.edit(path='n/a.txt', old='two', new='three')\n"
            "return [await tools.glob(pattern='**/*.txt'), d['replacements'], "
            "await tools.read(path='n/a.txt')]"
        )
    assert result.value == [["n/a.txt"], 1, "one three"]


async def test_a_huge_diff_is_cut_to_the_declared_bound(
    tools: ProviderRegistry, root: Path
) -> None:
    """The diff stays within the 8 KiB the analyzer's effects table declares for tools.edit;
    the file itself is changed whole."""
    from analyzer import EffectsTable

    (root / "wide.txt").write_text("a\n" * 20_000)
    got = await call(tools, "edit", path="wide.txt", old="a\n" * 20_000, new="b\n" * 20_000)
    row = EffectsTable.default().lookup("tools.edit")
    assert row is not None and row.unit == "bytes" and row.default_bound is not None
    assert len(got["diff"].encode()) <= row.default_bound  # type: ignore[index]
    assert "diff cut" in got["diff"]  # type: ignore[index]
    assert (root / "wide.txt").read_text() == "b\n" * 20_000


async def test_text_that_is_not_unicode_is_refused(tools: ProviderRegistry, root: Path) -> None:
    """A lone surrogate cannot be written as UTF-8: a clear refusal, nothing written."""
    error = await refused(tools, "write", path="s.txt", content="a\udcffb")
    assert error.code == "bad_arguments" and "content" in error.message
    assert not (root / "s.txt").exists()


NAMES = ["a", "ab", "b.py", ".h"]


@pytest.fixture(scope="module")
def plain_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three levels of folders and files, dot names among them; no symlink, store or
    skipped folder, where tools.glob means to differ from Python's glob."""
    root = tmp_path_factory.mktemp("globs")
    for first in NAMES:
        (root / first).mkdir()
        for second in NAMES:
            if second.endswith(".py"):
                (root / first / second).write_text("x")
                continue
            (root / first / second).mkdir()
            for third in ("x.py", "y.txt", ".z"):
                (root / first / second / third).write_text("x")
    (root / "top.py").write_text("x")
    return root


COMPONENTS = st.sampled_from(
    ["*", "**", "?", "a", "ab", "*.py", "[ab]*", "[!a]*", "?.py", ".*", "x.py", "*b", "[.]h"]
)


@settings(max_examples=150, deadline=None)
@given(parts=st.lists(COMPONENTS, min_size=1, max_size=4))
async def test_glob_agrees_with_pythons_glob(plain_tree: Path, parts: list[str]) -> None:
    """On a plain tree, tools.glob finds what glob.glob(recursive=True, include_hidden=True)
    finds, without its duplicates."""
    import glob as python_glob

    pattern = "/".join(parts)
    registry = ProviderRegistry()
    register_file_tools(registry, Workspace(plain_tree))
    found = python_glob.glob(pattern, root_dir=plain_tree, recursive=True, include_hidden=True)
    # Python 3.11's glob names a literal before "**" that is no folder ("x.py/", missing or a
    # file): such a name with its "/" does not exist
    existing = {n.rstrip("/") for n in found if os.path.exists(os.path.join(plain_tree, n))}
    expected = sorted(existing - {""})
    assert await registry.call("tools", "glob", {"pattern": pattern, "max_results": 10_000}) == (
        expected
    )
