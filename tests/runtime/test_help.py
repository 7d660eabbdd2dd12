"""The worker's ``help``: Fabric's text, sent by the host, never Python's pydoc."""

from __future__ import annotations

from collections.abc import Mapping

from runtime import Limits, NoProviders, Sandbox


class Described(NoProviders):
    """A host with no calls whose help says so in its own words."""

    def help(self) -> Mapping[str, str]:
        return {"": "overview", "tools": "tools listing"}


async def test_help_answers_with_what_the_host_sent() -> None:
    """help() and help("tools") are the host's text; an unknown name says what help takes;
    the value is a str, whatever pydoc's help would have done."""
    async with Sandbox(limits=Limits(timeout_s=10), spares=1) as sandbox:
        done = await sandbox.execute(
            "return [help(), help('tools'), help('nothing'), len(help())]",
            providers=Described(),
        )
        plain = await sandbox.execute("return help()", providers=NoProviders())
    assert done.ok, done.text
    overview, tools, unknown, length = done.value
    assert (overview, tools, length) == ("overview", "tools listing", len("overview"))
    assert unknown.startswith("nothing is called 'nothing'") and "help(tools.read)" in unknown
    assert plain.value == "no provider namespaces have calls here"


class Counted(NoProviders):
    """A host that counts how often its help is asked for."""

    def __init__(self) -> None:
        self.asked = 0

    def help(self) -> Mapping[str, str]:
        self.asked += 1
        return {"": "overview"}


async def test_help_is_sent_only_to_a_snippet_that_names_it() -> None:
    """A snippet reaches the builtin only by its name, so the others go without the text."""
    host = Counted()
    async with Sandbox(limits=Limits(timeout_s=10), spares=1) as sandbox:
        assert (await sandbox.execute("return 1", providers=host)).value == 1
        assert host.asked == 0
        assert (await sandbox.execute("h = help\nreturn h()", providers=host)).value == "overview"
        assert host.asked == 1


class Broken(NoProviders):
    def help(self) -> Mapping[str, str]:
        raise RuntimeError("no text today")


async def test_a_host_that_cannot_give_its_help_costs_only_the_help() -> None:
    async with Sandbox(limits=Limits(timeout_s=10), spares=1) as sandbox:
        done = await sandbox.execute("return help()", providers=Broken())
    assert done.ok and done.value == "help is not available here (RuntimeError: no text today)"
