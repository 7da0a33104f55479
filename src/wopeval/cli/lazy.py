"""Commands imported on demand, so ``wopeval --help`` and ``wopeval --version`` stay fast.

The command modules import the engine, the store (SQLAlchemy), the statistics (numpy), the host
(FastAPI), the exports and the conformance kit. The root group lists every command from a static
table (name, module, one-line help) and imports a command's module only when that command is
invoked; ``tests/cli/test_lazy.py`` checks the table against the modules, so it cannot drift.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import typer
from typer import _click
from typer.core import TyperCommand, TyperGroup


@dataclass(frozen=True)
class LazyCommand:
    """A command the root group lists without importing it."""

    module: str  # has ``register(app: typer.Typer)``, which adds this command
    help: str  # the first line of the command's docstring, shown in ``wopeval --help``


class LazyGroup(TyperGroup):
    """A root group whose subcommands are imported by :meth:`resolve_command`, never before.

    Listing (``--help``) sees placeholders carrying the one-line help; resolving a command
    (running it, or its own ``--help``) imports its module and registers the real commands.
    """

    lazy_commands: ClassVar[Mapping[str, LazyCommand]] = {}

    def list_commands(self, ctx: _click.Context) -> list[str]:
        return [*self.commands, *(name for name in self.lazy_commands if name not in self.commands)]

    def get_command(self, ctx: _click.Context, cmd_name: str) -> _click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        spec = self.lazy_commands.get(cmd_name)
        if spec is None:
            return None
        return TyperCommand(cmd_name, help=spec.help, short_help=spec.help)

    def resolve_command(
        self, ctx: _click.Context, args: list[str]
    ) -> tuple[str | None, _click.Command | None, list[str]]:
        if args and args[0] in self.lazy_commands and args[0] not in self.commands:
            self.commands.update(load_commands(self.lazy_commands[args[0]].module))
        return super().resolve_command(ctx, args)


def load_commands(module: str) -> dict[str, _click.Command]:
    """Import a command module and return the click commands its ``register`` adds."""
    sub = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
    importlib.import_module(module).register(sub)
    return dict(typer.main.get_group(sub).commands)


def lazy_group(commands: Mapping[str, LazyCommand]) -> type[LazyGroup]:
    """A :class:`LazyGroup` class for this table (typer instantiates the class itself)."""
    return type("WopevalGroup", (LazyGroup,), {"lazy_commands": dict(commands)})


__all__ = ["LazyCommand", "LazyGroup", "lazy_group", "load_commands"]
