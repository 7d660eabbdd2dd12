"""ctx_summarize(mode="model") against a test double that speaks the OpenAI chat protocol."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from fabric import Fabric
from fabric._llm import Budgets, OpenAICompatible, summarize_with_model
from runtime import ProviderCallError
from runtime.boundary import TokenCounter

COUNT = TokenCounter().count


class FakeModel(BaseHTTPRequestHandler):
    requests: ClassVar[list[dict[str, Any]]] = []
    status: ClassVar[int] = 200

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeModel.requests.append(
            {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
        )
        text = body["messages"][1]["content"]
        answer = f"summary of {len(text)} chars: {text[:30]!r}"
        payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": answer}}]})
        self.send_response(FakeModel.status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(payload.encode())

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeModel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


@pytest.fixture
async def fab(
    tmp_path: Path, endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Fabric]:
    monkeypatch.setenv("FAKE_MODEL_KEY", "sk-test")
    (tmp_path / ".fabric").mkdir()
    config = {"model": {"baseUrl": endpoint, "model": "tiny", "apiKeyEnv": "FAKE_MODEL_KEY"}}
    (tmp_path / ".fabric" / "config.json").write_text(json.dumps(config))
    FakeModel.requests.clear()
    FakeModel.status = 200
    async with Fabric(tmp_path, spares=0) as session:
        yield session


LONG = "\n".join(f"line {i}: the service handled request {i} without trouble" for i in range(3000))


async def test_chunked_summary_within_budgets(fab: Fabric) -> None:
    done = (
        await fab.ctx.summarize(text=LONG, mode="model", max_tokens=60, max_input_tokens=5000)
    ).data
    chunks = -(-COUNT(LONG) // 5000)
    assert done["chunks"] == chunks and done["calls"] == 2 * chunks - 1
    assert len(FakeModel.requests) == done["calls"] and done["tokens"] <= 60
    assert done["coverage"] == 1.0 and done["next_offset"] is None
    first = FakeModel.requests[0]
    assert first["path"] == "/v1/chat/completions" and first["auth"] == "Bearer sk-test"
    assert "tools" not in first["body"] and first["body"]["messages"][0]["role"] == "system"
    assert first["body"]["max_tokens"] == 60
    assert fab.boundary.store is not None and fab.boundary.store.get_text(done["handle"]) == LONG


async def test_input_over_the_chunk_budget_fails_before_any_call(fab: Fabric) -> None:
    with pytest.raises(ProviderCallError) as caught:
        await fab.ctx.summarize(text=LONG, mode="model", max_input_tokens=500, max_chunks=4)
    assert caught.value.code == "summary_input_budget_exceeded"
    assert (
        'strategy="direct"' in caught.value.message
        and "no model was called" in caught.value.message
    )
    assert FakeModel.requests == []


async def test_direct_strategy_reads_a_prefix_and_says_where_to_go_on(fab: Fabric) -> None:
    done = (
        await fab.ctx.summarize(text=LONG, mode="model", strategy="direct", max_input_tokens=1000)
    ).data
    assert done["calls"] == 1 and 0 < done["coverage"] < 1
    assert done["next_offset"] == len(
        FakeModel.requests[0]["body"]["messages"][1]["content"].encode()
    )


async def test_the_whole_operation_has_a_deadline() -> None:
    class Slow:
        async def complete(self, system: str, text: str, max_tokens: int) -> str:
            await asyncio.sleep(0.2)
            return "x"

    budgets = Budgets.model_construct(
        max_input_tokens=1000, max_chunks=16, max_calls=None, timeout_seconds=0.3
    )
    with pytest.raises(ProviderCallError) as caught:
        await summarize_with_model(
            LONG[:20_000],
            completer=Slow(),
            count=COUNT,
            max_tokens=50,
            budgets=budgets,
            strategy="chunked",
            handle="h-00000000",
        )
    assert caught.value.code == "summary_timeout"


async def test_model_errors_are_clear(
    fab: Fabric, endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    FakeModel.status = 500
    with pytest.raises(ProviderCallError) as failed:
        await fab.ctx.summarize(text="short text", mode="model")
    assert failed.value.code == "model_error" and "answered 500" in failed.value.message
    monkeypatch.delenv("FAKE_MODEL_KEY")
    with pytest.raises(ProviderCallError) as keyless:
        await OpenAICompatible(fab.config.model).complete("s", "t", 10)  # type: ignore[arg-type]
    assert keyless.value.code == "no_model" and "FAKE_MODEL_KEY" in keyless.value.message


async def test_budgets_are_checked(fab: Fabric) -> None:
    with pytest.raises(ProviderCallError) as caught:
        await fab.ctx.summarize(text="x", mode="model", max_chunks=65)
    assert caught.value.code == "bad_arguments" and "max_chunks" in caught.value.message
