"""`fabric exec` as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from runtime.worker import PROBES

REPO = Path(__file__).resolve().parents[2]


def fabric(
    *args: str, stdin: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fabric._cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd or REPO,
    )


def test_exec_the_readme_example() -> None:
    """The example in examples/ runs on a fresh workspace and prints a small summary."""
    done = fabric("exec", "examples/hello.py")
    assert done.returncode == 0, done.stderr
    assert "python_files: " in done.stdout


def test_exec_from_stdin(tmp_path: Path) -> None:
    """`-` reads the snippet from standard input."""
    (tmp_path / "n.txt").write_text("a\nb\n")
    done = fabric(
        "exec",
        "--workspace",
        str(tmp_path),
        "-",
        stdin="return len((await tools.read(path='n.txt')).splitlines())",
    )
    assert done.returncode == 0
    assert done.stdout.strip() == "2"


def test_json_output_is_the_whole_result() -> None:
    """--json prints the ExecResult model."""
    done = fabric("exec", "--json", "-", stdin="print('hi')\nreturn [1, 2]")
    result = json.loads(done.stdout)
    assert result["ok"] is True and result["value"] == [1, 2] and result["logs"] == "hi\n"
    assert set(result["timings"]) == {"compile_ms", "run_ms", "total_ms"}


def test_failed_snippet_exits_one_with_the_error() -> None:
    """A failing snippet prints the model-facing error and exits 1."""
    done = fabric("exec", "-", stdin="x = 1\n1 / 0")
    assert done.returncode == 1
    assert "ZeroDivisionError: division by zero (line 2)" in done.stdout


def test_timeout_flag() -> None:
    """--timeout sets the wall-clock limit."""
    done = fabric("exec", "--timeout", "0.5", "-", stdin="while True:\n    pass")
    assert done.returncode == 1
    assert "0.5 s" in done.stdout


def test_missing_file_is_a_usage_error() -> None:
    """A snippet file that does not exist is reported on stderr with exit status 2."""
    done = fabric("exec", "no/such/file.py")
    assert done.returncode == 2
    assert "cannot read snippet file" in done.stderr


def test_a_snippet_that_is_not_utf8_or_too_large_is_a_usage_error(tmp_path: Path) -> None:
    """Standard input is read as UTF-8, as a file is; neither is read past the largest snippet
    there can be (``/dev/zero`` would never end)."""
    done = subprocess.run(
        [sys.executable, "-m", "fabric._cli", "exec", "-"],
        input=b"return 1 # \xff\n",
        capture_output=True,
        timeout=60,
        cwd=REPO,
    )
    assert done.returncode == 2
    assert b"the snippet on standard input is not UTF-8 text" in done.stderr
    huge = tmp_path / "huge.py"
    huge.write_text("#" * (1024 * 1024 + 1))
    done_big = fabric("exec", str(huge))
    assert done_big.returncode == 2
    said = "".join(done_big.stderr.split())  # the terminal wraps it
    assert "islargerthan1048576bytes,themostasnippetmaybe" in said
    assert "Traceback" not in done_big.stderr


def test_bad_limit_is_a_usage_error() -> None:
    """An out-of-range limit names the option."""
    done = fabric("exec", "--memory", "1", "-", stdin="return 1")
    assert done.returncode == 2
    assert "--memory must be at least 16, not 1" in done.stderr and "Traceback" not in done.stderr


def test_doctor_json_lists_layers_and_probes_and_exits_zero(tmp_path: Path) -> None:
    """`fabric doctor --json`: every probe denied, exit status 0, the documented shape."""
    done = fabric("doctor", "--json", "--workspace", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is True
    assert {"name", "active", "detail"} <= set(report["layers"][0])
    assert [p["name"] for p in report["probes"]] == list(PROBES)
    assert all(p["denied"] for p in report["probes"])


def test_doctor_exits_one_when_something_is_not_contained(tmp_path: Path) -> None:
    """Under minimal isolation the doctor shows what a worker can reach, and exits 1."""
    done = fabric("doctor", "--isolation", "minimal", "--workspace", str(tmp_path))
    assert done.returncode == 1
    assert "not contained:" in done.stdout and "read_outside" in done.stdout


def test_every_command_refuses_a_workspace_that_is_not_a_folder(tmp_path: Path) -> None:
    """``settings`` too (it printed defaults for a folder that does not exist)."""
    missing = str(tmp_path / "nowhere")
    for args in (("settings", "--workspace", missing), ("status", "--workspace", missing)):
        done = fabric(*args)
        assert done.returncode == 2, (args, done.stdout)
        said = "".join(done.stderr.split())  # the terminal wraps it, inside the path too
        expected = f"workspace {missing!r} is not a directory; pass an existing folder"
        assert "".join(expected.split()) in said


def test_settings_lists_the_isolation_layers(tmp_path: Path) -> None:
    """`fabric settings --json` includes each layer and whether it is active."""
    done = fabric("settings", "--json", "--workspace", str(tmp_path))
    layers = json.loads(done.stdout)["layers"]
    assert any(layer["name"] == "seccomp" and layer["active"] for layer in layers)


def test_exec_takes_its_limits_and_warnings_from_the_config_file(tmp_path: Path) -> None:
    """Without --timeout the file's timeoutS applies; a bad key is warned on stderr and in
    the JSON result's warnings; --timeout wins over the file."""
    (tmp_path / ".fabric").mkdir()
    (tmp_path / ".fabric" / "config.json").write_text('{"timeoutS": 1, "timeoutSec": 9}')
    code = "import asyncio\nawait asyncio.sleep(2.5)\nreturn 'slept'"
    done = fabric("exec", "--workspace", str(tmp_path), "-", stdin=code)
    assert done.returncode == 1 and "1 s wall-clock limit" in done.stdout
    assert "unknown key 'timeoutSec'" in done.stderr and "did you mean 'timeoutS'" in done.stderr
    done = fabric("exec", "--workspace", str(tmp_path), "--json", "-", stdin=code)
    assert any("timeoutSec" in w for w in json.loads(done.stdout)["warnings"])
    done = fabric("exec", "--workspace", str(tmp_path), "--timeout", "10", "-", stdin=code)
    assert done.returncode == 0 and done.stdout.strip() == "slept"


def test_an_unknown_flag_suggests_the_near_one() -> None:
    done = fabric("read", "some-handle", "--jsonpath", "$.a")
    assert done.returncode == 2
    assert "unrecognized arguments: --jsonpath" in done.stderr
    assert "did you mean --json-path?" in done.stderr


def test_full_status_shows_the_settings_and_reads_are_in_the_trace(tmp_path: Path) -> None:
    (tmp_path / ".fabric").mkdir()
    (tmp_path / ".fabric" / "config.json").write_text('{"timeoutS": 7}')
    (tmp_path / "a.log").write_text("one\ntwo\n")
    assert fabric("read", "a.log", "--query", "two", "--workspace", str(tmp_path)).returncode == 0
    status = fabric("status", "--detail", "full", "--workspace", str(tmp_path))
    assert "settings: timeoutS=7" in status.stdout
    assert "1 reads" in status.stdout
    trace = json.loads(fabric("trace", "--json", "--workspace", str(tmp_path)).stdout)
    assert [e["kind"] for e in trace] == ["read"]


def test_settings_show_the_threshold_that_applies(tmp_path: Path) -> None:
    """The threshold that applies, with where it came from: the policy's maxBytes when the
    file sets no readOffloadThreshold, the threshold when it does (the reference's order)."""
    (tmp_path / ".fabric").mkdir()
    config = tmp_path / ".fabric" / "config.json"
    config.write_text('{"quantitativePolicy": {"maxBytes": 600}}')
    shown = json.loads(fabric("settings", "--json", "--workspace", str(tmp_path)).stdout)
    assert shown["values"]["readOffloadThreshold"] == {"value": 600, "source": "policy"}
    config.write_text('{"readOffloadThreshold": 1000, "quantitativePolicy": {"maxBytes": 600}}')
    shown = json.loads(fabric("settings", "--json", "--workspace", str(tmp_path)).stdout)
    assert shown["values"]["readOffloadThreshold"] == {"value": 1000, "source": "file"}
