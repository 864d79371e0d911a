"""CommonEval's own code (the `commoneval` package, 0.2.1) as the oracle for proctor's CommonEval dialect.

Both directions: every dataset proctor writes in the `commoneval` dialect is accepted by the package's
readers (`Dataset.read_yaml`, `Dataset.read_items`), and every dataset the package writes is read by
proctor exactly and written back byte for byte.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from commoneval import dataset as ce_dataset
from commoneval import item as ce_item
from formats_strategies import FAST, dataset_attributes, items, word
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.cli import main
from proctor.data.formats.commoneval import read_commoneval, write_commoneval
from proctor.data.formats.dialects import COMMONEVAL_MODALITIES, Dialect
from proctor.data.records import LETTERS, Item, ItemSet, Modality

CLASSES: dict[str, Any] = {
    "boolean": ce_item.BooleanItem, "ternary": ce_item.TernaryItem,
    **{f"choiceof{n}": ce_item.ClosedSetItem for n in range(2, 6)},
    **{m: ce_item.OpenEndedItem for m in ("cloze", "singlevalue", "shortprose", "longprose")},
}


def any_item(**fields: Any) -> Any:
    """The item class for the row's modality (the package reads one class per call: dispatch on modality)."""
    return CLASSES[fields["modality"].value](**fields)


def package_reads(directory: Path) -> Any:
    """What CommonEval's code makes of a dataset directory (raises what it raises)."""
    (yaml_path,) = directory.glob("*.yaml")
    with yaml_path.open() as fp:
        ds = ce_dataset.Dataset.read_yaml(fp)
    with contextlib.redirect_stdout(io.StringIO()):  # it prints a line per part
        ds.read_items(any_item, basepath=directory)
    return ds


def assert_same(package: Any, ours: Item, task_prompt: str | None = None) -> None:
    """A package item and a proctor item say the same thing (`task_prompt`: what the package wrote)."""
    assert package.identifier == ours.identifier and package.prompt == ours.prompt
    assert package.modality.value == COMMONEVAL_MODALITIES[ours.modality]
    if ours.modality is Modality.BOOLEAN:
        assert package.response is (ours.response == "True")
    elif ours.modality is Modality.TERNARY:
        assert package.response == {"I don't know": "Unknown"}.get(str(ours.response), ours.response)
    elif ours.modality.is_choice:
        assert LETTERS[package.response] == ours.response
        assert package.choices == list((ours.choices or {}).values())
    else:
        assert package.response == ours.response
    assert (task_prompt if task_prompt is not None else package.taskPrompt or None) == (ours.task_prompt or None)
    assert (package.support or None) == (ours.support or None)
    assert package.difficulty == (ours.difficulty or 0.0)


def _expressible(item: Item) -> bool:
    """Items CommonEval's code has a spelling for: its ten modalities, one plain answer, options given."""
    return (item.modality in COMMONEVAL_MODALITIES and isinstance(item.response, str)
            and (not item.modality.is_choice or item.choices is not None)
            and item.task_prompt != "" and item.support not in ("", [])  # the package writes no empty ones
            and not {"choices", "category", "subcategory", "tags"} & set(item.metadata))


def _make_expressible(item: Item) -> Item:
    """`item` reduced to what CommonEval's code can say (few draws are thrown away)."""
    update: dict[str, Any] = {
        "response": item.best_answer,
        "task_prompt": item.task_prompt or None,
        "support": item.support or None,
        "metadata": {k: v for k, v in item.metadata.items() if k not in ("choices", "category", "subcategory", "tags")},
    }
    if item.modality.is_choice and item.choices is None:
        update["choices"] = {letter: f"option {letter}" for letter in item.modality.letters}
    return item.model_copy(update=update)


@st.composite
def commoneval_itemsets(draw: st.DrawFn) -> ItemSet:
    rows = draw(st.lists(items().map(_make_expressible).filter(_expressible), min_size=1, max_size=5,
                         unique_by=lambda it: it.identifier.casefold()))
    attrs = draw(dataset_attributes())
    return ItemSet(identifier=draw(st.text("abcxyz019_-.", min_size=1, max_size=8)), description=draw(word),
                   name=draw(st.none() | word), metadata=attrs, items=rows)


@settings(**FAST, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                         HealthCheck.data_too_large])
@given(commoneval_itemsets(), st.none() | st.integers(1, 3))
def test_package_accepts_everything_proctor_writes_in_its_dialect(itemset: ItemSet, shard: int | None) -> None:
    with tempfile.TemporaryDirectory() as d:
        out = Path(d, "ds")
        notes: list[str] = []
        write_commoneval(out, itemset, shard, Dialect.COMMONEVAL, notes)
        ds = package_reads(out)
        assert ds.identifier == itemset.identifier and ds.subject == itemset.metadata["subject"]
        assert ds.created == dt.date.fromisoformat(itemset.metadata["created"])
        assert len(ds.items) == len(itemset.items)
        for theirs, ours in zip(ds.items, itemset.items):
            assert_same(theirs, ours)
        assert read_commoneval(out).items == itemset.items  # and proctor reads its own output back
        extra = [k for k in itemset.metadata if k not in ce_dataset.Dataset.__dataclass_fields__]
        assert bool(extra) == bool(notes)  # attributes the package would refuse are dropped, and said so


@st.composite
def package_items(draw: st.DrawFn) -> Any:
    ident = draw(st.text("abcXYZ019_-.", min_size=1, max_size=6))
    prompt = draw(word)
    common = {"identifier": ident, "support": draw(st.just("") | word), "taskPrompt": draw(st.just("") | word)}
    kind = draw(st.sampled_from(["boolean", "ternary", "choice", "open"]))
    if kind == "boolean":
        return ce_item.BooleanItem(modality=ce_item.Modality.BOOLEAN, prompt=prompt, response=draw(st.booleans()),
                                   **common)
    if kind == "ternary":
        return ce_item.TernaryItem(modality=ce_item.Modality.TERNARY, prompt=prompt,
                                   response=draw(st.sampled_from(list(ce_item.Ternary))), **common)
    if kind == "choice":
        n = draw(st.integers(2, 5))
        return ce_item.ClosedSetItem(modality=ce_item.Modality(f"choiceof{n}"), prompt=prompt,
                                     choices=draw(st.lists(word, min_size=n, max_size=n)),
                                     response=draw(st.integers(0, n - 1)), **common)
    modality = draw(st.sampled_from(["cloze", "singlevalue", "shortprose", "longprose"]))
    return ce_item.OpenEndedItem(modality=ce_item.Modality(modality), response=draw(word),
                                 prompt=prompt + (" ___" if modality == "cloze" else ""), **common)


@settings(**FAST, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(package_items(), min_size=1, max_size=6, unique_by=lambda it: it.identifier.casefold()),
       st.integers(1, 3), st.dates(dt.date(2000, 1, 1), dt.date.today()))
def test_proctor_reads_what_the_package_writes_exactly(written: list[Any], n_parts: int, created: dt.date) -> None:
    n_parts = min(n_parts, len(written))
    parts = [f"pk_{i:03d}.jsonl" for i in range(n_parts)] if n_parts > 1 else ["pk.jsonl"]
    ds = ce_dataset.Dataset("pk", created=created, creator="Biblica", description="A test", source="head",
                            subject="test", hasPart=parts)
    with tempfile.TemporaryDirectory() as d:
        base = Path(d, "pk")
        base.mkdir()
        for i, name in enumerate(parts):
            with (base / name).open("w") as fp:
                for it in written[i::n_parts]:
                    it.write_jsonline(fp)
        with (base / "pk.yaml").open("w") as fp:
            ds.write_yaml(fp)
        ours = read_commoneval(base)
        by_id = {it.identifier: it for it in ours.items}
        for it in written:
            assert_same(it, by_id[it.identifier], it.as_dict().get("taskPrompt"))
        assert ours.metadata["subject"] == "test" and ours.metadata["creator"] == "Biblica"
        out = Path(d, "again")
        write_commoneval(out, ours)  # unchanged: byte for byte
        assert {p.name: p.read_bytes() for p in out.iterdir()} == {p.name: p.read_bytes() for p in base.iterdir()}
        # rendered afresh (no remembered spelling) in the commoneval dialect: still the package's bytes
        fresh = ItemSet.model_validate(ours.model_dump(by_alias=True))
        write_commoneval(Path(d, "fresh"), fresh, n_parts if n_parts > 1 else None, Dialect.COMMONEVAL)
        if n_parts == 1:  # the same objects, the same YAML bytes (key order of a choice item's
            # generated taskPrompt is the one thing an Item cannot know)
            fresh_dir = Path(d, "fresh")
            assert (fresh_dir / "pk.yaml").read_bytes() == (base / "pk.yaml").read_bytes()
            assert [json.loads(x) for x in (fresh_dir / "pk.jsonl").read_text().splitlines()] == [
                json.loads(x) for x in (base / "pk.jsonl").read_text().splitlines()]
        package_reads(Path(d, "fresh"))


def test_cli_converts_a_commoneval_dataset_to_commoneval_unchanged(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's first failure: JSON booleans came back as "False" and the package refused them."""
    src = tmp_path / "bools"
    src.mkdir()
    ds = ce_dataset.Dataset("bools", created=dt.date(2025, 5, 1), creator="Biblica", description="d",
                            source="s", subject="geography", hasPart=["bools.jsonl"])
    with (src / "bools.jsonl").open("w") as fp:
        for i, truth in enumerate([True, False, False]):
            ce_item.BooleanItem(identifier=f"b.{i}", modality=ce_item.Modality.BOOLEAN, prompt=f"Claim {i}",
                                response=truth).write_jsonline(fp)
    with (src / "bools.yaml").open("w") as fp:
        ds.write_yaml(fp)
    assert main(["convert", str(src), "--to", "commoneval", "-o", str(tmp_path / "out")]) == 0
    for name in ("bools.jsonl", "bools.yaml"):
        assert (tmp_path / "out" / name).read_bytes() == (src / name).read_bytes()
    assert [it.response for it in package_reads(tmp_path / "out").items] == [True, False, False]


def test_cli_writes_questions_in_the_package_dialect(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "q.json"
    src.write_text(json.dumps({"name": "q", "questions": [
        {"id": i, "original_id": f"q{i}", "question": f"Question {i}?", "choices": dict(zip("ABCD", "wxyz")),
         "answer": "ABCD"[i], "category": "math"} for i in range(4)]}))
    out = tmp_path / "ce"
    code = main(["convert", str(src), "--to", "commoneval", "--dialect", "commoneval", "-o", str(out),
                 "--meta", "Creator=Me", "--meta", "subject=demo"])
    err = capsys.readouterr().err
    assert code == 0, err
    ds = package_reads(out)
    assert ds.creator == "Me" and ds.subject == "demo" and ds.created == dt.date.today()
    assert "created: not in the source" in err and "creator" not in err.split("note: created")[1].split("\n")[0]
    texts = [json.loads(line) for line in next(out.glob("*.jsonl")).read_text().splitlines()]
    assert all("choices" not in row and "category" not in row for row in texts)  # extras live in otherargs


def test_the_demos_own_convert_output_validates_without_a_warning(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """#32.29: `make demo`'s Question dataset → CommonEval conversion sets `language` (not in the source: 'eng',
    what CommonEval's code assumes, named in a note; `--meta language=…` overrides), so `validate` has nothing
    to say about it; a language the source has is kept."""
    demo = Path(__file__).resolve().parents[3] / "examples" / "questions" / "demo.json"
    out = tmp_path / "qc"
    assert main(["convert", str(demo), "--to", "commoneval", "-o", str(out), "--shard-size", "4"]) == 0
    assert "language: not in the source, set to 'eng' (give --meta language=VALUE)" in capsys.readouterr().err
    assert main(["validate", str(out)]) == 0
    err = capsys.readouterr().err
    assert "language" not in err and "warning" not in err
    assert _language(out) == "eng"
    fra = tmp_path / "fra"
    assert main(["convert", str(demo), "--to", "commoneval", "-o", str(fra), "--meta", "language=fra"]) == 0
    assert _language(fra) == "fra"
    again = tmp_path / "again"
    assert main(["convert", str(fra), "--to", "commoneval", "-o", str(again)]) == 0
    assert _language(again) == "fra" and "language:" not in capsys.readouterr().err


def _language(directory: Path) -> object:
    import yaml

    (path,) = directory.glob("*.yaml")
    return yaml.safe_load(path.read_text())["language"]
