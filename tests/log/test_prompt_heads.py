"""#40 item 3: a run directory that does not repeat itself. The heads that prompts share (a few-shot block, a
system prompt) are stored once in prompts.jsonl, by hash; each sample keeps the key and the rest, and reads back
whole, byte for byte. A five-shot run stays within 2 KB a sample beyond the model's output; old run directories
(the whole prompt in every sample) still read, resume, merge and export; an edited head or a missing one is
refused on one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from proctor.cli import main
from proctor.log import prompts
from proctor.log.checksums import write_checksums
from proctor.log.prompts import MIN_PREFIX, PROMPTS, HeadWriter, read_heads
from proctor.log.runlog import SAMPLES, Outcome, Sample, append_samples, iter_run_samples, iter_samples
from proctor.metrics.results import read_run
from proctor.run.verify import verify_run
from proctor.util.errors import InputError

CATEGORIES = ("law", "history", "physics")
LEGACY = Path(__file__).parents[1] / "fixtures" / "fewshot_legacy"


def _mmlu_pro(folder: Path, n: int) -> Path:
    """`n` test rows and five validation rows a category in TIGER-Lab/MMLU-Pro's parquet schema, with worked
    examples (`cot_content`) about as long as the real ones."""
    folder.mkdir(parents=True, exist_ok=True)

    def rows(ids: range, split: str, cot: bool) -> pa.Table:
        return pa.table({
            "question_id": pa.array(list(ids), pa.int64()),
            "question": [f"[{split} {i}] " + "Which of the following best describes the case? " * 6 for i in ids],
            "options": [[f"option {j} of question {i}, stated at some length" for j in range(10)] for i in ids],
            "answer": ["ABCDEFGHIJ"[i % 10] for i in ids],
            "answer_index": pa.array([i % 10 for i in ids], pa.int64()),
            "cot_content": [("A: Let's think step by step. " + "We weigh each option against the facts. " * 18
                             + f"The answer is ({'ABCDEFGHIJ'[i % 10]}).") if cot else "" for i in ids],
            "category": [CATEGORIES[i % len(CATEGORIES)] for i in ids],
            "src": [f"src-{i % 7}" for i in ids],
        })

    pq.write_table(rows(range(100, 100 + n), "test", False), folder / "test-00000-of-00001.parquet")
    pq.write_table(rows(range(10, 10 + 5 * len(CATEGORIES)), "val", True), folder / "validation-00000-of-00001.parquet")
    return folder


def _run(tmp_path: Path, data: Path, out: Path, *extra: str) -> None:
    assert main(["run", "mmlu-pro", "--data-file", str(data), "--model", "scripted:random", "--epochs", "2",
                 "-o", str(out), "--store", str(tmp_path / "s.sqlite"), "--no-progress", *extra]) == 0


def _full_lines(samples: list[Sample]) -> str:
    """Samples as proctor wrote them before heads were stored: the whole prompt in every line."""
    return "".join(s.model_dump_json() + "\n" for s in samples)


def test_a_five_shot_run_keeps_its_prompts_whole_in_2_kb_a_sample(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    data = _mmlu_pro(tmp_path / "data", 30)
    _run(tmp_path, data, tmp_path / "run")
    run = tmp_path / "run"
    log = read_run(run)
    lines = (run / SAMPLES).read_bytes().splitlines(keepends=True)
    assert len(lines) == len(log.samples) == 60
    beyond_output = [len(line) - len(json.dumps(s.raw_output)) for line, s in zip(lines, log.samples, strict=True)]
    whole = _full_lines(log.samples).encode()
    assert len(whole) / 60 > 5000  # the same samples with their prompts whole: the five examples in every one
    heads = read_heads(run)
    assert len(heads) == len(CATEGORIES)  # one five-shot block a category, stored once
    assert all(b'"prompt_prefix"' in line for line in lines)  # heads found in the first batch serve it too
    assert max(beyond_output) <= 2048
    # byte for byte: each prompt read back is the request `proctor prompt` shows for its item
    for s in log.samples[:6]:
        capsys.readouterr()
        assert main(["prompt", "mmlu-pro", "--data-file", str(data), "--item", s.item_id, "--json"]) == 0
        messages = json.loads(capsys.readouterr().out)["messages"]
        assert s.prompt == [{"role": m["role"], "content": m["content"]} for m in messages]
    # checksums cover the heads: `verify` checks prompts.jsonl, and an edit of a head is found
    assert verify_run(run).ok and any(c.startswith(PROMPTS) for c in verify_run(run).checked)
    (run / PROMPTS).write_text((run / PROMPTS).read_text().replace("weigh each", "weigh every", 1))
    found = verify_run(run)
    assert not found.ok and any(p.startswith(f"{PROMPTS}:1:") for p in found.problems)
    with pytest.raises(InputError, match=rf"{PROMPTS}:1: the head \w+ does not hash to its key"):
        read_run(run)


def test_exports_show_every_prompt_whole(tmp_path: Path) -> None:
    data = _mmlu_pro(tmp_path / "data", 9)
    _run(tmp_path, data, tmp_path / "run")
    held = read_run(tmp_path / "run").samples
    assert main(["export", str(tmp_path / "run"), "--to", "eee", "-o", str(tmp_path / "eee")]) == 0
    rows = [json.loads(x) for f in (tmp_path / "eee").rglob("*_samples.jsonl") for x in f.read_text().splitlines()]
    formatted = sorted(r["input"]["formatted"] for r in rows)
    assert len(rows) == len(held) and formatted == sorted(
        "\n\n".join(f"{m['role']}: {m['content']}" for m in s.prompt) for s in held)  # type: ignore[union-attr]
    assert all(f.count("Question:") == 6 for f in formatted)  # five examples and the question, each whole


def test_heads_are_found_across_items_never_from_one_items_epochs(tmp_path: Path) -> None:
    shared = "You are a careful grader.\n" + "Rules of the game, one per line.\n" * 12
    chat = [Sample(sample_id=f"c{i}#{e}", item_id=f"c{i}", epoch=e, outcome=Outcome.WRONG, score=0.0,
                   prompt=[{"role": "system", "content": shared}, {"role": "user", "content": f"question {i}\n"}])
            for e in range(2) for i in range(3)]
    text = [Sample(sample_id=f"t{i}#0", item_id=f"t{i}", outcome=Outcome.CORRECT, score=1.0,
                   prompt=shared + f"Question {i}: é ✓ \ud7ff \"quoted\" \\n\n")
            for i in range(3)]
    alone = [Sample(sample_id=f"a#{e}", item_id="a", epoch=e, outcome=Outcome.CORRECT, score=1.0,
                    prompt="one item's long prompt\n" * 40) for e in range(3)]  # its epochs share all of it
    samples = [*chat, *text, *alone]
    append_samples(tmp_path / SAMPLES, samples)
    heads = read_heads(tmp_path)
    assert sorted(h.chat for h in heads.values()) == [False, True]  # one chat head, one text head; none for "a"
    assert all(len(h.text) >= MIN_PREFIX for h in heads.values())
    back = list(iter_samples(tmp_path / SAMPLES))
    assert [s.model_dump() for s in back] == [s.model_dump() for s in samples]  # whole, to the byte
    assert [s.model_dump_json() for s in iter_run_samples(tmp_path)] == [s.model_dump_json() for s in samples]
    lines = (tmp_path / SAMPLES).read_text().splitlines()
    assert sum('"prompt_prefix"' in x for x in lines) == len(samples) - 3  # all but "a"'s: found in the batch
    assert all('"prompt_prefix"' not in x for x in lines if '"item_id":"a"' in x)


def test_an_old_run_directory_reads_resumes_and_exports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The whole prompt in every sample (as written before #40): read as it was; resumed, its new samples store
    heads beside the old lines; merged shards and exports see every prompt whole."""
    data = _mmlu_pro(tmp_path / "data", 12)
    _run(tmp_path, data, tmp_path / "new")
    want = read_run(tmp_path / "new").samples
    old = tmp_path / "old"
    shutil.copytree(tmp_path / "new", old)
    (old / PROMPTS).unlink()
    (old / SAMPLES).write_text(_full_lines(want[:10]))  # an old, unfinished run: ten samples, prompts whole
    (old / "results.json").unlink()
    (old / "checksums.json").unlink()  # written when a run finishes
    capsys.readouterr()
    _run(tmp_path, data, old)
    assert "resuming" in capsys.readouterr().err
    back = read_run(old).samples
    assert [s.prompt for s in back] == [s.prompt for s in want] and len(back) == 24
    lines = (old / SAMPLES).read_text().splitlines()
    assert not any('"prompt_prefix"' in x for x in lines[:10]) and any('"prompt_prefix"' in x for x in lines[10:])
    assert verify_run(old).ok
    for fmt in ("inspect", "eee", "llmwc"):
        assert main(["export", str(old), "--to", fmt, "-o", str(tmp_path / f"x-{fmt}")]) == 0
    # the legacy five-shot run (main dc99ff5) reads whole and reports
    legacy = next((LEGACY / "runs").glob("mmlu-pro__*"))
    assert all("Question:" in s.prompt[0]["content"] for s in read_run(legacy).samples)  # type: ignore[index]
    assert main(["report", str(legacy), "-o", str(tmp_path / "r.html")]) == 0


def test_old_shards_merge_with_new_ones(tmp_path: Path) -> None:
    data = _mmlu_pro(tmp_path / "data", 12)
    _run(tmp_path, data, tmp_path / "full")
    for k in (1, 2):
        _run(tmp_path, data, tmp_path / f"s{k}", "--shard", f"{k}/2")
    s1 = tmp_path / "s1"  # shard 1 as an old proctor wrote it: prompts whole, no prompts.jsonl
    (s1 / SAMPLES).write_text(_full_lines(read_run(s1).samples))
    (s1 / PROMPTS).unlink(missing_ok=True)
    write_checksums(s1)
    assert main(["merge", str(s1), str(tmp_path / "s2"), "-o", str(tmp_path / "merged"),
                 "--store", str(tmp_path / "s.sqlite")]) == 0
    merged, full = read_run(tmp_path / "merged"), read_run(tmp_path / "full")
    assert [(s.sample_id, s.prompt, s.score) for s in merged.samples] == [(s.sample_id, s.prompt, s.score)
                                                                         for s in full.samples]
    assert merged.results == full.results and verify_run(tmp_path / "merged").ok


def test_a_missing_or_torn_head_file(tmp_path: Path) -> None:
    head = "A shared instruction line.\n" * 20
    samples = [Sample(sample_id=f"q{i}#0", item_id=f"q{i}", outcome=Outcome.WRONG, score=0.0, prompt=head + f"{i}")
               for i in range(3)]
    append_samples(tmp_path / SAMPLES, samples)
    good = (tmp_path / PROMPTS).read_bytes()
    (tmp_path / PROMPTS).write_bytes(good + b'{"key": "00')  # a kill mid-append: the torn line is skipped, then cut
    assert [s.prompt for s in iter_samples(tmp_path / SAMPLES)] == [s.prompt for s in samples]
    prompts._WRITERS.clear()
    append_samples(tmp_path / SAMPLES, [samples[0].model_copy(update={"sample_id": "q0#1", "epoch": 1})])
    assert (tmp_path / PROMPTS).read_bytes() == good
    (tmp_path / PROMPTS).unlink()
    with pytest.raises(InputError, match=rf"{SAMPLES}:1: bad sample: its prompt's head \w+ is not in {PROMPTS}"):
        list(iter_samples(tmp_path / SAMPLES))


def test_two_heads_sharing_a_keys_start_get_longer_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prompts, "full_hash", lambda text, chat: "ab" * 8 + prompts.hashlib.sha256(
        text.encode()).hexdigest()[16:])
    writer = HeadWriter(tmp_path)
    a, b = writer._add("x" * 300, False), writer._add("y" * 300, False)
    assert len(a.key) == 16 and len(b.key) == 32 and a.key == b.key[:16]
    writer.flush()
    monkeypatch.undo()
    with pytest.raises(InputError, match="does not hash to its key"):  # a head is checked against its real hash
        read_heads(tmp_path)
