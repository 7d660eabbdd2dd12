"""``mcpServers`` in config.json: each entry checked on its own, ``${VAR}`` expansion, the
names servers and tools are reached by, and Python signatures made from JSON schemas."""

from __future__ import annotations

import ast
import keyword
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabric._config import parse
from fabric.mcpclient import expand, python_name
from fabric.mcpclient._settings import UnsetVariable
from fabric.providers import python_type, schema_signature

_REGISTRY_SEGMENT = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*$")


def test_a_bad_entry_is_a_warning_naming_its_field_and_the_others_load() -> None:
    loaded = parse(
        {
            "mcpServers": {
                "git": {"command": "uvx", "args": ["mcp-server-git"]},
                "typo": {"command": "x", "args": ["a", 2], "timeoutS": -1},
                "both": {"command": "x", "url": "https://example.com/mcp"},
                "neither": {"args": []},
                "list": {"command": "x"},
                "web": {"url": "ftp://example.com"},
            }
        }
    )
    assert list(loaded.config.mcp_servers) == ["git"]
    said = "\n".join(loaded.warnings)
    assert "mcpServers.typo.args.1 must be a string, not 2" in said
    assert "mcpServers.typo.timeoutS must be at least 0.1, not -1" in said
    assert (
        'mcpServers.both: give "command"' in said and 'mcpServers.neither: give "command"' in said
    )
    assert "mcpServers.list: the name is mcp's own" in said
    assert "mcpServers.web.url" in said


def test_mcp_servers_that_is_not_an_object() -> None:
    loaded = parse({"mcpServers": ["git"]})
    assert loaded.config.mcp_servers == {}
    assert "mcpServers must be an object of servers by name" in loaded.warnings[0]


def test_two_names_reached_alike_are_refused() -> None:
    loaded = parse({"mcpServers": {"my-git": {"command": "a"}, "my_git": {"command": "b"}}})
    assert list(loaded.config.mcp_servers) == ["my-git"]
    assert "mcpServers.my_git: reached as mcp.my_git, as 'my-git' is" in loaded.warnings[0]


def test_an_unset_variable_is_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FABRIC_TEST_UNSET", raising=False)
    server = {"url": "https://example.com/mcp", "headers": {"A": "${FABRIC_TEST_UNSET}"}}
    loaded = parse({"mcpServers": {"docs": server, "ok": {**server, "headers": {"A": "${X:-1}"}}}})
    assert set(loaded.config.mcp_servers) == {"docs", "ok"}  # it may be set before first use
    (warning,) = loaded.warnings
    assert "mcpServers.docs uses ${FABRIC_TEST_UNSET}, which is not set" in warning


def test_literal_secrets_are_not_shown_in_the_settings() -> None:
    server = {"command": "x", "env": {"TOKEN": "abc123", "HOME_DIR": "${HOME}"}}
    flat = parse({"mcpServers": {"s": server}}).config.flat()
    assert flat["mcpServers"]["s"]["env"] == {"TOKEN": "<hidden>", "HOME_DIR": "${HOME}"}


@given(st.text())
def test_python_names_are_names_the_registry_takes(name: str) -> None:
    spelled = python_name(name)
    assert spelled == "" or _REGISTRY_SEGMENT.match(spelled), spelled
    assert python_name(spelled) == spelled


@given(st.text().filter(lambda t: "${" not in t))
def test_text_without_variables_is_unchanged(text: str) -> None:
    assert expand(text, {}) == text


@given(
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True),
    st.text(alphabet=st.characters(blacklist_characters="}"), max_size=10),
    st.text(max_size=10),
)
def test_variables_expand_with_their_defaults(name: str, default: str, value: str) -> None:
    assert expand(f"a ${{{name}}} b", {name: value}) == f"a {value} b"
    assert expand(f"${{{name}:-{default}}}", {}) == default
    with pytest.raises(UnsetVariable):
        expand(f"${{{name}}}", {})


_SCHEMAS = st.recursive(
    st.sampled_from(
        [
            {"type": "string"},
            {"type": "integer"},
            {"type": "number"},
            {"type": "boolean"},
            {"type": "null"},
            {"enum": ["a", "b"]},
            {"type": ["string", "null"]},
            {"$ref": "#/$defs/X"},
            {},
        ]
    ),
    lambda inner: st.one_of(
        st.builds(lambda i: {"type": "array", "items": i}, inner),
        st.builds(lambda i: {"type": "object", "additionalProperties": i}, inner),
        st.builds(lambda a, b: {"anyOf": [a, b]}, inner, inner),
    ),
    max_leaves=6,
)


@given(_SCHEMAS)
def test_schema_types_are_python_annotations(schema: dict[str, Any]) -> None:
    ast.parse(python_type(schema), mode="eval")


_IDENTIFIERS = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda name: not keyword.iskeyword(name)  # "from" is shown as it is: pass it by position
)


@given(st.dictionaries(_IDENTIFIERS, _SCHEMAS, max_size=5))
def test_signatures_list_every_property_in_schema_order(properties: dict[str, Any]) -> None:
    schema = {"type": "object", "properties": properties, "required": list(properties)}
    signature = schema_signature("mcp.s.tool", schema)
    tree = ast.parse(f"def f{signature.removeprefix('mcp.s.tool')}: pass")
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef)
    assert [a.arg for a in function.args.args] == list(properties)


def test_signature_examples() -> None:
    schema = {
        "type": "object",
        "properties": {
            "repo_path": {"type": "string"},
            "max_count": {"type": "integer", "default": 10},
            "mode": {"enum": ["a", "b"]},
            "files": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["repo_path", "files"],
    }
    assert schema_signature("mcp.git.git_log", schema) == (
        "mcp.git.git_log(repo_path: str, max_count: int = 10, mode: Literal['a', 'b'] = None, "
        "files: list[str])"
    )
