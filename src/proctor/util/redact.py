"""One redaction rule for everything proctor logs, stores or shows: secrets never leave in a URL or a message.

`redact_url` hides a URL's userinfo and the value of every query parameter but a few known harmless ones
(`api-version`, `model`…). `redact_text` applies it to every URL inside free text (error messages,
server replies) and hides `Bearer …` credentials and `sk-…`-style keys. `redact` walks JSON-like data (a
manifest, a record). `split_credentials` takes a key out of a base URL's userinfo so that it is sent as the
credential instead of being silently dropped. `register_secret` adds a configured key's literal value,
whatever its shape, to what `redact_text` and `redact_secrets` mask (a server may echo it back).
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Sequence
from typing import Any

from .errors import ProctorError

MASK = "***"
# query parameters whose values are known not to be credentials; every other query value is hidden (a
# signed URL's `X-Amz-Signature`, `?jwt=`, `?apiToken=`… are secrets whatever their name)
HARMLESS_PARAMS = frozenset({
    "api-version", "api_version", "apiversion", "version", "v", "model", "deployment", "deployment-id", "format",
    "alt", "stream", "beta", "region", "location", "lang", "language", "locale", "debug", "timeout",
})
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>\]\[(){}]+")
_BEARER = re.compile(r"(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}")
_USERINFO = re.compile(r"[^/@\s]+@")  # `user:KEY@` where no `scheme://` says where the host starts
_KEYLIKE = re.compile(r"\b(sk|pk|rk|sess)-[A-Za-z0-9_-]{16,}")
MIN_SECRET = 6  # shorter configured values are not masked: they would hide ordinary words
_secrets: set[str] = set()


def register_secret(value: str | None) -> None:
    """Mask `value` (a configured API key) wherever proctor writes or prints text, from now on."""
    if value and len(value) >= MIN_SECRET:
        _secrets.add(value)


def redact_secrets(text: str) -> str:
    """`text` with every registered secret's literal value masked (nothing else changed)."""
    for secret in _secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def _is_secret(name: str) -> bool:
    """A query parameter's value is a secret unless its name is known harmless (`api-version`, `model`…)."""
    return name.lower() not in HARMLESS_PARAMS


def redact_url(url: str) -> str:
    """`url` with its userinfo and every query value but the harmless ones (`HARMLESS_PARAMS`) replaced by `***`."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return _KEYLIKE.sub(MASK, _USERINFO.sub(MASK + "@", url))
    if not parts.netloc and "@" in url:  # no `scheme://` (`http//user:KEY@host`): userinfo is wherever an @ is
        return _KEYLIKE.sub(MASK, _USERINFO.sub(MASK + "@", url))
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rpartition('@')[2]}"
    netloc = re.sub(r";.*", ";" + MASK, netloc)  # `host:port;sess=TOKEN`: a `;param` before the path
    query = parts.query
    if query:
        pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
        if any(_is_secret(k) for k, _ in pairs):
            query = "&".join(_redact_pair(k, v) for k, v in pairs)
    # a fragment is never sent (OAuth implicit flows put tokens there); `;params` may carry a key (`;jsessionid=`)
    fragment = MASK if parts.fragment else ""
    path = re.sub(r";[^/]*", ";" + MASK, parts.path)
    return urllib.parse.urlunsplit((parts.scheme, netloc, path, query, fragment))


def _redact_pair(name: str, value: str) -> str:
    """One query pair redacted; a bare `?TOKEN` (no value) is itself the secret."""
    if not _is_secret(name):
        return f"{urllib.parse.quote(name, safe='-_.~')}={urllib.parse.quote(value, safe='-_.~/')}"
    return f"{urllib.parse.quote(name, safe='-_.~')}={MASK}" if value else MASK


def url_secrets(url: str) -> list[str]:
    """The literal values `redact_url` would hide in `url`'s query (`?key=…`, `?jwt=…`) and path parameters
    (`;sess=…`): to register, so a server that echoes its request line (a relative path, no scheme) cannot
    put them into a message or a record."""
    try:
        parts = urllib.parse.urlsplit(url)
        pairs = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    except ValueError:
        return []
    params = [p.partition("=") for p in re.findall(r";([^/;]*)", parts.path)]  # `;sess=TOKEN`, as redact_url hides
    host_params = parts.netloc.rpartition("@")[2].partition(";")[2]  # `host:port;sess=TOKEN`: all of it is hidden
    return ([v or k for k, v in pairs if _is_secret(k) and (v or k)] + [v or k for k, _, v in params if v or k]
            + ([host_params] if host_params else []))


def redact_about(text: str, url: str) -> str:
    """`text` (a message about `url`, which may quote a piece of it: a port, a host) with every value `redact_url`
    hides in `url` masked: its userinfo, query values and `;params`."""
    try:
        userinfo = urllib.parse.urlsplit(url).netloc.rpartition("@")[0]
    except ValueError:
        userinfo = ""
    user, _, password = userinfo.partition(":")
    for secret in sorted({*url_secrets(url), *([password or user] if userinfo else [])}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return redact_text(text)


def redact_text(text: str) -> str:
    """Free text with every URL redacted and bearer tokens, `sk-…` keys and registered secrets masked."""
    text = redact_secrets(text)
    if "://" in text:
        text = _URL.sub(lambda m: redact_url(m.group(0)), text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", text)
    return _KEYLIKE.sub(MASK, text)


_SECRET_ARG = re.compile(r"(?i)(^|[_-])(api[_-]?key|key|token|secret|password|passwd|pass|auth|authorization|"
                         r"credentials?|signature|sig|bearer|jwt|session|cookie)$")  # the name's last word


def redact_args(text: str) -> str:
    """lm-eval's `model_args` (`pretrained=x,token=hf_…,base_url=URL`): the value of every argument whose name
    says secret (`token`, `api_key`, `password`…) masked, and each other value redacted as free text."""
    def one(arg: str) -> str:
        name, eq, _ = arg.partition("=")
        return f"{name}={MASK}" if eq and _SECRET_ARG.search(name) else redact_text(arg)
    return ",".join(one(arg) for arg in text.split(","))


def redact(value: Any) -> Any:
    """JSON-like data (dicts, lists, strings) with `redact_text` applied to every string, keys included."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {redact(k) if isinstance(k, str) else k: redact(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v) for v in value]
    return value


def split_credentials(urls: Sequence[str]) -> tuple[list[str], str | None]:
    """Base URLs without userinfo, and the key their userinfo carried (`http://KEY@h` or `http://user:KEY@h`).

    Several URLs carrying different keys are refused: one backend sends one credential.
    """
    clean: list[str] = []
    keys: set[str] = set()
    for url in urls:
        parts = urllib.parse.urlsplit(url)
        if "@" not in parts.netloc:
            clean.append(url)
            continue
        userinfo, _, host = parts.netloc.rpartition("@")
        user, _, password = userinfo.partition(":")
        key = urllib.parse.unquote(password or user)
        if key:
            keys.add(key)
        clean.append(urllib.parse.urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment)))
    if len(keys) > 1:
        raise ProctorError("the base URLs carry different keys in their user info; one model sends one key: "
                           "pass it once with the API key option or environment variable")
    return clean, next(iter(keys), None)


__all__ = ["MASK", "redact", "redact_about", "redact_secrets", "redact_text", "redact_url", "register_secret",
           "split_credentials", "url_secrets"]
