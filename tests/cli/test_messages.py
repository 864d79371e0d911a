"""One style for what proctor says on stderr: `error: …`, `warning: …`, `hint: …` (proctor.cli.messages)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.cli.messages import line

SRC = Path(__file__).resolve().parents[2] / "src" / "proctor"
# a string literal that starts with a message kind in another spelling, or rich markup for one
STRAY = re.compile(r"""(?x)
    ["'](?:Error|ERROR|Warning|WARNING|Hint|Note|note)\s*: |
    \[(?:bold\s+)?(?:red|yellow)\]\s*(?:error|warning) |
    f?["'](?:error|warning|hint):\s
""")


def test_no_stray_message_styles_in_src() -> None:
    """Only proctor.cli.messages spells the prefixes; everything else calls error()/warning()/hint()."""
    strays = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "messages.py" and path.parent.name == "cli":
            continue
        for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if STRAY.search(text) and "# message-style: ok" not in text:
                strays.append(f"{path.relative_to(SRC)}:{n}: {text.strip()}")
    assert not strays, "\n".join(strays)


def test_the_checker_catches_the_old_styles() -> None:
    for text in ('print(f"error: {e}")', 'typer.echo("Error: bad")', 'con.print(f"[yellow]warning:[/yellow] {w}")'):
        assert STRAY.search(text), text


def test_line_indents_continuation_lines() -> None:
    assert line("error", "first\nsecond") == "error: first\n  second"


def test_usage_error_is_an_error_line_and_a_hint(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "x.jsonl", "--model", "scripted:first", "--no-such-option"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("error: No such option: --no-such-option")
    assert err[1] == "hint: `proctor run --help` lists the options"
    assert main(["run", "x.jsonl"]) == 2
    assert capsys.readouterr().err == "error: give DATASETs and --model (or --config LLMWC.yaml)\n"


def test_refusals_and_bad_input_are_error_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "mmlu-pro", "--model", "nope"]) == 2
    assert capsys.readouterr().err.startswith("error: --model 'nope' must look like SCHEME:NAME")
    bad = tmp_path / "items.jsonl"
    bad.write_text("{}\nnot json\n")
    assert main(["run", str(bad), "--model", "scripted:first"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err and all(e.startswith(f"error: {bad}:") for e in err), err


def test_an_option_no_model_takes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "mmlu-pro", "--model", "scripted:first", "--batch-size", "4"]) == 2
    assert capsys.readouterr().err == "error: --batch-size does not apply to scripted:first\n"
