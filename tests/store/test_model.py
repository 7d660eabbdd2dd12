"""The store against a model: any sequence of puts, reads, deletes, gc and passing time keeps
the promises (a handle gives its own bytes or a NotFound that says why; the newest entry is
never evicted; the budget holds; index and files agree)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from store import NotFound, Store

from .conftest import Clock

MAX_BYTES = 2000
TTL_MS = 60_000


class StoreMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp())
        self.clock = Clock()
        self.store = Store(self.dir, max_bytes=MAX_BYTES, ttl_ms=TTL_MS, clock=self.clock)
        self.content: dict[str, bytes] = {}
        self.deleted: set[str] = set()
        self.expires: dict[str, float] = {}
        self.newest: str | None = None

    def teardown(self) -> None:
        self.store.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    @rule(
        body=st.binary(min_size=0, max_size=900),
        source=st.sampled_from(["a", "b", "c", "d"]),
        shared=st.booleans(),
    )
    def put(self, body: bytes, source: str, shared: bool) -> None:
        data = b"shared payload" if shared else body
        entry = self.store.put(data, tool="tools.read", args={"path": source})
        assert self.content.get(entry.handle, data) == data
        self.content[entry.handle] = data
        self.deleted.discard(entry.handle)
        self.expires[entry.handle] = self.clock.now + TTL_MS / 1000
        self.newest = entry.handle

    @precondition(lambda self: self.content)
    @rule(data=st.data())
    def get(self, data: st.DataObject) -> None:
        handle = data.draw(st.sampled_from(sorted(self.content)))
        try:
            assert self.store.get(handle) == self.content[handle]
            assert handle not in self.deleted
            assert self.clock.now < self.expires[handle]
        except NotFound as gone:
            if handle in self.deleted:
                assert gone.reason == "deleted"
            elif self.clock.now >= self.expires[handle]:
                assert gone.reason == "expired"
            else:
                assert gone.reason == "evicted" and handle != self.newest

    @precondition(lambda self: self.content)
    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        handle = data.draw(st.sampled_from(sorted(self.content)))
        try:
            self.store.delete(handle)
            self.deleted.add(handle)
        except NotFound:
            pass

    @rule(seconds=st.sampled_from([1, 30, 61]))
    def wait(self, seconds: int) -> None:
        self.clock.advance(seconds)

    @rule()
    def gc(self) -> None:
        self.store.gc()

    @invariant()
    def within_budget_and_consistent(self) -> None:
        usage = self.store.usage()
        assert usage.bytes <= MAX_BYTES or usage.entries == 1
        assert self.store.check().ok

    @invariant()
    def newest_resolves(self) -> None:
        newest = self.newest
        if newest and newest not in self.deleted and self.clock.now < self.expires[newest]:
            assert self.store.stat(newest).handle == newest


StoreMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=30, deadline=None)
TestStoreModel = StoreMachine.TestCase
