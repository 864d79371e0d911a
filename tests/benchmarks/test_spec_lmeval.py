"""The shipped spec benchmarks reproduce lm-evaluation-harness's tasks of the same name.

For ARC-Challenge, HellaSwag, MMLU and GSM8K: the prompts proctor renders equal lm-eval's own requests for the
same synthetic documents byte for byte (context and every continuation, few-shot included), acc / acc_norm
on the tiny model equal `lm_eval.simple_evaluate` with lm-eval's `hf` model, and GSM8K's two filters read
replayed outputs as lm-eval's do. lm-eval's tasks come from its installed YAMLs (tests/benchmarks/lmeval_oracle.py).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest

if importlib.util.find_spec("lm_eval") is None and not os.environ.get("CI"):
    pytest.skip("lm_eval is not installed (pip install -e '.[dev]')", allow_module_level=True)

from lmeval_oracle import (
    MMLU_SUBJECTS,
    arc_rows,
    gsm8k_rows,
    hellaswag_rows,
    lmeval_requests,
    lmeval_task,
    mmlu_rows,
    winogrande_rows,
    write_jsonl,
)

from proctor.benchmarks.registry import Prompting, load_task
from proctor.data.tasks import Task
from proctor.scoring.extract import ANSWER_RULES
from proctor.scoring.scorers import score_item


def _arc(tmp: Path) -> dict[str, Path]:
    return {s: write_jsonl(tmp / f"{s}.jsonl", arc_rows(n, s)) for s, n in (("train", 9), ("validation", 3),
                                                                             ("test", 7))}


def _hellaswag(tmp: Path) -> dict[str, Path]:
    return {s: write_jsonl(tmp / f"{s}.jsonl", hellaswag_rows(n, s)) for s, n in (("train", 8), ("validation", 6))}


def _gsm8k(tmp: Path) -> dict[str, Path]:
    return {s: write_jsonl(tmp / f"{s}.jsonl", gsm8k_rows(n, s)) for s, n in (("train", 11), ("test", 6))}


def _winogrande(tmp: Path) -> dict[str, Path]:
    return {s: write_jsonl(tmp / f"{s}.jsonl", winogrande_rows(n, s)) for s, n in (("train", 9), ("validation", 5))}


def _ours(task: Task) -> list[tuple[str, str]]:
    """proctor's (context, continuation) pairs, in item then option order."""
    return [pair for it in task.items for pair in task.prompts.choice_pairs(it)]  # type: ignore[attr-defined]


@pytest.mark.parametrize("shots", [0, 2])
def test_winogrande_partial_scoring_prompts_equal_lm_eval(tmp_path: Path, shots: int) -> None:
    files = _winogrande(tmp_path)
    theirs = lmeval_requests(lmeval_task("winogrande/default.yaml", files, num_fewshot=shots))
    ours = load_task("winogrande", data_file=tmp_path, prompting=Prompting(shots=shots or None))
    assert _ours(ours) == [args for _, args in theirs]


@pytest.mark.parametrize("shots", [0, 3])
def test_arc_challenge_prompts_equal_lm_eval(tmp_path: Path, shots: int) -> None:
    files = _arc(tmp_path)
    theirs = lmeval_requests(lmeval_task("arc/arc_challenge.yaml", files, num_fewshot=shots))
    ours = load_task("arc-challenge", data_file=tmp_path, prompting=Prompting(shots=shots or None))
    assert _ours(ours) == [args for _, args in theirs]


@pytest.mark.parametrize("shots", [0, 2])
def test_hellaswag_prompts_equal_lm_eval(tmp_path: Path, shots: int) -> None:
    files = _hellaswag(tmp_path)
    theirs = lmeval_requests(lmeval_task("hellaswag/hellaswag.yaml", files, num_fewshot=shots))
    ours = load_task("hellaswag", data_file=tmp_path, prompting=Prompting(shots=shots or None))
    assert _ours(ours) == [args for _, args in theirs]
    assert "[" not in ours.items[0].prompt and "  " not in ours.items[0].prompt  # the preprocessing ran


def _mmlu_files(tmp: Path) -> dict[str, dict[str, Path]]:
    """The "all" config for proctor, and each subject's own config for lm-eval (its rows in the same order)."""
    dev, test = mmlu_rows(6, "dev"), mmlu_rows(3, "test")
    write_jsonl(tmp / "all" / "dev.jsonl", dev)
    write_jsonl(tmp / "all" / "test.jsonl", test)
    return {s: {"dev": write_jsonl(tmp / s / "dev.jsonl", [r for r in dev if r["subject"] == s]),
                "test": write_jsonl(tmp / s / "test.jsonl", [r for r in test if r["subject"] == s])}
            for s in MMLU_SUBJECTS}


def test_mmlu_five_shot_prompts_equal_lm_eval(tmp_path: Path) -> None:
    per_subject = _mmlu_files(tmp_path)
    theirs = [args for s in MMLU_SUBJECTS
              for _, args in lmeval_requests(lmeval_task(f"mmlu/default/mmlu_{s}.yaml", per_subject[s], 5))]
    ours = load_task("mmlu", data_file=tmp_path / "all")
    assert _ours(ours) == theirs
    assert ours.cluster == "category"


def test_gsm8k_five_shot_prompts_and_stops_equal_lm_eval(tmp_path: Path) -> None:
    files = _gsm8k(tmp_path)
    theirs = lmeval_requests(lmeval_task("gsm8k/gsm8k.yaml", files))
    ours = load_task("gsm8k", data_file=tmp_path)
    kind = ours.prompts.kinds[0]
    assert [(m.content for m in ours.prompts.messages(it, kind)).__next__() for it in ours.items] == \
        [args[0] for _, args in theirs]
    until = theirs[0][1][1]["until"]
    assert tuple(until) == ours.prompts.request_defaults(kind).stop
    assert ours.default_max_tokens == 256  # lm-eval's hf max_gen_toks when the task sets none


# ------------------------------------------------------------------ scores on the tiny model


def _bare_task_manager() -> Any:
    """A TaskManager that indexes none of lm-eval's 10,000 task files (the tasks given are built already)."""
    from lm_eval.tasks import TaskManager

    return TaskManager(include_defaults=False)


def _lmeval_samples(model_dir: Path, task: Any) -> dict[int, dict[str, Any]]:
    import lm_eval
    from lm_eval.models.huggingface import HFLM

    lm = HFLM(pretrained=str(model_dir), device="cpu", dtype="float32", batch_size=8)
    out = lm_eval.simple_evaluate(model=lm, tasks=[task], log_samples=True, bootstrap_iters=0,
                                  fewshot_random_seed=1234, task_manager=_bare_task_manager())
    assert out is not None
    (samples,) = out["samples"].values()
    return {s["doc_id"]: s for s in samples}


def _proctor_accs(model_dir: Path, task: Task) -> list[tuple[float, float, list[float]]]:
    import asyncio

    from proctor.models.hf import HFModel
    from proctor.scoring.base import Answered
    from proctor.scoring.choice_logprob import ChoiceScorer

    scorer = ChoiceScorer()
    model = HFModel(str(model_dir), dtype="float32", batch_size=8)
    out = []
    for item in task.items:
        requests = scorer.requests(task, item, 0)
        answers = model.loglikelihood_sync(requests)  # type: ignore[arg-type]
        (scored,) = asyncio.run(scorer.score(task, [Answered(item, 0, requests, answers)]))
        out.append((float(scored.score or 0.0), 1.0 if scored.details.acc_norm_correct else 0.0,
                    [a.logprob for a in answers]))
    return out


@pytest.mark.parametrize("name", ["arc-challenge", "hellaswag", "mmlu", "winogrande"])
def test_acc_and_acc_norm_equal_simple_evaluate(name: str, tmp_path: Path, tiny_model_dir: Path) -> None:
    if name == "mmlu":
        files = _mmlu_files(tmp_path)["abstract_algebra"]
        theirs_task = lmeval_task("mmlu/default/mmlu_abstract_algebra.yaml", files, 5)
        ours = load_task("mmlu", data_file=tmp_path / "abstract_algebra")
    elif name == "arc-challenge":
        theirs_task = lmeval_task("arc/arc_challenge.yaml", _arc(tmp_path), 2)
        ours = load_task(name, data_file=tmp_path, prompting=Prompting(shots=2))
    elif name == "winogrande":
        theirs_task = lmeval_task("winogrande/default.yaml", _winogrande(tmp_path), 1)
        ours = load_task(name, data_file=tmp_path, prompting=Prompting(shots=1))
    else:
        theirs_task = lmeval_task("hellaswag/hellaswag.yaml", _hellaswag(tmp_path))
        ours = load_task(name, data_file=tmp_path)
    theirs = _lmeval_samples(tiny_model_dir, theirs_task)
    mine = _proctor_accs(tiny_model_dir, ours)
    assert len(mine) == len(theirs)
    assert 0 < sum(m[0] for m in mine) < len(mine) or 0 < sum(m[1] for m in mine) < len(mine) \
        or len({round(m[2][0], 6) for m in mine}) > 1  # the items are told apart
    for i, (acc, acc_norm, logprobs) in enumerate(mine):
        their_lls = [float(r[0]) for r in theirs[i]["filtered_resps"]]
        assert logprobs == pytest.approx(their_lls, abs=1e-4), (name, i)
        assert acc == theirs[i]["acc"], (name, i)
        if "acc_norm" in theirs[i]:  # winogrande.yaml asks for acc alone
            assert acc_norm == theirs[i]["acc_norm"], (name, i)


# ------------------------------------------------------------------ GSM8K filters on replayed outputs

REPLIES = [
    "She has 2 + 0 = 2.\n#### 2",  # strict and flexible
    "3 + 3 = 6 so the answer is 6.",  # flexible only: the last number (with its final period)
    "#### 1,0\nthen 14",  # strict takes "1,0" (wrong); flexible 14 (right for doc 3)
    "The total is $14.",  # `$` and the final `.` ignored by exact_match
    "nothing numeric here",  # both [invalid]
    "#### -22 and then 22",
]


def test_gsm8k_both_filters_equal_lm_eval_on_replayed_outputs(tmp_path: Path) -> None:
    import lm_eval
    from lm_eval.api.model import LM

    files = _gsm8k(tmp_path)

    class Replay(LM):  # lm-eval's own pipeline (filters, exact_match) over fixed outputs
        def generate_until(self, requests: Any, disable_tqdm: bool = False) -> list[str]:
            return [REPLIES[r.doc_id] for r in requests]

        def loglikelihood(self, requests: Any, disable_tqdm: bool = False) -> list[Any]:
            raise NotImplementedError

        def loglikelihood_rolling(self, requests: Any, disable_tqdm: bool = False) -> list[Any]:
            raise NotImplementedError

    out = lm_eval.simple_evaluate(model=Replay(), tasks=[lmeval_task("gsm8k/gsm8k.yaml", files)], log_samples=True,
                                  bootstrap_iters=0, task_manager=_bare_task_manager())
    assert out is not None
    (samples,) = out["samples"].values()
    by_filter: dict[str, dict[int, float]] = {}
    for s in samples:
        by_filter.setdefault(s["filter"], {})[s["doc_id"]] = s["exact_match"]
    ours = load_task("gsm8k", data_file=tmp_path)
    for filt, rule in (("strict-match", "lm-eval-gsm8k-strict-match"),
                       ("flexible-extract", "lm-eval-gsm8k-flexible-extract")):
        mine = [score_item(it, REPLIES[i], ANSWER_RULES[rule]).score for i, it in enumerate(ours.items)]
        assert mine == [by_filter[filt][i] for i in range(len(ours.items))], filt
    assert sum(by_filter["flexible-extract"].values()) > sum(by_filter["strict-match"].values()) > 0


def test_mmlu_description_of_every_subject_equals_lm_evals(tmp_path: Path) -> None:
    """All 57 subject files: proctor's description for a question of that subject is the YAML's own."""
    from lm_eval.tasks._yaml_loader import load_yaml
    from lmeval_oracle import TASKS

    configs = [load_yaml(p, resolve_func=False) for p in sorted((TASKS / "mmlu" / "default").glob("mmlu_*.yaml"))]
    assert len(configs) == 57
    rows = [{"question": "q?", "subject": c["dataset_name"], "choices": ["a", "b", "c", "d"], "answer": 0}
            for c in configs]
    write_jsonl(tmp_path / "test.jsonl", rows)
    write_jsonl(tmp_path / "dev.jsonl", rows)
    task = load_task("mmlu", data_file=tmp_path, prompting=Prompting(shots=0))
    assert [task.prompts.description(it) for it in task.items] == [c["description"] for c in configs]  # type: ignore[attr-defined]


def _lmeval_chat(task: Any, num_fewshot: int) -> list[list[dict[str, str]]]:
    """lm-eval's chat messages per document (`--apply_chat_template --fewshot_as_multiturn`), captured from the
    chat template it hands them to."""
    import json

    task.set_fewshot_seed(1234)
    docs = list(task.eval_docs)
    return [json.loads(task.fewshot_context(doc, num_fewshot, apply_chat_template=True, fewshot_as_multiturn=True,
                                            chat_template=lambda msgs, **_: json.dumps(msgs)))
            for doc in docs]


def test_chat_format_is_lm_evals_multiturn_rendering(tmp_path: Path) -> None:
    files = _mmlu_files(tmp_path)["virology"]
    theirs = _lmeval_chat(lmeval_task("mmlu/default/mmlu_virology.yaml", files, 5), 5)
    ours = load_task("mmlu", data_file=tmp_path / "virology", prompting=Prompting(fmt="chat"))
    mine = [[{"role": m.role, "content": m.content} for m in ours.prompts.messages(it, "five_shot")]
            for it in ours.items]
    assert mine == theirs and theirs[0][0]["role"] == "system"
    gsm = _gsm8k(tmp_path / "gsm8k")
    theirs = _lmeval_chat(lmeval_task("gsm8k/gsm8k.yaml", gsm), 5)
    ours = load_task("gsm8k", data_file=tmp_path / "gsm8k", prompting=Prompting(fmt="chat"))
    assert [[{"role": m.role, "content": m.content} for m in ours.prompts.messages(it, "five_shot")]
            for it in ours.items] == theirs
    assert len(theirs) == 6 and [m["role"] for m in theirs[0]] == ["user", "assistant"] * 5 + ["user"]


def test_contexts_ending_in_whitespace_score_as_lm_evals_encode_pair(tmp_path: Path, tiny_model_dir: Path) -> None:
    """Winogrande with options that end in a space: each context (the sentence up to the blank, the option
    filled in) ends in whitespace, which lm-eval's `_encode_pair` moves into the continuation. The shipped
    spec scores as lm-eval does (1e-4); proctor's own boundary, by name, keeps the space in the context."""
    import dataclasses

    rows = [{**r, "option1": r["option1"] + " ", "option2": r["option2"] + " "} for r in winogrande_rows(6, "v")]
    files = {"train": write_jsonl(tmp_path / "train.jsonl", winogrande_rows(4, "t")),
             "validation": write_jsonl(tmp_path / "validation.jsonl", rows)}
    theirs = _lmeval_samples(tiny_model_dir, lmeval_task("winogrande/default.yaml", files, 0))
    ours = load_task("winogrande", data_file=tmp_path, prompting=Prompting(shots=0))
    assert all(c.endswith(" ") for it in ours.items for c, _ in ours.prompts.choice_pairs(it))  # type: ignore[attr-defined]
    mine = _proctor_accs(tiny_model_dir, ours)
    for i, (acc, _, logprobs) in enumerate(mine):
        assert logprobs == pytest.approx([float(r[0]) for r in theirs[i]["filtered_resps"]], abs=1e-4), i
        assert acc == theirs[i]["acc"], i
    spec = ours.prompts.spec  # type: ignore[attr-defined]
    own = dataclasses.replace(ours, prompts=dataclasses.replace(
        ours.prompts, spec=spec.model_copy(update={"scoring": spec.scoring.model_copy(update={"boundary": "proctor"})})))
    assert own.prompts.boundary == "proctor"  # type: ignore[attr-defined]
    assert max(abs(a - b) for m, o in zip(mine, _proctor_accs(tiny_model_dir, own), strict=True)
               for a, b in zip(m[2], o[2], strict=True)) > 1e-3  # the boundary matters on these rows
