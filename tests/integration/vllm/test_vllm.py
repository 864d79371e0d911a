"""proctor against a real vLLM server (see conftest.py): echo log-likelihoods equal the `hf:` backend on
the same weights, chat generation through `proctor run`, and `probe`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from proctor import read_run
from proctor.log.runlog import Outcome
from proctor.models import Capability, LoglikelihoodRequest, get_model
from proctor.models._echo import continuation_score, parse_echo_logprobs
from proctor.models.hf import HFModel
from proctor.models.openai import OpenAIModel
from proctor.util.errors import CapabilityError

from ..conftest import MMLU_PRO
from .conftest import VLLMServer

pytestmark = [pytest.mark.vllm, pytest.mark.xdist_group("vllm")]  # one worker: one server

CASES = [
    LoglikelihoodRequest("Question: physics. The correct answer is", " (A)"),
    LoglikelihoodRequest("The quick brown fox", " jumps over the lazy dog."),
    LoglikelihoodRequest("The answer is ", "B"),  # trailing space: merges with the continuation's first token
    LoglikelihoodRequest("The answer is\n", "B"),
    LoglikelihoodRequest("Answer:\n\n", "Paris\n\n"),  # trailing newlines on both sides
    LoglikelihoodRequest("Answer:  ", "  spaced  "),
    LoglikelihoodRequest("Ünïcödé ✓ — ", "naïve café 東京 🙂"),  # multi-byte characters split across tokens
    LoglikelihoodRequest("東京", "都"),
    LoglikelihoodRequest("0 1 2 3", " 4 5 6 7 8 9 10 100 999"),
]
EMPTY_CONTEXT = LoglikelihoodRequest("", "Nothing before it")
TOLERANCE = 1e-3  # float32 on CPU, two different kernels


def _hf(server: VLLMServer) -> HFModel:
    return HFModel(str(server.model_dir), dtype="float32", device="cpu")


def _served(server: VLLMServer, route: str) -> OpenAIModel:
    extra: dict[str, Any] = {"tokenizer": str(server.model_dir)} if route == "token-ids" else {}
    return OpenAIModel(server.name, base_url=server.base_url, api_key="unused", **extra)


def _assert_equal(got: list[Any], want: list[Any], cases: list[LoglikelihoodRequest]) -> None:
    for r, g, w in zip(cases, got, want, strict=True):
        assert g.error is None and w.error is None, (r, g.error, w.error)
        assert g.n_tokens == w.n_tokens, r
        assert abs(g.logprob - w.logprob) <= TOLERANCE, (r, g.logprob, w.logprob)
        assert g.is_greedy == w.is_greedy, r


@pytest.mark.parametrize("route", ["context-echo", "token-ids"])
@pytest.mark.parametrize("which", ["tiny-llama", "tiny-gpt2-nobos"])
async def test_echo_loglikelihoods_equal_hf(vllm_servers: dict[str, VLLMServer], which: str, route: str) -> None:
    server = vllm_servers[which]
    model = _served(server, route)
    await model.probe({Capability.LOGLIKELIHOOD})
    cases = CASES + ([EMPTY_CONTEXT] if which == "tiny-llama" or route == "token-ids" else [])
    got = await model.loglikelihood(cases)
    want = await _hf(server).loglikelihood(cases)
    _assert_equal(got, want, cases)


async def test_an_empty_context_without_bos_is_an_error_not_a_score(vllm_servers: dict[str, VLLMServer]) -> None:
    """No BOS and nothing before the continuation: the server cannot score its first token; hf: prepends one."""
    [got] = await _served(vllm_servers["tiny-gpt2-nobos"], "context-echo").loglikelihood([EMPTY_CONTEXT])
    assert got.error is not None and "no log-prob" in got.error


async def test_vllm_offsets_count_the_bos_text_and_the_old_rule_was_wrong(vllm_servers: dict[str, VLLMServer]) -> None:
    """What issue 11 saw: text_offset counts `<s>`, so a character-offset boundary picks the wrong tokens."""
    server = vllm_servers["tiny-llama"]
    r = CASES[0]
    body = {"model": server.name, "prompt": r.context + r.continuation, "echo": True, "logprobs": 1,
            "max_tokens": 0, "temperature": 0.0}
    async with httpx.AsyncClient(timeout=60) as client:
        data = (await client.post(f"{server.base_url}/completions", json=body)).json()
    tokens = parse_echo_logprobs(data["choices"][0]["logprobs"])
    assert tokens[0].token == "<s>" and tokens[1].offset == len("<s>")  # shifted by the BOS text
    old = continuation_score(r.context, r.continuation, tokens)
    [want] = await _hf(server).loglikelihood([r])
    assert abs(old.logprob - want.logprob) > 0.1  # the offset rule is wrong here ...
    [new] = await _served(server, "context-echo").loglikelihood([r])
    assert abs(new.logprob - want.logprob) <= TOLERANCE  # ... the token rule is not


async def test_probe(vllm_servers: dict[str, VLLMServer]) -> None:
    llama, gpt2 = vllm_servers["tiny-llama"], vllm_servers["tiny-gpt2-nobos"]
    model = get_model(f"openai:{llama.name}", base_url=llama.base_url, api_key="unused")
    await model.probe({Capability.GENERATE, Capability.LOGLIKELIHOOD})  # type: ignore[attr-defined]
    wrong = OpenAIModel(llama.name, base_url=llama.base_url, api_key="unused", tokenizer=str(gpt2.model_dir))
    with pytest.raises(CapabilityError, match="does not tokenize like the served model"):
        await wrong.probe({Capability.LOGLIKELIHOOD})
    missing = OpenAIModel("no-such-model", base_url=llama.base_url, api_key="unused", max_retries=0)
    with pytest.raises(CapabilityError):
        await missing.probe({Capability.LOGLIKELIHOOD})


def test_chat_generation_end_to_end(cli: Any, tmp_path: Path, vllm_servers: dict[str, VLLMServer]) -> None:
    server = vllm_servers["tiny-llama"]
    r = cli("run", "mmlu-pro", "--data-file", MMLU_PRO, "--model", f"openai:{server.name}", "--base-url",
            server.base_url, "--prompt", "zero_shot", "--max-tokens", "8", "--limit", "6", "-o", tmp_path / "run",
            "--store", tmp_path / "s.sqlite", "--no-progress")
    # a random model often runs to the 8-token limit on every item: then the run exits 1 saying so (cli/outcome.py)
    assert r.code == 0 or (r.code == 1 and "was cut at the token limit" in r.err), r.err
    log = read_run(tmp_path / "run")
    assert log.results is not None and len(log.samples) == 6
    for s in log.samples:
        assert s.outcome is not Outcome.ERROR, s
        assert s.raw_output is not None and s.output_tokens is not None and 0 < s.output_tokens <= 8
        assert s.input_tokens is not None and s.input_tokens > 20  # the chat template wrapped the question


def test_logprob_run_equals_hf_run(cli: Any, tmp_path: Path, vllm_servers: dict[str, VLLMServer]) -> None:
    """`proctor run --mode logprob` through vLLM and through hf: the same letter log-probs and choices."""
    server = vllm_servers["tiny-llama"]
    runs = {}
    for name, model in (("hf", ["--model", f"hf:{server.model_dir}", "--device", "cpu"]),
                        ("vllm", ["--model", f"openai:{server.name}", "--base-url", server.base_url])):
        r = cli("run", "mmlu-pro", "--data-file", MMLU_PRO, "--mode", "logprob", *model, "--limit", "8",
                "-o", tmp_path / name, "--store", tmp_path / "s.sqlite", "--no-progress")
        assert r.code == 0, r.err
        runs[name] = {json.loads(x)["sample_id"]: json.loads(x)
                      for x in (tmp_path / name / "samples.jsonl").read_text().splitlines() if x.strip()}
    assert runs["hf"].keys() == runs["vllm"].keys() and len(runs["hf"]) >= 5
    for sid, a in runs["hf"].items():
        b = runs["vllm"][sid]
        for letter, lp in a["details"]["logprobs"].items():
            assert abs(lp - b["details"]["logprobs"][letter]) <= TOLERANCE, (sid, letter)
        assert a["extracted"] == b["extracted"]


def test_tiger_local_generation_stops_at_question(cli: Any, tmp_path: Path,
                                                  vllm_servers: dict[str, VLLMServer]) -> None:
    """A base model that goes on to write its own next question is cut at "Question:", as
    evaluate_from_local.py's SamplingParams(stop=["Question:"]) cuts it: the tiny model's output is forced
    (structured outputs) to answer and then start a new question; only the kind's stop ends it there."""
    server = vllm_servers["tiny-llama"]
    forced = json.dumps({"structured_outputs": {"regex": r"The answer is \(A\)\.\n\nQuestion: [a-z]{1,8}"}})
    outputs = {}
    for kind in ("tiger-local", "chain_of_thought"):
        r = cli("run", "mmlu-pro", "--data-file", MMLU_PRO, "--model", f"openai:{server.name}", "--base-url",
                server.base_url, "--no-chat", "--prompt", kind, "--max-tokens", "40", "--limit", "1",
                "--extra-body", forced, "-o", tmp_path / kind, "--store", tmp_path / "s.sqlite", "--no-progress")
        assert r.code == 0, r.err
        (sample,) = read_run(tmp_path / kind).samples
        assert sample.outcome is not Outcome.ERROR, sample
        outputs[kind] = sample.raw_output or ""
    assert outputs["tiger-local"] == "The answer is (A).\n\n"
    assert outputs["chain_of_thought"].startswith("The answer is (A).\n\nQuestion: ")  # no stop: it goes on
