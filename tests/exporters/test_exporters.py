"""The registry and the all-or-nothing write every exporter goes through."""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from proctor import exporters
from proctor.errors import InputError
from proctor.runlog import RunLog


def test_every_format_names_a_module_with_an_export_function() -> None:
    for name in exporters.FORMATS:
        assert callable(exporters.get_exporter(name))
    with pytest.raises(InputError, match="'html': not a format"):
        exporters.get_exporter("html")


def test_a_failing_exporter_leaves_nothing_behind(mixed_run: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    def half(logs: Sequence[RunLog], out: Path) -> list[Path]:
        (out / "first.json").write_text("{}")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(exporters, "get_exporter", lambda name: half)
    with pytest.raises(OSError):
        exporters.export([mixed_run], "llmwc", tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mixed"]  # neither out nor its staging folder


def test_an_empty_folder_is_filled_and_a_used_one_refused(mixed_run: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    written = exporters.export([mixed_run], "inspect" if _has("inspect_ai") else "llmwc", empty)
    assert written and all(p.is_file() and p.parent.is_relative_to(empty) for p in written)
    with pytest.raises(InputError, match="not an empty folder"):
        exporters.export([mixed_run], "llmwc", empty)


def test_folders_of_runs_are_expanded(mixed_run: Path, tmp_path: Path) -> None:
    written = exporters.export([tmp_path], "llmwc", tmp_path.parent / f"{tmp_path.name}-out")
    assert [p.name for p in written] == ["run.json", "summary.json", "results.json"]


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


@pytest.mark.parametrize("fmt", ["inspect", "eee", "llmwc"])
def test_the_same_run_twice_is_refused_not_overwritten(mixed_run: Path, tmp_path: Path, fmt: str) -> None:
    """(llmwc: issue 32 #6)"""
    pytest.importorskip({"inspect": "inspect_ai", "eee": "every_eval_ever"}.get(fmt, "proctor"))
    copy = tmp_path / "copy"
    shutil.copytree(mixed_run, copy)
    with pytest.raises(InputError, match="the same run as another one given"):
        exporters.export([mixed_run, copy], fmt, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_an_unwritable_destination_is_a_clear_error(mixed_run: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(InputError, match=r"file/out: cannot write here"):
        exporters.export([mixed_run], "llmwc", blocker / "out")


@pytest.mark.parametrize("bad", ["NaN", "Infinity", "-0.5", "7.5"])
def test_a_hand_edited_score_outside_0_1_is_refused_with_its_line(mixed_run: Path, tmp_path: Path, bad: str) -> None:
    """A NaN score would be written into EEE's samples file as the non-JSON `NaN`; 7.5 would count as accuracy."""
    samples = mixed_run / "samples.jsonl"
    lines = samples.read_text().splitlines()
    lines[0] = lines[0].replace('"score":1.0', f'"score":{bad}')
    assert bad in lines[0]
    samples.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"samples.jsonl:1: .*score"):
        exporters.export([mixed_run], "llmwc", tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("field", ["started_at", "finished_at"])
def test_a_hand_edited_time_that_is_not_iso_8601_is_refused(mixed_run: Path, tmp_path: Path, field: str) -> None:
    """`--to inspect` parsed it inside Inspect's models: a pydantic traceback, exit 1."""
    import json

    manifest = mixed_run / "manifest.json"
    data = json.loads(manifest.read_text())
    data[field] = "not a date"
    manifest.write_text(json.dumps(data))
    with pytest.raises(InputError, match=rf"manifest.json: .*{field}.*ISO 8601"):
        exporters.export([mixed_run], "inspect", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_name_too_long_for_the_file_system_names_the_destination_not_the_staging_folder(
        mixed_run: Path, tmp_path: Path) -> None:
    import json

    manifest = mixed_run / "manifest.json"
    data = json.loads(manifest.read_text())
    data["model"] = {"spec": "openai:" + "m" * 400}
    manifest.write_text(json.dumps(data))
    out = tmp_path / "out"
    with pytest.raises(OSError, match="too long") as e:  # the CLI shows `path: what`, exit 2
        exporters.export([mixed_run], "llmwc", out)
    assert str(e.value.filename).startswith(f"{out}/models/mmm")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mixed"]


WRONG_TYPES = [  # issue 32 #13: (where, key path, value, the field the one line names)
    ("generation", "temperature", "hot", "generation.temperature"),
    ("generation", "stop", 5, "generation.stop"),
    ("generation", "max_tokens", -5, "generation.max_tokens"),
    ("generation", "top_p", [1], "generation.top_p"),
    ("model", "base_urls", 5, "model.base_urls"),
    ("model", "base_url", ["x"], "model.base_url"),
]


@pytest.mark.parametrize("fmt", ["inspect", "eee", "llmwc"])
@pytest.mark.parametrize(("block", "key", "value", "field"), WRONG_TYPES, ids=[f"{w[1]}={w[2]}" for w in WRONG_TYPES])
def test_a_wrong_typed_manifest_value_is_one_line_at_the_manifest(
        mixed_run: Path, tmp_path: Path, fmt: str, block: str, key: str, value: object, field: str) -> None:
    """Issue 32 #13: never a pydantic traceback from inside inspect_ai's or EEE's models (or a TypeError)."""
    import json

    pytest.importorskip({"inspect": "inspect_ai", "eee": "every_eval_ever"}.get(fmt, "proctor"))
    manifest = mixed_run / "manifest.json"
    data = json.loads(manifest.read_text())
    data[block][key] = value
    manifest.write_text(json.dumps(data))
    with pytest.raises(InputError, match=rf"manifest.json: bad manifest: {re.escape(field)}") as caught:
        exporters.export([mixed_run], fmt, tmp_path / "out")
    assert "\n" not in str(caught.value) and not (tmp_path / "out").exists()


@pytest.mark.parametrize("key", ["input_tokens", "output_tokens"])
def test_negative_tokens_are_refused_at_their_line(mixed_run: Path, tmp_path: Path, key: str) -> None:
    samples = mixed_run / "samples.jsonl"
    lines = samples.read_text().splitlines()
    lines[1] = re.sub(rf'"{key}":\d+', f'"{key}":-3', lines[1])
    assert f'"{key}":-3' in lines[1]
    samples.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=rf"samples.jsonl:2: bad sample: {key}"):
        exporters.export([mixed_run], "eee", tmp_path / "out")


def test_any_value_a_formats_models_refuse_is_one_line(mixed_run: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32 #13, the safety net: what proctor does not check itself but Inspect's models refuse.

    A wrong-typed `dataset.n_items` is now refused by the typed manifest itself (issue 30), at the manifest;
    the net is tripped by Inspect's own `EvalDataset` refusing a value the exporter hands it."""
    import json

    pytest.importorskip("inspect_ai")
    from inspect_ai.log import EvalDataset

    from proctor.exporters import inspect_eval

    manifest = mixed_run / "manifest.json"
    data = json.loads(manifest.read_text())
    data["dataset"]["n_items"] = "many"
    manifest.write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"manifest.json: bad manifest: dataset.n_items"):
        exporters.export([mixed_run], "inspect", tmp_path / "out")
    data["dataset"]["n_items"] = 3
    manifest.write_text(json.dumps(data))

    def refused(log: object) -> object:
        return EvalDataset.model_validate({"name": "x", "samples": "many"})

    monkeypatch.setattr(inspect_eval, "_spec", refused)
    with pytest.raises(InputError, match=r"out: a run holds a value inspect refuses: .*samples") as caught:
        exporters.export([mixed_run], "inspect", tmp_path / "out")
    assert "\n" not in str(caught.value) and not (tmp_path / "out").exists()
