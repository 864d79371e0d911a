"""`scripted:` — instant, deterministic answers and pseudo log-probs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.models import GenerateRequest, LoglikelihoodRequest, Message, get_model
from proctor.models.scripted import ScriptedModel, option_letters, prompt_hash
from proctor.util.errors import InputError, ProctorError

TEN = "Q?\n" + "\n".join(f"({c}) option {c}" for c in "ABCDEFGHIJ")


def req(text: str) -> GenerateRequest:
    return GenerateRequest((Message("user", text),))


async def test_first_and_boxed() -> None:
    m = get_model("scripted:first")
    out = await m.generate([req(TEN), req("Put the final answer in \\boxed{}.")])
    assert [g.text for g in out] == ["The answer is (A)", "Reasoning omitted.\n\\boxed{0}"]
    assert all(g.error is None and g.finish_reason == "stop" for g in out)


async def test_random_is_seeded_deterministic_and_within_the_options() -> None:
    prompts = [f"{TEN}\nvariant {i}" for i in range(60)]
    a = [g.text for g in await ScriptedModel("random").generate([req(p) for p in prompts])]
    b = [g.text for g in await ScriptedModel("random").generate([req(p) for p in prompts])]
    c = [g.text for g in await ScriptedModel("random,seed=7").generate([req(p) for p in prompts])]
    assert a == b and a != c
    letters = {t[-2] for t in a}
    assert letters <= set("ABCDEFGHIJ") and len(letters) >= 6


def test_option_letters() -> None:
    assert option_letters(TEN) == list("ABCDEFGHIJ")
    assert option_letters("A. yes\nB. no") == ["A", "B"]
    assert option_letters("no options here") == list("ABCD")


async def test_echo_and_fixed() -> None:
    [e] = await ScriptedModel("echo").generate([req("hello there")])
    [f] = await ScriptedModel("fixed=ANSWER: $C$").generate([req("x")])
    assert (e.text, f.text) == ("hello there", "ANSWER: $C$")


async def test_file_rule_by_hash_or_prompt(tmp_path: Path) -> None:
    msgs = (Message("system", "s"), Message("user", "What is 6 x 7?"))
    path = tmp_path / "answers.jsonl"
    path.write_text(json.dumps({"prompt_hash": prompt_hash(msgs), "answer": "\\boxed{42}"}) + "\n"
                    + json.dumps({"prompt": "Capital of France?", "answer": "Paris"}) + "\n")
    m = ScriptedModel(f"file={path}")
    out = await m.generate([GenerateRequest(msgs), req("Capital of France?"), req("unknown")])
    assert [g.text for g in out[:2]] == ["\\boxed{42}", "Paris"]
    assert out[2].error is not None and "no scripted answer" in out[2].error


def test_file_rule_reports_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"prompt": "x", "answer": "y"}\n{"prompt": "x"}\nnot json\n')
    with pytest.raises(InputError) as e:
        ScriptedModel(f"file={path}")
    assert f"{path}:2: answer: must be a string" in str(e.value)
    assert f"{path}:3: malformed JSON" in str(e.value)


def test_unknown_rule() -> None:
    with pytest.raises(ProctorError, match="unknown scripted rule 'guess'"):
        get_model("scripted:guess")


async def test_loglikelihood_is_deterministic_and_additive() -> None:
    m = ScriptedModel("first")
    whole, first, second, again = await m.loglikelihood([
        LoglikelihoodRequest("The answer is", " (B) because"),
        LoglikelihoodRequest("The answer is", " (B)"),
        LoglikelihoodRequest("The answer is (B)", " because"),
        LoglikelihoodRequest("The answer is", " (B) because"),
    ])
    assert whole == again
    assert whole.n_tokens == 2 and whole.logprob < 0
    assert whole.logprob == pytest.approx(first.logprob + second.logprob)
    assert whole.is_greedy == (first.is_greedy and second.is_greedy)


async def test_delay_waits_before_each_answer_and_hands_over_one_item_at_a_time() -> None:
    import asyncio
    import time

    m = ScriptedModel("first,delay=0.05")
    start = time.perf_counter()
    out = [g for batch in await asyncio.gather(m.generate([req(TEN)]), m.generate([req(TEN)])) for g in batch]
    assert time.perf_counter() - start >= 0.1  # concurrent calls answered one after the other
    assert [g.text for g in out] == ["The answer is (A)"] * 2
    assert m.preferred_chunk_size == 1 and ScriptedModel("first").preferred_chunk_size > 1
    for bad in ("delay=x", "delay=-1", "delay=nan", "delay=4000"):
        with pytest.raises(ProctorError, match="delay must be a number of seconds"):
            ScriptedModel(f"first,{bad}")
