from __future__ import annotations

from pathlib import Path

import pytest

from proctor.util.progress import Progress

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_quiet_off_a_terminal_but_still_counting(capsys: pytest.CaptureFixture[str]) -> None:
    with Progress(10) as bar:  # stderr is captured here, so not a terminal
        assert not bar.enabled
        bar.advance(3, cache_hit=True)
        bar.advance(1, error=True)
        bar.advance(2)
    assert (bar.completed, bar.cache_hits, bar.errors) == (6, 3, 1)
    assert capsys.readouterr() == ("", "")


def test_enabled_bar_shows_rate_hits_and_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with Progress(4, enabled=True, description="mmlu") as bar:
        bar.advance(2, cache_hit=True)
        bar.advance(1, error=True)
        bar.advance(1)
    out, err = capsys.readouterr()
    assert out == ""  # the bar goes to stderr, never into piped results
    for part in ("mmlu", "4/4", "it/s", "2 cached", "1 errors"):
        assert part in err


def test_a_call_advances_the_bar_before_its_samples_are_done() -> None:
    """A backend's report() inside a runner call moves the bar by that part of the call; finish() settles it."""
    from proctor.util import progress

    with Progress(10) as bar:
        with bar.chunk(10) as call:
            progress.expect(requests=4)
            progress.report(requests=1, tokens=100)
            assert call.credited == 2.5 and bar.partial == 2.5 and bar.tokens == 100
            progress.report(requests=9)  # more than announced (retries, a judge): never shown as all done
            assert call.credited == 9.9
        bar.finish(call, ok=9, errors=1)
    assert (bar.completed, bar.errors, bar.partial) == (10, 1, 0.0)
    assert bar.rate().endswith("tok/s")


def test_reports_outside_a_run_do_nothing() -> None:
    from proctor.util import progress

    progress.expect(tokens=5)
    progress.report(requests=3, tokens=7)
    progress.in_flight(+1)  # no bar, no error


def test_api_rate_is_requests_per_second_and_in_flight() -> None:
    from proctor.util import progress

    with Progress(2) as bar, bar.chunk(2):
        progress.expect(requests=2)
        progress.in_flight(+1)
        progress.in_flight(+1)
        assert bar.rate().endswith("req/s · 2 in flight")
        progress.in_flight(-1)
        progress.report(requests=1)
        assert bar.on_wire == 1 and bar.requests == 1 and bar.partial == 1.0


def test_local_hf_run_advances_per_batch_with_tokens(tiny_model_dir: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole dataset in one call of a local model: the bar still moves after every forward batch."""
    from proctor.benchmarks.registry import load_task
    from proctor.core.spec import ScorerSpec
    from proctor.models import get_model
    from proctor.run.pipeline import evaluate
    from proctor.run.runner import RunOptions

    seen: list[tuple[float, int]] = []
    work = Progress.work

    def spy(self: Progress, chunk: object, requests: int = 0, tokens: int = 0) -> None:
        work(self, chunk, requests=requests, tokens=tokens)  # type: ignore[arg-type]
        seen.append((self.completed + self.partial, self.tokens))

    monkeypatch.setattr(Progress, "work", spy)
    task = load_task("mmlu-pro", data_file=EXAMPLES / "upstream" / "mmlu_pro")
    model = get_model(f"hf:{tiny_model_dir}", batch_size=2)
    log = evaluate(task, model, RunOptions(out=tmp_path / "run", use_cache=False, record_history=False, progress=False),
                   scorer=ScorerSpec(mode="logprob"))
    assert log.results is not None and len(seen) >= 3  # several batches reported within the one call
    shown = [s for s, _ in seen]
    assert shown == sorted(shown) and 0 < shown[0] < len(task.items) and seen[-1][1] > 0


def test_api_run_reports_every_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("uvicorn")
    from proctor.benchmarks.registry import load_task
    from proctor.models import get_model
    from proctor.run.pipeline import evaluate
    from proctor.run.runner import RunOptions
    from proctor.testing import serve

    flights: list[int] = []
    flight = Progress.flight

    def spy(self: Progress, delta: int) -> None:
        flight(self, delta)
        flights.append(self.on_wire)

    monkeypatch.setattr(Progress, "flight", spy)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    task = load_task("mmlu-pro", data_file=EXAMPLES / "upstream" / "mmlu_pro")
    with serve(responder="first") as srv:
        model = get_model("openai:m", base_url=srv.base_url, concurrency=4)
        evaluate(task, model, RunOptions(out=tmp_path / "run", use_cache=False, record_history=False))
    assert len(flights) == 2 * len(task.items) and max(flights) >= 1 and flights[-1] == 0
