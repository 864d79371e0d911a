"""`openai:<model>` — any OpenAI-compatible server (vLLM, SGLang, llama.cpp, Ollama, hosted APIs).

Generation goes through `/v1/chat/completions` (or `/v1/completions` with `chat=False`, the messages'
contents joined by blank lines). Log-likelihoods go through `/v1/completions` with `echo=true,
logprobs=1, max_tokens=0`. The continuation's tokens are found by tokens, never by the server's character
offsets (docs/backends.md):
* by default, the echo of `context + continuation` is compared with the echo of `context` alone (one extra
  request per distinct context of a batch): the continuation is the full echo from the first token where
  they differ (`proctor.models._echo.continuation_by_tokens`), the `hf:` backend's rule;
* with `tokenizer=<path or hub id>` (or OPENAI_TOKENIZER: the served model's tokenizer, loaded with
  transformers), the split is computed locally exactly as `hf:` does and the prompt is sent as token ids
  (one request each); `probe` checks that this tokenizer counts tokens as the server does.
Chat-only endpoints cannot echo prompt log-probs: `await model.probe({Capability.LOGLIKELIHOOD})` says so
before a run.

Several base URLs may be given (a list, or comma-separated): each request goes to the least busy one,
so a fleet of servers is used without a scheduler of our own. The API key comes from `api_key=` or
OPENAI_API_KEY and is never logged or described.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar, Unpack

from ..core.model import (
    Capability,
    GenerateRequest,
    Generation,
    GenerationSpec,
    Loglikelihood,
    LoglikelihoodRequest,
    SentPrompt,
    chat_messages,
    completion_text,
    with_system,
)
from ..util.errors import CapabilityError, ProctorError
from ._echo import TokenLogprob, continuation_by_tokens, prompt_tokens
from ._http import (
    ClientKeywords,
    HTTPModel,
    RequestFailed,
    api_key,
    endpoint_url,
    generate_all,
    get_once,
    run_all,
)
from .openai_tools import tools_body, wire_message, wire_names
from .replies import chat_generation, completion_generation

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAIModel(HTTPModel):
    """Chat or text completions over HTTP, with prompt log-probs where the server echoes them."""

    capabilities = frozenset({Capability.GENERATE, Capability.LOGLIKELIHOOD, Capability.TOOLS})
    text_completion = True  # a completion request goes to /v1/completions (batch models: chat only)
    prefix = "openai"
    base_url_env = "OPENAI_BASE_URL"
    default_base_url = DEFAULT_BASE_URL
    api_key_env = "OPENAI_API_KEY"
    client_defaults: ClassVar[ClientKeywords] = {"concurrency": 32, "timeout": 120.0, "max_retries": 5,
                                                 "backoff_base": 0.5, "seed": 0}

    def __init__(self, model: str, base_url: str | Sequence[str] | None = None, *, api_key: str | None = None,
                 chat: bool = True, echo_max_tokens: int = 0, tokenizer: str | None = None,
                 **client: Unpack[ClientKeywords]) -> None:
        self.chat = chat
        self.echo_max_tokens = echo_max_tokens
        self.context_length: int | None = None  # learnt by probe() from GET /models (max_model_len)
        self.tokenizer_path = tokenizer or os.environ.get("OPENAI_TOKENIZER") or None
        self._splitter = TokenSplitter(self.tokenizer_path) if self.tokenizer_path is not None else None
        super().__init__(model, base_url, api_key=api_key, **client)

    @property
    def has_tokenizer(self) -> bool:
        """Whether `count_prompt_tokens` counts with the served model's tokenizer (`tokenizer=DIR`)."""
        return self._splitter is not None

    def count_prompt_tokens(self, text: str) -> int:
        """Tokens of `text` by the served model's tokenizer (`tokenizer=DIR`)."""
        if self._splitter is None:
            raise NotImplementedError(f"{self.name}: no tokenizer=DIR, nothing to count with")
        return len(self._splitter.encode(text))

    def _headers(self, explicit_key: str | None) -> dict[str, str]:
        key = _key(explicit_key)
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _described_settings(self) -> dict[str, Any]:
        return {"chat": self.chat} | ({"tokenizer": self.tokenizer_path} if self.tokenizer_path else {})

    async def probe(self, needed: Iterable[Capability]) -> None:
        """Raise CapabilityError, before a run, when the server cannot do what it needs; learn the
        context window (`context_length`) when the server reports one."""
        needed = set(needed)
        await super().probe(needed)
        if Capability.GENERATE in needed:
            self.context_length = await self._served_context_length()
        if Capability.LOGLIKELIHOOD in needed:
            prompt = "Probe: the quick brown fox — naïve café 東京, 1234\n"
            try:
                data, _ = await self.http.post("/completions", self._echo_body(prompt))
                tokens = prompt_tokens(data["choices"][0], data.get("usage"))
            except RequestFailed as e:
                raise CapabilityError(
                    f"{self.name} cannot score log-likelihoods: its completions endpoint refused an echo+logprobs "
                    f"request ({e}). Chat-only endpoints do not return prompt log-probs; use a server with "
                    "/v1/completions echo support (vLLM, SGLang; not llama.cpp's llama-server) or an hf: model"
                ) from None
            except (KeyError, IndexError, TypeError, ValueError, AttributeError):
                tokens = []
            if len(tokens) < 3 or not any(t.logprob is not None for t in tokens):  # the prompt is ~20 tokens
                raise CapabilityError(
                    f"{self.name} cannot score log-likelihoods: the server answered /v1/completions but did not "
                    "echo the prompt's token log-probs (echo=true, logprobs=1)"
                )
            if self._splitter is not None and len(tokens) != len(self._splitter.encode(prompt)):
                raise CapabilityError(
                    f"{self.name}: tokenizer={self.tokenizer_path!r} does not tokenize like the served model "
                    f"({len(self._splitter.encode(prompt))} tokens here, {len(tokens)} echoed for the same text)"
                )

    async def _served_context_length(self) -> int | None:
        """`max_model_len` of this model in the server's GET /models (vLLM, SGLang); None when not reported."""
        try:
            status, content = await get_once(endpoint_url(self._urls[0], "/models"), headers=self._request_headers)
            data = json.loads(content).get("data", []) if status == 200 else []
        except (RequestFailed, ValueError, AttributeError, RecursionError):
            return None  # best effort: the server refuses an over-long request itself
        for entry in data if isinstance(data, list) else []:
            if isinstance(entry, dict) and entry.get("id") in (self.model, None):
                value = entry.get("max_model_len")
                return value if isinstance(value, int) and value > 0 else None
        return None

    # -- generation ---------------------------------------------------------------------------------

    async def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        return await generate_all(requests, self._generate_one)

    def sent_prompt(self, r: GenerateRequest) -> SentPrompt:
        return openai_prompt(r, self.chat)

    def chat_body(self, r: GenerateRequest) -> dict[str, Any]:
        """The `/v1/chat/completions` request for `r` (also what a Batch API line carries): its tools, their
        names mapped to what OpenAI allows (`openai_tools`), and its tool messages when it has them."""
        body = sampling_body(self.model, r.settings, chat=True)
        names = wire_names(r.tools)
        tooled = r.tools or any(m.tool_calls or m.tool_call_id is not None for m in r.messages)
        body["messages"] = ([wire_message(m, names) for m in with_system(r)] if tooled
                            else chat_messages(with_system(r)))
        body |= tools_body(r.tools, r.tool_choice, names)
        return merge_extra_body(body, r.settings.extra_body)

    async def _generate_one(self, r: GenerateRequest) -> Generation:
        prompt = self.sent_prompt(r)
        if not isinstance(prompt, str):
            data, latency = await self.http.post("/chat/completions", self.chat_body(r))
            return chat_generation(data, latency, wire_names(r.tools))  # validated: a bad shape is an error record
        if r.tools:
            return Generation(error=f"{self.name}: tools are offered through chat completions, not a text prompt")
        body = sampling_body(self.model, r.settings, chat=False) | {"prompt": prompt}
        data, latency = await self.http.post("/completions", merge_extra_body(body, r.settings.extra_body))
        return completion_generation(data, latency)

    # -- log-likelihood -----------------------------------------------------------------------------

    def _echo_body(self, prompt: str | list[int]) -> dict[str, Any]:
        return {"model": self.model, "prompt": prompt, "echo": True, "logprobs": 1,
                "max_tokens": self.echo_max_tokens, "temperature": 0.0}

    async def _echo(self, prompt: str | list[int]) -> list[TokenLogprob]:
        """The prompt's echoed tokens with their log-probs (generated tokens dropped)."""
        data, _ = await self.http.post("/completions", self._echo_body(prompt))
        return prompt_tokens(data["choices"][0], data.get("usage"))

    async def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        if self._splitter is not None:
            return await run_all(requests, self._loglikelihood_ids, lambda msg: Loglikelihood(error=msg))
        contexts: dict[str, asyncio.Task[list[TokenLogprob]]] = {}

        async def one(r: LoglikelihoodRequest) -> Loglikelihood:
            if r.context not in contexts:
                echo = self._echo(r.context) if r.context else self._special_prefix()
                contexts[r.context] = asyncio.ensure_future(echo)
            full, ctx = await asyncio.gather(self._echo(r.context + r.continuation), contexts[r.context],
                                             return_exceptions=True)
            for outcome in (full, ctx):
                if isinstance(outcome, BaseException):
                    raise outcome
            assert isinstance(full, list) and isinstance(ctx, list)
            return continuation_by_tokens(ctx, full)

        return await run_all(requests, one, lambda msg: Loglikelihood(error=msg))

    async def _special_prefix(self) -> list[TokenLogprob]:
        """The tokens the server puts before any text (e.g. BOS): the common prefix of two texts' echoes.

        Stands in for the echo of an empty context, which servers refuse (vLLM: 400, empty prompt).
        """
        a, b = await asyncio.gather(self._echo("A."), self._echo("0,"))
        n = 0
        while n < min(len(a), len(b)) and a[n].token == b[n].token:
            n += 1
        return a[:n]

    async def _loglikelihood_ids(self, r: LoglikelihoodRequest) -> Loglikelihood:
        assert self._splitter is not None
        try:
            ids, start = self._splitter.split(r.context, r.continuation)
        except ProctorError as e:
            return Loglikelihood(error=str(e))
        if start == len(ids):
            return Loglikelihood(error="the continuation adds no token to the context: nothing to score")
        tokens = await self._echo(ids)
        if len(tokens) != len(ids):
            return Loglikelihood(error=f"the server echoed {len(tokens)} tokens for a prompt of {len(ids)} token ids "
                                       f"(does tokenizer={self.tokenizer_path!r} match the served model?)")
        return continuation_by_tokens(tokens[:start], tokens)


class TokenSplitter:
    """The `hf:` backend's token split, from the served model's tokenizer (transformers, loaded lazily).

    The sequence is `prefix + tokenize(context + continuation)` (prefix: the special tokens the tokenizer
    puts before text, e.g. BOS); the continuation starts where it leaves `prefix + tokenize(context)`;
    with nothing before it, BOS (else EOS) is put in front to condition on.
    """

    def __init__(self, path: str) -> None:
        try:
            from transformers import AutoTokenizer
        except ImportError:
            raise ProctorError("tokenizer= needs transformers: pip install 'proctor-eval[hf]'") from None
        try:
            self.tok: Any = AutoTokenizer.from_pretrained(path)
        except (OSError, ValueError) as e:
            raise ProctorError(f"cannot load the tokenizer {path!r}: {e}") from None
        plain = self.tok("a b", add_special_tokens=False)["input_ids"]
        full = self.tok("a b", add_special_tokens=True)["input_ids"]
        self.prefix: list[int] = next(
            (list(full[:k]) for k in range(len(full) - len(plain) + 1) if full[k : k + len(plain)] == plain), [])

    def encode(self, text: str) -> list[int]:
        """`prefix + tokenize(text)`."""
        return self.prefix + list(self.tok(text, add_special_tokens=False)["input_ids"])

    def split(self, context: str, continuation: str) -> tuple[list[int], int]:
        """(token ids to send, index of the continuation's first token)."""
        ctx, seq = self.encode(context), self.encode(context + continuation)
        p = 0
        while p < min(len(ctx), len(seq)) and ctx[p] == seq[p]:
            p += 1
        if p == 0 and seq:
            start = self.tok.bos_token_id if self.tok.bos_token_id is not None else self.tok.eos_token_id
            if start is None:
                raise ProctorError("an empty context needs a BOS or EOS token, and the tokenizer has neither")
            seq, p = [int(start), *seq], 1
        return seq, p


def sampling_body(model: str, s: GenerationSpec, *, chat: bool = True) -> dict[str, Any]:
    """Model and sampling fields of a chat or text completions request, in the OpenAI wire format.

    `reasoning_effort` is OpenAI's (also vLLM's and SGLang's for gpt-oss); `enable_thinking` becomes
    `chat_template_kwargs` (vLLM / SGLang, e.g. Qwen3); `top_k` and `min_p` are vLLM / SGLang extensions."""
    body: dict[str, Any] = {"model": model}
    if s.temperature is not None:  # None: the server's default
        body["temperature"] = s.temperature
    optional = {"top_p": s.top_p, "max_tokens": s.max_tokens, "seed": s.seed, "top_k": s.top_k, "min_p": s.min_p,
                "presence_penalty": s.presence_penalty, "frequency_penalty": s.frequency_penalty}
    body |= {k: v for k, v in optional.items() if v is not None}
    if s.stop:
        body["stop"] = list(s.stop)
    if chat and s.reasoning_effort is not None:
        body["reasoning_effort"] = s.reasoning_effort
    if chat and s.enable_thinking is not None:
        body["chat_template_kwargs"] = {"enable_thinking": s.enable_thinking}
    return body


def openai_prompt(r: GenerateRequest, chat: bool) -> SentPrompt:
    """What an OpenAI-compatible client sends for `r`: the text of a completion request, or of any request when
    the endpoint is not chat (`chat=False`), to /v1/completions; else the messages to /v1/chat/completions."""
    return chat_messages(with_system(r)) if chat and not r.completion else completion_text(r)


def merge_extra_body(body: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """`body` with `extra` merged in; nested objects are merged key by key, `extra` wins on conflicts."""
    out = dict(body)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge_extra_body(dict(out[key]), value)
        else:
            out[key] = value
    return out


def parse_chat_completion(data: dict[str, Any], latency: float | None = None) -> Generation:
    """A Generation from a chat completion response (a batch output line's body); `reasoning_content`
    (vLLM, SGLang, DeepSeek) or `reasoning` is kept apart from the answer. `InvalidReply` (a ValueError)
    when the shape is not one."""
    return chat_generation(data, float("nan") if latency is None else latency)


def _key(explicit: str | None) -> str | None:
    key = api_key(explicit, "OPENAI_API_KEY")
    if key is not None and not key.isprintable():
        raise ProctorError("the OpenAI API key contains unprintable characters")
    return key
