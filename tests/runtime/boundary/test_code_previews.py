"""Code previews: an outline of classes and functions with the lines and bytes of each, never
the first twenty lines of imports; heuristics for languages without a parser, said to be
heuristics; a query that is a name, not "error"."""

from __future__ import annotations

import re

from hypothesis import event, given, settings
from hypothesis import strategies as st

from runtime import CallRecord
from runtime.boundary import Boundary, StoredReadable, preview, read
from store import Store

from .conftest import ok
from .sources import Writer, engine_module, entries, not_shown, python_modules

MARKER = "ZEBRA-4471"


def read_back(store: Store, handle: str, offset: int, length: int) -> str:
    found = read(
        StoredReadable(store, store.stat(handle)), budget=16_384, offset=offset, length=length
    )
    assert found.content is not None
    return found.content


def test_a_marker_in_the_main_class_is_one_read_away(boundary: Boundary, store: Store) -> None:
    """The model reads a workspace file of 1,400 lines; the marker sits in the middle of
    the middle method of its main class: the preview's outline names that method with its
    lines and bytes, and one read of those bytes returns it."""
    source = engine_module(planted=MARKER)
    calls = (CallRecord(tool="tools.read", args={"path": "src/engine.py"}),)
    done = boundary.finish(ok(source.source(), calls=calls))
    assert done.policy_applied == "offload" and done.handle is not None
    assert MARKER not in done.text
    assert "outline by ast" in done.text and "imports: 30 statements (L2-31)" in done.text
    assert "from package" not in done.text  # imports are counted, not listed
    shown = {e.line: e for e in entries(done.text)}
    middle = next(d for d in source.defined if d.name == "step_15")
    entry = shown[middle.line]
    assert (entry.end, entry.depth) == (middle.end, 1)
    assert entry.what.startswith("def step_15")
    method = read_back(store, done.handle, entry.offset, entry.length)
    assert MARKER in method
    assert method.startswith("    def step_15(") and method.endswith("return job.result\n")
    assert 'query="Engine")' in done.text  # the main class's name, matched as it is written


def test_python_without_a_name_is_known_by_parsing(boundary: Boundary, store: Store) -> None:
    source = engine_module(planted=MARKER)
    done = boundary.finish(ok(source.source()))
    assert done.handle is not None and "outline by ast" in done.text
    entry = next(e for e in entries(done.text) if e.what.startswith("def step_15"))
    assert MARKER in read_back(store, done.handle, entry.offset, entry.length)


def broken_engine() -> Writer:
    """The engine module with a syntax error in its main class."""
    w = engine_module()
    w.lines[40] = "        job.counter = ((("
    return w


def test_the_file_name_reaches_the_preview(boundary: Boundary) -> None:
    """Python that does not parse is still outlined when its name says it is Python: the
    path of the call that read it, the key of an offload."""
    source = broken_engine().source()
    calls = (CallRecord(tool="tools.read", args={"path": "src/engine.py"}),)
    read_file = boundary.finish(ok(source, calls=calls)).text
    offloaded = boundary.offload(source, key="engine.py").notice
    for text in (read_file, offloaded):
        assert "python, 1360 lines" in text and "outline by line heuristics" in text
        assert "L36-1357 class Engine(Base):" in text
    unnamed = boundary.offload(source + " ").notice  # (other bytes: not the entry named above)
    assert "Preview (partial):\ntext, 1361 lines" in unnamed


def test_the_outline_puts_classes_and_public_functions_first() -> None:
    """With room for a few lines only, the top-level class and public functions are shown
    and the rest counted exactly."""
    source = engine_module(methods=60)
    text = preview(source.source(), 800, "text", name="engine.py").text
    assert len(text.encode()) <= 800
    shown = {e.what.split("(")[0] for e in entries(text)}
    assert {"class Engine", "def helper", "def main"} <= shown
    assert len(entries(text)) + not_shown(text) == len(source.defined) == 63
    assert re.search(r"… not shown: \d+ methods \(Engine \d+\)", text)


def test_text_that_is_not_code_keeps_its_error_markers() -> None:
    log = "\n".join(f"INFO step {i}" for i in range(5000)).replace("step 2500", "ERROR boom")
    done = preview(log, 2048, "text")
    assert done.text.startswith("text, 5000 lines") and done.query == "error"
    assert done.ignore_case


def test_a_python_comment_is_no_markdown_heading() -> None:
    code = "# Section one\nx = 1\n# Section two\n" + "y = 2\n" * 3000
    assert preview(code, 1024, "text", name="settings.py").text.startswith("text, 3003 lines")
    assert preview(code, 1024, "text").text.startswith("Markdown, ")  # no name, no code


def test_a_syntax_error_falls_back_to_line_heuristics_and_says_so() -> None:
    w = broken_engine()
    text = preview(w.source(), 4096, "text", name="engine.py").text
    assert "outline by line heuristics, not parsed: syntax error at line" in text
    truth = {d.line: d for d in w.defined}
    for entry in entries(text):
        assert entry.line in truth and entry.end == truth[entry.line].end, entry


def test_an_f_string_of_too_many_fields_is_outlined_by_its_lines_without_parsing() -> None:
    """CPython 3.11 parses an f-string in time quadratic in its fields (80,000 took 14 s,
    holding the host's GIL and parser): such a file is outlined by its definition lines,
    saying why, at once."""
    code = 'def a():\n    pass\nx = f"' + "{a}" * 80_000 + '"\ndef b():\n    pass\n'
    text = preview(code, 4096, "text", name="gen.py").text
    assert "not parsed: ValueError: an f-string holds 80000 replacement fields" in text
    assert [entry.what.split("(")[0] for entry in entries(text)] == ["def a", "def b"]


def test_a_file_past_the_parsed_prefix_is_outlined_to_its_end() -> None:
    """More than 256 KB: the start by ast, the rest by its lines, both said."""
    w = engine_module(methods=700, body=12)
    source = w.source()
    assert len(source) > 256 * 1024
    text = preview(source, 4096, "text", name="engine.py").text
    assert re.search(r"outline by ast of lines 1-\d+ \(the first \d+ characters\), by line", text)
    truth = {d.line: d for d in w.defined}
    shown = entries(text)
    assert shown[-1].what.startswith("def main") and shown[-1].line == truth[shown[-1].line].line
    for entry in shown:
        assert entry.line in truth and entry.end == truth[entry.line].end, entry
    assert len(shown) + not_shown(text) == len(w.defined)


SAMPLES = {
    "app.ts": (
        "import { x } from './x';\n\nexport interface Job {\n  id: number;\n}\n\n"
        "export class Queue {\n  private items: Job[] = [];\n\n  push(job: Job): void {\n"
        "    this.items.push(job);\n  }\n}\n\nexport const run = async (q: Queue) => {\n"
        "  return q;\n};\n\nfunction helper(a, b) {\n  return a + b;\n}\n"
    ),
    "server.go": (
        'package main\n\nimport "fmt"\n\ntype Server struct {\n\tname string\n}\n\n'
        "func (s *Server) Run() error {\n\tfmt.Println(s.name)\n\treturn nil\n}\n\n"
        "func main() {\n\tnew(Server).Run()\n}\n"
    ),
    "lib.rs": (
        "use std::fmt;\n\npub struct Point {\n    x: i32,\n}\n\nimpl Point {\n"
        "    pub fn new(x: i32) -> Self {\n        Point { x }\n    }\n\n"
        "    fn secret(&self) -> i32 {\n        self.x\n    }\n}\n\npub fn origin() -> Point {\n"
        "    Point::new(0)\n}\n"
    ),
    "Main.java": (
        "import java.util.List;\n\npublic class Main {\n    private int n;\n\n"
        "    public static void main(String[] args) {\n        System.out.println(1);\n    }\n\n"
        "    private int count(List<String> xs) {\n        return xs.size();\n    }\n}\n"
    ),
    "util.c": (
        "#include <stdio.h>\n\nstruct point {\n    int x;\n};\n\nstatic int twice(int x)\n{\n"
        '    return 2 * x;\n}\n\nint main(void) {\n    printf("%d", twice(2));\n'
        "    return 0;\n}\n"
    ),
}
EXPECTED = {
    "app.ts": {
        3: "interface Job",
        7: "class Queue",
        10: "push",
        15: "const run",
        19: "function helper",
    },
    "server.go": {5: "type Server", 9: "func (s *Server) Run", 14: "func main"},
    "lib.rs": {
        3: "pub struct Point",
        7: "impl Point",
        8: "pub fn new",
        12: "fn secret",
        17: "pub fn origin",
    },
    "Main.java": {3: "public class Main", 6: "public static void main", 10: "private int count"},
    "util.c": {3: "struct point", 7: "static int twice", 12: "int main"},
}


def test_other_languages_are_outlined_by_their_definition_lines() -> None:
    for name, source in SAMPLES.items():
        padded = source + "\n" * 3000  # large enough to be previewed, not shown whole
        text = preview(padded, 2048, "text", name=name).text
        assert "outline by line heuristics, not parsed" in text, name
        shown = {e.line: e.what for e in entries(text)}
        assert sorted(shown) == sorted(EXPECTED[name]), (name, shown)
        for line, start in EXPECTED[name].items():
            assert start in shown[line], (name, line, shown[line])
        data = padded.encode()
        for entry in entries(text):
            lines = data[entry.offset : entry.offset + entry.length].decode().splitlines()
            assert EXPECTED[name][entry.line] in lines[0], (name, entry)


def test_a_go_method_is_counted_with_its_receiver() -> None:
    source = SAMPLES["server.go"] + "".join(
        f"\nfunc (s *Server) Handle{n}() {{\n\treturn\n}}\n" for n in range(300)
    )
    text = preview(source, 1024, "text", name="server.go").text
    assert re.search(r"… not shown: .*\b\d+ methods \(Server \d+\)", text)
    assert 'query="func "' in text


@settings(max_examples=120, deadline=None)
@given(module=python_modules(items=20), budget=st.integers(300, 4000), named=st.booleans())
def test_the_outline_tells_the_truth(module: Writer, budget: int, named: bool) -> None:
    """Whatever the module and the budget: the preview fits; each definition it shows is
    where it says (the line starts the definition, the bytes are the definition with its
    decorators, to the end of its last line); shown and "not shown" add up to all of them."""
    source = module.source()
    data = source.encode()
    done = preview(source, budget, "text", name="m.py" if named else None)
    assert len(done.text.encode()) <= budget
    if len(data) <= budget:
        assert done.text == source
        return
    assert done.text.startswith("python, ") == bool(module.defined)
    if not module.defined:
        return
    truth = {d.line: d for d in module.defined}
    lines = source.split("\n")
    shown = entries(done.text)
    for entry in shown:
        defined = truth[entry.line]
        assert entry.end == defined.end
        assert lines[entry.line - 1].lstrip().startswith(f"{defined.kind} {defined.name}")
        assert entry.what.startswith(f"{defined.kind} {defined.name}")
        piece = data[entry.offset : entry.offset + entry.length].decode()
        assert piece == "".join(line + "\n" for line in lines[defined.first - 1 : defined.end])
    assert len(shown) + not_shown(done.text) == len(module.defined)
    assert done.coverage == len(shown) / len(module.defined)
    event("some not shown" if not_shown(done.text) else "all shown")
    assert done.query is not None and not done.ignore_case


def test_python_with_lone_carriage_returns_is_not_outlined() -> None:
    """Python ends a line at a lone CR, ctx_read does not: an outline of such a file named
    lines and byte ranges no read finds (every class was "L1 [0+19790]")."""
    from runtime.boundary import preview

    source = "".join(f"class C{i}:\r    x = 1\r\r" for i in range(2000))
    shown = preview(source, 2048, "text", name="old.py").text
    assert "class C0:" in shown and "L1 " not in shown and "[0+" not in shown
