"""Content blocks at the boundary: all text blocks share one budget, media stay in place,
and the text held back is under one handle (the exact text of a single text block, else
``{"textBlocks": [{"index", "text"}]}``)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from runtime import (
    BLOCK_TYPES,
    MAX_BLOCKS,
    MAX_MEDIA_BYTES,
    MAX_MEDIUM_BYTES,
    MAX_META_BYTES,
    MAX_META_DEPTH,
    MAX_MIME_CHARS,
    MAX_URI_CHARS,
    AudioBlock,
    BlockAnnotations,
    ContentBlock,
    ExecResult,
    ImageBlock,
    ResourceBlock,
    TextBlock,
)
from runtime.boundary import HEADER_BYTES, Boundary, BoundaryConfig, StoredReadable, read
from store import Store

from .conftest import ok

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
GIF = b"GIF89a" + bytes(32)
MARKER = "OKAPI-5150"
THRESHOLD = 2048


def image(data: bytes = PNG, **extra: Any) -> dict[str, Any]:
    return {"type": "image", "data": data, "mime_type": "image/png", **extra}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def big_text(lines: int = 5000, marker_at: int | None = None) -> str:
    rows = [f"row {i}: nothing to see" for i in range(lines)]
    if marker_at is not None:
        rows[marker_at] = f"row {marker_at}: {MARKER} is here"
    return "\n".join(rows)


def nested(depth: int) -> dict[str, Any]:
    inner: dict[str, Any] = {}
    for _ in range(depth):
        inner = {"a": inner}
    return inner


def cycle() -> dict[str, Any]:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    return loop


def shown_text(blocks: tuple[ContentBlock, ...]) -> int:
    """Bytes of text the model reads in ``blocks``."""
    total = 0
    for block in blocks:
        if isinstance(block, TextBlock):
            total += len(block.text.encode())
        elif block.type == "resource" and hasattr(block.resource, "text"):
            total += len(block.resource.text.encode())
    return total


def media(blocks: list[Any] | tuple[Any, ...]) -> list[bytes]:
    out = []
    for block in blocks:
        if isinstance(block, dict) and block["type"] == "image":
            out.append(block["data"])
        elif isinstance(block, ImageBlock):
            out.append(block.data)
    return out


@pytest.fixture
def tight(store: Store) -> Boundary:
    return Boundary(store, BoundaryConfig(read_offload_threshold=THRESHOLD))


# -- within the budget ----------------------------------------------------------------------


def test_blocks_within_the_budget_reach_the_model_as_they_are(boundary: Boundary) -> None:
    """Text, an image and text: the same three blocks, nothing stored, media counted apart."""
    done = boundary.finish(ok([text("Figure 1:"), image(), text("the end")]))
    assert done.ok and done.policy_applied == "inline" and done.handle is None
    assert [b.type for b in done.blocks] == ["text", "image", "text"]
    assert done.blocks[1] == ImageBlock(data=PNG, mime_type="image/png")
    assert done.text == f"Figure 1:\n[image/png, {len(PNG)} bytes]\nthe end"
    assert done.bytes == len("Figure 1:\nthe end") and done.media_bytes == len(PNG)


def test_printed_output_is_a_last_text_block(boundary: Boundary) -> None:
    done = boundary.finish(ok([image(), text("caption")], logs="step 1\n"))
    assert [b.type for b in done.blocks] == ["image", "text", "text"]
    last = done.blocks[-1]
    assert isinstance(last, TextBlock) and last.text == "[printed output]\nstep 1\n"


def test_notes_on_the_value_are_a_last_text_block(boundary: Boundary) -> None:
    result = ExecResult(ok=True, text="", value=[image()], warnings=("NaN at $[0] made a string",))
    done = boundary.finish(result)
    assert done.blocks[-1] == TextBlock(text="[note: NaN at $[0] made a string]")


def test_a_plain_value_has_no_blocks(boundary: Boundary) -> None:
    done = boundary.finish(ok({"a": 1}))
    assert done.blocks == () and done.media_bytes == 0


def test_mcp_content_is_taken_as_it_is(boundary: Boundary) -> None:
    """What an MCP provider returned: base64 text, ``mimeType``, annotations, ``_meta``; and
    an SDK model's JSON dump (``mime_type``, ``meta``, unset fields as null)."""
    wire = {
        "type": "image",
        "data": base64.b64encode(PNG).decode(),
        "mimeType": "image/png",
        "annotations": {"audience": ["user"], "priority": 0.5},
        "_meta": {"source": "charts"},
    }
    dumped = {"type": "text", "text": "hi", "annotations": None, "meta": None}
    done = boundary.finish(ok([wire, dumped]))
    first = done.blocks[0]
    assert isinstance(first, ImageBlock) and first.data == PNG
    assert first.annotations is not None and first.annotations.audience == ["user"]
    assert first.meta == {"source": "charts"}
    assert done.blocks[1] == TextBlock(text="hi")


# -- over the budget ------------------------------------------------------------------------


def test_an_image_and_a_large_text_keep_the_image_and_put_the_text_under_the_handle(
    boundary: Boundary, store: Store
) -> None:
    """The caption and the image stay where they were; in place of the large text, the
    notice; the marker is found in the handle with one read."""
    large = big_text(marker_at=3210)
    done = boundary.finish(ok([text("Figure 1: the load"), image(), text(large)]))
    assert done.policy_applied == "offload" and done.handle is not None
    caption, picture, notice = done.blocks
    assert caption == TextBlock(text="Figure 1: the load")
    assert isinstance(picture, ImageBlock) and picture.data == PNG
    assert isinstance(notice, TextBlock) and f"stored as {done.handle}" in notice.text
    assert "block 0 is also shown here" in notice.text and "nothing is lost" in notice.text
    stored = json.loads(store.get(done.handle))
    assert stored == {
        "textBlocks": [{"index": 0, "text": "Figure 1: the load"}, {"index": 2, "text": large}]
    }
    found = read(StoredReadable(store, store.stat(done.handle)), budget=4000, query=MARKER)
    assert found.total_matches == 1 and MARKER in found.text


def test_a_single_text_block_is_stored_as_its_exact_text(boundary: Boundary, store: Store) -> None:
    large = big_text(marker_at=10)
    done = boundary.finish(ok([image(), text(large), image(GIF, mime_type="image/gif")]))
    assert done.handle is not None and store.get(done.handle) == large.encode()
    assert [b.type for b in done.blocks] == ["image", "text", "image"]
    assert "exact text of block 1 of the 3 content blocks" in done.text
    found = read(StoredReadable(store, store.stat(done.handle)), budget=4000, query=MARKER)
    assert found.windows[0].line == 11


def test_a_single_resource_keeps_its_exact_text_and_the_notice_its_uri(
    boundary: Boundary, store: Store
) -> None:
    """The handle holds the resource's exact text; its uri and media type, which the model
    no longer gets as a block, are in the notice's line of what the handle holds."""
    large = big_text(marker_at=10)
    resource = {"uri": "file:///reports/q3.txt", "mime_type": "text/plain", "text": large}
    done = boundary.finish(ok([image(), {"type": "resource", "resource": resource}]))
    assert done.handle is not None and store.get(done.handle) == large.encode()
    assert [b.type for b in done.blocks] == ["image", "text"]
    assert (
        "exact text of block 1 (the resource file:///reports/q3.txt, text/plain) of the 2 "
        "content blocks"
    ) in done.text


def test_resources_among_several_text_blocks_keep_uri_and_media_type(
    boundary: Boundary, store: Store
) -> None:
    resource = {"uri": "file:///q3.txt", "mimeType": "text/plain", "text": big_text()}
    done = boundary.finish(ok([{"type": "resource", "resource": resource}, text(big_text())]))
    assert done.handle is not None
    first = json.loads(store.get(done.handle))["textBlocks"][0]
    assert (first["uri"], first["mime_type"]) == ("file:///q3.txt", "text/plain")


def test_short_siblings_stay_within_their_allowance(store: Store) -> None:
    """Short text blocks (512 bytes at most) stay beside the media, first come first kept,
    within a quarter of the budget; the notice stands where the first block held back stood;
    every text block is stored."""
    boundary = Boundary(store, BoundaryConfig(read_offload_threshold=4096))
    a, b, c, d, long = "a" * 300, "b" * 300, "c" * 300, "d" * 300, "e" * 600
    blocks = [text(a), image(), text(big_text(400)), text(b), text(long), text(c), text(d)]
    done = boundary.finish(ok(blocks))
    firsts = [block.text[:1] if isinstance(block, TextBlock) else "image" for block in done.blocks]
    assert firsts == ["a", "image", "[", "b", "c"]  # "[": the notice
    assert "blocks 0, 3, 5 are also shown here" in done.text
    stored = json.loads(store.get(done.handle or ""))
    assert [entry["index"] for entry in stored["textBlocks"]] == [0, 2, 3, 4, 5, 6]


def test_offload_policy_stores_the_text_of_small_blocks(boundary: Boundary, store: Store) -> None:
    done = boundary.finish(ok([text("x"), image(), text("y")]), policy="offload")
    assert done.policy_applied == "offload" and done.handle is not None
    assert json.loads(store.get(done.handle)) == {
        "textBlocks": [{"index": 0, "text": "x"}, {"index": 2, "text": "y"}]
    }
    assert [b.type for b in done.blocks] == ["text", "image"]  # the notice, then the image


def test_inline_policy_never_rewrites_blocks(boundary: Boundary) -> None:
    large = big_text()
    done = boundary.finish(ok([image(), text(large)]), policy="inline")
    assert done.handle is None and done.blocks[1] == TextBlock(text=large)


def test_media_alone_are_never_offloaded(boundary: Boundary) -> None:
    done = boundary.finish(ok([image(), image()]), policy="offload")
    assert done.handle is None and len(done.blocks) == 2


def test_a_summary_keeps_the_media(boundary: Boundary) -> None:
    done = boundary.finish(ok([image(), text(big_text())]), policy="summarize")
    assert done.policy_applied == "summarize" and "[summary stored as" in done.text
    assert done.blocks[0].type == "image"


def test_without_a_store_the_text_is_previewed_and_the_loss_said() -> None:
    done = Boundary(None).finish(ok([image(), text(big_text())]))
    assert done.handle is None and "could not be stored: no store is configured" in done.text
    assert done.blocks[0].type == "image"


def test_the_whole_result_serializes_with_media_as_base64(boundary: Boundary) -> None:
    done = boundary.finish(ok([text("hi"), image()]))
    dumped = json.loads(done.model_dump_json())
    assert dumped["blocks"][1]["data"] == base64.b64encode(PNG).decode()
    assert dumped["value"][1]["data"] == {
        "bytes": len(PNG),
        "base64": base64.b64encode(PNG).decode(),
    }


# -- recognising ----------------------------------------------------------------------------

PLAIN = {
    "an empty list": [],
    "a list with another key": [{"type": "text", "text": "hi", "id": 3}],
    "a list with a non-dict item": [text("hi"), "hi"],
    "a list with an unknown type": [{"type": "video", "data": "x"}],
    "a list with a non-text type": [{"type": ["text"], "text": "hi"}],
    "a dict that is one block": {"type": "text", "text": "hi"},
}


@pytest.mark.parametrize("value", PLAIN.values(), ids=PLAIN.keys())
def test_what_is_not_exactly_blocks_stays_plain_data(boundary: Boundary, value: Any) -> None:
    done = boundary.finish(ok(value))
    assert done.ok and done.blocks == () and done.value == value


def test_a_list_meant_as_blocks_says_why_it_is_plain_data(boundary: Boundary) -> None:
    """A typo in an image block: plain data, and a note naming the item and the key."""
    done = boundary.finish(ok([text("see:"), {"type": "image", "data": PNG, "mimetype": "x"}]))
    assert done.ok and done.blocks == ()
    assert (
        "[note: shown as plain data, not content blocks: value[1] has 'mimetype', which an "
        "image block does not take (it takes type, data, mime_type, annotations, _meta)]"
    ) in done.text


BAD = {
    "missing text": ([{"type": "text"}], "value[0].text: missing"),
    "text not a str": ([text("a"), {"type": "text", "text": 3}], "value[1].text: input should"),
    "missing mime type": ([{"type": "image", "data": PNG}], "value[0].mime_type: missing"),
    "unread image type": ([image(mime_type="image/bmp")], "value[0].mime_type: 'image/bmp' is"),
    "mimeType as typed": (
        [{"type": "image", "data": PNG, "mimeType": "image/tiff"}],
        "value[0].mimeType: 'image/tiff'",
    ),
    "bytes of another type": ([image(GIF)], "value[0].data: the bytes are image/gif, not"),
    "bytes of no image": ([image(b"hello")], "value[0].data: the bytes (starting 68 65 6c 6c"),
    "data not base64": ([image("not base64!")], "value[0].data: neither bytes nor base64"),
    "data a number": ([image(7)], "value[0].data: input should be a valid bytes, not int"),
    "two spellings": (
        [image(mimeType="image/png")],
        "value[0].mimeType: a second spelling of mime_type",
    ),
    "unknown audio type": (
        [{"type": "audio", "data": b"x", "mime_type": "audio/midi"}],
        "value[0].mime_type: 'audio/midi' is not an audio type models read",
    ),
    "resource without uri": (
        [{"type": "resource", "resource": {"text": "x"}}],
        "value[0].resource.uri: missing",
    ),
    "resource with another key": (
        [{"type": "resource", "resource": {"uri": "file:///a", "text": "x", "size": 1}}],
        "value[0].resource.size: not a field here",
    ),
    "resource not an object": (
        [{"type": "resource", "resource": "file:///a"}],
        "value[0].resource: must be an object with uri and text (or blob), not str",
    ),
    "bad resource media type": (
        [{"type": "resource", "resource": {"uri": "u", "text": "x", "mimeType": "plain"}}],
        "value[0].resource.mimeType: 'plain' is not a media type",
    ),
    "bad audience": (
        [{"type": "text", "text": "x", "annotations": {"audience": ["robot"]}}],
        "value[0].annotations.audience[0]: input should be 'user' or 'assistant'",
    ),
    "two spellings of _meta": (
        [{"type": "text", "text": "x", "_meta": {}, "meta": {}}],
        "value[0].meta: a second spelling of _meta",
    ),
    "_meta nested too deep": (
        [{"type": "text", "text": "x", "_meta": nested(300)}],
        f"value[0]._meta: nests deeper than {MAX_META_DEPTH} levels",
    ),
    "_meta a cycle": ([{"type": "text", "text": "x", "_meta": cycle()}], "value[0]._meta: nests"),
    "_meta key not text": (
        [{"type": "text", "text": "x", "_meta": {1: 2}}],
        "value[0]._meta: has a key of type int (1), not text",
    ),
    "_meta not JSON": (
        [image(_meta={"a": [float("nan")]})],
        "value[0]._meta: holds nan, which JSON has not",
    ),
    "a resource's _meta of bytes": (
        [{"type": "resource", "resource": {"uri": "a:b", "text": "", "meta": {"k": b"x"}}}],
        "value[0].resource.meta: holds a value of type bytes, which is not JSON",
    ),
    "priority not a number": (
        [{"type": "text", "text": "x", "annotations": {"priority": float("nan")}}],
        "value[0].annotations.priority: must be a number from 0 to 1, not nan",
    ),
    "priority over 1": (
        [{"type": "text", "text": "x", "annotations": {"priority": 2.0}}],
        "value[0].annotations.priority: must be a number from 0 to 1, not 2.0",
    ),
}


def test_a_bad_block_keeps_the_printed_output(boundary: Boundary) -> None:
    done = boundary.finish(ok([{"type": "text"}], logs="got here\n"))
    assert not done.ok and done.text.endswith("[printed output]\ngot here\n")


LIMITS = {
    "too many blocks": (
        [text("x")] * (MAX_BLOCKS + 1),
        f"value: {MAX_BLOCKS + 1} content blocks, more than the {MAX_BLOCKS}",
    ),
    "a medium over its cap": (
        [text("x"), image(PNG + bytes(MAX_MEDIUM_BYTES))],
        f"value[1].data: {len(PNG) + MAX_MEDIUM_BYTES} bytes, more than the {MAX_MEDIUM_BYTES}",
    ),
    "media over their cap together": (
        [image(PNG + bytes(MAX_MEDIUM_BYTES - len(PNG)))] * (MAX_MEDIA_BYTES // MAX_MEDIUM_BYTES)
        + [image()],
        "value: the media hold",
    ),
    "a long uri": (
        [{"type": "resource", "resource": {"uri": "file:///" + "u" * 3_000_000, "text": "hi"}}],
        f"value[0].resource.uri: 3000008 characters, more than the {MAX_URI_CHARS} it may have",
    ),
    "a long blob uri": (
        [{"type": "resource", "resource": {"uri": "u" * 3000, "blob": b"hi"}}],
        f"value[0].resource.uri: 3000 characters, more than the {MAX_URI_CHARS}",
    ),
    "a long resource media type": (
        [
            {
                "type": "resource",
                "resource": {"uri": "a:b", "mimeType": "a/" + "b" * 3000, "text": ""},
            }
        ],
        f"value[0].resource.mimeType: 3002 characters, more than the {MAX_MIME_CHARS}",
    ),
    "a long image media type": (
        [image(mime_type="image/" + "p" * 3000)],
        f"value[0].mime_type: 3006 characters, more than the {MAX_MIME_CHARS}",
    ),
    "a long audience": (
        [{"type": "text", "text": "x", "annotations": {"audience": ["user"] * 100_000}}],
        "value[0].annotations.audience: 100000 items, more than the 2 it may have",
    ),
    "a wide _meta": (
        [{"type": "text", "text": "x", "_meta": {str(i): i for i in range(1_000_000)}}],
        f"value[0]._meta: more than {MAX_META_BYTES} bytes as JSON",
    ),
    "a long text in _meta": (
        [{"type": "text", "text": "x", "_meta": {"m": "z" * 20_000_000}}],
        f"value[0]._meta: more than {MAX_META_BYTES} bytes as JSON",
    ),
    "the _meta of all blocks": (
        [{"type": "text", "text": "x", "_meta": {"m": "z" * (MAX_META_BYTES // 2)}}] * 3,
        "value: the _meta of the blocks hold about",
    ),
    "a long last_modified": (
        [{"type": "text", "text": "x", "annotations": {"lastModified": "2" * 1000}}],
        "value[0].annotations.lastModified: 1000 characters, more than the 64",
    ),
}


ERRORS = [
    *(pytest.param(value, "runtime", message, id=name) for name, (value, message) in BAD.items()),
    *(pytest.param(value, "limit", message, id=name) for name, (value, message) in LIMITS.items()),
]
TYPES = {"runtime": "ContentBlockError", "limit": "ContentTooLarge"}


@pytest.mark.parametrize(("value", "kind", "message"), ERRORS)
def test_a_bad_block_is_an_error_naming_its_index_and_field(
    boundary: Boundary, value: Any, kind: str, message: str
) -> None:
    """A bad block is a ``runtime`` error, one over a cap a ``limit`` error with the limit;
    both name where (``value[i].field``) and how to fix it."""
    done = boundary.finish(ok(value))
    assert not done.ok and done.error is not None and done.error.kind == kind
    assert done.error.type == TYPES[kind] and done.error.hint
    assert (done.error.limit is not None) == (kind == "limit")
    assert done.error.message.startswith(message), done.error.message
    assert done.text.startswith(f"{TYPES[kind]}: {message}")


def test_a_long_list_of_blocks_is_refused_from_its_first_items(boundary: Boundary) -> None:
    """Only the first 65 items are looked at: when they are all blocks, the list is too many
    blocks, whatever follows."""
    done = boundary.finish(ok([text("x")] * (MAX_BLOCKS + 1) + ["not a block"] * 1_000_000))
    assert done.error is not None and done.error.type == "ContentTooLarge"
    assert done.error.message.startswith(f"value: {MAX_BLOCKS + 1 + 1_000_000} content blocks")


# -- over any list of blocks ----------------------------------------------------------------

_FIXTURE = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
texts = st.one_of(
    st.text(max_size=700),
    st.builds(
        lambda n, word: "\n".join(f"{word} {i}" for i in range(n)),
        st.integers(0, 3000),
        st.sampled_from(["alpha", "βήτα", "日本語", "a\tb"]),
    ),
)
medium = st.builds(lambda n: image(PNG + bytes(n)), st.integers(0, 300))
resource = st.builds(
    lambda t: {"type": "resource", "resource": {"uri": "file:///r.txt", "text": t}}, texts
)
blocks = st.lists(st.one_of(texts.map(text), medium, resource), min_size=1, max_size=12)


@settings(max_examples=200, deadline=None, suppress_health_check=_FIXTURE)
@given(
    value=blocks,
    logs=st.one_of(st.just(""), st.text(max_size=3000)),
    threshold=st.sampled_from([1024, 2048, 4096, 16384]),
    policy=st.sampled_from(["auto", "auto", "offload", "summarize"]),
)
def test_the_text_blocks_share_one_budget_and_none_is_lost(
    store: Store, value: list[dict[str, Any]], logs: str, threshold: int, policy: Any
) -> None:
    """Whatever the blocks: the text the model reads stays within the budget (and a notice),
    the media reach it in their order, and each text block is shown whole or stored whole
    under the handle at its index."""
    boundary = Boundary(store, BoundaryConfig(read_offload_threshold=threshold))
    done = boundary.finish(ExecResult(ok=True, text="", value=value, logs=logs), policy=policy)
    assert done.ok, done.text
    assert shown_text(done.blocks) <= threshold + HEADER_BYTES
    assert media(done.blocks) == media(value)
    given_texts = [
        (i, b["text"] if b["type"] == "text" else b["resource"]["text"])
        for i, b in enumerate(value)
        if b["type"] != "image"
    ]
    event(f"{done.policy_applied}, {'one text' if len(given_texts) == 1 else 'texts'}")
    if done.handle is not None:
        stored = store.get(done.handle).decode()
        if len(given_texts) == 1:
            assert stored == given_texts[0][1]
        else:
            entries = json.loads(stored)["textBlocks"]
            assert [(e["index"], e["text"]) for e in entries] == given_texts
    else:
        shown = [b.text for b in done.blocks if isinstance(b, TextBlock)]
        shown += [
            b.resource.text
            for b in done.blocks
            if b.type == "resource" and hasattr(b.resource, "text")
        ]
        for _, original in given_texts:
            assert original in shown
    size = sum(len(t.encode()) for _, t in given_texts)
    if policy == "auto" and size + len(logs.encode()) <= threshold - 64:
        assert done.handle is None and done.policy_applied == "inline"


# -- declared once --------------------------------------------------------------------------


def test_the_readme_table_is_generated_from_the_models() -> None:
    """Regenerate with ``python -m runtime._content_docs README.md``."""
    from contract import readme_block
    from runtime._content_docs import END, START, readme_table

    text = (Path(__file__).parents[3] / "README.md").read_text(encoding="utf-8")
    assert readme_block(text, START, END) == readme_table()


def test_block_annotations_are_the_sdks() -> None:
    """What a block's annotations take is what MCP's ``Annotations`` has (they are
    forwarded to MCP clients as they are)."""
    from mcp_types import Annotations

    assert set(BlockAnnotations.model_fields) == set(Annotations.model_fields)
    assert BlockAnnotations.model_fields["last_modified"].validation_alias is not None


def test_the_block_models_are_the_sdks_content_kinds() -> None:
    """Each kind of block is one of the SDK's content blocks, with the same fields."""
    from mcp_types import AudioContent, EmbeddedResource, ImageContent, TextContent

    pairs = [
        (TextBlock, TextContent),
        (ImageBlock, ImageContent),
        (AudioBlock, AudioContent),
        (ResourceBlock, EmbeddedResource),
    ]
    assert tuple(ours.model_fields["type"].default for ours, _ in pairs) == BLOCK_TYPES
    for ours, sdk in pairs:
        assert set(ours.model_fields) == set(sdk.model_fields), ours.__name__
