"""Item 7 of issue 13: secrets are scrubbed from every URL before it is logged, stored or shown."""

from __future__ import annotations

import pytest

from proctor.util.errors import ProctorError
from proctor.util.redact import redact, redact_text, redact_url, split_credentials


@pytest.mark.parametrize(("url", "shown"), [
    ("http://u:KEY123@host:8000/v1", "http://***@host:8000/v1"),
    ("https://KEY123@host/v1", "https://***@host/v1"),
    ("https://host/v1?api_key=KEY123&model=x", "https://host/v1?api_key=***&model=x"),
    ("https://host/v1?key=KEY123", "https://host/v1?key=***"),
    ("https://host/v1?access_token=KEY123&token=K2", "https://host/v1?access_token=***&token=***"),
    ("https://host/v1?openai_api_key=KEY123", "https://host/v1?openai_api_key=***"),
    ("http://localhost:8000/v1", "http://localhost:8000/v1"),
    # #32 attack: a bare `?TOKEN`, a fragment without `=` and `;params` were written in clear to manifest.json
    ("https://host/v1?KEY123", "https://host/v1?***"),
    ("https://host/v1?model=x&KEY123", "https://host/v1?model=x&***"),
    ("https://host/v1#KEY123", "https://host/v1#***"),
    ("https://host/v1;KEY123", "https://host/v1;***"),
])
def test_redact_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    assert "KEY123" not in redact_text(f"connection error at {url}: refused")


def test_redact_text_masks_bearer_tokens_and_key_like_strings() -> None:
    text = "HTTP 401: bad header Authorization: Bearer abcdefgh12345678 (key sk-proj-ABCDEFGHIJKLMNOPQRSTUV)"
    out = redact_text(text)
    assert "abcdefgh12345678" not in out and "ABCDEFGHIJKLMNOPQRSTUV" not in out and "HTTP 401" in out


def test_redact_walks_nested_data() -> None:
    data = {"command": ["proctor", "--base-url", "http://u:KEY123@h/v1"], "model": {"base_urls": ["http://h?key=KEY123"]}}
    assert "KEY123" not in str(redact(data))


def test_split_credentials_takes_the_key_out_of_userinfo() -> None:
    assert split_credentials(["http://u:KEY@h:1/v1", "http://h:2/v1"]) == (["http://h:1/v1", "http://h:2/v1"], "KEY")
    assert split_credentials(["http://KEY@h/v1"]) == (["http://h/v1"], "KEY")
    with pytest.raises(ProctorError, match="different keys"):
        split_credentials(["http://a:K1@h/v1", "http://a:K2@h/v1"])


def test_a_registered_key_is_masked_whatever_its_shape() -> None:
    from proctor.util.redact import redact_secrets, redact_text, register_secret

    register_secret("opaque.Key.55501")  # not `sk-` shaped: no pattern would find it
    register_secret("abc")  # too short to mask without hiding ordinary words
    said = "invalid API key: opaque.Key.55501 (abc)"
    assert redact_text(said) == redact_secrets(said) == "invalid API key: *** (abc)"


@pytest.mark.parametrize("name", ["apiToken", "accessToken", "authToken", "X-Amz-Signature", "bearer", "jwt",
                                  "X-Goog-Credential", "sv", "anything"])
def test_every_query_value_of_a_url_is_secret_unless_known_harmless(name: str) -> None:
    """Issue 32 #10: not by the parameter's name: every query value is hidden but for a few known harmless ones."""
    url = f"https://h/v1?api-version=2024-06-01&{name}=QSECRET9&model=gpt-4o"
    shown = redact_url(url)
    assert "QSECRET9" not in shown and "QSECRET9" not in redact_text(f"at {url}: refused")
    assert "api-version=2024-06-01" in shown and "model=gpt-4o" in shown and f"{name}=***" in shown


def test_the_secrets_of_a_urls_query_are_its_values_but_the_harmless_ones() -> None:
    from proctor.util.redact import url_secrets

    assert url_secrets("https://h/v1?api-version=2024-06-01&jwt=QSECRET9&X-Amz-Signature=abc123") == [
        "QSECRET9", "abc123"]


def test_a_bare_query_token_is_a_secret_to_register_and_a_refused_url_is_shown_redacted() -> None:
    """#32 attack: `?TOKEN` is registered like `?key=TOKEN`; the scheme error does not print user-info."""
    from proctor.models._http import normalize_base_urls
    from proctor.util.redact import url_secrets

    assert url_secrets("https://host/v1?KEY123&model=x") == ["KEY123"]
    with pytest.raises(ProctorError) as caught:
        normalize_base_urls("HTTP://bob:KEY123@host/v1", "X_BASE_URL", "http://h")
    assert "KEY123" not in str(caught.value)
