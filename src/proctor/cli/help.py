"""How every command's `--help` and usage errors read: plain metavars, never Python types.

`ProctorCommand` gives each parameter a metavar a user can read (`PATH`, `N`, `SPEC`, `DATASET...`,
`html|md`; flags none) instead of typer's `<list[Path]>` and `{paths}`; `ProctorGroup` prints usage
errors in proctor's message style (`error: …` then a `hint:`), not click's boxed panel.
"""

from __future__ import annotations

import sys
import typing
from typing import Any

import typer
import typer.rich_utils
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from typer._click import exceptions as cx  # typer vendors click: its exceptions live here
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from .messages import error, hint, route_log_warnings

_TYPE_METAVARS: dict[Any, str] = {int: "N", float: "NUMBER", str: "TEXT"}


class _HelpTable(Table):
    """typer's help panels with the option-name columns never wrapped nor cut: on a narrow terminal (80
    columns) the type and help columns wrap instead (typer builds its tables without column settings, and
    rich cut names to `--reasoning-effo…`). Every column but the last two (type, help) holds names; the
    commands panel (name, help) is left as typer makes it."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for column in self.columns[:-2]:
            column.no_wrap = True
        yield from super().__rich_console__(console, options)


typer.rich_utils.Table = _HelpTable  # type: ignore[attr-defined] # the table class typer's help panels are made of


def _type_metavar(param: Any) -> str:
    """`a|b` for choices, PATH, N, NUMBER or TEXT: what a value looks like, from the parameter's type."""
    desc = param.type_descriptor
    if desc.choices is not None:
        return "|".join(str(getattr(c, "value", c)) for c in desc.choices)
    if desc.is_path:
        return "PATH"
    annotation = typing.get_args(desc.annotation)[0] if desc.is_list else desc.annotation
    return _TYPE_METAVARS.get(annotation, "TEXT")


def plain_metavar(param: Any) -> str:
    """The metavar shown for `param`: its own when set, else one from its type (no Python reprs)."""
    if isinstance(param, TyperOption) and (param.is_flag or param.count):
        return ""
    if param.metavar is not None:
        base = str(param.metavar)
    elif isinstance(param, TyperArgument):
        base = (param.name or "value").upper()
    elif hasattr(param, "type_descriptor"):
        base = _type_metavar(param)
    else:
        base = "VALUE"
    many = isinstance(param, TyperArgument) and param.nargs != 1
    return f"{base}..." if many and not base.endswith("...") else base


def _plain(params: list[Any]) -> list[Any]:
    """`params` with plain metavars; the type column of the help shows the metavar (arguments: nothing)."""
    for p in params:
        p.metavar = plain_metavar(p)
        if isinstance(p, TyperArgument):  # typer shows an argument's Python type whatever its metavar
            setattr(p, "display_type_rich", _no_type)  # noqa: B010 (an instance override, on purpose)
    return params


def _no_type(ctx: Any) -> None:
    return None


class ProctorCommand(TyperCommand):
    """A command whose help shows plain metavars and whose usage line reads `[OPTIONS] DATASET...`."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _plain(super().get_params(ctx))

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = ["[OPTIONS]"]
        for p in self.get_params(ctx):
            if isinstance(p, TyperArgument):
                pieces.append(str(p.metavar) if p.required else f"[{p.metavar}]")
        return pieces


class ProctorGroup(TyperGroup):
    """The `proctor` group: usage errors become `error: …` + `hint: …` lines, exit 2."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _plain(super().get_params(ctx))

    def main(self, *args: Any, **kwargs: Any) -> Any:
        route_log_warnings()
        standalone_mode = kwargs.get("standalone_mode", True)
        kwargs["standalone_mode"] = False  # errors come back here, to be printed in proctor's style
        try:
            rv = super().main(*args, **kwargs)
        except cx.NoArgsIsHelpError as e:  # `proctor` alone: the help, as click prints it
            e.show()
            rv = e.exit_code
        except cx.ClickException as e:
            error(e.format_message())
            if isinstance(e, cx.UsageError) and not isinstance(e, cx.BadParameter):  # a value's error says it all
                what = "commands" if e.ctx is None or isinstance(e.ctx.command, TyperGroup) else "options"
                hint(f"`{e.ctx.command_path if e.ctx else 'proctor'} --help` lists the {what}")
            rv = e.exit_code
        except typer.Abort:
            rv = 1
        if not standalone_mode:
            return rv
        sys.exit(rv if isinstance(rv, int) else 0)
