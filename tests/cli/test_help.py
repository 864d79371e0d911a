"""Every command's `--help`: no Python types, every option described with its default, and an epilog
whose examples parse, name files that exist, and (those without a local model) run on the bundled examples."""

from __future__ import annotations

import glob
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest
import typer.main

from proctor.cli import _register, app, main
from proctor.cli.options import model_cli_options
from proctor.models.registry import BACKENDS

ROOT = Path(__file__).resolve().parents[2]
# epilog examples not run here, each with its reason (parsed and path-checked all the same)
NOT_RUN = {
    "proctor run --config config/mmlu_pro.yaml --data-file test.parquet -o results/mmlu_pro":
        "an llm-wc config and upstream file of the user's (none is bundled); tests/integration/test_llmwc.py runs that path",
    "proctor import results/mmlu_pro": "the results directory of the example above",
    "proctor import out/lm/EleutherAI__pythia-70m/results_2026-01-01T00-00-00.json":
        "lm-eval's output (none is bundled); tests/cli/test_import_cmds.py imports real lm-eval output",
    "proctor import logs/2026-01-01T00-00-00_gpqa_abc.eval --name openai:gpt-4o":
        "an Inspect log (none is bundled); tests/cli/test_import_cmds.py imports real Inspect logs",
    "proctor import out/lm --item-id identifier --dataset demo": "lm-eval's output folder (none is bundled)",
    "proctor merge runs/demo": "an executor run's -o folder (tests/run/executors/ merge real Slurm, Ray and local runs)",
    "proctor status runs/demo": "an executor run's -o folder (tests/run/executors/ show the shards of real runs)",
}
PYTHON_TYPES = re.compile(r"<(?:list|dict|tuple|str|int|float|bool|path|Path)\b[^>]*>|list\[|\{[a-z_]+\}|NoneType")


def _commands() -> dict[str, Any]:
    _register()
    group = typer.main.get_command(app)
    return dict(group.commands)  # type: ignore[attr-defined]


COMMANDS = sorted(_commands())


def test_every_command_is_walked() -> None:
    assert {"run", "score", "report", "runs", "history", "compare", "leaderboard", "record", "validate", "stats",
            "convert", "datasets", "tiny-model", "version"} <= set(COMMANDS)


@pytest.mark.parametrize("name", ["", *COMMANDS])
def test_help_shows_no_python_types(name: str, capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert main([*([name] if name else []), "--help"]) == 0
    out = capsys.readouterr().out
    assert "Usage: proctor" in out
    assert not PYTHON_TYPES.search(out), PYTHON_TYPES.search(out)


@pytest.mark.parametrize("name", COMMANDS)
def test_every_option_has_a_description_and_its_default(name: str) -> None:
    command = _commands()[name]
    assert (command.help or "").strip(), f"{name}: no description"
    for param in command.params:
        if getattr(param, "hidden", False):
            continue
        text = (getattr(param, "help", None) or "").strip()
        assert text, f"{name} {param.name}: no description"
        assert "\n" not in text, f"{name} {param.name}: description is not one line"
        if param.param_type_name != "option" or param.is_flag or param.required:
            continue
        shows_default = param.default not in (None, [], ()) and param.show_default is not False
        assert shows_default or re.search(r"\b(default|required)\b", text.lower()), f"{name} --{param.name}: default?"


def test_model_options_come_from_the_registry() -> None:
    """One flag per backend option (bar the key, never on a command line), described by its field."""
    flags = {o.flag: o for o in model_cli_options()}
    fields = {n for b in BACKENDS.values() for n in b.options.model_fields} - {"api_key"}
    assert {o.name for o in flags.values()} == fields
    run_params = {p.opts[0] for p in _commands()["run"].params if p.param_type_name == "option"}
    score_params = {p.opts[0] for p in _commands()["score"].params if p.param_type_name == "option"}
    assert set(flags) <= run_params and set(flags) <= score_params
    assert flags["--batch-size"].backends == ("hf",) and flags["--base-url"].backends == ("openai", "anthropic")
    assert flags["--retry-seed"].name == "seed"  # renamed: --seed is the choice-order seed everywhere


def test_a_new_backend_option_appears_in_the_cli(monkeypatch: pytest.MonkeyPatch) -> None:
    from pydantic import Field

    from proctor.cli import options
    from proctor.models import registry

    class Extra(registry.HFOptions):
        attention: str | None = Field(default=None, description="Attention kernel (default: the model's).")

    monkeypatch.setitem(registry.BACKENDS, "hf", registry.Backend("hf", ".hf:HFModel", Extra, "test"))
    options.model_cli_options.cache_clear()
    try:
        (added,) = [o for o in options.model_cli_options() if o.name == "attention"]
        assert added.flag == "--attention" and added.backends == ("hf",) and "kernel" in added.description

        @options.with_model_options
        def command(model_options: Any = None) -> Any:
            return model_options

        given = command(model_opt_attention="sdpa")
        assert given is not None and given.for_spec("hf:x") == {"attention": "sdpa"}
    finally:
        options.model_cli_options.cache_clear()


def _epilog_commands(name: str) -> list[str]:
    epilog = _commands()[name].epilog or ""
    return [line.strip() for line in epilog.splitlines() if line.strip().startswith("proctor ")]


@pytest.mark.parametrize("name", COMMANDS)
def test_epilog_examples_parse_and_name_real_files(name: str) -> None:
    examples = _epilog_commands(name)
    assert any(e.startswith(f"proctor {name}") for e in examples), f"{name}: no example of itself"
    commands = _commands()
    for example in examples:
        argv = shlex.split(example)[1:]
        for token in argv:
            if token.startswith("examples/"):
                assert (ROOT / token).exists(), f"{example}: {token} is not in the repository"
        cmd = commands[argv[0]]
        cmd.make_context(argv[0], argv[1:])  # raises on an unknown option or a bad value


def test_epilog_examples_run_on_the_bundled_examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Every example that needs no local model runs, in the order a user would type them."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PROCTOR_STORE", str(tmp_path / "store.sqlite"))
    seen: set[str] = set()
    for name in COMMANDS:
        for example in _epilog_commands(name):
            if "hf:" in example or "tiny-model" in example or example in seen or example in NOT_RUN:
                continue
            seen.add(example)
            argv = [m for a in shlex.split(example)[1:] for m in (sorted(glob.glob(a)) if "*" in a else [a])]
            code = main(argv)
            assert code == 0, f"{example}: exit {code}\n{capsys.readouterr().err}"
    assert len(seen) >= 12


def _help_text(command: str, columns: int) -> str:
    """`proctor COMMAND --help` as a terminal `columns` wide shows it."""
    import click
    import typer.rich_utils as ru
    from rich.console import Console

    cmd = _commands()[command]
    out = Console(width=columns, record=True, force_terminal=False, color_system=None)
    original = ru._get_rich_console
    ru._get_rich_console = lambda stderr=False: out  # type: ignore[assignment]
    try:
        with click.Context(cmd, info_name=command) as ctx:
            cmd.get_help(ctx)
    finally:
        ru._get_rich_console = original  # type: ignore[assignment]
    return out.export_text()


@pytest.mark.parametrize("command", ["run", "score"])
def test_long_help_is_grouped_and_reads_at_80_columns(command: str) -> None:
    """#41.18: `run --help` was 663 lines at 80 columns with an 11-character description column (`Model:`,
    `hf:PATH-OR-HUB-…`). Its options are grouped in panels, each narrow enough that every description column
    is at least 25 characters wide, and no word of the help is cut."""
    text = _help_text(command, 80)
    assert "…" not in text, [line for line in text.splitlines() if "…" in line]
    panels = re.findall(r"^╭─ (.+?) ─", text, re.MULTILINE)
    assert len(panels) >= (10 if command == "run" else 4), panels
    narrowest = 80
    for line in text.splitlines():
        row = re.match(r"│ (--.*?\S)( {2,})((?:\S| \S)+) *│$", line)
        if row:  # an option's first line: the description starts after the last gap of two spaces or more
            narrowest = min(narrowest, 80 - 2 - len(row.group(1)) - len(row.group(2)) - 1)
    assert narrowest >= 25, narrowest
    assert len(text.splitlines()) <= (400 if command == "run" else 250), len(text.splitlines())


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("command", ["run", "score", "report", "export", "import", "runs"])
def test_help_at_80_and_120_columns_never_cuts_an_option_name(command: str, columns: int) -> None:
    """#32.27: a terminal 80 columns wide shows every option name whole (they were cut: `--reasoning-effo…`);
    help text wraps instead, and no line is wider than the terminal."""
    import click
    import typer.rich_utils as ru
    from rich.console import Console

    cmd = _commands()[command]
    out = Console(width=columns, record=True, force_terminal=False, color_system=None)
    original = ru._get_rich_console
    ru._get_rich_console = lambda stderr=False: out  # type: ignore[assignment]
    try:
        with click.Context(cmd, info_name=command) as ctx:
            cmd.get_help(ctx)
    finally:
        ru._get_rich_console = original  # type: ignore[assignment]
    text = out.export_text()
    assert text.strip() and max(len(line) for line in text.splitlines()) <= columns
    names = {name for p in cmd.params if not getattr(p, "hidden", False)
             for name in [*p.opts, *getattr(p, "secondary_opts", [])] if name.startswith("--")}
    words = set(re.findall(r"--[a-z][a-z0-9-]*", text))
    assert names <= words, sorted(names - words)
