"""The kernel layer holds on its own: probes run inside real workers with the language layer
bypassed, each kernel layer alone, fail-closed behaviour, and a host that is not root."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from runtime import DoctorReport, NoProviders, ProviderHost, Sandbox
from runtime._pool import boot_argv, boot_path
from runtime.worker import PROBES

NO_PROVIDERS: ProviderHost = NoProviders()


def denials(report: DoctorReport) -> dict[str, str]:
    """Probe name -> detail, for every probe the worker was NOT denied."""
    return {p.name: p.detail for p in report.probes if not p.denied}


async def doctor(tmp_path: Path, **kwargs: object) -> DoctorReport:
    store_file = tmp_path / ".fabric" / "store" / "blob"
    store_file.parent.mkdir(parents=True)
    store_file.write_text("stored\n")
    async with Sandbox(spares=0, **kwargs) as sandbox:  # type: ignore[arg-type]
        return await sandbox.doctor(workspace=tmp_path, store_file=store_file)


async def test_every_probe_is_denied_with_every_layer_on(tmp_path: Path) -> None:
    """With full isolation, nothing a worker tries against the host works."""
    report = await doctor(tmp_path)
    assert [p.name for p in report.probes] == list(PROBES)
    assert denials(report) == {}
    assert report.ok
    active = {layer.name for layer in report.layers if layer.active}
    assert {"seccomp", "landlock", "no_new_privs", "rlimits", "environment"} <= active
    seccomp = next(layer for layer in report.layers if layer.name == "seccomp")
    assert "EPERM" in seccomp.detail and "BPF instructions" in seccomp.detail
    interpreter = next(layer for layer in report.layers if layer.name == "interpreter")
    assert interpreter.detail.startswith(f"CPython {sys.version.split()[0]}")
    assert ("gh-120298" in interpreter.detail) is (sys.version_info < (3, 12, 5))


_INTERPRETER_PROBE = (
    "from runtime.worker import _probes, _repairs\n"
    "if sys.argv[3] == 'repaired':\n    _repairs.repair()\n"
    "print(_probes.run(sys.argv[2], None)['denied'])"
)


@pytest.mark.skipif(sys.version_info >= (3, 12, 5), reason="this CPython has the list fix")
@pytest.mark.parametrize("probe", ["list_order", "bytearray_reads"])
@pytest.mark.parametrize("interpreter", ["as shipped", "repaired"])
def test_the_interpreter_probes_tell_a_repaired_interpreter_from_one_that_is_not(
    probe: str, interpreter: str
) -> None:
    """gh-120298: CPython 3.11's ``list < list`` compares items it holds no reference to;
    gh-142557 and kin: bytearray methods read their buffer after the snippet's ``__index__``
    emptied it. Each probe sees its bug, without touching freed memory (or by a read of a block
    just freed), in an interpreter as shipped (this test's own child process) and sees it
    repaired once the worker's repairs ran."""
    state = interpreter.split()[0]
    done = subprocess.run(
        boot_argv(_INTERPRETER_PROBE, probe, state),
        cwd=Path(__file__).parents[2],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == str(interpreter == "repaired")


_EARLY_CACHES = {
    "functools imported first": "import functools\n",
    "a cache made through the C wrapper first": (
        "import _functools\nearly = _functools._lru_cache_wrapper(len, 2, False, tuple)\n"
        "del _functools._lru_cache_wrapper\n"
    ),
}


@pytest.mark.parametrize("early", _EARLY_CACHES)
def test_an_interpreter_caching_through_the_c_lru_cache_refuses_to_start(early: str) -> None:
    """gh-94879 (open in 3.11): the C lru_cache uses the link it evicts after a key's
    ``__eq__`` emptied the cache and freed it. The zygote's boot line removes it before
    functools is imported; an interpreter where functools still caches through it, or where
    a cache was made through it before, fails the repairs instead of running snippets."""
    program = (
        "import os, sys\nsys.path[:0] = sys.argv[1].split(os.pathsep)\n"
        + _EARLY_CACHES[early]
        + "from runtime.worker import _repairs\ntry:\n    _repairs.repair()\n"
        "except _repairs.RepairError as e:\n    print(e)\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", program, boot_path()],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.startswith("gh-94879: "), done.stdout + done.stderr


_FRONT_DELETED = (
    "made = []\ndef items():\n    made[0].extend(b'A' * 150)\n    del made[0][:60]\n"
    "    yield from [0x42] * 400\nclass B(bytearray):\n    def __init__(self):\n"
    "        made.append(self)\n        super().__init__(items())\nb = B()\ndel made, b\n"
    "print('made')\n"
)


@pytest.mark.parametrize("interpreter", ["as shipped", "repaired"])
def test_bytearray_of_an_iterable_writes_inside_its_buffer(interpreter: str) -> None:
    """CPython appends ``bytearray(iterable)``'s items in place while ``size + 1 < alloc``,
    forgetting that ``del b[:k]`` moved the data's start into the block: an iterable that
    deletes from the front has it write past the buffer. CPython's debug allocator sees the
    bytes written past the block in an interpreter as shipped (it aborts), and none once the
    worker's repair ran."""
    repair = "from runtime.worker import _repairs\n_repairs.repair_bytearray_init()\n"
    program = (repair if interpreter == "repaired" else "") + _FRONT_DELETED
    done = subprocess.run(
        boot_argv(program, options=("-X", "dev")),
        capture_output=True,
        text=True,
    )
    if interpreter == "repaired":
        assert done.returncode == 0 and done.stdout == "made\n", done.stderr
    else:
        assert done.returncode != 0 and "bad trailing pad byte" in done.stderr, done.stderr


_SEALING_PROBE = (
    "import sys\nfrom runtime.worker import _probes, _sealed\n"
    "from runtime.worker._modules import build_facades, facade_members\n"
    "facades = build_facades()\n"
    "if sys.argv[1] == 'sealed':\n    _sealed.seal(facade_members(facades))\n"
    "print(_probes.run('sandbox_classes', None)['denied'])\n"
    "import json\ntry:\n    type(facades['json']).extra = 1\nexcept TypeError as e:\n"
    "    print(e)\nelse:\n    print('written')\n"
    "from runtime.worker._guards import FINAL_CLASSES\nfrom runtime.worker._values import GuardedSlot\n"
    "from runtime.worker._vetted import Deque\n"
    "print(GuardedSlot in FINAL_CLASSES, Deque in FINAL_CLASSES)"
)


@pytest.mark.parametrize("zygote", ["as built", "sealed"])
def test_the_sandbox_classes_probe_tells_a_sealed_zygote_from_one_that_is_not(
    zygote: str,
) -> None:
    """The real ``setattr`` (as the standard library's own code calls it) writes to the
    sandbox's classes until the zygote seals them; then it is refused as for a class CPython
    defines in C, and the probe says so. Sealing also makes the sandbox's own classes final to
    class statements, and leaves the classes a facade hands out to subclass."""
    done = subprocess.run(
        [sys.executable, "-I", "-c", _SEALING_PROBE, zygote.split()[-1]],
        cwd=Path(__file__).parents[2],
        capture_output=True,
        text=True,
        check=True,
    )
    denied, written, final = done.stdout.splitlines()
    assert denied == str(zygote == "sealed")
    if zygote == "sealed":
        assert written == "cannot set 'extra' attribute of immutable type 'Facade'"
        assert final == "True False"  # the sandbox's own classes are final, a facade's are not
    else:
        assert written == "written"


async def test_seccomp_alone_denies_every_probe(tmp_path: Path) -> None:
    """Switch Landlock and the namespaces off: seccomp still denies everything."""
    report = await doctor(tmp_path, without=("landlock", "namespaces"))
    assert denials(report) == {}, report.probes
    read = next(p for p in report.probes if p.name == "read_outside")
    assert read.detail.startswith("EPERM")


async def test_landlock_alone_denies_all_but_unix_sockets(tmp_path: Path) -> None:
    """Switch seccomp and the namespaces off: Landlock denies files, TCP and signals, but
    its ABI does not cover connecting to a pathname Unix socket, which only seccomp (no
    socket() at all) refuses. The README says so under "Not promised"."""
    report = await doctor(tmp_path, without=("seccomp", "namespaces"))
    assert set(denials(report)) == {"connect_unix"}, report.probes
    read = next(p for p in report.probes if p.name == "read_outside")
    assert read.detail.startswith("EACCES")


async def test_namespaces_alone_cut_the_network_and_hide_the_host(tmp_path: Path) -> None:
    """Without seccomp and Landlock, the network namespace has no route and the PID namespace
    has no host process to signal."""
    report = await doctor(tmp_path, without=("seccomp", "landlock"))
    by_name = {p.name: p for p in report.probes}
    assert by_name["network_connect"].denied
    assert by_name["network_connect"].detail.startswith("ENETUNREACH")
    assert by_name["signal_host"].denied
    assert by_name["signal_host"].detail.startswith("ESRCH")


@pytest.fixture
def no_libseccomp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The zygote starts on a machine without libseccomp: its binding fails to import the way
    pyseccomp does when the library is missing."""
    import runtime._pool

    fake = tmp_path / "no-libseccomp"
    fake.mkdir()
    (fake / "pyseccomp.py").write_text('raise RuntimeError("Unable to find libseccomp")\n')
    real = runtime._pool.boot_path
    monkeypatch.setattr(runtime._pool, "boot_path", lambda: f"{fake}{os.pathsep}{real()}")


@pytest.mark.usefixtures("no_libseccomp")
async def test_without_seccomp_full_isolation_refuses_to_run() -> None:
    """Fail closed: no seccomp, no snippet; the error names the fix, and the doctor says why."""
    async with Sandbox(spares=0) as sandbox:
        result = await sandbox.execute("return 1", providers=NO_PROVIDERS)
        seccomp = next(layer for layer in sandbox.layers if layer.name == "seccomp")
    assert not result.ok and result.error is not None
    assert result.error.type == "IsolationUnavailable"
    assert result.error.kind == "policy"
    assert '"isolation": "minimal"' in (result.error.hint or "")
    assert result.calls == 0
    assert not seccomp.active and "Unable to find libseccomp" in seccomp.detail


@pytest.fixture
def unloadable_filter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """libseccomp builds a filter that the kernel then refuses to load (garbage BPF)."""
    import runtime._pool

    fake = tmp_path / "bad-filter"
    fake.mkdir()
    (fake / "pyseccomp.py").write_text(
        "import importlib.util, os, sys\n"
        "real_path = next(os.path.join(p, 'pyseccomp.py') for p in sys.path[1:]\n"
        "                 if os.path.exists(os.path.join(p, 'pyseccomp.py')))\n"
        "spec = importlib.util.spec_from_file_location('_real_pyseccomp', real_path)\n"
        "real = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(real)\n"
        "globals().update({k: v for k, v in vars(real).items() if not k.startswith('__')})\n"
        "class SyscallFilter(real.SyscallFilter):\n"
        "    def export_bpf(self, file):\n"
        "        file.write(b'\\xff' * 8)\n"
    )
    real = runtime._pool.boot_path
    monkeypatch.setattr(runtime._pool, "boot_path", lambda: f"{fake}{os.pathsep}{real()}")


@pytest.mark.usefixtures("unloadable_filter")
async def test_a_filter_that_cannot_be_loaded_is_reported_off_and_refuses(tmp_path: Path) -> None:
    """The zygote proves the lockdown in a throwaway child before it reports any layer: a
    filter the kernel refuses is reported off, snippets are refused, the doctor fails."""
    async with Sandbox(spares=0) as sandbox:
        result = await sandbox.execute("return 1", providers=NO_PROVIDERS)
        seccomp = next(layer for layer in sandbox.layers if layer.name == "seccomp")
        report = await sandbox.doctor(workspace=tmp_path)
    assert not seccomp.active and "cannot be loaded" in seccomp.detail, seccomp.detail
    assert result.error is not None and result.error.type == "IsolationUnavailable"
    assert not report.ok


@pytest.mark.usefixtures("no_libseccomp")
async def test_without_seccomp_minimal_isolation_still_runs() -> None:
    """The user's way out: isolation="minimal" runs, and says so on the result."""
    async with Sandbox(spares=0, isolation="minimal") as sandbox:
        result = await sandbox.execute("return 1", providers=NO_PROVIDERS)
    assert result.ok and any("minimal" in w for w in result.warnings)


async def test_a_layer_switched_off_for_a_measurement_says_so() -> None:
    """without=... runs (benchmarks compare layers that way) and every result warns."""
    async with Sandbox(spares=0, without=("seccomp",)) as sandbox:
        result = await sandbox.execute("return 1", providers=NO_PROVIDERS)
    assert result.ok and any("switched off for a measurement" in w for w in result.warnings)


async def test_minimal_isolation_runs_and_says_so_on_every_result(tmp_path: Path) -> None:
    """isolation="minimal" runs snippets without the kernel layer and warns each time."""
    async with Sandbox(spares=0, isolation="minimal") as sandbox:
        for _ in range(2):
            result = await sandbox.execute("return 1 + 1", providers=NO_PROVIDERS)
            assert result.ok and result.value == 2
            assert any('isolation is "minimal"' in w for w in result.warnings)
        assert not any(layer.active for layer in sandbox.layers if layer.name == "seccomp")


async def test_minimal_isolation_is_what_the_doctor_says_it_is(tmp_path: Path) -> None:
    """The doctor is not fooled: without the kernel layer, files outside are readable."""
    report = await doctor(tmp_path, isolation="minimal")
    assert not report.ok
    assert "read_outside" in denials(report)


async def test_the_host_environment_never_reaches_a_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A secret in the host's environment is not in the worker's."""
    monkeypatch.setenv("FABRIC_TEST_SECRET_TOKEN", "hunter2")
    report = await doctor(tmp_path)
    environment = next(p for p in report.probes if p.name == "environment")
    assert environment.denied, environment.detail
    assert "FABRIC_TEST_SECRET_TOKEN" not in environment.detail


async def test_without_any_kernel_layer_the_doctor_sees_writes_outside(tmp_path: Path) -> None:
    """All three kernel layers off: the worker writes outside the workspace, and the doctor
    says so."""
    report = await doctor(tmp_path, without=("seccomp", "landlock", "namespaces"))
    if os.geteuid() == 0:  # workers are nobody: they cannot write the root-owned workspace
        assert "write_outside" in denials(report)
    else:
        assert {"write_outside", "write_workspace", "read_store"} <= set(denials(report))


async def test_the_doctor_believes_the_host_not_a_lying_worker(tmp_path: Path) -> None:
    """A worker that writes outside, connects, and then claims every probe was denied is
    overruled by what the host sees; one that does not answer a probe fails it."""
    from runtime._doctor import run_probes

    async def lying_worker(targets: dict[str, object]) -> list[dict[str, object]]:
        (Path(str(targets["write_outside"])) / "fabric-doctor-probe-1").write_text("x")
        host, port = targets["network_connect"]  # type: ignore[misc]
        _, writer = await asyncio.open_connection(host, port)
        writer.close()
        await asyncio.sleep(0)  # let the listener count it
        claims = [{"name": n, "denied": True, "detail": "EPERM"} for n in PROBES if n != "exec"]
        return claims

    probes = {p.name: p for p in await run_probes(lying_worker, tmp_path, None, PROBES)}
    assert not probes["write_outside"].denied and "appeared" in probes["write_outside"].detail
    assert not probes["network_connect"].denied
    assert not probes["exec"].denied and "no answer" in probes["exec"].detail
    assert not probes["read_store"].denied  # there was no blob to probe


# -- a host that is not root ----------------------------------------------------------------

_UNPRIVILEGED_UID = 54321
_HOST = """
import asyncio, json, sys
sys.path[:0] = json.loads(sys.argv[1])
from fabric import Fabric

async def main(workspace):
    async with Fabric(workspace=workspace, spares=0) as fab:
        report = await fab.doctor()
        result = await fab.exec("return await tools.read(path='notes.txt')")
        print(json.dumps({"doctor": report.model_dump(), "value": result.value}))

asyncio.run(main(sys.argv[2]))
"""


def _as_user(uid: int, *argv: str) -> list[str]:
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *argv]


def _interpreter_for(uid: int) -> str | None:
    """A Python of this version that ``uid`` may run and re-run (the zygote is started with
    ``sys.executable``; a venv whose interpreter lives under /root may not qualify)."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    check = (
        f"import subprocess, sys; assert sys.version.startswith({version!r}); "
        "subprocess.run([sys.executable, '-I', '-c', 'pass'], check=True)"
    )
    for candidate in (
        sys.executable,
        shutil.which(f"python{version}"),
        f"/usr/bin/python{version}",
    ):
        if candidate is None:
            continue
        probe = subprocess.run(_as_user(uid, candidate, "-I", "-c", check), capture_output=True)
        if probe.returncode == 0:
            return candidate
    return None


@pytest.fixture
def unprivileged_workspace() -> Iterator[Path]:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run a host as an unprivileged user")
    root = Path(tempfile.mkdtemp(prefix="fabric-unprivileged-"))
    (root / "notes.txt").write_text("the host's own file\n")
    for path in (root, root / "notes.txt"):
        os.chown(path, _UNPRIVILEGED_UID, _UNPRIVILEGED_UID)
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_a_host_that_is_not_root_keeps_its_own_files_out_of_reach(
    unprivileged_workspace: Path,
) -> None:
    """The kernel sees the host's own uid in the worker, yet the worker reads and writes
    nothing: not the workspace, not the store, not files outside; providers still work."""
    python = _interpreter_for(_UNPRIVILEGED_UID)
    if python is None:
        pytest.skip("no Python interpreter of this version is runnable by an unprivileged uid")
    import fabric

    repository = str(Path(fabric.__file__).resolve().parent.parent)
    paths = [repository, *(p for p in sys.path if p and os.path.isdir(p))]
    done = subprocess.run(
        _as_user(
            _UNPRIVILEGED_UID,
            python,
            "-I",
            "-c",
            _HOST,
            json.dumps(paths),
            str(unprivileged_workspace),
        ),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    report = DoctorReport.model_validate(out["doctor"])
    assert denials(report) == {}
    uid_layer = next(layer for layer in report.layers if layer.name == "unprivileged_uid")
    assert not uid_layer.active and str(_UNPRIVILEGED_UID) in uid_layer.detail
    assert out["value"] == "the host's own file\n"  # through the provider, on the host
    assert (unprivileged_workspace / "notes.txt").read_text() == "the host's own file\n"
    written = [p for p in unprivileged_workspace.rglob("*") if "fabric-doctor-probe" in p.name]
    assert written == []
