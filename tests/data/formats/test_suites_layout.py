"""probsem's layout: outputs named with prompt, suite and model (they accumulate); `convert --to suites`."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.cli import main
from proctor.data.formats.suites import read_prompt_dir, results_stem, sanitize_filename

FIXTURES = Path(__file__).parents[2] / "fixtures" / "suites"


@pytest.mark.parametrize(("model", "stem"), [
    ("hf:Salesforce/codegen-350M-mono", "test_A_Salesforce-codegen-350M-mono_results"),
    ("openai:code-davinci-002", "test_A_code-davinci-002_results"),
    ("code-davinci-002", "test_A_code-davinci-002_results"),  # probsem's own model names
    ("hf:/tmp/m", "test_A_-tmp-m_results"),
    (None, "test_A_results"),
])
def test_results_are_named_as_probsem_names_them(model: str | None, stem: str) -> None:
    assert results_stem("test", "A", model) == stem


def test_sanitize_filename_is_probsems_rule() -> None:
    assert sanitize_filename(' .a/b<c>:d"e\\f|g?h*i. ') == "-.a-b-c-d-e-f-g-h-i.-"


def test_a_second_model_never_overwrites_the_first(tiny_model_dir: Path, tiny_gpt2_dir: Path,
                                                   tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["score", str(FIXTURES), "--model", f"hf:{tiny_model_dir}", "-o", str(out), "--no-history"]) == 0
    first = {p.name: p.read_bytes() for p in out.glob("*_results.*")}
    assert set(first) == {results_stem("test", s, f"hf:{tiny_model_dir}") + ext for s in "AB"
                          for ext in (".csv", ".jsonl")}
    # a second model scored into the same -o: its files join the first model's, which stay byte for byte
    assert main(["score", str(FIXTURES), "--model", f"hf:{tiny_gpt2_dir}", "-o", str(out), "--no-history"]) == 0
    both = {p.name: p.read_bytes() for p in out.glob("*_results.*")}
    assert len(both) == 8 and {k: both[k] for k in first} == first
    runs = sorted(p.parent.name for p in out.glob("*/manifest.json"))
    assert len(runs) == 2  # each model's run log in a directory of its own, inside -o
    # the same command again resumes its own run instead of being refused
    assert main(["score", str(FIXTURES), "--model", f"hf:{tiny_gpt2_dir}", "-o", str(out), "--no-history"]) == 0
    assert sorted(p.parent.name for p in out.glob("*/manifest.json")) == runs


def test_convert_to_suites_writes_probsems_layout_back(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    assert main(["convert", str(FIXTURES), "--to", "items", "-o", str(items)]) == 0
    out = tmp_path / "suites"
    assert main(["convert", str(items), "--to", "suites", "-o", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["test.txt", "test_A.json", "test_B.json"]
    assert read_prompt_dir(out) == read_prompt_dir(FIXTURES)
    assert (out / "test.txt").read_bytes() == (FIXTURES / "test.txt").read_bytes()


def test_convert_to_suites_refuses_items_that_never_were_suites(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    good = Path(__file__).parents[2] / "fixtures" / "items" / "good.jsonl"
    assert main(["convert", str(good), "--to", "suites", "-o", str(tmp_path / "s")]) == 2
    assert "not converted from a suite" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()
