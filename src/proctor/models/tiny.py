"""Build a tiny causal LM with random weights and a tokenizer trained on the spot.

Used by the demo, the tests and the benchmarks so that nothing downloads weights. The numbers it
produces are meaningless as accuracy but exact as arithmetic: every log-probability can be checked
against a direct forward pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DEFAULT_CORPUS = (
    "The quick brown fox jumps over the lazy dog. True False A B C D E F G H I J. "
    "The correct answer is: The answer is (A). Question: Answer: Choices: "
    "Large language models are increasingly being used to generate text. "
    "Based on the above paragraph, please answer the following questions. "
    "0 1 2 3 4 5 6 7 8 9 10 100 999 \\boxed{42} physics chemistry biology math law history. "
)


@dataclass(frozen=True)
class TinyShape:
    """The tiny model's size: the tokenizer's vocabulary, the hidden width, layers, attention heads, positions."""

    vocab_size: int = 512
    hidden_size: int = 64
    num_layers: int = 2
    num_heads: int = 4
    max_positions: int = 2048


def build_tiny_model(
    out_dir: str | Path,
    *,
    seed: int = 0,
    shape: TinyShape = TinyShape(),
    corpus: str = DEFAULT_CORPUS,
    architecture: str = "llama",
    bos: bool = True,
) -> Path:
    """Write a tokenizer + random-weight model of `shape` to `out_dir` (loadable with `hf:<out_dir>`); return
    the path.

    `bos=False` gives a tokenizer that adds no special token (GPT-2 style); the default prepends `<s>`.
    """
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import (
        GPT2Config,
        GPT2LMHeadModel,
        LlamaConfig,
        LlamaForCausalLM,
        PreTrainedTokenizerFast,
    )
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    out = Path(out_dir)
    if (out / "config.json").exists() and (out / "tokenizer.json").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=shape.vocab_size,
        special_tokens=["<s>", "</s>", "<pad>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator([corpus] * 4, trainer=trainer)
    bos_id = tok.token_to_id("<s>")
    # A BOS token is prepended, as most current models do: the runner must handle it.
    if bos:
        tok.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", bos_id)])
    fast = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>", model_max_length=shape.max_positions
    )
    fast.chat_template = (
        "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
    )
    fast.save_pretrained(out)

    torch.manual_seed(seed)
    n_vocab = tok.get_vocab_size()
    model: GPT2LMHeadModel | LlamaForCausalLM
    if architecture == "gpt2":
        model = GPT2LMHeadModel(
            GPT2Config(
                vocab_size=n_vocab, n_embd=shape.hidden_size, n_layer=shape.num_layers, n_head=shape.num_heads,
                n_positions=shape.max_positions, bos_token_id=bos_id, eos_token_id=tok.token_to_id("</s>"),
            )
        )
    else:
        model = LlamaForCausalLM(
            LlamaConfig(
                vocab_size=n_vocab, hidden_size=shape.hidden_size, intermediate_size=shape.hidden_size * 2,
                num_hidden_layers=shape.num_layers, num_attention_heads=shape.num_heads,
                num_key_value_heads=shape.num_heads, max_position_embeddings=shape.max_positions,
                bos_token_id=bos_id, eos_token_id=tok.token_to_id("</s>"),
                pad_token_id=tok.token_to_id("<pad>"), tie_word_embeddings=False,
            )
        )
    model.eval()  # type: ignore[no-untyped-call]
    model.save_pretrained(out)
    return out
