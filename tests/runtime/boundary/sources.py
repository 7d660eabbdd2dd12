"""Python sources whose definitions are known by construction, and a reader for the outline
a code preview or summary prints: the tests compare what the outline says with the truth."""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field

from hypothesis import strategies as st


@dataclass(frozen=True)
class Defined:
    """A definition the writer put in a source: where its keyword is and where it ends."""

    kind: str
    name: str
    line: int
    end: int
    first: int
    """Its first line, decorators included."""
    parent: str | None


@dataclass
class Writer:
    lines: list[str] = field(default_factory=list)
    defined: list[Defined] = field(default_factory=list)

    def add(self, line: str) -> int:
        self.lines.append(line)
        return len(self.lines)

    def source(self) -> str:
        return "\n".join(self.lines) + "\n"


@dataclass(frozen=True)
class Entry:
    """One definition as an outline shows it."""

    line: int
    end: int
    what: str
    offset: int
    length: int
    depth: int


ENTRY = re.compile(
    r"^(?P<indent> *)L(?P<line>\d+)(?:-(?P<end>\d+))? (?P<what>.*) "
    r"\[(?P<offset>\d+)\+(?P<length>\d+)\](?:  # .*)?$"
)
CUT = re.compile(r"… \(line cut at (?P<at>[\d,]+) of (?P<of>[\d,]+) characters\)$")
_COUNT = re.compile(r"(\d+) (class|classes|type|types|function|functions|method|methods)\b")


def entries(outline: str) -> list[Entry]:
    found = []
    for line in outline.splitlines():
        if match := ENTRY.match(line):
            found.append(
                Entry(
                    line=int(match["line"]),
                    end=int(match["end"] or match["line"]),
                    what=match["what"],
                    offset=int(match["offset"]),
                    length=int(match["length"]),
                    depth=len(match["indent"]) // 2,
                )
            )
    return found


def not_shown(outline: str) -> int:
    """How many definitions the outline's last line says it does not show."""
    for line in outline.splitlines():
        if line.startswith("… not shown: "):
            counts = re.sub(r"\([^)]*\)", "", line.split(";", 1)[0])
            return sum(int(n) for n, _ in _COUNT.findall(counts))
    return 0


# -- writing Python ---------------------------------------------------------------------------

names = st.from_regex(r"_{0,2}[a-zA-Zé][a-zA-Z0-9_é]{0,12}", fullmatch=True).filter(
    lambda name: name.isidentifier() and not keyword.iskeyword(name)
)
IMPORTS = ["import os", "import sys", "from pathlib import Path", "from typing import Any"]
STATEMENTS = [  # a line starting with | is written as it is, at column 0 (in a string)
    ["x = 1"],
    ["return None"],
    ["value = 'héllo 中文 🎉'"],
    ["if x:", "    y = [i for i in range(3)]"],
    ['text = """', "|class Fake:", "|    def fake(self): pass", '|def not_real():"""'],
    ["def inner():", "    return 'def ' + 'class '"],
    ["s = '" + "long " * 80 + "'"],
    ["try:", "    pass", "except Exception:", "    raise"],
]


@st.composite
def python_modules(draw: st.DrawFn, items: int = 10) -> Writer:
    """A module of functions, classes, methods and nested classes, with decorators,
    docstrings, strings that look like definitions, and functions inside functions (which
    are no definitions of the module)."""
    w = Writer()
    if draw(st.booleans()):
        w.add('"""A module. It does things."""')
    for line in draw(st.lists(st.sampled_from(IMPORTS), max_size=6)):
        w.add(line)
    for _ in range(draw(st.integers(1, items))):
        what = draw(st.sampled_from(["def", "class", "statement", "blank", "comment"]))
        if what == "def":
            _function(draw, w, "", None)
        elif what == "class":
            _class(draw, w, "", None, 0)
        elif what == "statement":
            w.add(f"{draw(names)} = {draw(st.integers())}")
        elif what == "blank":
            w.add("")
        else:
            w.add("# def commented_out():")
    return w


def _decorators(draw: st.DrawFn, w: Writer, indent: str) -> int | None:
    first = None
    for n in range(draw(st.integers(0, 2))):
        at = w.add(f"{indent}@decorator_{n}")
        first = first or at
    return first


def _body(draw: st.DrawFn, w: Writer, indent: str) -> None:
    if draw(st.booleans()):
        w.add(f'{indent}"""{draw(st.sampled_from(["Do it.", "Ça marche.", "Run the job."]))}"""')
    for statement in draw(st.lists(st.sampled_from(STATEMENTS), min_size=1, max_size=4)):
        for line in statement:
            w.add(line[1:] if line.startswith("|") else indent + line)


def _function(draw: st.DrawFn, w: Writer, indent: str, parent: str | None) -> None:
    first = _decorators(draw, w, indent)
    kind = draw(st.sampled_from(["def", "async def"]))
    name = draw(names | st.just("__init__")) if parent else draw(names)
    args = "self, job" if parent else draw(st.sampled_from(["", "a, b=2", "*args, **kw"]))
    line = w.add(f"{indent}{kind} {name}({args}):")
    _body(draw, w, indent + "    ")
    w.defined.append(Defined(kind, name, line, len(w.lines), first or line, parent))


def _class(draw: st.DrawFn, w: Writer, indent: str, parent: str | None, depth: int) -> None:
    first = _decorators(draw, w, indent)
    name = draw(names)
    line = w.add(f"{indent}class {name}{draw(st.sampled_from(['', '(Base)', '(A, B)']))}:")
    inner = indent + "    "
    w.add(f"{inner}kind = {draw(st.integers(0, 9))}")
    for _ in range(draw(st.integers(0, 6))):
        if depth < 2 and draw(st.integers(0, 5)) == 0:
            _class(draw, w, inner, name, depth + 1)
        else:
            if draw(st.booleans()):
                w.add("")
            _function(draw, w, inner, name)
    w.defined.append(Defined("class", name, line, len(w.lines), first or line, parent))


def engine_module(methods: int = 30, body: int = 40, planted: str | None = None) -> Writer:
    """A large, ordinary module: imports, a helper, a main class ``Engine`` with many methods
    of ``body`` lines each, and a ``main``; ``planted`` goes in the middle of the middle
    method."""
    w = Writer()
    w.add('"""The job engine: queues, workers and their bookkeeping."""')
    for n in range(30):
        w.add(f"from package.module_{n} import name_{n}")
    w.add("")
    line = w.add("def helper(value: int) -> int:")
    w.add("    return value * 2")
    w.defined.append(Defined("def", "helper", line, len(w.lines), line, None))
    w.add("")
    start = w.add("class Engine(Base):")
    w.add('    """Runs jobs."""')
    for m in range(methods):
        w.add("")
        at = w.add(f"    def step_{m}(self, job: Job, *, retries: int = 3) -> Result:")
        w.add(f'        """Step {m} of a job."""')
        for k in range(body):
            if planted and m == methods // 2 and k == body // 2:
                w.add(f"        log.info({planted!r})")
            else:
                w.add(
                    f"        job.counter_{k} = helper(job.counter_{k}) + {m}  # except Exception"
                )
        w.add("        return job.result")
        w.defined.append(Defined("def", f"step_{m}", at, len(w.lines), at, "Engine"))
    w.defined.append(Defined("class", "Engine", start, len(w.lines), start, None))
    w.add("")
    line = w.add("def main(argv: list[str]) -> int:")
    w.add("    return Engine().run(argv)")
    w.defined.append(Defined("def", "main", line, len(w.lines), line, None))
    return w
