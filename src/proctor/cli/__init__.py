"""`proctor` command line. Each submodule registers its commands on the one Typer app."""

from __future__ import annotations

import sys
from functools import cache

import typer

from .._version import __version__
from ..util.errors import ProctorError
from ..util.redact import redact
from . import (
    bench_data_cmds,
    claim_cmds,
    data_cmds,
    executor_cmds,
    explain_cmds,
    export_cmds,
    history_cmds,
    import_cmds,
    merge_cmds,
    prompt_cmds,
    report_cmds,
    run_cmds,
    score_cmds,
    stats_cmds,
    verify_cmds,
)
from .help import ProctorCommand, ProctorGroup
from .messages import error, report_error

ROOT_EXAMPLES = """Examples (offline, on the bundled examples):

  proctor tiny-model out/tiny
  proctor run examples/items/multiple-choice.jsonl --model hf:out/tiny --mode logprob
  proctor score examples/suites --model hf:out/tiny
  proctor report runs/*

A server: --model openai:MODEL --base-url http://localhost:8000/v1; an API: anthropic:MODEL.
Each command's options: proctor COMMAND --help. Step by step: docs/first-hour.md.
"""

app = typer.Typer(
    cls=ProctorGroup,
    name="proctor",
    epilog=ROOT_EXAMPLES,
    help="Put language models through benchmarks and report, with honest error bars, how well they did.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"proctor {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                 help="Print proctor's version and exit."),
) -> None:
    """Put language models through benchmarks and report, with honest error bars, how well they did."""


@app.command(epilog="Example:\n\n  proctor version\n")
def version() -> None:
    """Print proctor's version."""
    typer.echo(__version__)


@cache
def _register() -> None:
    """Add every command once (main() may run many times in one process: tests, notebooks)."""
    for module in (data_cmds, bench_data_cmds, score_cmds, run_cmds, merge_cmds, prompt_cmds, history_cmds,
                   stats_cmds, import_cmds, report_cmds, export_cmds, verify_cmds, explain_cmds, executor_cmds,
                   claim_cmds):
        module.register(app)
    for info in app.registered_commands:  # plain metavars in every command's help (proctor.cli.help)
        info.cls = ProctorCommand


INTERRUPTED = 130
_RESUMABLE = frozenset({"run", "score"})


def _say_interrupted(argv: list[str] | None) -> None:
    """After ctrl-C: what was kept and, for a run, the command that resumes it (secrets redacted)."""
    import shlex


    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in _RESUMABLE:
        command = shlex.join(["proctor", *redact(args)])
        print(f"\ninterrupted: finished samples are saved; resume with:\n  {command}", file=sys.stderr)
    else:
        print("\ninterrupted", file=sys.stderr)


def _exit_now_if_command_line(argv: list[str] | None) -> None:
    """As the `proctor` command (argv from the command line), end at once after ctrl-C.

    Everything finished is already fsynced; what is left is a backend's abandoned worker thread (a local
    model mid-batch) and interpreter teardown, which took seconds. Called from code (argv given), return.
    """
    if argv is None:
        import os

        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(INTERRUPTED)


def os_error_line(e: OSError) -> str:
    """`path: what went wrong` for an OSError (both paths of a failed rename)."""
    where = " -> ".join(str(f) for f in (e.filename, e.filename2) if f is not None)
    what = e.strerror or str(e)
    return f"{where}: {what}" if where else what


def main(argv: list[str] | None = None) -> int:
    """Entry point: bad input and refused runs become `path:line: message` on stderr and exit code 2."""
    _register()
    try:
        app(args=argv, prog_name="proctor")  # standalone: usage errors print and exit 2 themselves
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if code == INTERRUPTED:  # typer turns ctrl-C into Exit(130) before it reaches the handler below
            _say_interrupted(argv)
            _exit_now_if_command_line(argv)
        return code
    except ProctorError as e:
        report_error(e)
        return e.exit_code
    except OSError as e:  # read-only dir, full disk, permission, a non-searchable dir: one line, the path
        error(os_error_line(e))
        return 2
    except KeyboardInterrupt:
        _say_interrupted(argv)
        _exit_now_if_command_line(argv)
        return INTERRUPTED
    return 0
