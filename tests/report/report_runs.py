"""Run directories for the report tests, built on the spot (helpers and fixtures; conftest.py re-exports the fixtures)."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from proctor.core.results import Results
from proctor.log.runlog import SAMPLES, Manifest, Outcome, Sample, write_manifest, write_results

ITEMS = str(Path(__file__).resolve().parents[2] / "examples" / "items" / "multiple-choice.jsonl")
PAYLOAD = '<script>window.__pwned=1</script> and <img src=x onerror="window.__pwned=2">'
WORDS = [f"{a}{b}" for a in ("re", "con", "pro", "ex", "in", "sub", "trans", "de", "per", "ob") for b in (
    "sider", "tain", "duce", "pect", "form", "vert", "ject", "tend", "mit", "fer", "pose", "port", "struct", "clude")]
CATEGORIES = ["biology", "law", "math", "physics", "history <b>&amp;</b>"]
MMLU_PRO_LIKE = ["biology", "business", "chemistry", "computer science", "economics", "engineering", "health",
                 "history", "law", "math", "other", "philosophy", "physics", "psychology"]


def write_run(
    root: Path,
    name: str,
    *,
    model: str,
    samples: list[Sample],
    results: dict[str, Any] | None = None,
    mode: str = "generate",
    dataset: str = "synthetic-mc",
    started_at: str = "2025-05-01T10:00:00+00:00",
    finished_at: str | None = "2025-05-01T10:03:20+00:00",
    prompt_kind: str = "zero_shot",
    generation: dict[str, Any] | None = None,
    epochs: int = 1,
) -> Path:
    d = root / name
    d.mkdir(parents=True)
    write_manifest(
        d,
        Manifest(
            run_id=name,
            proctor_version="0.1.0",
            dataset={"name": dataset, "revision": "abc123", "content_hash": "f" * 64},
            model={"spec": model},
            mode=mode,
            prompt_kind=prompt_kind,
            started_at=started_at,
            finished_at=finished_at,
            generation={"temperature": 0.0, "max_tokens": 64} if generation is None else generation,
            epochs=epochs,
        ),
    )
    path = d / SAMPLES
    with open(path, "w", encoding="utf-8") as f:  # one write instead of an fsync per line: tests stay fast
        f.write("".join(s.model_dump_json() + "\n" for s in samples))
    if results is not None:  # a mapping is results.json as some proctor wrote it (blocks may be missing)
        write_results(d, results if isinstance(results, Results) else Results.model_validate(results))
    return d


def gen_samples(
    n: int, seed: int, skill: float, *, long_output: bool = False, categories: list[str] | None = None
) -> list[Sample]:
    """Multiple-choice samples in every outcome; the first carries the HTML/JS payload in its raw output."""
    rng = random.Random(seed)
    system = "You are a careful expert. Answer with the letter of the correct choice.\n\nThink step by step."
    out = []
    for i in range(n):
        cats = categories or CATEGORIES
        cat = cats[i % len(cats)] if i % 11 else "math"  # math over-represented
        diff = round(rng.random(), 3) if i % 13 else None
        gold = "ABCD"[rng.randrange(4)]
        roll = rng.random()
        p_correct = skill * (1.2 - (diff or 0.5))
        if i % 97 == 5:
            outcome, raw, ext, rule, score, err = Outcome.ERROR, None, None, None, None, "HTTP 500 after 4 retries"
        elif i % 23 == 7:
            outcome, raw, ext, rule, score, err = Outcome.NO_ANSWER, "I am not sure.", None, "none", 0.0, None
        elif roll < p_correct:
            outcome, raw, ext, rule, score, err = Outcome.CORRECT, f"The answer is ({gold})", gold, "answer_is", 1.0, None
        else:
            wrong = "ABCD"[("ABCD".index(gold) + 1) % 4]
            outcome, raw, ext, rule, score, err = Outcome.WRONG, f"**Answer: {wrong}**", wrong, "bold_answer", 0.0, None
        if i == 0:
            raw, ext, outcome, score, rule, err = f"Let me think. {PAYLOAD} The answer is (Z)", "Z", Outcome.WRONG, 0.0, "answer_is", None
        if long_output and raw:  # chain-of-thought-sized, not trivially compressible
            raw = " ".join(rng.choices(WORDS, k=220)) + ". " + raw
        question = f"Question {i}: which option is right about topic {i % 37}?\n\nA) one\nB) two\nC) three\nD) four"
        out.append(
            Sample(
                sample_id=f"mc.{i}#0",
                item_id=f"mc.{i}",
                dataset="synthetic-mc",
                category=cat,
                modality="choiceof4" if i % 9 else "boolean",
                difficulty=diff,
                prompt=[{"role": "system", "content": system}, {"role": "user", "content": question}],
                reference=gold,
                raw_output=raw,
                extracted=ext,
                extraction_rule=rule,
                score=score,
                outcome=outcome,
                error=err,
                input_tokens=None if outcome == Outcome.ERROR else 80 + i % 20,
                output_tokens=None if outcome == Outcome.ERROR else 12 + i % 7,
                latency_s=0.2 + (i % 10) / 20,
            )
        )
    return out


def prob_samples(n: int, seed: int) -> list[Sample]:
    """Suite contexts scored over queries, with a distribution; a few unscored (expected -1)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        queries = ["True", "False"] if i % 3 else ["A", "B", "C", "D"]
        w = [rng.random() ** 2 for _ in queries]
        expected = -1 if i % 10 == 9 else rng.randrange(len(queries))
        if expected >= 0:
            w[expected] += rng.random()  # better than chance
        tot = sum(w)
        dist = [x / tot for x in w]
        pred = max(range(len(dist)), key=dist.__getitem__)
        outcome = Outcome.UNSCORED if expected < 0 else (Outcome.CORRECT if pred == expected else Outcome.WRONG)
        text = f"Statement {i}: the passage says <em>something</em> about item {i}."
        out.append(
            Sample(
                sample_id=f"suite.{i}#0",
                item_id=f"suite.{i}",
                dataset="synthetic-suite",
                category="test_A" if i % 3 else "test_B",
                mode="logprob",
                prompt=f"Read the passage.\n{text}\nThe correct answer is:",
                reference=expected,
                raw_output=None,
                extracted=queries[pred],
                extraction_rule="argmax",
                score=None if expected < 0 else float(pred == expected),
                outcome=outcome,
                details={"distribution": dist, "queries": queries, "expected": expected, "context": text},
            )
        )
    return out


@pytest.fixture
def runs(tmp_path: Path) -> list[Path]:
    """Two generation runs (one with results.json, one without) and a probability run."""
    from proctor.metrics.accuracy import breakdown, group_block

    a = gen_samples(240, seed=1, skill=0.85)
    b = gen_samples(240, seed=2, skill=0.6)
    res_a = {"overall": group_block(a), "by_category": breakdown(a, "category"),
             "by_difficulty": breakdown(a, "difficulty")}
    ra = write_run(tmp_path, "run-a", model="openai:model-a", samples=a, results=res_a)
    rb = write_run(tmp_path, "run-b", model="hf:model-b", samples=b, started_at="2025-05-02T09:00:00+00:00",
                   finished_at="2025-05-02T11:14:05+00:00")
    p = write_run(tmp_path, "run-p", model="hf:tiny", samples=prob_samples(50, seed=3), mode="logprob",
                  dataset="synthetic-suite")
    return [ra, rb, p]


@pytest.fixture
def logprob_run(tmp_path: Path) -> Path:
    """A real log-likelihood run (the scripted model's exact pseudo-random log-probabilities) with two few-shot
    examples before each question."""
    from proctor.cli import main

    out = tmp_path / "lp"
    assert main(["run", ITEMS, "--mode", "logprob", "--model", "scripted:first", "--shots", "2", "--fewshot-from",
                 ITEMS, "-o", str(out), "--no-history", "--store", str(tmp_path / "s.db")]) == 0
    return out


@pytest.fixture
def write_run_fn() -> Callable[..., Path]:
    return write_run


def judged_samples(n_items: int, epochs: int, seed: int) -> list[Sample]:
    """A generation run over `epochs` epochs: prose items scored by a judge (verdict in details), exact-answer
    items also checked by the judge (details["judge_check"]); the first judge reasoning carries the payload."""
    rng = random.Random(seed)
    out = []
    for e in range(epochs):
        for i in range(n_items):
            prose = i % 3 == 0
            ok = rng.random() < 0.6
            outcome = Outcome.CORRECT if ok else Outcome.WRONG
            details: dict[str, Any]
            grade = "CORRECT" if ok else "INCORRECT"
            if prose:
                reason = PAYLOAD if (e, i) == (0, 0) else f"Judged item {i}: the answer {'matches' if ok else 'misses'}."
                details = {"judge_grade": grade, "judge_reasoning": reason, "judge_model": "scripted:judge"}
                raw, ext, rule = f"Prose answer {i}", f"Prose answer {i}", "judge"
            else:
                agree = rng.random() < 0.8
                check_ok = ok if agree else not ok
                details = {"judge_check": {
                    "outcome": "correct" if check_ok else "wrong", "score": float(check_ok),
                    "details": {"judge_grade": "CORRECT" if check_ok else "INCORRECT",
                                "judge_reasoning": f"Check of item {i}."}}}
                raw, ext, rule = f"The answer is ({'A' if ok else 'B'})", "A" if ok else "B", "answer_is"
            out.append(Sample(
                sample_id=f"j.{i}#{e}", item_id=f"j.{i}", epoch=e, dataset="judged", category=f"c{i % 4}",
                modality="long-prose" if prose else "choiceof4", prompt=[{"role": "user", "content": f"Q{i}?"}],
                reference="A", raw_output=raw, extracted=ext, extraction_rule=rule, score=float(ok),
                outcome=outcome, details=details,
            ))
    return out


@pytest.fixture
def judged_run(tmp_path: Path) -> Path:
    """A 3-epoch judged run whose results.json holds epochs and judge_agreement as the runner writes them."""
    from proctor.metrics.results import summarize

    ss = judged_samples(30, epochs=3, seed=5)
    results = summarize(ss)
    assert results.judge_agreement is not None  # the judge checks are counted as the runner counts them
    return write_run(tmp_path, "run-j", model="openai:judged", samples=ss, results=results, dataset="judged")
