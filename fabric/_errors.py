"""Exceptions of the fabric package.

Snippet faults are results (``ExecResult.ok`` is False), not exceptions. These are for the
program that embeds Fabric::

    FabricError                 base of everything fabric raises
    ├── ConfigError             a bad option passed to Fabric or the CLI
    ├── RegistrationError       a provider registered twice, under a bad name, or unusable
    └── FabricClosed            the session was used after close()
"""

from __future__ import annotations


class FabricError(Exception):
    """Base class of fabric's exceptions; ``code`` names the kind for programs."""

    code = "fabric_error"


class ConfigError(FabricError):
    """An option or setting is invalid; the message names it and the fix."""

    code = "bad_arguments"


class RegistrationError(FabricError):
    """A provider cannot be registered as asked."""

    code = "registration_error"


class FabricClosed(FabricError):
    """The Fabric session was used after it was closed."""

    code = "closed"
