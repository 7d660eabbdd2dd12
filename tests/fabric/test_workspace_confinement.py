"""Workspace confinement: whatever a snippet names is opened beneath the workspace root,
never through a symlink out, never inside ``.fabric/``, and without a check-then-open race."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric import Fabric, Limits, ProviderCallError
from fabric.providers import Workspace
from runtime import ReadError

SECRET = "TOKEN secret outside"
PRIVATE = [
    ".fabric/events.jsonl",
    ".fabric/store/index.db",
    "./.fabric/config.json",
    "src/../.fabric/x",
    ".fabric",
    "inner",
    "inner/config.json",
]


def _tree(base: Path) -> Path:
    """A workspace under ``base`` with a secret next to it and symlinks of every kind."""
    root = base / "ws"
    (root / "src").mkdir(parents=True)
    (root / "a.txt").write_text("TOKEN inside\n")
    (root / "src" / "app.py").write_text("print('TOKEN app')\n")
    (root / ".fabric").mkdir()
    (root / ".fabric" / "config.json").write_text("{}")
    (root / ".fabric" / "notes.txt").write_text("TOKEN private\n")
    (base / "secret.txt").write_text(SECRET + "\n")
    (base / "outdir").mkdir()
    os.symlink(base / "secret.txt", root / "out.txt")
    os.symlink(base / "outdir", root / "outdir")
    os.symlink("a.txt", root / "alias.txt")
    os.symlink(".fabric", root / "inner")
    os.symlink("..", root / "src" / "up")
    os.symlink("loop", root / "loop")
    os.mkfifo(root / "pipe")
    return root


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tree(tmp_path_factory.mktemp("confined"))


@pytest.fixture(scope="module")
async def fab(root: Path) -> AsyncIterator[Fabric]:
    async with Fabric(workspace=root, limits=Limits(timeout_s=30)) as session:
        await session.exec("return 1")  # writes .fabric/events.jsonl and the store index
        yield session


async def _error_code(fab: Fabric, call: str) -> str | None:
    """The ToolError code of one provider call in a snippet, None when it succeeded."""
    done = await fab.exec(
        f"try:\n    await {call}\nexcept ToolError as e:\n    return e.code\nreturn None"
    )
    assert done.ok, done.text
    value: str | None = done.value
    return value


async def _value(fab: Fabric, call: str) -> Any:
    done = await fab.exec(f"return await {call}")
    assert done.ok, done.text
    return done.value


@pytest.mark.parametrize("path", PRIVATE)
async def test_tools_read_refuses_the_store(fab: Fabric, path: str) -> None:
    """tools.read of anything in .fabric/, however it is named, is fabric_private."""
    assert await _error_code(fab, f"tools.read(path={path!r})") == "fabric_private"


@pytest.mark.parametrize("path", PRIVATE)
async def test_ctx_read_refuses_the_store(fab: Fabric, path: str) -> None:
    """ctx.read of a .fabric/ path, in a snippet and from the host, is fabric_private."""
    assert await _error_code(fab, f"ctx.read({path!r})") == "fabric_private"
    with pytest.raises(ReadError) as info:
        fab.context.read(path)
    assert info.value.code == "fabric_private"
    assert "ctx.read(handle)" in info.value.message


@pytest.mark.parametrize("path", PRIVATE)
async def test_ls_and_grep_refuse_the_store_as_a_path(fab: Fabric, path: str) -> None:
    """tools.ls and tools.grep given a .fabric/ path refuse it with fabric_private."""
    assert await _error_code(fab, f"tools.ls(path={path!r})") == "fabric_private"
    assert await _error_code(fab, f"tools.grep('TOKEN', path={path!r})") == "fabric_private"


async def test_ls_and_grep_of_the_root_never_show_the_store(fab: Fabric) -> None:
    """Listing and searching the workspace leave .fabric/ out, at every depth."""
    flat = await _value(fab, 'tools.ls(path=".")')
    deep = await _value(fab, 'tools.ls(path=".", recursive=True)')
    hits = await _value(fab, 'tools.grep("TOKEN", path=".")')
    names = [e["name"] for e in [*flat, *deep]] + [h["path"] for h in hits]
    assert names and not any(n == ".fabric" or n.startswith(".fabric/") for n in names)
    assert "TOKEN private" not in json.dumps(hits)


async def test_a_symlink_out_is_refused_by_read(fab: Fabric) -> None:
    """tools.read and ctx.read of a symlink to a file outside are outside_workspace."""
    assert await _error_code(fab, 'tools.read(path="out.txt")') == "outside_workspace"
    assert await _error_code(fab, 'ctx.read("out.txt")') == "outside_workspace"
    with pytest.raises(ReadError) as info:
        fab.context.read("out.txt")
    assert info.value.code == "outside_workspace"


async def test_grep_never_reads_through_a_symlink_out(fab: Fabric) -> None:
    """grep of the workspace skips the symlink to an outside file and finds inside lines."""
    hits = await _value(fab, 'tools.grep("TOKEN", path=".")')
    assert {h["path"] for h in hits} == {"a.txt", "src/app.py"}
    assert SECRET not in json.dumps(hits)


async def test_ls_shows_symlinks_without_following_them(fab: Fabric) -> None:
    """tools.ls reports every symlink as a symlink, recursive or not."""
    flat = {e["name"]: e for e in await _value(fab, 'tools.ls(path=".")')}
    deep = {e["name"]: e for e in await _value(fab, 'tools.ls(path=".", recursive=True)')}
    for name in ("out.txt", "outdir", "alias.txt", "inner", "loop"):
        assert flat[name] == {"name": name, "type": "symlink", "size": 0}
        assert deep[name] == flat[name]
    assert deep["src/up"]["type"] == "symlink"
    assert not any(n.startswith(("outdir/", "src/up/", "inner/")) for n in deep)


async def test_a_symlink_that_stays_inside_still_reads(fab: Fabric) -> None:
    """A symlink to another workspace file reads, through tools.read and ctx.read."""
    assert await _value(fab, 'tools.read(path="alias.txt")') == "TOKEN inside\n"
    found = await _value(fab, 'ctx.read("alias.txt")')
    assert found["content"] == "TOKEN inside\n"


@pytest.mark.parametrize(
    "path,code",
    [("/etc/passwd", "outside_workspace"), ("../secret.txt", "outside_workspace"),
     ("src/up/../secret.txt", "outside_workspace"), ("outdir/x", "outside_workspace"),
     ("missing.txt", "not_found"), ("src", "is_directory"), ("loop", "bad_path"),
     ("pipe", "not_found")],
)  # fmt: skip
async def test_other_refusals_keep_their_codes(fab: Fabric, path: str, code: str) -> None:
    """Escapes, missing files, folders, symlink loops and FIFOs (never opened, so never
    blocking) each get their own code."""
    assert await _error_code(fab, f"tools.read(path={path!r})") == code


async def test_an_absolute_path_inside_the_workspace_reads(fab: Fabric, root: Path) -> None:
    """An absolute path naming a workspace file is read like its relative form."""
    path = str(root.resolve() / "src" / "app.py")
    assert await _value(fab, f"tools.read(path={path!r})") == "print('TOKEN app')\n"


SWAPS: list[int] = [0]
"""How many times the swapping thread has replaced race.txt so far."""


def _swap(stop: threading.Event, target: Path, secret: Path) -> None:
    """Until ``stop``: replace ``target`` by an inside file, then by a symlink to ``secret``."""
    turn = 0
    while not stop.is_set():
        temp = target.with_name(f".swap-{turn % 2}")
        if turn % 2:
            os.symlink(secret, temp)
        else:
            temp.write_text("inside\n")
        os.replace(temp, target)
        turn += 1
        SWAPS[0] = turn


@pytest.fixture
def swapping(tmp_path: Path) -> Iterator[Path]:
    """A workspace whose race.txt keeps flipping between a file and a symlink out."""
    root = tmp_path / "ws"
    root.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    (root / "race.txt").write_text("inside\n")
    stop = threading.Event()
    thread = threading.Thread(target=_swap, args=(stop, root / "race.txt", secret))
    thread.start()
    try:
        yield root
    finally:
        stop.set()
        thread.join()


RACE_SNIPPET = """
seen = []
for _ in range(300):
    try:
        seen.append(await tools.read(path="race.txt"))
    except ToolError as e:
        seen.append("error " + e.code)
return seen
"""


async def test_a_path_swapped_to_a_symlink_never_reads_the_secret(swapping: Path) -> None:
    """300 reads while race.txt flips to a symlink out: each is the inside text or a refusal."""
    async with Fabric(workspace=swapping, limits=Limits(timeout_s=60)) as fab:
        before = SWAPS[0]
        done = await fab.exec(RACE_SNIPPET)
        by_host = [_host_read(fab) for _ in range(300)]
        after = SWAPS[0]
    assert after > before, "the path was not being swapped while it was read"
    assert done.ok, done.text
    assert len(done.value) == 300
    assert set(done.value) <= {"inside\n", "error outside_workspace"}
    assert set(by_host) <= {"inside\n", "error outside_workspace"}


def _host_read(fab: Fabric) -> str:
    try:
        return fab.context.read("race.txt").content or ""
    except ReadError as exc:
        return f"error {exc.code}"


SEGMENTS = [
    "..", ".", "", ".fabric", "a", "b", "src", "a.txt", "config.json", "notes.txt",
    "inner", "out.txt", "outdir", "alias.txt", "up", "loop",
]  # fmt: skip
REFUSAL_CODES = {
    "outside_workspace",
    "fabric_private",
    "symlink_refused",
    "not_found",
    "bad_path",
}


def _assert_confined(workspace: Workspace, path: str) -> None:
    """``path`` is refused, or opens something inside the workspace and outside .fabric."""
    try:
        opened = workspace.open(path)
    except ProviderCallError as exc:
        assert exc.code in REFUSAL_CODES, (path, exc.code, exc.message)
        return
    with opened:
        real = os.readlink(f"/proc/self/fd/{opened.fd}")
    root = str(workspace.root)
    assert real == root or real.startswith(root + "/"), (path, real)
    assert not (real + "/").startswith(f"{root}/.fabric/"), (path, real)
    assert ".fabric" not in opened.name.split("/"), (path, opened.name)


@pytest.fixture(scope="module")
def resolver_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = _tree(tmp_path_factory.mktemp("resolver"))
    (root / "a").mkdir()
    (root / "a" / "b").mkdir()
    os.symlink("../..", root / "a" / "up")
    return root


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=8))
def test_any_relative_path_stays_confined(resolver_root: Path, parts: list[str]) -> None:
    """Random paths of '..', '.', '//', .fabric and symlinks never open outside or the store."""
    _assert_confined(Workspace(resolver_root), "/".join(parts))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=8))
def test_any_relative_path_stays_confined_without_openat2(
    resolver_root: Path, parts: list[str]
) -> None:
    """The same holds for the component walk used on kernels without openat2."""
    with mock.patch("fabric.providers._paths._openat2_works", return_value=False):
        _assert_confined(Workspace(resolver_root), "/".join(parts))


@pytest.fixture
def no_openat2() -> Iterator[None]:
    """Resolve as on a kernel without openat2: the component walk."""
    with mock.patch("fabric.providers._paths._openat2_works", return_value=False):
        yield


@pytest.mark.parametrize(
    "path,code",
    [("alias.txt", "symlink_refused"), ("inner/config.json", "symlink_refused"),
     ("out.txt", "symlink_refused"), ("src/up/a.txt", "symlink_refused"),
     (".fabric/notes.txt", "fabric_private"), ("src/../.fabric", "fabric_private"),
     ("../secret.txt", "outside_workspace"), ("a.txt/x", "not_found")],
)  # fmt: skip
@pytest.mark.usefixtures("no_openat2")
def test_without_openat2_every_symlink_is_refused(root: Path, path: str, code: str) -> None:
    """The fallback walk refuses symlinks by name and still refuses escapes and the store."""
    with pytest.raises(ProviderCallError) as info:
        Workspace(root).open(path)
    assert info.value.code == code
    if code == "symlink_refused":
        assert "symlink" in info.value.message


@pytest.mark.parametrize("path,name", [("src/../a.txt", "a.txt"), (".", "."), ("src/", "src")])
@pytest.mark.usefixtures("no_openat2")
def test_without_openat2_plain_paths_open(root: Path, path: str, name: str) -> None:
    """The fallback walk opens plain paths and names them from the root."""
    with Workspace(root).open(path) as opened:
        assert opened.name == name
