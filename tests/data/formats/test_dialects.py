"""Dialects: every spelling read is written back byte for byte; changed items keep their dialect."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from formats_strategies import FAST, items
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.data.formats.dialects import Dialect, commoneval_item, detect_dialect, render_lines
from proctor.data.formats.items import read_items, write_items
from proctor.data.records import Item, Modality

# every spelling proctor reads, each on its own line
SPELLINGS = [
    {"identifier": "b.1", "modality": "boolean", "prompt": "Sky blue?", "response": True},
    {"identifier": "b.2", "modality": "boolean", "prompt": "Sky green?", "response": False},
    {"identifier": "b.3", "modality": "boolean", "prompt": "Sky blue?", "response": "True"},
    {"identifier": "b.4", "modality": "Boolean", "prompt": "Sky green?", "response": "false"},
    {"identifier": "t.1", "modality": "ternary", "prompt": "Life on Mars?", "response": "Unknown"},
    {"identifier": "t.2", "modality": "ternary", "prompt": "Life on Mars?", "response": "I don't know"},
    {"identifier": "t.3", "modality": "ternary", "prompt": "Life on Mars?", "response": "unknown"},
    {"identifier": "t.4", "modality": "ternary", "prompt": "Water wet?", "response": True},
    {"identifier": "s.1", "modality": "singlevalue", "prompt": "2+2?", "response": "4"},
    {"identifier": "s.2", "modality": "single-value", "prompt": "2+2?", "response": 4},
    {"identifier": "s.3", "modality": "SINGLEVALUE", "prompt": "2+2?", "response": "4", "difficulty": 1},
    {"identifier": "p.1", "modality": "shortprose", "prompt": "Hi?", "response": "hi"},
    {"identifier": "p.2", "modality": "short-prose", "prompt": "Hi?", "response": "hi", "support": ["a", "b"]},
    {"identifier": "p.3", "modality": "longprose", "prompt": "More?", "response": "more", "taskPrompt": "Be brief."},
    {"identifier": "p.4", "modality": "long-prose", "prompt": "More?", "response": "more", "metadata": {"k": 1}},
    {"identifier": "c.1", "prompt": "Which?", "response": "B", "modality": "choiceof2",
     "otherargs": {"choices": ["left", "right"], "source": "x"}},
    {"identifier": "c.2", "modality": "choiceof2", "prompt": "Which?", "response": "b",
     "choices": {"A": "left", "B": "right"}, "category": "dir", "tags": ["t"]},
    {"identifier": "c.3", "modality": "choiceof4", "prompt": "Pick:\nA) 1\nB) 2\nC) 3\nD) 4", "response": "C"},
    {"identifier": "z.1", "modality": "cloze", "prompt": "Faith, ___ and love.", "response": "hope",
     "difficulty": 0.25},
    {"identifier": "u.1", "modality": "short-prose", "prompt": "Ünïcödé — “quotes”?", "response": "ja"},
]
STYLES: list[dict[str, Any]] = [
    {},  # json.dumps defaults: what CommonEval's code writes
    {"ensure_ascii": False},
    {"separators": (",", ":"), "ensure_ascii": False},
    {"indent": None, "separators": (", ", ":"), "sort_keys": True},
]


def _file(rows: list[dict[str, Any]], styles: list[dict[str, Any]], newline: str = "\n", bom: bool = False,
          final_newline: bool = True) -> bytes:
    text = newline.join(json.dumps(r, **s) for r, s in zip(rows, styles))
    text = ("\ufeff" if bom else "") + text + (newline if final_newline else "")
    return text.encode("utf-8")


def test_every_spelling_round_trips_byte_for_byte(tmp_path: Path) -> None:
    for i, style in enumerate(STYLES):
        for newline, bom, final in (("\n", False, True), ("\r\n", True, True), ("\n", False, False)):
            src, out = tmp_path / f"in{i}.jsonl", tmp_path / f"out{i}.jsonl"
            src.write_bytes(_file(SPELLINGS, [style] * len(SPELLINGS), newline, bom, final))
            write_items(out, read_items(src))
            assert out.read_bytes() == src.read_bytes()


def test_a_changed_item_is_rewritten_in_its_own_dialect_and_the_rest_kept(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_bytes(_file(SPELLINGS, [{"separators": (",", ":")}] * len(SPELLINGS)))
    read = read_items(src)
    changed = [it.model_copy(update={"prompt": it.prompt + " (v2)"}) if it.identifier in ("b.1", "t.2") else it
               for it in read]
    out = tmp_path / "out.jsonl"
    write_items(out, changed)
    before, after = src.read_text().splitlines(), out.read_text().splitlines()
    assert [i for i, (a, b) in enumerate(zip(before, after)) if a != b] == [0, 5]
    assert json.loads(after[0]) == {"identifier": "b.1", "prompt": "Sky blue? (v2)", "response": True,
                                    "modality": "boolean"}  # CommonEval's code spelling, as read
    assert json.loads(after[5]) == {"identifier": "t.2", "modality": "ternary", "prompt": "Life on Mars? (v2)",
                                    "response": "I don't know"}  # the spec's, as read


def test_dialect_chosen_for_items_without_one(tmp_path: Path) -> None:
    rows = [Item(identifier="x", modality=Modality.TERNARY, prompt="?", response="I don't know"),
            Item(identifier="y", modality=Modality.SINGLE_VALUE, prompt="?", response="4")]
    assert render_lines(rows).decode().splitlines() == [
        '{"identifier": "x", "modality": "ternary", "prompt": "?", "response": "I don\'t know"}',
        '{"identifier": "y", "modality": "single-value", "prompt": "?", "response": "4"}']
    assert render_lines(rows, Dialect.COMMONEVAL).decode().splitlines() == [
        '{"identifier": "x", "prompt": "?", "response": "Unknown", "modality": "ternary"}',
        '{"identifier": "y", "prompt": "?", "response": "4", "modality": "singlevalue"}']


def test_forcing_a_dialect_rewrites_items_spelled_otherwise(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_bytes(_file(SPELLINGS, [{}] * len(SPELLINGS)))
    read = read_items(src)
    spec = render_lines(read, Dialect.SPEC).decode()
    assert "singlevalue" not in spec and "Unknown" not in spec and "otherargs" not in spec and ": true" not in spec
    for line, it in zip(spec.splitlines(), read):
        assert Item.model_validate(json.loads(line)) == it
    assert detect_dialect(json.loads(spec.splitlines()[0])) is Dialect.SPEC


def test_spec_style_choice_item_gets_its_options_from_the_prompt() -> None:
    item = Item(identifier="q", modality=Modality.CHOICE4, prompt="Pick:\nA) 1\nB) 2\nC) 3\nD) 4", response="C")
    assert commoneval_item(item)["otherargs"] == {"choices": ["1", "2", "3", "4"]}


# --- hypothesis: any item, any spelling, any JSON style --------------------------------------

def _respell(draw: st.DrawFn, item: Item) -> dict[str, Any]:
    """`item` as some file might spell it: spec or CommonEval code, keys in any order."""
    if item.is_scored and not isinstance(item.response, list) and item.modality.n_choices in (None, 2, 3, 4, 5) \
            and (not item.modality.is_choice or item.choices) and draw(st.booleans()) \
            and not {"choices", "category", "subcategory", "tags"} & set(item.metadata) \
            and item.task_prompt != "" and item.support not in ("", []):  # the package writes no empty ones
        raw = commoneval_item(item)
    else:
        raw = item.to_json()
    if item.modality in (Modality.SINGLE_VALUE, Modality.SHORT_PROSE, Modality.LONG_PROSE):
        raw["modality"] = draw(st.sampled_from([raw["modality"], raw["modality"].upper(),
                                                raw["modality"].replace("-", "")]))
    keys = draw(st.permutations(list(raw)))
    return {k: raw[k] for k in keys}


@st.composite
def spelled_files(draw: st.DrawFn) -> tuple[bytes, list[Item]]:
    rows = draw(st.lists(items(), min_size=1, max_size=5, unique_by=lambda it: it.identifier.casefold()))
    raws = [_respell(draw, it) for it in rows]
    styles = [draw(st.sampled_from(STYLES)) for _ in raws]
    return _file(raws, styles, draw(st.sampled_from(["\n", "\r\n"])), draw(st.booleans())), rows


@settings(**FAST)
@given(spelled_files())
def test_any_spelling_round_trips(case: tuple[bytes, list[Item]]) -> None:
    data, rows = case
    with tempfile.TemporaryDirectory() as d:
        src, out = Path(d, "in.jsonl"), Path(d, "out.jsonl")
        src.write_bytes(data)
        read = read_items(src)
        assert read == rows
        write_items(out, read)
        assert out.read_bytes() == data
        # and every line alone reproduces itself (items not from this file: no file-level shortcut)
        copies = [it.model_copy() for it in read]
        copies.append(Item(identifier="extra.item", modality=Modality.CLOZE, prompt="a ___", response="b"))
        lines = render_lines(copies).decode().splitlines()
        assert lines[:-1] == src.read_bytes().decode("utf-8-sig").replace("\r\n", "\n").splitlines()


def test_forcing_the_commoneval_dialect_gives_spec_style_choice_items_their_options(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    row = {"identifier": "q", "modality": "choiceof2", "prompt": "Which?\nA) left\nB) right", "response": "B"}
    src.write_text(json.dumps(row) + "\n")
    read = read_items(src)
    assert render_lines(read).decode() == src.read_text()  # as read
    assert json.loads(render_lines(read, Dialect.COMMONEVAL)) == {
        "identifier": "q", "prompt": "Which?\nA) left\nB) right", "response": "B", "modality": "choiceof2",
        "otherargs": {"choices": ["left", "right"]}}
