"""Reading unified diffs: which files they touch, lines added and removed, hunk headers."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class DiffStats:
    files: dict[str, list[int]] = field(default_factory=dict)
    """File -> [lines added, lines removed], in the order the diff names them."""
    hunks: list[tuple[str, str]] = field(default_factory=list)
    """(file, ``@@ ... @@`` header) for each hunk."""

    @property
    def added(self) -> int:
        return sum(a for a, _ in self.files.values())

    @property
    def removed(self) -> int:
        return sum(r for _, r in self.files.values())


def diff_stats(diff: str) -> DiffStats:
    stats = DiffStats()
    current = "(unnamed)"
    for line in diff.splitlines():
        if line.startswith("+++ "):
            current = line[4:].removeprefix("b/").strip()
            stats.files.setdefault(current, [0, 0])
        elif line.startswith("diff --git "):
            current = line.split(" b/", 1)[-1].strip()
            stats.files.setdefault(current, [0, 0])
        elif line.startswith("@@"):
            stats.hunks.append((current, line))
        elif line.startswith("+") and not line.startswith("+++"):
            stats.files.setdefault(current, [0, 0])[0] += 1
        elif line.startswith("-") and not line.startswith("---"):
            stats.files.setdefault(current, [0, 0])[1] += 1
    return stats
