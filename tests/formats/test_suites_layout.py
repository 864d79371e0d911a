"""probsem's layout: outputs named with prompt, suite and model (they accumulate); `convert --to suites`."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.cli import main
from proctor.formats.suites import read_prompt_dir, results_stem, sanitize_filename

FIXTURES = Path(__file__).parents[1] / "fixtures" / "suites"


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
    for model in (tiny_model_dir, tiny_gpt2_dir):
        assert main(["score", str(FIXTURES), "--model", f"hf:{model}", "-o", str(out), "--no-history"]) == 0
        if model == tiny_model_dir:
            first = {p.name: p.read_bytes() for p in out.glob("*_results.*")}
    after = {p.name: p.read_bytes() for p in out.glob("*_results.*")}
    assert len(first) == 4 and len(after) == 8  # 2 suites × (csv, jsonl) × 2 models
    assert all(after[name] == data for name, data in first.items())
    assert {results_stem("test", s, f"hf:{m}") + ".csv" for s in "AB" for m in (tiny_model_dir, tiny_gpt2_dir)} \
        <= set(after)


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
    good = Path(__file__).parents[1] / "fixtures" / "items" / "good.jsonl"
    assert main(["convert", str(good), "--to", "suites", "-o", str(tmp_path / "s")]) == 2
    assert "not converted from a suite" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()
