"""`python -m proctor.testing`: the local OpenAI/Anthropic-compatible stand-in server on 127.0.0.1 (see
`proctor.testing.server`; `--port N`, `--config JSON`)."""

from .server import main

main()
