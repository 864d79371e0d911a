from proctor.cli.options import model_options


def test_each_backend_gets_only_its_options() -> None:
    assert model_options("hf:x", base_url=["http://a"], batch_size=4, dtype="float32") == {
        "batch_size": 4, "dtype": "float32"}
    assert model_options("openai:m", base_url=["http://a", "http://b"], concurrency=8, batch_size=4) == {
        "base_url": ["http://a", "http://b"], "concurrency": 8}
    assert model_options("anthropic:m", base_url=["http://a"]) == {"base_url": "http://a"}
    assert model_options("scripted:random", base_url=["http://a"], batch_size=4) == {}


def test_remote_code_only_when_asked() -> None:
    assert "trust_remote_code" not in model_options("hf:x")
    assert model_options("hf:x", trust_remote_code=True) == {"trust_remote_code": True}
    assert model_options("openai:m", trust_remote_code=True) == {}


def test_an_option_no_model_takes_is_an_error_naming_it() -> None:
    import pytest

    from proctor.cli.options import check_applicable
    from proctor.util.errors import ProctorError

    check_applicable(["hf:x", "openai:judge"], base_url=["http://a"], batch_size=4)  # each applies to one
    with pytest.raises(ProctorError, match="--batch-size does not apply to openai:m"):
        check_applicable(["openai:m"], batch_size=4)
    with pytest.raises(ProctorError, match="--base-url does not apply to hf:x"):
        check_applicable(["hf:x", None], base_url=["http://a"])


def test_registry_validates_typed_options() -> None:
    import pytest

    from proctor.models.registry import BACKENDS, get_model
    from proctor.util.errors import ProctorError

    assert set(BACKENDS) == {"hf", "openai", "anthropic", "vllm", "scripted"}
    with pytest.raises(ProctorError, match="scripted: models take no option 'batch_size'"):
        get_model("scripted:first", batch_size=4)
    with pytest.raises(ProctorError, match="openai: option 'concurrency'"):
        get_model("openai:m", base_url="http://127.0.0.1:9/v1", concurrency=0, api_key="k")
    with pytest.raises(ProctorError, match="unknown model scheme 'sglang'"):
        get_model("sglang:m")
    model = get_model("openai:m", base_url=["http://127.0.0.1:9/v1", "http://127.0.0.1:8/v1"], api_key="k")
    assert model.identity() == {"spec": "openai:m", "model": "m", "chat": True}  # no URLs, keys, concurrency
