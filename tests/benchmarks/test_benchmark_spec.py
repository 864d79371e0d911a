"""A benchmark is a file: a user's spec (tests/fixtures/benchmarks/quiz.yaml, added without touching src/) runs
end to end with five-shot, is validated and listed, and every hostile variant is one `path:line:` line, exit 2."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from proctor.benchmarks.registry import Prompting, load_task
from proctor.benchmarks.spec import read_spec
from proctor.benchmarks.spec_prompts import SpecPrompts
from proctor.benchmarks.spec_template import hellaswag_preprocess
from proctor.cli import main
from proctor.log.runlog import iter_samples
from proctor.util.errors import InputError, ProctorError

FIXTURES = Path(__file__).parents[1] / "fixtures" / "benchmarks"
QUIZ = FIXTURES / "quiz.yaml"


def _prompts(task: object) -> SpecPrompts:
    prompts = getattr(task, "prompts", None)
    assert isinstance(prompts, SpecPrompts)
    return prompts


def test_user_spec_maps_rows_onto_questions() -> None:
    task = load_task(str(QUIZ))
    first = task.items[0]
    assert (task.name, len(task.items), task.cluster) == ("house-quiz", 8, "category")
    assert first.prompt == "Item 0: which arithmetic fact holds for case 0?"  # {prompt:strip}
    assert first.choices == {"A": "fact a0", "B": "fact b0", "C": "fact c0", "D": "fact d0"}
    assert (first.best_answer, first.category, first.metadata["question.difficulty"]) == ("A", "arithmetic", "easy")
    assert task.default_mode == "logprob"
    assert task.source["spec_sha256"].startswith("sha256:") and task.source["data_file_sha256"].startswith("sha256:")


def test_five_shot_is_the_same_category_examples_in_file_order() -> None:
    task = load_task(str(QUIZ))
    geometry = task.items[1]
    text = _prompts(task).logprob_context(geometry)
    examples = [(i, "DCBA"[i % 4]) for i in (1, 3, 5, 7, 9)]  # shots.jsonl: odd rows are geometry
    expected = "Answer each geometry question with its letter.\n\n" + "".join(
        f"Q: Example {i} about geometry?\n(A) x{i}\n(B) y{i}\n(C) z{i}\n(D) w{i}\nA: {key}\n\n" for i, key in examples
    ) + "Q: Item 1: which geometry fact holds for case 1?\n(A) fact a1\n(B) fact b1\n(C) fact c1\n(D) fact d1\nA:"
    assert text == expected
    assert _prompts(task).continuations(geometry) == [" A", " B", " C", " D"]


def test_shots_and_chat_format() -> None:
    two = _prompts(load_task(str(QUIZ), prompting=Prompting(shots=2)))
    task = load_task(str(QUIZ), prompting=Prompting(fmt="chat"))
    chat = _prompts(task)
    item = task.items[0]
    assert two.text(item, "five_shot").count("\nA: ") == 2
    msgs = chat.messages(item, "five_shot")
    assert [m.role for m in msgs] == ["system"] + ["user", "assistant"] * 5 + ["user"]
    assert msgs[0].content == "Answer each arithmetic question with its letter.\n\n"
    assert msgs[2].content == "D" and msgs[-1].content.startswith("Q: Item 0:")
    assert two.identity()["shots"] == 2 and chat.identity()["format"] == "chat"
    assert len({two.identity()["prompt_hash"], chat.identity()["prompt_hash"],
                _prompts(load_task(str(QUIZ))).identity()["prompt_hash"]}) == 3


def test_user_spec_runs_end_to_end_and_shots_change_the_run(tiny_model_dir: Path, tmp_path: Path) -> None:
    common = ["--model", f"hf:{tiny_model_dir}", "--no-cache", "--no-progress", "--store", str(tmp_path / "st"),
              "--runs-root", str(tmp_path / "runs")]
    assert main(["run", str(QUIZ), *common]) == 0
    assert main(["run", str(QUIZ), "--shots", "1", *common]) == 0
    runs = sorted((tmp_path / "runs").iterdir())
    assert len(runs) == 2  # --shots is part of the run's identity: another run id
    for run in runs:
        samples = [s.model_dump(mode="json") for s in iter_samples(run / "samples.jsonl")]  # prompts whole
        manifest = json.loads((run / "manifest.json").read_text())
        assert len(samples) == 8 and {s["mode"] for s in samples} == {"logprob"}
        shots = manifest["spec"]["scorer"]["shots"] or 5  # None: the spec's own five_shot
        assert all(s["prompt"].count("\nA: ") == shots for s in samples)
        assert manifest["dataset"]["spec_sha256"].startswith("sha256:")


def test_user_spec_listed_and_run_by_name(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PROCTOR_BENCHMARKS", str(FIXTURES))
    assert main(["datasets", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["house-quiz"]["origin"] == "user spec" and rows["house-quiz"]["prompt_kinds"] == ["five_shot",
                                                                                                   "zero_shot"]
    assert rows["mmlu"]["origin"] == "built-in spec" and "mmlu/default" in rows["mmlu"]["reproduces"]
    assert len(load_task("house-quiz", limit=3).items) == 3


def test_validate_a_good_spec(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(QUIZ)]) == 0
    assert "benchmark spec house-quiz, 8 questions, 12 few-shot examples" in capsys.readouterr().out


HOSTILE = {
    "missing column": (('question: "{prompt:strip}"', 'question: "{promt:strip}"'),
                       r"quiz\.yaml:\d+: fields\.question: column 'promt' is not in .*test\.csv"),
    "bad mapping": (("as: letter", "as: number"), r"quiz\.yaml:\d+: fields\.answer\.as: Input should be"),
    "answer not an option": (("as: letter", "as: index"),
                             r"test\.csv:2: row: key: answer .A. \(index\) is not one of the 4 options \(\+7 more rows\)"),
    "unknown rule": (("  continuation: letter", "  answer_rule: no-such-rule"),
                     r"quiz\.yaml:\d+: scoring\.answer_rule: unknown answer rule 'no-such-rule'"),
    "unknown transform": (("{prompt:strip}", "{prompt:shout}"),
                          r"quiz\.yaml:\d+: fields\.question\.template: unknown transform 'shout'"),
    "unknown prompt field": (('zero_shot: "Q: {question}', 'zero_shot: "Q: {questio}'),
                             r"quiz\.yaml:\d+: prompts\.zero_shot: unknown field \{questio\}"),
    "code in a template": (("{prompt:strip}", "{prompt.__class__}"), r"quiz\.yaml:\d+: fields\.question\.template: bad field"),
    "few-shot split not in files": (("fewshot: {file: quiz/shots.jsonl", "fewshot: {split: train"),
                                    r"quiz\.yaml:\d+: fewshot\.split: split 'train' is not in `source\.files` \(test\)"),
}
# the other templates a spec holds are checked as the prompts are: a conversion, an attribute, a lone brace
for _field in ("description_template", "target", "choice_format"):
    for _name, _bad in (("conversion", "{x!r}"), ("attribute", "{a.__class__}"), ("lone brace", "Q {")):
        HOSTILE[f"{_field}: {_name}"] = (("scoring:", f"{_field}: \"{_bad} {{question}}\"\nscoring:"),
                                         rf"quiz\.yaml:\d+: {_field}: bad (field|template)")


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_specs_give_one_line_and_exit_2(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (old, new), pattern = HOSTILE[case]
    text = QUIZ.read_text()
    assert old in text
    spec = tmp_path / "quiz.yaml"
    spec.write_text(text.replace(old, new, 1))
    (tmp_path / "quiz").symlink_to(FIXTURES / "quiz")
    assert main(["validate", str(spec)]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 2 and "Traceback" not in errors[0]  # the problem, then the count
    assert re.search(pattern, errors[0]), errors[0]
    assert main(["run", str(spec), "--model", "scripted:first", "--runs-root", str(tmp_path / "runs")]) == 2
    assert not (tmp_path / "runs").exists()  # nothing half-written


def test_deep_and_malformed_yaml_are_refused_at_their_line(tmp_path: Path) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text("name: x\nfields: " + "[" * 300 + "]" * 300 + "\n")
    with pytest.raises(InputError, match=r"deep\.yaml:2: YAML nested deeper than"):
        read_spec(deep)
    assert main(["validate", str(deep)]) == 2
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: x\nscoring: [unclosed\n")
    assert main(["run", str(broken), "--model", "scripted:first"]) == 2


def test_shots_refused_where_no_few_shot_source(tmp_path: Path) -> None:
    spec = tmp_path / "zero.yaml"
    text = QUIZ.read_text().replace("fewshot: {file: quiz/shots.jsonl, selection: same_category}\n", "")
    spec.write_text(text.replace("  five_shot: {template: \"Q: {question}\\n{choices}\\nA:\", shots: 5}\n", ""))
    (tmp_path / "quiz").symlink_to(FIXTURES / "quiz")
    assert len(load_task(str(spec)).items) == 8
    assert main(["run", str(spec), "--shots", "2", "--model", "scripted:first"]) == 2


def test_hellaswag_preprocess_is_lm_evals() -> None:
    from lm_eval.tasks.hellaswag.utils import preprocess  # the oracle: lm-eval's own function

    for text in ("  [header] How to x [title] Do it.  Then [step] more  ", "plain text", "a  b   c [x] [y]z"):
        assert hellaswag_preprocess(text) == preprocess(text)


def test_completion_format_sends_the_text_without_a_chat_template(tiny_model_dir: Path, tmp_path: Path) -> None:
    from lmeval_oracle import gsm8k_rows, write_jsonl

    from proctor.core.model import GenerateRequest, Message
    from proctor.models.hf import HFModel

    for split, n in (("train", 7), ("test", 3)):
        write_jsonl(tmp_path / "data" / f"{split}.jsonl", gsm8k_rows(n, split))
    model = HFModel(str(tiny_model_dir), dtype="float32")
    text = "Question: 1 + 1?\nAnswer:"
    plain = model.render(GenerateRequest((Message("user", text),), completion=True))
    assert plain == model.encode(text) != model.render(GenerateRequest((Message("user", text),)))  # chat template
    runs = tmp_path / "runs"
    args = ["run", "gsm8k", "--data-file", str(tmp_path / "data"), "--model", f"hf:{tiny_model_dir}", "--max-tokens",
            "4", "--no-cache", "--no-progress", "--store", str(tmp_path / "st"), "--runs-root", str(runs)]
    assert main(args) in (0, 1)  # a random model's answers: scored, whatever their accuracy
    (run,) = runs.iterdir()
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["spec"]["scorer"]["answer_rule"] == "lm-eval-gsm8k-strict-match" and manifest["spec"]["scorer"]["mode"] == "generate"
    sample = next(iter_samples(run / "samples.jsonl")).model_dump(mode="json")  # its prompt whole
    assert isinstance(sample["prompt"], str)  # recorded as the text it was sent as, no role (#47)
    assert sample["prompt"].count("Question: ") == 6  # five train examples, then the question
    assert main([*args, "--format", "chat"]) in (0, 1)
    assert len(list(runs.iterdir())) == 2  # the format is part of the run's identity


def test_module_benchmarks_register_through_the_entry_point_group(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    from importlib.metadata import EntryPoint

    from proctor.benchmarks import registry

    (tmp_path / "toy_bench.py").write_text(
        "from proctor.benchmarks.builtin import Builtin\n"
        "from proctor.benchmarks.hub import HubSource\n"
        "def load(data_file=None, seed=0):\n    raise NotImplementedError\n"
        "BENCHMARKS = (Builtin('toy-bench', load, HubSource('me/toy', split='test'), 3, 'a plugin'),)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    eps = [EntryPoint("toy", "toy_bench", registry.PLUGIN_GROUP),
           EntryPoint("broken", "no_such_module_anywhere", registry.PLUGIN_GROUP)]
    plugins = registry.plugin_benchmarks(eps)
    assert [b.name for b in plugins] == ["toy-bench"]
    assert "broken" in caplog.text  # a plugin that fails to import is skipped with a warning
    gathered = registry._gather((), [*plugins, *plugins])
    assert list(gathered) == ["toy-bench"] and gathered["toy-bench"].as_dict()["source"] == "me/toy"


def test_stats_and_convert_read_a_spec(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", str(QUIZ)]) == 0
    assert "house-quiz: 8 items" in capsys.readouterr().out
    out = tmp_path / "quiz.jsonl"
    assert main(["convert", str(QUIZ), "--to", "items", "-o", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 8


def test_a_model_without_plain_text_prompts_is_refused_before_the_run() -> None:
    from proctor.core.model import Capability, ModelBase
    from proctor.core.spec import DatasetRef, ModelSpec, RunSpec, ScorerSpec
    from proctor.run.resolve import resolve
    from proctor.run.runner import _check_before_start, build_scorer

    class ChatOnly(ModelBase):
        name = "chat-only"
        capabilities = frozenset({Capability.GENERATE})

    task = load_task(str(QUIZ), prompting=Prompting(fmt="completion"))
    spec = RunSpec(dataset=DatasetRef(name=str(QUIZ)), model=ModelSpec(spec="chat-only"),
                   scorer=ScorerSpec(mode="generate"))
    with pytest.raises(Exception, match="--format chat"):
        _check_before_start(task, ChatOnly(), build_scorer(task, resolve(spec, task)), resolve(spec, task))
    chat_task = load_task(str(QUIZ), prompting=Prompting(fmt="chat"))
    _check_before_start(chat_task, ChatOnly(), build_scorer(chat_task, resolve(spec, chat_task)), resolve(spec, chat_task))


def test_ids_must_be_unique(tmp_path: Path) -> None:
    """Integers or strings (#41 item 20: string ids are accepted, repeated ones refused)."""
    (tmp_path / "quiz").symlink_to(FIXTURES / "quiz")
    for column, pattern in (("level", r"test\.csv:3: row: id easy is repeated .*\(\+5 more rows\)"),
                            ("qid", None)):
        spec = tmp_path / f"{column}.yaml"
        spec.write_text(QUIZ.read_text().replace("id: qid", f"id: {column}"))
        if pattern is None:
            assert len(load_task(str(spec)).items) == 8
            continue
        with pytest.raises(InputError, match=pattern):
            load_task(str(spec))
    rows = tmp_path / "dup.jsonl"
    rows.write_text('{"n": 1, "q": "a?", "a": "x"}\n{"n": 1, "q": "b?", "a": "y"}\n')
    spec = tmp_path / "dup.yaml"
    spec.write_text("name: dup\nsource: {split: test, files: {test: dup.jsonl}}\n"
                    "fields: {id: n, question: '{q}', answer: {column: a, as: value}}\n"
                    "prompts: {zero_shot: '{question}'}\nscoring: {mode: generation}\n")
    with pytest.raises(InputError, match=r"dup\.jsonl:2: row: id 1 is repeated"):
        load_task(str(spec))


def test_dry_run_counts_a_spec_in_its_own_mode(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(QUIZ), "--model", "scripted:first", "--dry-run"]) == 0
    assert "house-quiz · scripted:first · logprob: 8 item(s) × 1 epoch(s) → 32 request(s)" in capsys.readouterr().out


@pytest.mark.parametrize(("row", "message"), [
    ({"qid": 7, "prompt": "", "A": "a", "B": "b", "key": "A"}, "the question is empty"),
    ({"qid": 7, "prompt": None, "A": "a", "B": "b", "key": "A"}, "the question is empty"),
    ({"qid": 7, "prompt": "Q\ud800", "A": "a", "B": "b", "key": "A"}, "the question is not valid Unicode"),
    ({"qid": 7, "prompt": "Q", "A": "a", "B": "\udc00", "key": "A"}, "the option B is not valid Unicode"),
    ({"qid": 7, "prompt": "Q", "key": ""}, "the answer is empty"),
])
@pytest.mark.parametrize("command", [["validate"], ["stats"], ["prompt", "--item", "7"], ["run"]])
def test_a_row_an_item_cannot_hold_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               row: dict[str, object], message: str, command: list[str]) -> None:
    """An empty question or open answer, or a lone surrogate, is the row's error on every command."""
    open_answer = "A" not in row
    spec = tmp_path / "rows.yaml"
    spec.write_text("name: rows\nsource: {split: test, files: {test: rows.jsonl}}\n"
                    "fields: {id: qid, question: '{prompt}', answer: {column: key, as: "
                    + ("value}" if open_answer else "letter}, choices: {columns: [A, B]}") + "}\n"
                    "prompts: {zero_shot: 'Q: {question}'}\n"
                    + ("scoring: {mode: generation, answer_rule: matharena-aime}\n" if open_answer
                       else "scoring: {mode: loglikelihood}\n"))
    (tmp_path / "rows.jsonl").write_text(json.dumps(row) + "\n")
    extra = ["--model", "scripted:first", "-o", str(tmp_path / "run")] if command == ["run"] else []
    assert main([*command, str(spec), *extra]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"rows.jsonl:1: row: {message}" in err, err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("selection", ["first_k", "seeded", "same_category"])
@pytest.mark.parametrize("how", ["split", "file", "data-dir"])
def test_the_asked_question_is_never_its_own_example(tmp_path: Path, selection: str, how: str) -> None:
    """A few-shot pool that holds the test rows again (another split name for the same file, a pool file, a
    data folder whose splits are the same rows) never shows the asked question with its answer."""
    rows = [{"id": i, "q": f"What is {i} + {i}?", "options": [str(2 * i), str(2 * i + 1)], "answer": str(2 * i),
             "topic": "sums"} for i in range(6)]
    (tmp_path / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "again").mkdir()
    for split in ("test", "dev"):
        (tmp_path / "again" / f"{split}.jsonl").write_text((tmp_path / "test.jsonl").read_text())
    pool = {"split": "fewshot: {split: dev, selection: SEL}", "file": "fewshot: {file: test.jsonl, selection: SEL}",
            "data-dir": "fewshot: {split: dev, selection: SEL}"}[how].replace("SEL", selection)
    spec = tmp_path / "sums.yaml"
    spec.write_text("name: sums\nsource: {split: test, files: {test: test.jsonl, dev: test.jsonl}}\n"
                    "fields: {id: id, question: '{q}', choices: {list: options}, answer: {column: answer, as: text},"
                    " category: '{topic}'}\n"
                    "prompts: {three_shot: {template: 'Q: {question}\\nA:', shots: 3}}\n"
                    f"{pool}\nscoring: {{mode: loglikelihood}}\n")
    task = load_task(str(spec), data_file=tmp_path / "again" if how == "data-dir" else None)
    prompts = _prompts(task)
    for item in task.items:
        shown = prompts.examples(item, "three_shot")
        assert len(shown) == 3 and all(ex.prompt != item.prompt for ex in shown), (item.identifier, shown)
        assert prompts.text(item, "three_shot").count(item.prompt) == 1


@pytest.mark.parametrize("taken", ["mmlu-pro", "ARC-Challenge"])
def test_a_user_spec_may_not_take_a_shipped_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str], taken: str) -> None:
    """Selected by name it was silently ignored; by path it was recorded, ranked and paired as the real one."""
    capitals = Path(__file__).parents[2] / "examples" / "benchmarks"
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "capitals").symlink_to(capitals / "capitals")
    mine = tmp_path / "benchmarks" / "mine.yaml"
    mine.write_text((capitals / "capitals.yaml").read_text().replace("name: capitals", f"name: {taken}"))
    monkeypatch.chdir(tmp_path)
    for dataset in (taken.lower(), str(mine)):
        assert main(["run", dataset, "--model", "scripted:first", "-o", str(tmp_path / "run")]) == 2
        err = capsys.readouterr().err
        assert f"mine.yaml: the name '{taken}' is already proctor's" in err, err
        assert not (tmp_path / "run").exists()


def test_a_plugin_may_not_replace_a_shipped_benchmark(caplog: pytest.LogCaptureFixture,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from proctor.benchmarks import registry
    from proctor.benchmarks.builtin import Builtin
    from proctor.benchmarks.hub import HubSource

    monkeypatch.setattr(registry, "CLASHES", {})
    fake = Builtin("arc-challenge", lambda **kw: None, HubSource("me/arc", split="test"), 3, "someone's ARC")
    gathered = registry._gather((), [fake], {"arc-challenge": "proctor's shipped spec arc_challenge.yaml"})
    assert "arc-challenge" not in gathered
    assert "not registered" in caplog.text and "arc_challenge.yaml" in caplog.text
    with pytest.raises(ProctorError, match="both proctor's shipped spec arc_challenge.yaml and a plugin's"):
        registry.load_task("arc-challenge")


def test_different_row_problems_are_each_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Rows that fail for different reasons are not folded into one "+N more rows": one line per kind of problem,
    its first row and how many more rows have it (#51 item 6)."""
    (tmp_path / "quiz").mkdir()
    for f in (FIXTURES / "quiz").iterdir():
        (tmp_path / "quiz" / f.name).write_bytes(f.read_bytes())
    data = tmp_path / "quiz" / "test.csv"
    lines = data.read_text().splitlines()
    lines[1] = lines[1].replace(",A,", ",Z,")  # row 2: an answer that is no option
    lines[2] = lines[2].replace(",B,", ",Y,")  # row 3: the same kind
    lines[4] = "103,   ,fact a3,fact b3,fact c3,fact d3,D,geometry,easy"  # row 5: an empty question
    data.write_text("\n".join(lines) + "\n")
    (spec := tmp_path / "quiz.yaml").write_text(QUIZ.read_text())
    assert main(["validate", str(spec)]) == 2
    err = capsys.readouterr().err
    assert re.search(r"test\.csv:2: .*answer .Z. .* \(\+1 more rows\)", err), err
    assert re.search(r"test\.csv:5: .*the question is empty", err), err
    assert "Traceback" not in err


def test_fold_problems_keeps_at_most_five_kinds() -> None:
    from proctor.benchmarks.spec_data import fold_problems
    from proctor.util.errors import Problem

    problems = [Problem("d.csv", i + 2, f"problem kind {chr(97 + i)}") for i in range(8)]
    folded = fold_problems(problems)
    assert [p.line for p in folded] == [2, 3, 4, 5, 6]
    assert folded[-1].message == "problem kind e; and 3 more rows with 3 other kinds of problem"
