"""The echo split by tokens (`_echo.continuation_by_tokens`) and the prompt part of an echo (`prompt_tokens`)."""

from __future__ import annotations

import pytest

from proctor.models._echo import TokenLogprob, continuation_by_tokens, continuation_score, prompt_tokens


def toks(*spec: tuple[str, float | None], shift: int = 0) -> list[TokenLogprob]:
    out, offset = [], shift
    for text, lp in spec:
        out.append(TokenLogprob(text, offset, lp, text, lp))
        offset += len(text)
    return out


CTX = (("<s>", None), ("The", -1.0), (" answer", -2.0), (" is", -0.5))


def test_the_continuation_is_what_follows_the_context_echo_whatever_the_offsets() -> None:
    full = toks(*CTX, (" B", -3.0), (".", -0.25))
    got = continuation_by_tokens(toks(*CTX), full)
    assert (got.logprob, got.n_tokens, got.error) == (-3.25, 2, None)
    # vLLM's offsets count "<s>": the character rule scores " is" instead of " B.", the token rule does not care
    wrong = continuation_score("The answer is", " B.", full)
    assert (wrong.logprob, wrong.n_tokens) == (-0.5, 1)


def test_a_merged_boundary_token_is_the_continuations() -> None:
    ctx = toks(*CTX, (" ", -4.0))  # "The answer is " ends with a lone space token ...
    full = toks(*CTX, (" B", -3.0))  # ... which merges into " B"
    got = continuation_by_tokens(ctx, full)
    assert (got.logprob, got.n_tokens) == (-3.0, 1)


def test_errors_never_scores() -> None:
    assert continuation_by_tokens(toks(*CTX), toks(*CTX)).error is not None  # nothing added
    no_bos = continuation_by_tokens([], toks(("Nothing", None), (" before", -1.0)))
    assert no_bos.error is not None and "no log-prob" in no_bos.error


def test_prompt_tokens_drop_generated_ones_and_refuse_an_echo_shorter_than_the_prompt() -> None:
    choice = {"logprobs": {"tokens": ["<s>", "Hi", " there"], "token_logprobs": [None, -1.0, -2.0],
                           "top_logprobs": [None, {"Hi": -1.0}, {" there": -2.0}], "text_offset": [0, 3, 5]}}
    assert [t.token for t in prompt_tokens(choice, {"prompt_tokens": 2, "completion_tokens": 1})] == ["<s>", "Hi"]
    assert len(prompt_tokens(choice, {"completion_tokens": 1})) == 2
    assert len(prompt_tokens(choice, None)) == 3
    with pytest.raises(ValueError, match="prompt_tokens"):  # e.g. a server that ignored echo=true
        prompt_tokens(choice, {"prompt_tokens": 9})
