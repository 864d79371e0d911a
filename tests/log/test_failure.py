"""`Sample.failure`: every failure in one class, read from what the sample records — the error messages exactly as
the HTTP backends write them (taken from `proctor.models._http` itself), a sandbox that failed, a refusal marked by
the API, a limit, a wrong answer."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from proctor.log.failure import INFRA_FAILURES, MODEL_FAILURES, Failure, error_failure
from proctor.log.runlog import ExecutionDetails, Outcome, Sample
from proctor.models._http import RequestFailed, _decode, failures_as_request_failed


def _sample(outcome: Outcome, **kw: Any) -> Sample:
    score = {Outcome.CORRECT: 1.0, Outcome.WRONG: 0.0, Outcome.NO_ANSWER: 0.0, Outcome.TRUNCATED: 0.0,
             Outcome.PARTIAL: 0.5}.get(outcome)
    return Sample(sample_id="q#0", item_id="q", outcome=outcome, score=score, **kw)


def _message(exc: BaseException) -> str:
    with pytest.raises(RequestFailed) as got, failures_as_request_failed("http://h/v1", 2.0):
        raise exc
    return str(got.value)


def _http(status: int) -> str:
    with pytest.raises(RequestFailed) as got:
        _decode(status, None, b'{"error": "x"}', "http://h/v1/chat/completions")
    return str(got.value)


def _garbled() -> str:
    with pytest.raises(RequestFailed) as got:
        _decode(200, None, b'{"id": "garbage", "choi', "http://h/v1")
    return str(got.value)


@pytest.mark.parametrize(("message", "expected"), [
    (lambda: _message(TimeoutError()), Failure.TIMEOUT),
    (lambda: _message(aiohttp.ClientConnectionError("reset")), Failure.SERVER),
    (lambda: _http(500), Failure.SERVER), (lambda: _http(503), Failure.SERVER), (lambda: _http(529), Failure.SERVER),
    (lambda: _http(429), Failure.SERVER), (lambda: _http(408), Failure.SERVER), (_garbled, Failure.SERVER),
    (lambda: _http(400), Failure.REQUEST), (lambda: _http(401), Failure.REQUEST), (lambda: _http(404), Failure.REQUEST),
    (lambda: "unexpected response shape: KeyError: 'choices'", Failure.REQUEST),
    (lambda: "prompt has 2045 tokens; max_length is 1024", Failure.REQUEST),
    (lambda: "openai batch batch_1 ended 'expired' without a result for this request", Failure.SERVER),
    (lambda: "batch request expired (not run; the next run submits it again)", Failure.SERVER),
    (lambda: "HTTP 503 inside the batch: overloaded", Failure.SERVER),
])
def test_error_messages_as_the_backends_write_them(message: Any, expected: Failure) -> None:
    text = message()
    assert error_failure(text) is expected, text
    assert _sample(Outcome.ERROR, error=text).failure is expected


def test_a_sandbox_that_failed_is_the_sandbox_a_model_error_on_a_code_item_is_not() -> None:
    ran = ExecutionDetails(verdict="error", sandbox="bubblewrap")
    assert _sample(Outcome.ERROR, error="could not start bwrap: no such file", extracted="def f(): pass",
                   details=ran).failure is Failure.SANDBOX
    assert _sample(Outcome.ERROR, error="execution failed: OSError: x", details=ran).failure is Failure.SANDBOX
    asked = ExecutionDetails(verdict="error")  # the model's request failed: no code, no sandbox
    assert _sample(Outcome.ERROR, error=_http(502), details=asked).failure is Failure.SERVER


def test_limits_refusals_and_wrong_answers_are_the_models() -> None:
    assert _sample(Outcome.TRUNCATED, finish_reason="length").failure is Failure.LIMIT
    program = ExecutionDetails(verdict="limit", limit="wall_time")
    assert _sample(Outcome.WRONG, details=program).failure is Failure.LIMIT
    # a limit of proctor's containment the authors' harness does not set: the sandbox's, not the program's
    contained = ExecutionDetails(verdict="limit", limit="memory", exec_limits="authors", beyond_authors=True)
    assert _sample(Outcome.WRONG, details=contained).failure is Failure.SANDBOX
    assert _sample(Outcome.WRONG, finish_reason="content_filter").failure is Failure.REFUSAL
    assert _sample(Outcome.NO_ANSWER, finish_reason="refusal").failure is Failure.REFUSAL
    assert _sample(Outcome.WRONG, raw_output="I can't help with that.").failure is Failure.WRONG  # words: wrong
    assert _sample(Outcome.NO_ANSWER).failure is Failure.WRONG
    for outcome in (Outcome.CORRECT, Outcome.PARTIAL, Outcome.UNSCORED):
        assert _sample(outcome).failure is None


def test_the_classes_split_into_the_models_and_the_infrastructures() -> None:
    assert MODEL_FAILURES | INFRA_FAILURES == frozenset(Failure) and not MODEL_FAILURES & INFRA_FAILURES
    assert INFRA_FAILURES == {Failure.SANDBOX, Failure.SERVER, Failure.TIMEOUT, Failure.REQUEST}


def test_failure_is_derived_never_written() -> None:
    s = _sample(Outcome.ERROR, error=_http(500))
    assert "failure" not in s.model_dump() and Sample.model_validate_json(s.model_dump_json()).failure is Failure.SERVER
