"""Redaction of things that look like secrets, for previews (never for stored originals)."""

from __future__ import annotations

import math
import re
from collections import Counter

_PREFIXED = re.compile(
    r"""
    (?P<key>
        sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}          # OpenAI, Anthropic
      | gh[pousr]_[A-Za-z0-9]{30,}                       # GitHub tokens
      | github_pat_[A-Za-z0-9_]{40,}
      | xox[abposr]-[A-Za-z0-9\-]{10,}                   # Slack
      | AKIA[0-9A-Z]{16}                                 # AWS access key id
      | AIza[0-9A-Za-z_\-]{35}                           # Google API key
      | glpat-[A-Za-z0-9_\-]{20,}                        # GitLab
      | (?:sk|rk|pk)_live_[A-Za-z0-9]{20,}               # Stripe
      | eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}  # JWT
    )
    """,
    re.VERBOSE,
)
_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z ]+ )?PRIVATE KEY-----.*?(?:-----END (?:[A-Z ]+ )?PRIVATE KEY-----|\Z)",
    re.DOTALL,
)
_HEADER = re.compile(
    r"""(?P<name>\b(?:proxy-)?authorization|\b(?:set-)?cookie|\bx-api-key)
        (?P<sep>["']?\s*[:=]\s*["']?)
        (?P<value>[^\r\n"']+)""",
    re.IGNORECASE | re.VERBOSE,
)
"""Header-like secrets, whose whole value (``Bearer abc``, ``a=1; b=2``) is the secret."""
_NAMED = re.compile(
    r"""(?P<name>(?<![A-Za-z0-9_\-])[A-Za-z0-9_\-]{0,40}(?:password|passwd|pwd|passphrase|secret|token|api[_-]?key
            |access[_-]?key|private[_-]?key|client[_-]?secret|credentials?|auth))\b
        (?P<sep>["']?\s*[:=]\s*["']?)
        (?P<value>[^\s"',;]+)""",
    re.IGNORECASE | re.VERBOSE,
)
"""Values under a name that says they are secret: redacted whatever they look like."""
_PLACEHOLDERS = frozenset(
    {"", "null", "none", "true", "false", "required", "optional", "***", "xxx", "changeme"}
)
_ASSIGNED = re.compile(
    r"""(?P<name>(?<![A-Za-z0-9_\-])[A-Za-z0-9_\-]{0,40}(?:key|token|secret|password|passwd|pwd|credential)s?)
        (?P<sep>["']?\s*[:=]\s*["']?)
        (?P<value>[^\s"',;]{8,})""",
    re.IGNORECASE | re.VERBOSE,
)


def redact(text: str) -> str:
    """``text`` with likely secrets replaced by ``[REDACTED]`` markers: private keys, keys
    with a known prefix (``sk-``, ``ghp_``, ``AKIA``...), the value of a header that carries
    one (``Authorization``, ``Cookie``), any value under a name that says it is secret
    (``password``, ``token``, ``secret``, ``api_key``...), and random-looking values under
    other names that end in ``key`` or ``credential``."""
    text = _PRIVATE_KEY.sub("[REDACTED private key]", text)
    text = _PREFIXED.sub("[REDACTED]", text)
    text = _HEADER.sub(_header, text)
    text = _NAMED.sub(_named, text)
    return _ASSIGNED.sub(_assigned, text)


def _header(match: re.Match[str]) -> str:
    value = match["value"]
    if value.startswith("[REDACTED") or value[0] in "{[(":  # a structure: its fields are looked at
        return match[0]
    return f"{match['name']}{match['sep']}[REDACTED]"


def _named(match: re.Match[str]) -> str:
    value = match["value"]
    plain = value.strip("<>${}").lower()
    if (
        value.startswith("[REDACTED")
        or plain in _PLACEHOLDERS
        or value.replace(".", "").isdigit()  # a count, a port: not a secret
        or value.startswith("${")  # a reference to one, not the secret
        or value[0] in "{[("  # a structure: its own fields are looked at
    ):
        return match[0]
    return f"{match['name']}{match['sep']}[REDACTED]"


def _assigned(match: re.Match[str]) -> str:
    value = match["value"]
    if value.startswith("[REDACTED") or not _looks_random(value):
        return match[0]
    return f"{match['name']}{match['sep']}[REDACTED]"


def _looks_random(value: str) -> bool:
    """High entropy and a mix of character classes: a key, not a word or a path."""
    if len(value) < 8 or value.lower() in {"password", "required", "none", "null", "true"}:
        return False
    counts = Counter(value)
    entropy = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    classes = sum(any(test(c) for c in value) for test in (str.islower, str.isupper, str.isdigit))
    return entropy >= 3.0 and classes >= 2
