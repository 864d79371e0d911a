"""Suite files and suite scoring with a scripted model (no torch): joins, accuracy, ties, -1, metrics."""

from __future__ import annotations

import csv
import io
import math
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from proctor.core.model import Capability, Loglikelihood, LoglikelihoodRequest, ModelBase
from proctor.core.results import RESULTS_SCHEMA_VERSION
from proctor.data.formats.suites import read_prompt, read_prompt_dir, read_suite, write_prompt, write_suite
from proctor.data.records import ContextCase, Item, Modality, Prompt, TestSuite
from proctor.interop.probsem_export import csv_text
from proctor.log.runlog import Outcome
from proctor.metrics.results import read_run
from proctor.metrics.suites import SuiteResult, suite_summary
from proctor.scoring.choice_logprob import choice_requests, score_choices
from proctor.scoring.suites import ScoreOptions, full_text, split_sample
from proctor.stats.intervals import calibration, wilson_interval
from proctor.util.errors import CapabilityError, InputError

FIXTURES = Path(__file__).parent.parent / "fixtures" / "suites"


def score_suites(model: ModelBase, prompt: Prompt, suites: list[TestSuite],
                 options: ScoreOptions | None = None) -> list[SuiteResult]:
    """Suites scored through the one run path (`proctor.evaluate`: the pipeline and the runner), no cache."""
    from proctor.data.formats.convert import suite_to_items
    from proctor.data.prompts import ItemPromptBuilder
    from proctor.data.tasks import Task
    from proctor.metrics.suites import suite_results
    from proctor.run.pipeline import evaluate
    from proctor.run.runner import RunOptions
    from proctor.scoring.suites import SUITE_CLUSTER, SuiteScorer

    task = Task(prompt.name, [it for s in suites for it in suite_to_items(prompt, s)], ItemPromptBuilder(),
                scorer=SuiteScorer(options or ScoreOptions()), cluster=SUITE_CLUSTER)
    with tempfile.TemporaryDirectory() as out:
        log = evaluate(task, model, RunOptions(out=Path(out) / "run", use_cache=False, record_history=False,
                                               progress=False, fail_fast_after=0))
        return suite_results(task.items, list(log.samples))  # read while the run directory is there


class TableModel(ModelBase):
    """Log-prob of a continuation = a table lookup by its text (context ignored unless keyed)."""

    capabilities = frozenset({Capability.LOGLIKELIHOOD})

    def __init__(self, table: dict[str, float]) -> None:
        self.name, self.table, self.calls = "table", table, []

    async def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        self.calls.append(list(requests))
        out = []
        for r in requests:
            key = r.continuation.strip()
            if key == "ERR":
                out.append(Loglikelihood(error="boom"))
            else:
                uncond = r.context in ("", "Answer:\n", "Answer:")
                out.append(Loglikelihood(self.table.get(key, -5.0) - (3.0 if uncond else 0.0), len(key), False))
        return out


def test_read_seed_example_and_round_trip(tmp_path: Path) -> None:
    (prompt, suites), = read_prompt_dir(FIXTURES)
    assert prompt.name == "test" and [s.name for s in suites] == ["A", "B"]
    a = read_suite(FIXTURES / "test_A.json", prompt="test")
    assert a.queries == ["True", "False"] and [c.expected for c in a.context] == [0, 1]
    write_prompt(tmp_path / "test.txt", prompt)
    write_suite(tmp_path / "test_A.json", a)
    assert read_prompt(tmp_path / "test.txt") == prompt
    assert read_suite(tmp_path / "test_A.json") == a


def _bad(tmp_path: Path, text: str) -> InputError:
    p = tmp_path / "p_T.json"
    p.write_text(text)
    with pytest.raises(InputError) as e:
        read_suite(p)
    return e.value


def test_bad_suites_located(tmp_path: Path) -> None:
    err = _bad(tmp_path, '{\n "context": [\n  {"text": "a", "expected": 0},\n  {"text": "b",\n   "expected": 5}\n ],\n'
                         ' "queries": ["x", "x", " "]\n}\n')
    msgs = [str(p) for p in err.problems]
    assert any(m.startswith(f"{tmp_path / 'p_T.json'}:5: context[1].expected: 5 is out of range") for m in msgs)
    assert any(":7: queries: queries must be distinct" in m for m in msgs)
    assert any(":7: queries[2]: empty query" in m for m in msgs)
    assert ":" in str(_bad(tmp_path, '{"context": [], "queries": []}').problems[0])
    assert "malformed JSON" in str(_bad(tmp_path, '{"context": [,]}'))
    assert "unknown key" in str(_bad(tmp_path, '{"context": [{"text": "a", "expected": 0}], "queries": ["a"], "x": 1}'))


def test_join_rules() -> None:
    prompt = Prompt(name="p", text="PROMPT")
    suite = TestSuite(pretext="", context=[ContextCase(text="CTX", expected=0)], posttext="POST", queries=["Q"])
    case = suite.context[0]
    assert full_text(prompt, suite, case, "Q") == "PROMPT\nCTX\nPOST\nQ"  # probsem: empty parts dropped
    assert split_sample(prompt, suite, case, "Q") == LoglikelihoodRequest("PROMPT\nCTX\nPOST\n", "Q")
    assert split_sample(prompt, suite, case, "Q", "space") == LoglikelihoodRequest("PROMPT\nCTX\nPOST", " Q")


def _suite(contexts: list[tuple[str, int]], queries: list[str], name: str = "T") -> TestSuite:
    return TestSuite(name=name, pretext="Pre", context=[ContextCase(text=t, expected=e) for t, e in contexts],
                     posttext="Answer:", queries=queries)


def test_scoring_accuracy_ties_unscored_and_one_call() -> None:
    model = TableModel({"yes": -1.0, "no": -2.0, "maybe": -1.0})
    suites = [
        _suite([("c0", 0), ("c1", 1), ("c2", -1)], ["yes", "no"]),
        _suite([("t0", 0)], ["yes", "maybe"], name="T2"),  # a tie at the max
    ]
    r1, r2 = (score_suites(model, Prompt(name="p", text="P"), suites))
    # one call; each unconditional request (PMI) asked once, shared by suites with the same posttext
    assert len(model.calls) == 1 and len(model.calls[0]) == 3 * 2 + 2 + 2 + 1
    c0, c1, c2 = r1.contexts
    assert (c0.predicted, c0.correct, c1.correct, c2.correct) == (0, True, False, None)
    assert sum(c0.probabilities) == pytest.approx(1.0)
    s, b, cal = r1.summary, r1.summary.block, r1.summary.calibration
    assert (b.n_scored, b.n_unscored, s.n_correct, b.accuracy) == (2, 1, 1, 0.5)
    assert (b.ci_low, b.ci_high) == pytest.approx(wilson_interval(1, 2))
    assert cal is not None and cal.log_loss == pytest.approx((-math.log(c0.probabilities[0]) - math.log(c1.probabilities[1])) / 2)
    t0 = r2.contexts[0]
    assert t0.ties == [0, 1] and t0.correct is False and r2.summary.n_ties == 1
    # probsem CSV columns and values
    rows = list(csv.reader(io.StringIO(csv_text(r1))))
    assert rows[0] == ["text", "query", "logp", "score"] and len(rows) == 7
    assert rows[1][:3] == ["Pre\nc0\nAnswer:", "yes", "-1.0"] and float(rows[1][3]) == c0.probabilities[0]


def test_norms_temperature_pmi_and_errors() -> None:
    model = TableModel({"yes": -1.0, "no": -4.0, "ERR": 0.0})
    suite = _suite([("c0", 0)], ["yes", "no"])
    (r,) = (score_suites(model, Prompt(name="p", text="P"), [suite], ScoreOptions(norm="token", temperature=2.0)))
    q = r.contexts[0].queries
    assert q[0]["norms"] == {"sum": -1.0, "token": -1 / 3, "char": -1 / 3, "byte": -1 / 3, "pmi": 3.0}
    assert q[1]["score"] == pytest.approx(-4.0 / 2 / 2)
    (r,) = (score_suites(model, Prompt(name="p", text="P"), [suite], ScoreOptions(norm="pmi")))
    assert [x["score"] for x in r.contexts[0].queries] == [3.0, 3.0] and r.contexts[0].ties == [0, 1]
    bad = _suite([("c0", 0), ("c1", 1)], ["yes", "ERR"])
    (r,) = (score_suites(model, Prompt(name="p", text="P"), [bad]))
    assert r.contexts[0].error == "boom" and r.contexts[0].correct is None
    assert r.summary.block.n_errors == 2 and r.summary.block.accuracy is None


def test_refuses_model_without_loglikelihood() -> None:
    class GenOnly(ModelBase):
        name, capabilities = "gen", frozenset({Capability.GENERATE})

    with pytest.raises(CapabilityError, match="cannot loglikelihood"):
        (score_suites(GenOnly(), Prompt(name="p", text=""), [_suite([("c", 0)], ["a", "b"])]))


def test_summary_metrics_are_stats_calibration() -> None:
    model = TableModel({"yes": -1.0, "no": -2.5, "maybe": -0.3})
    suite = _suite([("c0", 0), ("c1", 1), ("c2", 2), ("c3", 0), ("c4", -1)], ["yes", "no", "maybe"])
    (r,) = (score_suites(model, Prompt(name="p", text="P"), [suite]))
    scored = [c for c in r.contexts if c.expected >= 0]
    cal = calibration([c.probabilities for c in scored], [c.expected for c in scored])
    s = r.summary.calibration
    assert s is not None and (s.brier, s.ece, s.log_loss) == (cal.brier, cal.ece, cal.log_loss)
    p = scored[0].probabilities  # the same for every context: the table ignores the context
    assert s.brier == pytest.approx(sum(sum((q - (k == c.expected)) ** 2 for k, q in enumerate(p)) for c in scored) / 4)
    assert s.log_loss == pytest.approx(-sum(math.log(p[c.expected]) for c in scored) / 4)
    assert s.ece == pytest.approx(abs(max(p) - 1 / 4))  # one bin: confidence max(p), accuracy 1/4
    assert suite_summary([]).block.accuracy is None and suite_summary([]).block.ci_low is None
    assert suite_summary([]).calibration is None


def test_choice_logprob() -> None:
    item = Item(identifier="q1", modality=Modality.CHOICE4, prompt="Which?", response="B",
                choices={"A": "a", "B": "bbbb", "C": "cc", "D": "d"})
    reqs = choice_requests(item, "Question: Which?\nAnswer:")
    assert [r.continuation for r in reqs] == [" a", " bbbb", " cc", " d"]
    res = [Loglikelihood(-2.0, 1), Loglikelihood(-4.0, 2), Loglikelihood(-3.0, 1), Loglikelihood(-5.0, 1)]
    pred, acc, acc_norm, d = score_choices(item, res)
    assert (pred, acc, acc_norm) == ("A", False, True)
    assert d["logprobs_norm"]["B"] == -1.0 and d["predicted_norm"] == "B"
    tied = [Loglikelihood(-4.0, 1), Loglikelihood(-4.0, 1), Loglikelihood(-9.0, 1), Loglikelihood(-9.0, 1)]
    pred, acc, _, d = score_choices(item, tied)
    assert acc is False and d["tie"] is True
    assert score_choices(item, [Loglikelihood(error="x")] * 4)[:3] == (None, None, None)


def test_run_log_samples_outcomes_and_results(tmp_path: Path) -> None:
    """A suite task through the one run path: typed samples, unscored contexts never counted, errors kept."""
    from proctor.data.formats.convert import suite_to_items
    from proctor.data.prompts import ItemPromptBuilder
    from proctor.data.tasks import Task
    from proctor.metrics.suites import suite_results
    from proctor.run.pipeline import evaluate
    from proctor.run.runner import RunOptions
    from proctor.scoring.suites import SuiteScorer

    model = TableModel({"yes": -1.0, "no": -2.0, "maybe": -1.0})
    suites = [
        _suite([("c0", 0), ("c1", 1), ("c2", -1)], ["yes", "no"]),
        TestSuite(name="U", pretext="", context=[ContextCase(text="t0", expected=0), ContextCase(text="t1", expected=1)],
                  posttext="Answer:", queries=["yes", "maybe", "ERR"]),
    ]
    prompt = Prompt(name="p", text="P")
    opts = ScoreOptions(norm="char")
    direct = (score_suites(model, prompt, suites, opts))
    items = [it for s in suites for it in suite_to_items(prompt, s)]
    task = Task("p", items, ItemPromptBuilder(), scorer=SuiteScorer(opts))
    log = evaluate(task, model, RunOptions(out=tmp_path / "run", use_cache=False, record_history=False,
                                          progress=False, fail_fast_after=0))
    assert log.manifest.mode == "logprob" and log.manifest.extractor_version == "argmax-char"
    assert log.manifest.scorer.as_dict() == {"scorer": "suite", "norm": "char", "temperature": 1.0, "join": "newline"}
    by_id = {s.sample_id: s for s in log.samples}
    assert list(by_id) == ["p.T.0#0", "p.T.1#0", "p.T.2#0", "p.U.0#0", "p.U.1#0"]
    c0, c1, c2 = by_id["p.T.0#0"], by_id["p.T.1#0"], by_id["p.T.2#0"]
    assert (c0.outcome, c0.score, c0.extracted) == (Outcome.CORRECT, 1.0, "yes")
    assert (c1.outcome, c1.score, c1.extracted) == (Outcome.WRONG, 0.0, "yes")
    assert (c2.outcome, c2.score) == (Outcome.UNSCORED, None) and c2.details["expected"] == -1
    assert "distribution" in c2.details  # unscored: not counted, still shown with its distribution
    assert c0.prompt == "P\nPre\nc0\nAnswer:\n" and c0.modality == "choiceof2"
    assert c0.extraction_rule == "argmax-char" and c0.details["queries"] == ["yes", "no"]
    assert c0.details["kind"] == "suite" and c0.details["logprobs"] == {"yes": -1.0, "no": -2.0}
    assert c0.details["distribution"] == pytest.approx(direct[0].contexts[0].probabilities)
    err = by_id["p.U.0#0"]
    assert err.outcome is Outcome.ERROR and err.error == "boom" and "distribution" not in err.details
    res = log.results
    assert res is not None and res.schema_version == RESULTS_SCHEMA_VERSION and res.errors == {"boom": 2}
    assert res.overall.n_scored == 2 and res.overall.n_unscored == 1 and res.overall.n_errors == 2
    cal = direct[0].summary.calibration
    assert cal is not None
    assert res.calibration is not None and res.calibration.brier == pytest.approx(cal.brier) and res.calibration.n == 2
    again = suite_results(items, log.samples)
    assert [c.as_dict() for r in again for c in r.contexts] == [c.as_dict() for r in direct for c in r.contexts]
    assert read_run(tmp_path / "run").manifest.run_id == log.manifest.run_id
