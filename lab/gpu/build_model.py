"""A Qwen2-architecture model with random weights and a tokenizer trained here, for the GPU proof.

Nothing comes from a model hub: the byte-level BPE tokenizer is trained on synthetic GSM8K text and
gets the chat template veRL applies to each prompt; the model is initialized at random.

Sizes: `tiny` (4 layers, width 256: the smoke run) and the shapes of Qwen2.5-0.5B, 1.5B, 3B and 7B (their
published config.json: layer count, widths, heads, vocabulary, tied embeddings: the throughput benchmark
and its ladder of sizes, where only speed and memory matter). Their vocabularies are larger than the
tokenizer's; ids past the tokenizer decode to nothing. Where a GPU is, the weights are drawn on it (a 7B
model drawn on the CPU takes minutes).

Usage: python3 lab/gpu/build_model.py SIZE OUT_DIR
"""

from __future__ import annotations

import sys
import time

from synth_gsm8k import records

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
# Qwen2.5's published config.json figures (hidden size, layers, heads, vocabulary; 7B alone unties the
# output layer from the embeddings).
QWEN_CONTEXT = dict(max_position_embeddings=32768)
SIZES = {
    "tiny": dict(hidden_size=256, intermediate_size=512, num_hidden_layers=4, num_attention_heads=4,
                 num_key_value_heads=2, vocab_size=None, max_position_embeddings=2048),
    "qwen2.5-0.5b": dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
                         num_key_value_heads=2, vocab_size=151936, **QWEN_CONTEXT),
    "qwen2.5-1.5b": dict(hidden_size=1536, intermediate_size=8960, num_hidden_layers=28, num_attention_heads=12,
                         num_key_value_heads=2, vocab_size=151936, **QWEN_CONTEXT),
    "qwen2.5-3b": dict(hidden_size=2048, intermediate_size=11008, num_hidden_layers=36, num_attention_heads=16,
                       num_key_value_heads=2, vocab_size=151936, **QWEN_CONTEXT),
    "qwen2.5-7b": dict(hidden_size=3584, intermediate_size=18944, num_hidden_layers=28, num_attention_heads=28,
                       num_key_value_heads=4, vocab_size=152064, tie_word_embeddings=False, **QWEN_CONTEXT),
}


def build_tokenizer(vocab_size: int = 1024):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    corpus = [f"{row['question']}\n{row['answer']}" for row in records(2000, seed=7)]
    corpus.append('Let\'s think step by step and output the final answer after "####". user assistant')
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    bpe.train_from_iterator(corpus, trainer)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def build(size: str, out_dir: str) -> None:
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    start = time.time()
    tokenizer = build_tokenizer()
    tokenizer.save_pretrained(out_dir)
    shape = {"tie_word_embeddings": True, **SIZES[size]}
    shape["vocab_size"] = shape["vocab_size"] or len(tokenizer)
    config = Qwen2Config(**shape, rope_theta=1000000.0, rms_norm_eps=1e-6,
                         bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id, torch_dtype="bfloat16")
    torch.manual_seed(0)
    with torch.device("cuda" if torch.cuda.is_available() else "cpu"):
        model = Qwen2ForCausalLM(config).to(torch.bfloat16)
    model.save_pretrained(out_dir)
    params = sum(p.numel() for p in model.parameters())
    print(f"model {size}: {params / 1e6:.1f}M parameters, tokenizer {len(tokenizer)} tokens, "
          f"in {out_dir} ({time.time() - start:.1f} s)")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in SIZES:
        sys.exit(__doc__)
    build(sys.argv[1], sys.argv[2])
