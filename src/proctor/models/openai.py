"""`openai:<model>` — any OpenAI-compatible server (vLLM, SGLang, llama.cpp, Ollama, hosted APIs).

Generation goes through `/v1/chat/completions` (or `/v1/completions` with `chat=False`, the messages'
contents joined by blank lines). Log-likelihoods go through `/v1/completions` with `echo=true,
logprobs=1, max_tokens=0` on context + continuation; the continuation's tokens are those whose character
span overlaps the continuation (see `proctor.models._echo.continuation_score`). Chat-only endpoints
cannot echo prompt log-probs: `await model.probe({Capability.LOGLIKELIHOOD})` says so before a run.

Several base URLs may be given (a list, or comma-separated): each request goes to the least busy one,
so a fleet of servers is used without a scheduler of our own. The API key comes from `api_key=` or
OPENAI_API_KEY and is never logged or described.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import CapabilityError, ProctorError
from ._echo import continuation_score, parse_echo_logprobs
from ._http import HTTPModel, RequestFailed, api_key, run_all
from .base import (
    Capability,
    GenerateRequest,
    Generation,
    GenerationSettings,
    Loglikelihood,
    LoglikelihoodRequest,
    Message,
)

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class OpenAIModel(HTTPModel):
    """Chat or text completions over HTTP, with prompt log-probs where the server echoes them."""

    capabilities = frozenset({Capability.GENERATE, Capability.LOGLIKELIHOOD})
    prefix = "openai"
    base_url_env = "OPENAI_BASE_URL"
    default_base_url = DEFAULT_BASE_URL

    def __init__(
        self,
        model: str,
        base_url: str | Sequence[str] | None = None,
        *,
        api_key: str | None = None,
        concurrency: int = 32,
        timeout: float = 120.0,
        max_retries: int = 5,
        backoff_base: float = 0.5,
        chat: bool = True,
        echo_max_tokens: int = 0,
        seed: int = 0,
        transport: str = "auto",
        **_: Any,
    ) -> None:
        self.chat = chat
        self.echo_max_tokens = echo_max_tokens
        self.context_length: int | None = None  # learnt by probe() from GET /models (max_model_len)
        self._api_key = api_key
        super().__init__(model, base_url, api_key=api_key, concurrency=concurrency, timeout=timeout,
                         max_retries=max_retries, backoff_base=backoff_base, seed=seed, transport=transport)

    def _headers(self, explicit_key: str | None) -> dict[str, str]:
        key = _key(explicit_key)
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _described_settings(self) -> dict[str, Any]:
        return {"chat": self.chat}

    async def probe(self, needed: Iterable[Capability]) -> None:
        """Raise CapabilityError, before a run, when the server cannot do what it needs; learn the
        context window (`context_length`) when the server reports one."""
        needed = set(needed)
        await super().probe(needed)
        if Capability.GENERATE in needed:
            self.context_length = await self._served_context_length()
        if Capability.LOGLIKELIHOOD in needed:
            prompt = "Probe: the quick brown fox"
            try:
                data, _ = await self.http.post("/completions", self._echo_body(prompt))
                tokens = parse_echo_logprobs(data["choices"][0]["logprobs"])
            except RequestFailed as e:
                raise CapabilityError(
                    f"{self.name} cannot score log-likelihoods: its completions endpoint refused an echo+logprobs "
                    f"request ({e}). Chat-only endpoints do not return prompt log-probs; use a server with "
                    "/v1/completions echo support (vLLM, SGLang, llama.cpp) or an hf: model"
                ) from None
            except (KeyError, IndexError, TypeError, ValueError, AttributeError):
                tokens = []
            if not any(t.offset < len(prompt) and t.logprob is not None for t in tokens):
                raise CapabilityError(
                    f"{self.name} cannot score log-likelihoods: the server answered /v1/completions but did not "
                    "echo the prompt's token log-probs (echo=true, logprobs=1)"
                )

    async def _served_context_length(self) -> int | None:
        """`max_model_len` of this model in the server's GET /models (vLLM, SGLang); None when not reported."""
        import httpx

        try:
            async with httpx.AsyncClient(headers=self._headers(self._api_key), timeout=10.0) as client:
                response = await client.get(self.base_urls[0].rstrip("/") + "/models")
                data = response.json().get("data", []) if response.status_code == 200 else []
        except (httpx.HTTPError, ValueError, AttributeError):
            return None  # best effort: the server refuses an over-long request itself
        for entry in data if isinstance(data, list) else []:
            if isinstance(entry, dict) and entry.get("id") in (self.model, None):
                value = entry.get("max_model_len")
                return value if isinstance(value, int) and value > 0 else None
        return None

    # -- generation ---------------------------------------------------------------------------------

    async def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        return await run_all(requests, self._generate_one, lambda msg: Generation(error=msg))

    def _settings(self, r: GenerateRequest) -> dict[str, Any]:
        return sampling_body(self.model, r.settings, chat=self.chat)

    def chat_body(self, r: GenerateRequest) -> dict[str, Any]:
        """The `/v1/chat/completions` request for `r` (also what a Batch API line carries)."""
        body = self._settings(r)
        body["messages"] = [{"role": m.role, "content": m.content} for m in with_system(r)]
        return merge_extra_body(body, r.settings.extra_body)

    async def _generate_one(self, r: GenerateRequest) -> Generation:
        if self.chat:
            data, latency = await self.http.post("/chat/completions", self.chat_body(r))
            return parse_chat_completion(data, latency)
        body = self._settings(r)
        body["prompt"] = "\n\n".join(m.content for m in with_system(r))
        data, latency = await self.http.post("/completions", merge_extra_body(body, r.settings.extra_body))
        choice = data["choices"][0]
        usage = data.get("usage") or {}
        return Generation(text=choice.get("text") or "", finish_reason=choice.get("finish_reason"),
                          input_tokens=usage.get("prompt_tokens"), output_tokens=usage.get("completion_tokens"),
                          latency_s=latency)

    # -- log-likelihood -----------------------------------------------------------------------------

    def _echo_body(self, prompt: str) -> dict[str, Any]:
        return {"model": self.model, "prompt": prompt, "echo": True, "logprobs": 1,
                "max_tokens": self.echo_max_tokens, "temperature": 0.0}

    async def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        return await run_all(requests, self._loglikelihood_one, lambda msg: Loglikelihood(error=msg))

    async def _loglikelihood_one(self, r: LoglikelihoodRequest) -> Loglikelihood:
        data, _ = await self.http.post("/completions", self._echo_body(r.context + r.continuation))
        tokens = parse_echo_logprobs(data["choices"][0]["logprobs"])
        return continuation_score(r.context, r.continuation, tokens)


def sampling_body(model: str, s: GenerationSettings, *, chat: bool = True) -> dict[str, Any]:
    """Model and sampling fields of a chat or text completions request, in the OpenAI wire format.

    `reasoning_effort` is OpenAI's (also vLLM's and SGLang's for gpt-oss); `enable_thinking` becomes
    `chat_template_kwargs` (vLLM / SGLang, e.g. Qwen3); `top_k` and `min_p` are vLLM / SGLang extensions."""
    body: dict[str, Any] = {"model": model, "temperature": s.temperature}
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


def with_system(r: GenerateRequest) -> list[Message]:
    """The request's messages, after the settings' system prompt when one is set."""
    system = r.settings.system
    return ([Message("system", system)] if system else []) + list(r.messages)


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
    """A Generation from a chat completion response; `reasoning_content` (vLLM, SGLang, DeepSeek) or
    `reasoning` (OpenRouter, newer vLLM) is kept apart from the answer."""
    choice = data["choices"][0]
    msg = choice["message"]
    reasoning = msg.get("reasoning_content") or msg.get("reasoning")
    usage = data.get("usage") or {}
    return Generation(
        text=msg.get("content") or "",
        finish_reason=choice.get("finish_reason"),
        input_tokens=usage.get("prompt_tokens"),
        output_tokens=usage.get("completion_tokens"),
        reasoning=reasoning if isinstance(reasoning, str) and reasoning else None,
        latency_s=latency,
    )


def _key(explicit: str | None) -> str | None:
    key = api_key(explicit, "OPENAI_API_KEY")
    if key is not None and not key.isprintable():
        raise ProctorError("the OpenAI API key contains unprintable characters")
    return key
