"""Structural previews: the shape first, the answer never hidden, never fake JSON."""

from __future__ import annotations

import json
import re

from hypothesis import event, given, settings
from hypothesis import strategies as st

from runtime.boundary import preview, redact
from runtime.boundary._preview_text import _MD_HEADING

from .conftest import json_values
from .sources import ENTRY


def test_json_preview_shows_the_shape_and_status_fields_first() -> None:
    value = {
        "data": {"rows": [{"id": i, "name": f"n{i}"} for i in range(500)]},
        "meta": "x" * 3000,
        "status": "partial",
        "total": 500,
        "error": None,
    }
    text = preview(value, 2048, "json").text
    lines = text.splitlines()
    assert lines[0].startswith("JSON object, 5 keys: data, meta, status, total, error")
    assert "partial view" in lines[0]
    assert lines[1:4] == ['$.status = "partial"', "$.total = 500", "$.error = null"]
    assert "$.data.rows = array of 500 objects; keys: id, name" in text
    assert '$.data.rows[0] = {"id": 0, "name": "n0"}' in text
    assert '$.data.rows[499] = {"id": 499, "name": "n499"}' in text
    assert "$.meta = string of 3000 chars" in text


def test_json_text_is_previewed_by_shape_too() -> None:
    doc = json.dumps({"items": list(range(100_000)), "ok": True})
    text = preview(doc, 1024, "json").text
    assert "$.ok = true" in text and "$.items = array of 100000 numbers" in text


def test_deep_single_item_arrays_are_outlined_once_per_level() -> None:
    """An array's first and last items are both outlined, so nesting could double the work per
    level: an item that is both first and last is outlined once (2 ** 40 shapes otherwise)."""
    chain: object = "A" * 20_000
    for _ in range(40):
        chain = [chain]
    assert "array of 1 array" in preview(chain, 2048, "json").text
    assert "array of 1 array" in preview(json.dumps(chain), 2048, "json").text


def test_a_cut_value_is_marked_never_passed_off_as_json() -> None:
    value = {"results": [{"body": "word " * 200, "n": i} for i in range(50)]}
    text = preview(value, 2048, "json").text
    line = next(x for x in text.splitlines() if x.strip().startswith("$.results[0] ="))
    rendered = line.split(" = ", 1)[1]
    assert "…" in rendered
    try:
        json.loads(rendered)
    except ValueError:
        pass
    else:
        raise AssertionError("a partial rendering parsed as JSON")


def test_every_top_level_key_is_named_even_when_the_budget_is_tight() -> None:
    value = {f"key_{i}": {"nested": list(range(50))} for i in range(40)}
    value["answer_is_here"] = {"deep": {"deeper": 42}}
    text = preview(value, 900, "json").text
    assert "answer_is_here" in text and len(text.encode()) <= 900


def test_text_preview_shows_head_tail_and_error_lines_from_the_middle() -> None:
    lines = [f"INFO step {i}" for i in range(10_000)]
    lines[5000] = "ERROR: connection reset by peer"
    lines[7000] = "Traceback (most recent call last):"
    text = preview("\n".join(lines), 2048, "text").text
    assert text.startswith("text, 10000 lines")
    assert "     1 | INFO step 0" in text and " 10000 | INFO step 9999" in text
    assert "  5001 | ERROR: connection reset by peer" in text
    assert "  7001 | Traceback (most recent call last):" in text
    assert "2 of them have error markers" in text


def test_one_enormous_line_is_previewed_by_bytes() -> None:
    blob = "QUJD" * 250_000
    text = preview(blob, 1000, "text").text
    assert text.startswith("text, 1 line, 1000000 bytes (partial view: first and last bytes)")
    assert "bytes omitted" in text and len(text.encode()) <= 1000


def test_markdown_outline_keeps_small_sections_whole() -> None:
    doc = "# Guide\nintro\n## Install\n" + "step\n" * 2000 + "## License\nMIT\n"
    text = preview(doc, 1024, "text").text
    assert text.startswith("Markdown, ")
    assert "## License\nMIT" in text
    assert "L3-2003 ## Install (2001 lines" in text


def test_yaml_outline_by_top_level_keys() -> None:
    doc = "name: app\nversion: 2\ndependencies:\n" + "  - lib\n" * 2000 + "scripts:\n  test: x\n"
    text = preview(doc, 800, "yaml").text
    assert text.startswith("YAML, ") and "name: app" in text
    assert "L3-2003 dependencies: (2001 lines" in text


def test_secrets_are_redacted_in_previews() -> None:
    value = {
        "api_key": "sk-proj-abcdefghijklmnopqrstuvwxyz123456",
        "env": "GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ0123456789",
        "password": "Tr0ub4dor&3xQ9zLw",
        "note": "the password field is required",
        "rows": list(range(5000)),
    }
    text = preview(value, 2048, "json").text
    assert "sk-proj-abc" not in text and "ghp_0123" not in text and "Tr0ub4dor" not in text
    assert "[REDACTED]" in text and "the password field is required" in text


def test_redaction_leaves_ordinary_text_alone() -> None:
    plain = "token count: 1234; key: value; secret sauce recipe; path=/usr/local/bin"
    assert redact(plain) == plain
    assert redact("AWS key AKIAIOSFODNN7EXAMPLE here") == "AWS key [REDACTED] here"
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----"
    assert redact(f"key:\n{pem}\nrest") == "key:\n[REDACTED private key]\nrest"


@settings(max_examples=200, deadline=None)
@given(value=json_values, budget=st.integers(256, 4096))
def test_previews_of_any_json_fit_the_budget(value: object, budget: int) -> None:
    """Data in memory and the same data as JSON text both preview within the budget."""
    assert len(preview(value, budget, "json").text.encode()) <= budget
    assert len(preview(json.dumps(value), budget, "json").text.encode()) <= budget


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=20_000), budget=st.integers(256, 4096))
def test_previews_of_any_text_fit_the_budget(text: str, budget: int) -> None:
    for kind in ("text", "yaml", "json"):
        assert len(preview(text, budget, kind).text.encode("utf-8", "surrogatepass")) <= budget


SECRETS = {
    '{"password": "hunter2", "user": "bob"}': '{"password": "[REDACTED]", "user": "bob"}',
    "passwd=abc123 and more": "passwd=[REDACTED] and more",
    "secret: s3cr3t!": "secret: [REDACTED]",
    "client_secret=xyzxyz": "client_secret=[REDACTED]",
    "DB_TOKEN=tok_12ab": "DB_TOKEN=[REDACTED]",
    "Authorization: Bearer abc.def.ghi\nnext line": "Authorization: [REDACTED]\nnext line",
    "Cookie: session=abcd; theme=dark": "Cookie: [REDACTED]",
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----": (
        "[REDACTED private key]"
    ),
}
KEPT = [
    "max_token = 5",
    "token_count = 12",
    "GITHUB_TOKEN=${GITHUB_TOKEN}",
    "the password field is required",
    "password: null",
    "author: Jane",
    '"auth": {"user": "bob"}',
    '"authorization": {"type": "bearer"}',
]


def test_named_secrets_are_redacted_whatever_they_look_like() -> None:
    """Under a name that says it is secret (password, secret, token, a header that carries
    one) the value goes, even a short or plain one; counts, references and placeholders
    stay."""
    for text, shown in SECRETS.items():
        assert redact(text) == shown, text
    for text in KEPT:
        assert redact(text) == text, text


def test_redaction_reads_text_once() -> None:
    """A name is looked for once per identifier, its length capped: hyphenated runs
    (``a-a-a-...``), which made the search quadratic (a 16 KB run took 25 s), pass in one
    reading; this would not finish otherwise."""
    for text in ("a-" * 200_000, "x_" * 200_000):
        assert redact(text) == text
    assert redact("api_key=" * 50_000) == "api_key=[REDACTED]"


def test_a_long_line_says_where_it_was_cut() -> None:
    lines = [f"INFO step {i}" for i in range(3000)]
    lines[0] = "x" * 5321
    text = preview("\n".join(lines), 2048, "text").text
    assert "     1 | " + "x" * 200 + "… (line cut at 200 of 5,321 characters)" in text


def test_a_view_by_bytes_says_which_lines_it_cuts() -> None:
    text = preview("a" * 3000 + "\n" + "b" * 100 + "\n" + "c" * 4000, 1000, "text").text
    assert re.search(r"line 1 cut at [\d,]+ of 3,000 characters; line 3 shown from", text)


CODE_LINES = [
    "def f(x):",
    "class A(B):",
    "    def m(self):",
    "async def g():",
    "func (s *S) Run() {",
    "fn main() {",
    "pub struct P {",
    "export class Q {",
    "  push(job) {",
    "    public static void main(String[] a) {",
    "int main(void) {",
    "# Heading",
    "## Sub heading",
    "key: value",
    "}",
]
line_soup = st.lists(
    st.one_of(
        st.text(max_size=60),
        st.sampled_from(CODE_LINES),
        st.sampled_from(["# Title", "## Part two", "### A sub-part", "-" * 300]),
        st.builds(
            lambda line, tail: line + tail, st.sampled_from(CODE_LINES), st.text(max_size=400)
        ),
        st.text(min_size=150, max_size=1500),
    ),
    min_size=20,
    max_size=150,
).map("\n".join)
"""Text of any kind, with lines that look like code, headings or keys, some of them long."""
NUMBERED = re.compile(r"^ *(\d+) \| (.*)$")
CUT = re.compile(r"^(?P<kept>.*)… \(line cut at (?P<at>[\d,]+) of (?P<of>[\d,]+) characters\)$")
SECTION = re.compile(r"^L(\d+)-\d+ (?P<title>.*) \(\d+ lines, \d+ bytes\)$")
BY_BYTES = re.compile(
    r"\n… (?P<omitted>\d+) bytes omitted(?: \((?P<cuts>.*?)\))?; read ranges with offset and "
    r"length …\n"
)


def shown_whole_or_said_cut(shown: str, line: str) -> bool:
    """``shown`` is ``line``, or its start and a note that says where it was cut."""
    if shown == line:
        return True
    cut = CUT.match(shown)
    if cut is None:
        return False
    at, of = (int(cut[name].replace(",", "")) for name in ("at", "of"))
    return cut["kept"] == line[:at] and of == len(line) > at


def assert_cuts_are_said(original: str, shown: str) -> None:
    """Every line of ``shown`` is a line of ``original`` whole, a line of it cut with a note
    that says so, or a line of the preview's own (titles, counts, outline entries)."""
    if shown == original:
        return
    lines = original.split("\n")
    title, _, rest = shown.partition("\n")
    if "(partial view: first and last bytes)" in title:
        found = BY_BYTES.search("\n" + rest + "\n")
        assert found, shown
        head, tail = ("\n" + rest + "\n")[1 : found.start()], ("\n" + rest)[found.end() :]
        assert original.startswith(head) and original.endswith(tail)
        size = len(original.encode("utf-8", "surrogatepass"))
        assert int(found["omitted"]) == size - len(head.encode("utf-8", "surrogatepass")) - len(
            tail.encode("utf-8", "surrogatepass")
        )
        if head and not head.endswith("\n"):
            number = head.count("\n") + 1
            assert f"line {number} cut at {len(head.split(chr(10))[-1]):,} of " in found["cuts"]
        if tail and not original[: len(original) - len(tail)].endswith("\n"):
            number = original[: len(original) - len(tail)].count("\n") + 1
            assert f"line {number} shown from character" in found["cuts"]
        return
    whole = set(lines)
    for line in rest.split("\n"):
        if numbered := NUMBERED.match(line):
            n = int(numbered[1])
            assert shown_whole_or_said_cut(numbered[2], lines[n - 1].rstrip("\r")), line
        elif section := SECTION.match(line):
            heading, title = lines[int(section[1]) - 1].strip(), section["title"]
            own = title == "(before the first section)"
            key = title.endswith(":") and heading.startswith(title)  # a YAML section's key
            cut = CUT.match(title)  # a YAML key too long for a title: its start, said cut
            long_key = cut is not None and heading.startswith(cut["kept"])
            assert own or key or long_key or shown_whole_or_said_cut(title, heading), line
        elif entry := ENTRY.match(line):
            source = lines[int(entry["line"]) - 1].strip().rstrip("{").rstrip()
            what = entry["what"]
            assert shown_whole_or_said_cut(what, source) or not CUT.match(what), line
        else:
            own = line.startswith(("…", "module docstring: ", "imports: "))
            assert own or line in whole, line


@settings(max_examples=300, deadline=None)
@given(
    text=line_soup | st.text(min_size=200, max_size=6000),
    budget=st.integers(256, 3000),
    name=st.sampled_from([None, "m.py", "m.ts", "m.go", "m.rs", "Main.java", "m.c", "notes.md"]),
    content_type=st.sampled_from(["text", "yaml"]),
)
def test_any_text_fits_and_says_where_it_is_cut(
    text: str, budget: int, name: str | None, content_type: str
) -> None:
    """Whatever the text, its name and the budget: the preview fits the budget, and any line
    of the text it shows is shown whole or said to be cut, never cut silently."""
    shown = preview(text, budget, content_type, redact=False, name=name).text
    assert len(shown.encode("utf-8", "surrogatepass")) <= budget
    assert_cuts_are_said(text, shown)
    event(
        "whole"
        if shown == text
        else shown.split(",", 1)[0] + ("; by bytes" if "first and last bytes" in shown else "")
    )


_QUADRATIC_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
"""The heading pattern before: the same lines, in time quadratic in a heading's spaces."""


@settings(max_examples=300)
@given(st.lists(st.text(alphabet="# \t\rab\n", max_size=12), max_size=8))
def test_markdown_headings_are_the_lines_they_were(lines: list[str]) -> None:
    """The one-pass heading pattern finds exactly the lines the lazy one did."""
    text = "\n".join(lines)
    found = [m.group(0) for m in _MD_HEADING.finditer(text)]
    assert found == [m.group(0) for m in _QUADRATIC_HEADING.finditer(text)]


def test_a_heading_of_forty_thousand_spaces_is_one_section() -> None:
    """A heading padded with 40,000 spaces (24 s to preview before) is a section like any."""
    text = "# a\n\n" + "text\n" * 100 + "# b" + " " * 40_000 + "x\n" + "text\n" * 100
    shown = preview(text, 2048, "text", size_bytes=len(text)).text
    assert "2 sections" in shown and "L103-" in shown
