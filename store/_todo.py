"""Todo lists: the payload of a todo page, a resource kind of its own (``TODO_LIST``)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from store._errors import InvalidRequest, NotFound


class TodoStatus(StrEnum):
    """Where an item stands."""

    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    DONE = "done"


class TodoItem(BaseModel):
    """One thing to do."""

    model_config = ConfigDict(extra="forbid")

    id: str
    """Unique in its list; :meth:`TodoList.add` numbers items ``"1"``, ``"2"``..."""
    text: str
    """What to do."""
    status: TodoStatus = TodoStatus.PENDING
    """Pending, in progress or done."""

    @field_validator("id", "text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value


class TodoList(BaseModel):
    """Ordered todo items."""

    model_config = ConfigDict(extra="forbid")

    items: list[TodoItem] = Field(default_factory=list)
    """The items, in the order they were added."""

    @model_validator(mode="after")
    def _ids_unique(self) -> TodoList:
        ids = [item.id for item in self.items]
        if len(ids) != len(set(ids)):
            raise ValueError("todo item ids must be unique")
        return self

    def add(self, text: str, *, id: str | None = None) -> TodoItem:
        """Append a pending item; its id is the next free number unless given."""
        if id is None:
            used = {item.id for item in self.items}
            n = len(self.items) + 1
            while str(n) in used:
                n += 1
            id = str(n)
        elif any(item.id == id for item in self.items):
            raise InvalidRequest(f"the todo list already has an item {id!r}; pick another id")
        item = TodoItem(id=id, text=text)
        self.items.append(item)
        return item

    def get(self, id: str) -> TodoItem:
        for item in self.items:
            if item.id == id:
                return item
        known = ", ".join(repr(item.id) for item in self.items[:20]) or "none"
        raise NotFound(f"no todo item {id!r} (items: {known})", ref=id, reason="unknown")

    def set_status(self, id: str, status: TodoStatus | str) -> TodoItem:
        """Move item ``id`` to ``status`` (``pending``, ``in_progress`` or ``done``)."""
        try:
            wanted = TodoStatus(status)
        except ValueError:
            raise InvalidRequest(
                f"a todo status is pending, in_progress or done, not {status!r}"
            ) from None
        item = self.get(id)
        item.status = wanted
        return item

    def remove(self, id: str) -> TodoItem:
        item = self.get(id)
        self.items.remove(item)
        return item

    def to_data(self) -> dict[str, Any]:
        """Plain data: ``{"items": [{"id", "text", "status"}, ...]}``."""
        return {"items": [item.model_dump(mode="json") for item in self.items]}
