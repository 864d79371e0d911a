"""`proctor` command line. Each submodule registers its commands on the one Typer app."""

from __future__ import annotations

import sys
from functools import cache

import typer

from ..errors import InputError, ProctorError

app = typer.Typer(
    name="proctor",
    help="Put language models through benchmarks and report, with honest error bars, how well they did.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """Put language models through benchmarks and report, with honest error bars, how well they did."""


@app.command()
def version() -> None:
    """Print proctor's version."""
    from .. import __version__

    typer.echo(__version__)


@cache
def _register() -> None:
    """Add every command once (main() may run many times in one process: tests, notebooks)."""
    from . import bench_data_cmds, data_cmds, history_cmds, llmwc_cmds, report_cmds, run_cmds, score_cmds

    for module in (data_cmds, bench_data_cmds, score_cmds, run_cmds, history_cmds, report_cmds, llmwc_cmds):
        module.register(app)


def main(argv: list[str] | None = None) -> int:
    """Entry point: bad input and refused runs become `path:line: message` on stderr and exit code 2."""
    _register()
    try:
        app(args=argv, prog_name="proctor")  # standalone: usage errors print and exit 2 themselves
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except ProctorError as e:
        print(str(e) if isinstance(e, InputError) else f"error: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("interrupted; finished samples are saved: run the same command again to resume", file=sys.stderr)
        return 130
    return 0
