"""The definition rules of line-heuristic outlines: each finds its definition lines, never
looks past a line of ``MAX_LINE`` characters, and gives a line built to backtrack no more
than one pass over it."""

from __future__ import annotations

import re

import pytest

from runtime.boundary import preview
from runtime.boundary._outline import MAX_DEFINITIONS
from runtime.boundary._outline_heuristic import (
    _LINE_START,
    _RULES,
    MAX_LINE,
    SCANNED_CHARS,
    heuristic_outline,
)

SAMPLES = {
    "python": ["    async def NAME(self):"],
    "javascript": [
        "export default class NAME {",
        "export async function NAME(a) {",
        "export type NAME<T> = {",
        "const NAME = async (a: A): B => {",
        "  static async NAME(a, b) {",
    ],
    "go": ["func (s *Server) NAME(x int) {", "type NAME struct {"],
    "rust": [
        'pub(crate) const unsafe extern "C" fn NAME(x: u8) -> u8 {',
        "pub struct NAME {",
        "impl<T: Into<Vec<u8>>> Display for NAME<T> where T: ClonePAD {",
    ],
    "java": [
        "public final class NAME {",
        "  public <T extends Comparable<T>> T NAME(T a, T b) throws IOException {",
    ],
    "c": [
        "static const char *NAME(int argc, char **argv) {",
        "template<typename T, typename U = std::vector<T>> class NAME {",
    ],
}
"""One definition line per rule, in the order of the rules; NAME is the defined name, PAD
(NAME if absent) where the line is made long."""
RULES = [
    pytest.param(rule, sample, id=f"{language}-{n}")
    for language, samples in SAMPLES.items()
    for n, (rule, sample) in enumerate(zip(_RULES[language], samples, strict=True))
]
ADVERSARIAL = [
    "impl " + "where " * 33 + "x" * 4_000 + "{ y",
    "impl<" + "> " * 2_000 + "{ y",
    "a (" * 40 + "x" * 4_000 + ";",
    "  " + "a " * 60 + "b(" + ")x" * 2_000,
    "  " + "static " * 10 + "f(" + "a" * 100 + ")" + " b" * 2_000,
    "  " + "public " * 500 + "f(" + " " * 2_000 + "{ ",
    "const f" + ": x" * 2_000 + " = (" + "a" * 2_000,
    "    " + "def " * 1_000,
    " \t" * 2_000 + "fn",
]
"""Lines past ``MAX_LINE`` that backtracked for seconds before (a name of 200 characters tried
against every ``where``, a type split at every space, a ``)`` tried at every one)."""


def test_there_is_a_sample_for_every_rule() -> None:
    """Every rule of every language is exercised below."""
    assert {language: len(rules) for language, rules in _RULES.items() if language != "cpp"} == {
        language: len(samples) for language, samples in SAMPLES.items()
    } | {"typescript": len(SAMPLES["javascript"])}


@pytest.mark.parametrize(("rule", "sample"), RULES)
def test_each_rule_finds_its_definition_line(rule: re.Pattern[str], sample: str) -> None:
    """A definition line is found, with its name."""
    line = sample.replace("NAME", "Engine").replace("PAD", "")
    found = rule.search(f"// before\n{line}\n// after\n")
    assert found is not None and "Engine" in found.group("name")


@pytest.mark.parametrize(("rule", "sample"), RULES)
def test_no_rule_looks_past_a_line_of_max_line_characters(
    rule: re.Pattern[str], sample: str
) -> None:
    """The same definition line is skipped once its name makes it longer than ``MAX_LINE``:
    every rule starts by checking the line's length, which stops within ``MAX_LINE + 1``
    characters, so no rule does more than that bounded work at the start of a line."""
    assert rule.pattern.startswith(_LINE_START)
    pad = "PAD" if "PAD" in sample else "NAME"
    sample = sample.replace("NAME", "Engine") if pad == "PAD" else sample
    fits = sample.replace(pad, "E" * (MAX_LINE - len(sample) + len(pad)))
    assert len(fits) == MAX_LINE and rule.search(fits) is not None
    assert rule.search(sample.replace(pad, "E" * MAX_LINE)) is None


@pytest.mark.parametrize("line", ADVERSARIAL, ids=range(len(ADVERSARIAL)))
def test_lines_built_to_backtrack_are_skipped_by_their_length(line: str) -> None:
    """No rule of any language matches a long line built to backtrack."""
    assert len(line) > MAX_LINE
    for rules in _RULES.values():
        assert not any(rule.search(line) for rule in rules)


@pytest.mark.parametrize("width", [MAX_LINE // 2, MAX_LINE - 8])
def test_lines_built_to_backtrack_within_max_line_match_as_written(width: int) -> None:
    """The same lines cut to fit ``MAX_LINE``: a possessive rule settles each in one pass, to
    the result the rule's words say (an ``impl`` line ending in ``{ y`` opens no block)."""
    for line in ADVERSARIAL:
        short = line[:width]
        for rules in _RULES.values():
            for rule in rules:
                rule.search(short)
    assert _RULES["rust"][2].search(ADVERSARIAL[0][:width] + "{ y") is None
    assert _RULES["rust"][2].search(ADVERSARIAL[0][:width] + " {") is not None


def test_an_outline_goes_on_past_lines_too_long_to_define_anything() -> None:
    """Three lines of a megabyte before a definition: they are passed over, the definition
    after them is found."""
    text = ("impl " + "where " * 33 + "x" * 1_000_000 + "{ y\n") * 3 + "fn main() {\n}\n"
    outline = heuristic_outline(text, "rust")
    assert [(d.name, d.line) for d in outline.definitions] == [("main", 4)]
    shown = preview(text, 4096, "text", size_bytes=len(text), name="x.rs")
    assert "L4-5 fn main" in shown.text


def test_definitions_past_the_room_are_counted_within_the_scanned_characters() -> None:
    """A million definitions: the first ``MAX_DEFINITIONS`` described, the rest counted, and
    only in the first ``SCANNED_CHARS`` characters, which the outline says it looked at."""
    line = "function f(){}\n"
    text = line * 1_000_000
    outline = heuristic_outline(text, "javascript")
    within = SCANNED_CHARS // len(line)
    assert len(outline.definitions) == MAX_DEFINITIONS
    assert outline.total == within
    assert f"lines 1-{within + 1} only (the first {SCANNED_CHARS:,} characters)" in outline.how
