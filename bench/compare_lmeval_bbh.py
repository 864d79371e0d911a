"""proctor's BBH (`bbh`, kinds cot_fewshot / cot_zeroshot) against lm-eval's own per-sample logs, item by item.

Give it the sample files lm-eval writes with `--log_samples` for `bbh_cot_fewshot` or `bbh_cot_zeroshot`
(`samples_bbh_cot_fewshot_<task>_<date>.jsonl`: each line its `doc`, the request's `arguments`, the model's
`resps`, the `filtered_resps` of the filter and its `exact_match`). For every sample it checks that proctor
builds the same context from the doc, that proctor's filter keeps the same text of the reply and that proctor's
verdict equals lm-eval's exact_match; it prints the counts per task and any difference.

    python bench/compare_lmeval_bbh.py lm_eval_out/**/samples_bbh_cot_fewshot_*.jsonl

Without files (`--synthetic`) it builds lm-eval's task objects offline from its installed YAMLs on made-up rows
and replies (as tests/benchmarks/test_bbh_lmeval.py does) and compares the same three things.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from proctor.benchmarks import bbh
from proctor.data.formats.convert import question_to_item
from proctor.data.records import Question

FILE_RE = re.compile(r"samples_bbh_(cot_fewshot|cot_zeroshot)_(.+?)_\d{4}-\d\d-\d\dT")


def item_of(task: str, doc: dict[str, Any]) -> Any:
    q = Question(id=0, original_id="0", question=doc["input"].strip(), choices={}, answer=doc["target"],
                 category=task, metadata={"input": doc["input"], "target": doc["target"]})
    return question_to_item(q, bbh.NAME)


def compare(kind: str, task: str, samples: list[dict[str, Any]], counts: Counter[str]) -> None:
    rule = {bbh.COT_FEWSHOT: bbh.FEWSHOT_RULE, bbh.COT_ZEROSHOT: bbh.ZEROSHOT_RULE}[kind]
    assert rule.score_whole is not None
    filter_name = bbh.VARIANTS[kind][1]
    for s in samples:
        item = item_of(task, s["doc"])
        context = s["arguments"]["gen_args_0"]["arg_0"] if "arguments" in s else None
        if context is not None:
            same = bbh.context(kind, task, s["doc"]) == context
            counts["prompt_same" if same else "prompt_differs"] += 1
        if s.get("filter", filter_name) != filter_name:
            continue
        reply = s["resps"][0][0]
        verdict = rule.score_whole(item, reply)
        counts["filter_same" if (verdict.extracted or "[invalid]") == s["filtered_resps"][0] else "filter_differs"] += 1
        same_score = verdict.score == float(s["exact_match"])
        counts["verdict_same" if same_score else "verdict_differs"] += 1
        if not same_score:
            print(f"differs: {task} doc {s.get('doc_id')}: lm-eval {s['exact_match']}, proctor {verdict.score}: "
                  f"{reply[-120:]!r}", file=sys.stderr)


def synthetic(counts: Counter[str]) -> None:
    """lm-eval's own task objects (offline, its installed YAMLs) on made-up rows: samples as it logs them."""
    import tempfile

    from lm_eval.api.task import ConfigurableTask
    from lm_eval.tasks._yaml_loader import load_yaml

    targets = ("(A)", "(C)", "True", "False", "valid", "Yes", "no", "17", "-3", "apple banana cherry", "] ) }")
    with tempfile.TemporaryDirectory() as tmp:
        for kind, (folder, filter_name) in bbh.VARIANTS.items():
            for task in bbh.TASKS:
                rows = [{"input": f"Synthetic {task} #{i}: \"{{x}}\" (A) or (B)?\nOptions:\n(A) yes\n(B) no\nList: b a",
                         "target": targets[(i + len(task)) % len(targets)]} for i in range(3)]
                path = Path(tmp) / f"{task}.jsonl"
                path.write_text("".join(json.dumps(r) + "\n" for r in rows))
                cfg = load_yaml(bbh.lmeval_tasks_dir() / folder / f"{task}.yaml", resolve_func=True)
                cfg.pop("tag", None)
                cfg.update(dataset_path="json", dataset_name=None, dataset_kwargs={"data_files": {"test": str(path)}})
                oracle = ConfigurableTask(config=cfg)
                oracle.build_all_requests()
                for r in rows:
                    for reply in (f"So the answer is {r['target']}.", f"the answer is {r['target'].lower()}.",
                                  "no idea", f"The final answer: {r['target']}", ""):
                        for inst in oracle.instances:
                            inst.resps = [reply]
                        oracle.apply_filters()
                        samples = [{"doc": i.doc, "doc_id": i.doc_id, "resps": [[reply]],
                                    "arguments": {"gen_args_0": {"arg_0": i.arguments[0]}},
                                    "filtered_resps": [i.filtered_resps[filter_name]], "filter": filter_name,
                                    "exact_match": oracle.process_results(i.doc, [i.filtered_resps[filter_name]])[
                                        "exact_match"]} for i in oracle.instances]
                        compare(kind, task, samples, counts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--synthetic", action="store_true")
    args = parser.parse_args()
    counts: Counter[str] = Counter()
    if args.synthetic:
        synthetic(counts)
    for path in args.files:
        m = FILE_RE.search(path.name)
        if m is None:
            print(f"{path}: not an lm-eval bbh_cot_fewshot/cot_zeroshot samples file", file=sys.stderr)
            return 2
        samples = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        compare(m.group(1), m.group(2), samples, counts)
    print(json.dumps(dict(sorted(counts.items()))))
    return 0 if not any(k.endswith("differs") for k in counts) else 1


if __name__ == "__main__":
    sys.exit(main())
