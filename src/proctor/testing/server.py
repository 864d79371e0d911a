"""A real HTTP server on 127.0.0.1 speaking the OpenAI and Anthropic APIs, for tests and benchmarks.

    with serve(latency=0.05, fault_rate=0.2, seed=1) as srv:
        model = OpenAIModel("m", base_url=srv.base_url)
        ...
        srv.stats()["requests"]

Endpoints: `POST /v1/chat/completions`, `POST /v1/completions` (with `echo` + `logprobs`, prompt token
log-probs shaped as vLLM returns them: choices[0].logprobs.{tokens, token_logprobs, top_logprobs,
text_offset}), `GET /v1/models`, `POST /v1/messages` (Anthropic), `GET /stats` (request counters,
the most requests ever in flight at once, faults injected), `POST /admin/config` (change settings and
reset the counters) and `POST /admin/reset`.

Answers come from a scripted rule (`proctor.models.scripted`), tool calls from a script (`tool_replies`: the calls
each turn of a conversation makes, `tool_repeat` to make them forever), or, for completions log-probs, from a
Hugging Face model directory loaded with transformers in the server process (exact log-probs of one
forward pass). Latency is an `asyncio.sleep`, so concurrency is real. Faults are drawn per request with
a seeded generator: 429 with Retry-After, 500, a hang past any client timeout, or a 200 whose body is
malformed JSON. The server runs in its own process (starlette + uvicorn) on a socket bound by the
parent, so it is ready on a port nobody else can take, and it is killed when the context exits.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import httpx

from ..core.model import Message
from ..models._echo import TokenLogprob
from ..models.scripted import RULE_OPTIONS, RULES, ScriptedModel, pseudo_logprobs
from .batches import BatchStore, batch_routes

FAULT_KINDS = ("429", "500", "hang", "garbage")
USAGE_COUNTS = ("words", "chars", "bytes")


@dataclass(frozen=True)
class ServerConfig:
    """Everything the server can be told; change it live with `LocalServer.configure`."""

    responder: str = "first"  # a scripted rule: first, random, echo, fixed=TEXT, file=PATH
    model_dir: str | None = None  # HF model directory for completions log-probs (and greedy completions)
    latency: float = 0.0  # seconds added to every answered request
    fault_rate: float = 0.0  # probability that a request fails
    faults: tuple[str, ...] = FAULT_KINDS  # the kinds drawn from, uniformly
    max_faults: int | None = None  # inject at most this many faults (then answer normally)
    retry_after: float = 0.1  # seconds, sent in 429 responses
    hang_s: float = 600.0  # how long a hanging request sleeps
    seed: int = 0
    chat_only: bool = False  # /v1/completions answers 404, like a chat-only deployment
    reasoning: str | None = None  # sent as reasoning_content (OpenAI) / a thinking block (Anthropic)
    api_key: str | None = None  # when set, requests must carry it (Bearer or x-api-key), else 401
    poison: str | None = None  # requests whose body contains this text always fail with 500
    capacity: int | None = None  # more requests than this in flight: 429 with Retry-After (a rate limit)
    truncate: bool = False  # honour max_tokens (a word is a token): cut answers, finish_reason length/max_tokens
    batch_polls: int = 2  # a batch (OpenAI or Anthropic) ends after this many status requests
    batch_expire: bool = False  # batches end expired: only their first half answered
    max_model_len: int | None = None  # reported by GET /v1/models, as vLLM does
    vllm_offsets: bool = False  # text_offset counts special tokens' text (BOS `<s>`), as vLLM does
    usage: str = "words"  # what chat usage counts as a token: "words" (honest here), "chars" (one per character,
    # more than any estimate from words: an inflating server), or "bytes" (one per UTF-8 byte, more still)
    # scripted tool calls: a conversation's turn k (k assistant messages before it) answers with tool_replies[k], a
    # list of calls {"name", "arguments" (text sent as is, or JSON written as text), "id"?, "input"? (Anthropic's
    # tool_use input as is; else the arguments, decoded when they are JSON)}; past the script the responder
    # answers, unless tool_repeat (the last turn's calls again, forever: a model that never stops); both the chat
    # completions and the Messages API answer so
    tool_replies: tuple[tuple[dict[str, Any], ...], ...] = ()
    tool_repeat: bool = False
    answer_with_result: bool = False  # past the script, after a tool message: answer "result: CONTENT" (its content)

    def __post_init__(self) -> None:
        bad = [k for k in self.faults if k not in FAULT_KINDS]
        if self.usage not in USAGE_COUNTS:
            raise ValueError(f"usage must be one of {USAGE_COUNTS}, got {self.usage!r}")
        if bad or not 0.0 <= self.fault_rate <= 1.0:
            raise ValueError(f"faults must be among {FAULT_KINDS} and 0 <= fault_rate <= 1 (got {bad}, {self.fault_rate})")
        for k, turn in enumerate(self.tool_replies):
            if not all(isinstance(c, dict) and isinstance(c.get("name", ""), str) for c in turn):
                raise ValueError(f"tool_replies[{k}]: each call is an object whose name is text")

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ServerConfig:
        known = {f.name for f in fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown server settings: {sorted(unknown)}")
        if "faults" in d:
            d = {**d, "faults": tuple(d["faults"])}
        if "tool_replies" in d:
            replies = d["tool_replies"]
            if not isinstance(replies, list | tuple) or not all(isinstance(t, list | tuple) for t in replies):
                raise ValueError("tool_replies: a list of turns, each a list of calls")
            d = {**d, "tool_replies": tuple(tuple(t) for t in replies)}
        return cls(**d)


@dataclass
class _State:
    config: ServerConfig
    requests: int = 0
    by_path: Counter[str] = field(default_factory=Counter)
    answered: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    faults: Counter[str] = field(default_factory=Counter)
    authorized: int = 0
    last_body: dict[str, Any] | None = None
    billed_input: int = 0  # prompt / input tokens reported in the usage of every chat and messages answer
    billed_output: int = 0  # completion / output tokens reported likewise
    billed_max_input: int = 0  # the most input tokens one answer reported
    billed_max_output: int = 0  # the most output tokens one answer reported

    def reset(self, config: ServerConfig) -> None:
        """New settings and zeroed counters."""
        self.__dict__.update(asdict(_State(config)) | {"config": config, "by_path": Counter(), "faults": Counter()})

    def snapshot(self) -> dict[str, Any]:
        return {"requests": self.requests, "by_path": dict(self.by_path), "answered": self.answered,
                "in_flight": self.in_flight, "max_in_flight": self.max_in_flight,
                "faults": dict(self.faults), "authorized": self.authorized, "last_body": self.last_body,
                "billed_input": self.billed_input, "billed_output": self.billed_output,
                "billed_max_input": self.billed_max_input, "billed_max_output": self.billed_max_output,
                "config": asdict(self.config)}


# -- the app (runs in the server process) --------------------------------------------------------------


class _HFScorer:
    """Exact prompt log-probs from one forward pass of a local causal LM."""

    def __init__(self, model_dir: str, vllm_offsets: bool = False) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        torch.set_num_threads(1)
        self.torch = torch
        self.tok: Any = AutoTokenizer.from_pretrained(model_dir)
        self.model: Any = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
        self.model.eval()  # type: ignore[no-untyped-call]
        self.vllm_offsets = vllm_offsets

    def completion(self, prompt: str | list[int], max_tokens: int, echo: bool) -> tuple[str, dict[str, Any], int]:
        """(generated text, vLLM-shaped logprobs, prompt token count); a prompt may be token ids."""
        torch = self.torch
        if isinstance(prompt, list) or self.vllm_offsets:  # offsets = lengths of the tokens' texts, BOS's included
            ids: list[int] = list(prompt) if isinstance(prompt, list) else list(self.tok(prompt)["input_ids"])
            pieces = [self.tok.decode([t]) for t in ids]
            offsets = [sum(len(x) for x in pieces[:i]) for i in range(len(ids))]
            text = "".join(pieces)
        else:
            enc = self.tok(prompt, return_offsets_mapping=True)
            ids = list(enc["input_ids"])
            offsets = [int(a) for a, _ in enc["offset_mapping"]]
            text = prompt
        n_prompt, prompt_len = len(ids), len(text)
        with torch.no_grad():
            for _ in range(max_tokens):  # greedy continuation
                logits = self.model(torch.tensor([ids])).logits[0, -1]
                nxt = int(logits.argmax())
                offsets.append(len(text))
                ids.append(nxt)
                text += self.tok.decode([nxt])
            logp = torch.log_softmax(self.model(torch.tensor([ids])).logits[0].double(), dim=-1)
        token_lps: list[float | None] = [None]
        tops: list[dict[str, float] | None] = [None]
        for i in range(1, len(ids)):
            row = logp[i - 1]
            token_lps.append(float(row[ids[i]]))
            best = int(row.argmax())
            tops.append({self.tok.decode([best]): float(row[best]), self.tok.decode([ids[i]]): float(row[ids[i]])})
        lo = 0 if echo else n_prompt
        logprobs = {"tokens": [self.tok.decode([t]) for t in ids[lo:]], "token_logprobs": token_lps[lo:],
                    "top_logprobs": tops[lo:], "text_offset": offsets[lo:]}
        return text[prompt_len:], logprobs, n_prompt


def build_app(config: ServerConfig) -> Any:
    """The starlette app for `config`; `create_app` in the server process."""
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    state = _State(config)
    batch_store = BatchStore()  # the batch APIs (testing/batches.py); kept across reconfigures
    scorer = _HFScorer(config.model_dir, config.vllm_offsets) if config.model_dir else None
    responders: dict[str, ScriptedModel] = {}

    def responder() -> ScriptedModel:
        rule = state.config.responder
        if rule not in responders:
            responders[rule] = ScriptedModel(rule)
        return responders[rule]

    def draw_fault() -> str | None:
        c = state.config
        if c.fault_rate <= 0 or (c.max_faults is not None and sum(state.faults.values()) >= c.max_faults):
            return None
        rng = random.Random(f"{c.seed}:{state.requests}")
        if rng.random() >= c.fault_rate:
            return None
        return rng.choice(c.faults)

    def authorized(request: Request) -> bool:
        key = state.config.api_key
        got = request.headers.get("x-api-key") or request.headers.get("authorization", "").removeprefix("Bearer ")
        return key is None or got == key

    def wrap(handler: Any) -> Any:
        async def endpoint(request: Request) -> Response:
            state.requests += 1
            state.by_path[request.url.path] += 1
            state.in_flight += 1
            state.max_in_flight = max(state.max_in_flight, state.in_flight)
            try:
                if not authorized(request):
                    return JSONResponse({"error": {"message": "invalid API key", "type": "auth"}}, 401)
                state.authorized += 1
                capacity = state.config.capacity
                if capacity is not None and state.in_flight > capacity:
                    state.faults["capacity"] += 1
                    return JSONResponse({"error": {"message": "rate limited", "type": "rate_limit"}}, 429,
                                        headers={"Retry-After": f"{state.config.retry_after:g}"})
                fault = draw_fault()
                if fault is not None:
                    state.faults[fault] += 1
                    if fault == "429":
                        return JSONResponse({"error": {"message": "rate limited", "type": "rate_limit"}}, 429,
                                            headers={"Retry-After": f"{state.config.retry_after:g}"})
                    if fault == "500":
                        return JSONResponse({"error": {"message": "injected failure", "type": "server"}}, 500)
                    if fault == "hang":
                        await asyncio.sleep(state.config.hang_s)
                        return JSONResponse({"error": {"message": "hung"}}, 504)
                body = await request.json() if request.method == "POST" else {}
                state.last_body = body
                poison = state.config.poison
                if poison and poison in json.dumps(body):
                    state.faults["poison"] += 1
                    return JSONResponse({"error": {"message": "poisoned request", "type": "server"}}, 500)
                if state.config.latency > 0:
                    await asyncio.sleep(state.config.latency)
                if fault == "garbage":
                    return Response('{"id": "garbage", "choices": [{"mess', 200, media_type="application/json")
                resp: Response = await handler(body)
                if resp.status_code < 400:
                    state.answered += 1
                return resp
            finally:
                state.in_flight -= 1

        return endpoint

    def words(text: str) -> int:
        return len(text.split())

    def stop_at(text: str, stop: Any) -> tuple[str, bool]:
        """The text before the first of the request's stop sequences (a string or a list), as OpenAI and vLLM
        return it (the stop sequence itself left out), and whether one was found."""
        sequences = [stop] if isinstance(stop, str) else [s for s in stop or () if isinstance(s, str) and s]
        found = [i for i in (text.find(s) for s in sequences) if i >= 0]
        return (text[: min(found)], True) if found else (text, False)

    def billed(text: str) -> int:
        """The tokens usage reports for `text`: words, or (an inflating server) characters or UTF-8 bytes."""
        how = state.config.usage
        return words(text) if how == "words" else len(text) if how == "chars" else len(text.encode("utf-8"))

    def bill(msgs: list[Message], text: str) -> tuple[int, int]:
        n_in, n_out = sum(billed(m.content) for m in msgs), billed(text)
        state.billed_input += n_in
        state.billed_output += n_out
        state.billed_max_input = max(state.billed_max_input, n_in)
        state.billed_max_output = max(state.billed_max_output, n_out)
        return n_in, n_out

    def cut(text: str, max_tokens: Any, reason: str) -> tuple[str, str | None]:
        """With `truncate` on, the first max_tokens words and `reason`; else the text unchanged."""
        if not state.config.truncate or not isinstance(max_tokens, int) or words(text) <= max_tokens:
            return text, None
        return " ".join(text.split()[:max_tokens]), reason

    def scripted_turn(sent: list[Any]) -> tuple[dict[str, Any], ...] | None:
        """The tool calls scripted for this turn of the conversation (None: past the script, answer in text)."""
        script = state.config.tool_replies
        turn = sum(1 for m in sent if isinstance(m, dict) and m.get("role") == "assistant")
        if turn >= len(script) and not (state.config.tool_repeat and script):
            return None
        return script[min(turn, len(script) - 1)]

    def scripted_calls(sent: list[Any]) -> list[dict[str, Any]] | None:
        """This turn's scripted calls as OpenAI's `tool_calls`."""
        calls = scripted_turn(sent)
        if calls is None:
            return None
        return [{"id": c.get("id", f"call_{state.requests}_{i}"), "type": "function",
                 "function": {"name": c.get("name", ""), "arguments": c["arguments"] if isinstance(
                     c.get("arguments"), str) else json.dumps(c.get("arguments", {}))}} for i, c in enumerate(calls)]

    async def chat(body: dict[str, Any]) -> Response:
        sent = body.get("messages", [])
        msgs = [Message(m["role"], m.get("content") or "") for m in sent]
        calls = scripted_calls(sent)
        if calls is not None:
            n_in, n_out = bill(msgs, json.dumps(calls))
            return JSONResponse({
                "id": f"chatcmpl-{state.requests}", "object": "chat.completion", "model": body.get("model"),
                "choices": [{"index": 0, "finish_reason": "tool_calls",
                             "message": {"role": "assistant", "content": None, "tool_calls": calls}}],
                "usage": {"prompt_tokens": n_in, "completion_tokens": n_out, "total_tokens": n_in + n_out},
            })
        try:
            if state.config.answer_with_result and msgs and msgs[-1].role == "tool":
                text = f"result: {msgs[-1].content}"
            else:
                text = responder().respond(msgs)
        except KeyError as e:
            return JSONResponse({"error": {"message": str(e.args[0])}}, 400)
        text, _ = stop_at(text, body.get("stop"))
        text, finish = cut(text, body.get("max_tokens"), "length")
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if state.config.reasoning:
            message["reasoning_content"] = state.config.reasoning
        n_in, n_out = bill(msgs, text)
        return JSONResponse({
            "id": f"chatcmpl-{state.requests}", "object": "chat.completion", "model": body.get("model"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish or "stop"}],
            "usage": {"prompt_tokens": n_in, "completion_tokens": n_out, "total_tokens": n_in + n_out},
        })

    def scripted_completion(prompt: str, max_tokens: int, echo: bool) -> tuple[str, dict[str, Any], int]:
        gen = responder().respond([Message("user", prompt)]) if max_tokens > 0 else ""
        toks: list[TokenLogprob] = pseudo_logprobs(prompt + gen)
        n_prompt = sum(1 for t in toks if t.offset < len(prompt))
        kept = toks if echo else toks[n_prompt:]
        logprobs = {"tokens": [t.token for t in kept], "token_logprobs": [t.logprob for t in kept],
                    "top_logprobs": [None if t.top_logprob is None else {t.top_token: t.top_logprob} for t in kept],
                    "text_offset": [t.offset for t in kept]}
        return gen, logprobs, n_prompt

    async def completions(body: dict[str, Any]) -> Response:
        if state.config.chat_only:
            return JSONResponse({"error": {"message": "This is a chat model and not supported in the "
                                           "v1/completions endpoint.", "type": "invalid_request_error"}}, 404)
        prompt = body.get("prompt", "")
        token_ids = scorer is not None and isinstance(prompt, list) and all(type(t) is int for t in prompt)
        if not isinstance(prompt, str) and not token_ids:
            return JSONResponse({"error": {"message": "prompt must be a string (or token ids, with a model)"}}, 400)
        requested = body.get("max_tokens")
        max_tokens = 16 if requested is None else int(requested)
        echo = bool(body.get("echo"))
        if scorer is not None:
            gen, logprobs, n_prompt = await run_in_threadpool(scorer.completion, prompt, max_tokens, echo)
        else:
            gen, logprobs, n_prompt = scripted_completion(prompt, max_tokens, echo)
        n_gen = len(logprobs["tokens"]) - (n_prompt if echo else 0)
        gen, stopped = stop_at(gen, body.get("stop"))
        # a model's greedy continuation runs to max_tokens unless a stop cuts it; a scripted reply is whole
        # unless `truncate` cuts it
        if scorer is None:
            gen, cut_at = cut(gen, requested, "length")
            finish = cut_at or "stop"
        else:
            finish = "stop" if stopped else "length"
        choice = {"index": 0, "text": (prompt if echo and isinstance(prompt, str) else "") + gen,
                  "finish_reason": finish,
                  "logprobs": logprobs if body.get("logprobs") is not None else None}
        return JSONResponse({"id": f"cmpl-{state.requests}", "object": "text_completion", "model": body.get("model"),
                             "choices": [choice],
                             "usage": {"prompt_tokens": n_prompt, "completion_tokens": n_gen,
                                       "total_tokens": n_prompt + n_gen}})

    def tool_uses(calls: tuple[dict[str, Any], ...]) -> list[dict[str, Any]]:
        """Scripted calls as Anthropic's `tool_use` blocks: `input` sent as scripted, else the arguments (a JSON
        text decoded; text that is not JSON sent as a string: a hostile model's input)."""
        blocks = []
        for i, c in enumerate(calls):
            given = c.get("input", c.get("arguments", {}))
            if "input" not in c and isinstance(given, str):
                try:
                    given = json.loads(given)
                except ValueError:
                    pass
            blocks.append({"type": "tool_use", "id": c.get("id", f"toolu_{state.requests}_{i}"),
                           "name": c.get("name", ""), "input": given})
        return blocks

    def block_text(content: Any) -> tuple[str, str | None]:
        """A Messages API content (text or blocks) as text, and the last tool_result's content (None: none)."""
        if isinstance(content, str):
            return content, None
        parts, result = [], None
        for b in content if isinstance(content, list) else []:
            inner = b.get("content") if isinstance(b, dict) else None
            if isinstance(b, dict) and b.get("type") == "tool_result":
                result = inner if isinstance(inner, str) else "".join(
                    x.get("text", "") for x in inner or [] if isinstance(x, dict))
                parts.append(result)
            elif isinstance(b, dict) and isinstance(b.get("text"), str):
                parts.append(b["text"])
        return "".join(parts), result

    async def messages(body: dict[str, Any]) -> Response:
        if "max_tokens" not in body:
            return JSONResponse({"type": "error", "error": {"type": "invalid_request_error",
                                                            "message": "max_tokens: Field required"}}, 400)
        sent = body.get("messages", [])
        read = [(m["role"], *block_text(m["content"])) for m in sent]
        msgs = [Message(role, text) for role, text, _ in read]
        if body.get("system"):
            msgs.insert(0, Message("system", body["system"]))
        content: list[dict[str, Any]] = []
        if state.config.reasoning:
            content.append({"type": "thinking", "thinking": state.config.reasoning, "signature": "x"})
        calls = scripted_turn(sent)
        if calls is not None:
            content += tool_uses(calls)
            n_in, n_out = bill(msgs, json.dumps(content))
            return JSONResponse({
                "id": f"msg_{state.requests}", "type": "message", "role": "assistant", "model": body.get("model"),
                "content": content, "stop_reason": "tool_use", "stop_sequence": None,
                "usage": {"input_tokens": n_in, "output_tokens": n_out},
            })
        try:
            if state.config.answer_with_result and read and read[-1][2] is not None:
                text = f"result: {read[-1][2]}"
            else:
                text = responder().respond(msgs)
        except KeyError as e:
            return JSONResponse({"type": "error", "error": {"type": "invalid_request_error",
                                                            "message": str(e.args[0])}}, 400)
        text, finish = cut(text, body.get("max_tokens"), "max_tokens")
        content.append({"type": "text", "text": text})
        n_in, n_out = bill(msgs, text)
        return JSONResponse({
            "id": f"msg_{state.requests}", "type": "message", "role": "assistant", "model": body.get("model"),
            "content": content, "stop_reason": finish or "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": n_in, "output_tokens": n_out},
        })

    async def models(_: dict[str, Any]) -> Response:
        entry: dict[str, Any] = {"id": "proctor-test", "object": "model"}
        if state.config.max_model_len is not None:
            entry["max_model_len"] = state.config.max_model_len
        return JSONResponse({"object": "list", "data": [entry]})

    async def stats(_: Request) -> Response:
        return JSONResponse(state.snapshot())

    async def admin_config(request: Request) -> Response:
        nonlocal scorer
        try:
            new = _merge(state.config, await request.json())
        except (ValueError, TypeError) as e:
            return JSONResponse({"error": {"message": str(e)}}, 400)
        if new.model_dir and new.model_dir != state.config.model_dir:
            scorer = await run_in_threadpool(_HFScorer, new.model_dir)
        if scorer is not None:
            scorer.vllm_offsets = new.vllm_offsets
        state.reset(new)
        return JSONResponse(state.snapshot())

    async def admin_reset(_: Request) -> Response:
        state.reset(state.config)
        return JSONResponse(state.snapshot())

    def count(path: str) -> None:
        state.requests += 1
        state.by_path[path] += 1

    batches = batch_routes(batch_store, lambda: state.config, chat, messages, authorized, count)
    return Starlette(routes=[
        *batches,
        Route("/v1/chat/completions", wrap(chat), methods=["POST"]),
        Route("/v1/completions", wrap(completions), methods=["POST"]),
        Route("/v1/messages", wrap(messages), methods=["POST"]),
        Route("/v1/models", wrap(models), methods=["GET"]),
        Route("/stats", stats, methods=["GET"]),
        Route("/admin/config", admin_config, methods=["POST"]),
        Route("/admin/reset", admin_reset, methods=["POST"]),
    ])


# what each ServerConfig setting does, for `--help` (tests/testing/test_server.py checks every field has a line)
SETTINGS: dict[str, str] = {
    "responder": "the scripted rule that answers (below)",
    "model_dir": "Hugging Face model directory for completions log-probs (and greedy completions)",
    "latency": "seconds added to every answered request",
    "fault_rate": "probability that a request fails",
    "faults": f"the fault kinds drawn from, uniformly: {', '.join(FAULT_KINDS)}",
    "max_faults": "inject at most this many faults (then answer normally)",
    "retry_after": "seconds, sent in 429 responses",
    "hang_s": "how long a hanging request sleeps",
    "seed": "seed of the fault draws",
    "chat_only": "/v1/completions answers 404, like a chat-only deployment",
    "reasoning": "text sent as reasoning_content (OpenAI) / a thinking block (Anthropic)",
    "api_key": "when set, requests must carry it (Bearer or x-api-key), else 401",
    "poison": "requests whose body contains this text always fail with 500",
    "capacity": "more requests than this in flight: 429 with Retry-After (a rate limit)",
    "truncate": "honour max_tokens (a word is a token): cut answers, finish_reason length/max_tokens",
    "batch_polls": "a batch (OpenAI or Anthropic) ends after this many status requests",
    "batch_expire": "batches end expired: only their first half answered",
    "max_model_len": "reported by GET /v1/models, as vLLM does",
    "vllm_offsets": "text_offset counts special tokens' text (BOS `<s>`), as vLLM does",
    "usage": f"what chat usage counts as a token: {', '.join(USAGE_COUNTS)}",
    "tool_replies": 'tool calls per turn (chat and messages): turn k answers with tool_replies[k], calls '
                    '{"name", "arguments", "id"?, "input"? (Anthropic\'s, as is)}',
    "tool_repeat": "past the script, the last turn's tool calls again, forever (a model that never stops)",
    "answer_with_result": 'past the script, after a tool message (or tool_result): answer "result: CONTENT"',
}


def help_epilog() -> str:
    """The responders (from the scripted-rule registry) and the settings (from ServerConfig), one line each."""
    def rows(items: dict[str, str]) -> list[str]:
        width = max(len(k) for k in items)
        return [f"  {k:<{width}}  {v}" for k, v in items.items()]

    defaults = asdict(ServerConfig())
    settings = {f"{f.name} (default {defaults[f.name]!r})" if f.name not in ("faults", "tool_replies") else f.name:
                SETTINGS.get(f.name, "") for f in fields(ServerConfig)}
    return "\n".join(["responders (--config '{\"responder\": \"RULE\"}'):", *rows(RULES),
                      "options after a comma (e.g. random,seed=3):", *rows(RULE_OPTIONS),
                      "settings (--config JSON keys):", *rows(settings)])


def _merge(config: ServerConfig, changes: dict[str, Any]) -> ServerConfig:
    return ServerConfig.from_dict({**asdict(config), **changes})


def main(argv: list[str] | None = None) -> None:
    """Server-process entry point: serve on an inherited, already-listening socket."""
    import uvicorn

    ap = argparse.ArgumentParser(prog="python -m proctor.testing", description="proctor's local OpenAI/Anthropic-compatible test server",
                                 epilog=help_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fd", type=int, help="inherited listening socket")
    ap.add_argument("--port", type=int, default=8000, help="port to bind on 127.0.0.1 when no --fd")
    ap.add_argument("--config", default="{}", help="ServerConfig fields as JSON")
    args = ap.parse_args(argv)
    app = build_app(ServerConfig.from_dict(json.loads(args.config)))
    if args.fd is not None:
        sock = socket.socket(fileno=args.fd)
    else:
        sock = socket.create_server(("127.0.0.1", args.port))
        print(f"serving on http://127.0.0.1:{sock.getsockname()[1]}/v1", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                           backlog=2048, timeout_keep_alive=60))
    asyncio.run(server.serve(sockets=[sock]))


# -- the parent's handle ---------------------------------------------------------------------------------


class LocalServer:
    """A running server process; `base_url` is what an OpenAI client wants (with /v1)."""

    def __init__(self, port: int, proc: subprocess.Popen[bytes]) -> None:
        self.port = port
        self.proc = proc
        self.url = f"http://127.0.0.1:{port}"
        self.base_url = f"{self.url}/v1"

    def stats(self) -> dict[str, Any]:
        """The server's counters (see `_State.snapshot`)."""
        data: dict[str, Any] = httpx.get(f"{self.url}/stats", timeout=10).json()
        return data

    def configure(self, **changes: Any) -> dict[str, Any]:
        """Change settings (ServerConfig fields) and reset the counters."""
        r = httpx.post(f"{self.url}/admin/config", json=changes, timeout=120)
        if r.status_code != 200:
            raise ValueError(r.json()["error"]["message"])
        data: dict[str, Any] = r.json()
        return data

    def reset(self) -> None:
        httpx.post(f"{self.url}/admin/reset", timeout=10).raise_for_status()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)


@contextmanager
def serve(config: ServerConfig | None = None, *, ready_timeout: float = 120.0, **settings: Any) -> Iterator[LocalServer]:
    """Start a server process on a free 127.0.0.1 port, wait until it answers, kill it on exit."""
    cfg = config or ServerConfig()
    if settings:
        cfg = _merge(cfg, settings)
    sock = socket.create_server(("127.0.0.1", 0), backlog=2048)
    port = sock.getsockname()[1]
    pkg_root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [pkg_root, os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen(
        [sys.executable, "-c", "from proctor.testing.server import main; main()", "--fd", str(sock.fileno()), "--config",
         json.dumps(asdict(cfg))],
        pass_fds=[sock.fileno()], env=env, stdin=subprocess.DEVNULL,
    )
    sock.close()  # the child holds its own copy
    srv = LocalServer(port, proc)
    try:
        deadline = time.monotonic() + ready_timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"test server exited with code {proc.returncode} before it was ready")
            try:
                if httpx.get(f"{srv.url}/stats", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"test server not ready after {ready_timeout:g}s")
            time.sleep(0.05)
        yield srv
    finally:
        srv.close()


if __name__ == "__main__":
    main()
