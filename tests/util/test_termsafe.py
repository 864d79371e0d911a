"""Item 9 of issue 13: terminal output escapes control characters and Rich markup that come from data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.util.termsafe import escape_control, rich_safe

EVIL = ["\x1b[31mred\x1b[0m", "\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\", "[bold]loud[/bold]",
        "\u202eevil"]


def test_escape_control_makes_escapes_visible() -> None:
    assert escape_control("a\x1b[2Jb\x07") == "a\\x1b[2Jb\\x07"
    assert "\x1b" not in rich_safe(EVIL[1]) and rich_safe("[bold]x") == "\\[bold]x"


def test_run_summary_prints_category_names_inertly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps({"identifier": f"t.{i}", "modality": "boolean", "prompt": f"p{i}",
                                        "response": "True", "category": cat}) + "\n" for i, cat in enumerate(EVIL)))
    assert main(["run", str(data), "-m", "scripted:first", "-o", str(tmp_path / "run"), "--store",
                 str(tmp_path / "s.sqlite"), "--no-progress"]) == 0
    assert main(["stats", str(data)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out
    assert "[bold]loud[/bold]" in out  # shown literally, not rendered as bold
