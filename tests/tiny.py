"""The tests' one tiny random Gemma 3 checkpoint + tokenizer with the project's token layout.

Why: the real model takes minutes to prepare on this CPU; the export, runtime and grammar only need
something with the same architecture (sliding + global layers, GQA, tied embeddings) and the same
special-token ids (control strings at 46..52, `<start_of_turn>`/`<end_of_turn>` at 105/106).
The sliding window is tiny (8) so real-length prompts exercise the sliding mask.
"""
from __future__ import annotations

from pathlib import Path

from mobile_actions.catalog import load_catalogue
from mobile_actions.wire import CONTROL_TOKENS, render

SPECIALS_HEAD = ["<pad>", "<eos>", "<bos>", "<unk>"]
START_OF_TURN_ID, END_OF_TURN_ID = 105, 106


def special_tokens() -> list[str]:
    """Ids 0..106 as in Gemma 3 / FunctionGemma: pad, eos, bos, unk, unused..., controls at 46..52."""
    toks = list(SPECIALS_HEAD)
    while len(toks) < 46:
        toks.append(f"<unused{len(toks) - 6}>")
    toks += list(CONTROL_TOKENS)
    while len(toks) < START_OF_TURN_ID:
        toks.append(f"<unused{len(toks) - 6}>")
    toks += ["<start_of_turn>", "<end_of_turn>"]
    return toks


def _corpus() -> list[str]:
    cat = load_catalogue("mobile_actions")
    dev = ("Current date and time given in YYYY-MM-DDTHH:MM:SS format: 2024-10-20T14:27:48\n"
           "Day of week is Sunday\nYou are a model that can do function calling with the following functions\n")
    texts = []
    for layout in ("official", "cache"):
        texts.append(render([{"role": "developer", "content": dev},
                             {"role": "user", "content": "Turn on the flashlight and email bob@example.com"},
                             {"role": "assistant", "tool_calls": [
                                 {"name": "send_email", "arguments": {"to": "bob@example.com", "subject": "Hi"}},
                                 {"name": "create_calendar_event",
                                  "arguments": {"title": "Dentist", "datetime": "2024-10-21T09:30:00"}}]}],
                            cat, layout=layout))
    texts.append("The quick brown fox jumps over the lazy dog 0123456789 Monday Tuesday Saturday")
    return texts


def build_tokenizer(vocab_size: int = 1000):
    """A small byte-level BPE with the project's special-token ids."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=special_tokens(),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(_corpus(), trainer)
    for i, s in enumerate(special_tokens()):
        assert tok.token_to_id(s) == i, (s, tok.token_to_id(s), i)
    return tok


def make_tiny_model(out: str | Path, *, seed: int = 0, sliding_window: int = 8) -> Path:
    """Write a checkpoint folder as `model prepare` writes the real base (config, weights, the finished
    tokenizer with the chat template, the `kind: base` marker) and return it.

    The one tiny model of the tests: the export and runtime tests need a real multi-character BPE and a
    sliding window shorter than a prompt; the training tests need the base model's marker and pipeline."""
    import torch
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig, GenerationConfig, PreTrainedTokenizerFast

    from mobile_actions import wire
    from mobile_actions.caller.model import STOP_TOKEN_IDS, finish_tokenizer, write_marker

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tok = build_tokenizer()
    cfg = Gemma3TextConfig(
        vocab_size=tok.get_vocab_size(), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=1, head_dim=16, sliding_window=sliding_window,
        layer_types=["sliding_attention", "full_attention"], max_position_embeddings=2048,
        pad_token_id=0, eos_token_id=[1, END_OF_TURN_ID], bos_token_id=2, tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    model = Gemma3ForCausalLM(cfg).eval()
    with torch.no_grad():  # std 0.02 keeps greedy paths varied (larger weights collapse to one token)
        for p in model.parameters():
            if p.dim() == 2:
                p.normal_(0, 0.02)
    model.generation_config = GenerationConfig(bos_token_id=2, pad_token_id=0, eos_token_id=list(STOP_TOKEN_IDS),
                                               do_sample=False)
    model.save_pretrained(out)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>",
                                   unk_token="<unk>")
    finish_tokenizer(fast).save_pretrained(out)
    write_marker(out, {"kind": "base", "format": 1, "source": "tiny random (tests)",
                       "control_tokens": wire.CONTROL_TOKEN_IDS})
    return out
