"""Before the vllm profile's runs (lab/gpu/run.sh): the shim's log-prob stand-in gives veRL's log-probs and
their gradient; its flash-attn stand-in gives, for packed rows, what per-sequence SDPA gives (attention alone,
forward and backward, and a small Qwen2 through transformers' own flash path); and the GPU's measured bf16
matmul rate, the denominator of the proof's MFU figures.

Writes DIR/machine.json: {"stand_in": {...}, "packed_attention": {...}, "matmul_bf16_tflops": ...}; exits 1 when
a stand-in is wrong.
Usage: python3 lab/gpu/machine_check.py DIR   (after lab/gpu/install.sh put the shim on PYTHONPATH)
"""

from __future__ import annotations

import copy
import json
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

import verl.utils.torch_functional as verl_functional  # the shim patches logprobs_from_logits_v2 on import

VOCAB = 151_936  # Qwen2.5's


def reference(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    return F.log_softmax(logits.float(), dim=-1).gather(-1, labels.unsqueeze(-1)).squeeze(-1)


def timed(function, logits, labels) -> float:
    for _ in range(2):
        function(logits, labels).sum().backward()
    torch.cuda.synchronize()
    start = time.perf_counter()
    function(logits, labels).sum().backward()
    torch.cuda.synchronize()
    return time.perf_counter() - start


def stand_in_check() -> dict:
    torch.manual_seed(0)
    tokens = 4096
    logits = (torch.randn(tokens, VOCAB, device="cuda") * 3).to(torch.bfloat16).requires_grad_()
    labels = torch.randint(0, VOCAB, (tokens,), device="cuda")
    weights = torch.randn(tokens, device="cuda")
    ours = verl_functional.logprobs_from_logits(logits, labels)
    (ours * weights).sum().backward()
    grad_ours, logits.grad = logits.grad.float(), None
    expected = reference(logits, labels)
    (expected * weights).sum().backward()
    grad_expected = logits.grad.float()
    seconds = timed(verl_functional.logprobs_from_logits, logits, labels)
    return {
        "patched": verl_functional.logprobs_from_logits_v2.__name__ == "label_log_probs",
        "max_abs_error": float((ours.float() - expected).abs().max().detach()),
        "max_grad_relative_error": float((grad_ours - grad_expected).abs().max() / grad_expected.abs().max()),
        "us_per_token_fwd_bwd": round(seconds / tokens * 1e6, 2),
        "tokens": tokens,
    }


def sequence_bounds(lengths: list[int]) -> torch.Tensor:
    return torch.tensor([0] + lengths, device="cuda").cumsum(0).to(torch.int32)


def packed_attention_check(lengths: tuple[int, ...] = (700, 33, 512, 1, 260), heads: int = 14, kv_heads: int = 2,
                           dim: int = 64) -> dict:
    """The varlen stand-in on packed rows against SDPA run on each sequence alone, in float32."""
    from sitecustomize import flash_attention_functions  # lab/gpu/shim, on PYTHONPATH

    _, varlen = flash_attention_functions()
    torch.manual_seed(0)
    total = sum(lengths)
    q, k, v = (torch.randn(total, n, dim, device="cuda", dtype=torch.bfloat16).requires_grad_()
               for n in (heads, kv_heads, kv_heads))
    bounds = sequence_bounds(list(lengths))
    out = varlen(q, k, v, bounds, bounds, max(lengths), max(lengths), causal=True)
    weights = torch.randn_like(out)
    (out.float() * weights).sum().backward()
    grads = [t.grad.float() for t in (q, k, v)]
    expected, start = [], 0
    qf, kf, vf = (t.detach().float().requires_grad_() for t in (q, k, v))
    for length in lengths:
        rows = slice(start, start + length)
        part = F.scaled_dot_product_attention(qf[rows].transpose(0, 1), kf[rows].transpose(0, 1),
                                              vf[rows].transpose(0, 1), is_causal=True, enable_gqa=True)
        expected.append(part.transpose(0, 1))
        start += length
    expected_out = torch.cat(expected)
    (expected_out * weights.float()).sum().backward()
    grad_errors = [float((ours - ref.grad).abs().max() / ref.grad.abs().max())
                   for ours, ref in zip(grads, (qf, kf, vf), strict=True)]
    return {"max_abs_error": float((out.float() - expected_out).abs().max()),
            "max_grad_relative_error": max(grad_errors), "tokens": total, "sequences": len(lengths)}


def packed_model_check() -> dict:
    """A small random Qwen2 with veRL's attn_implementation: packed rows (position ids restarting at each
    sequence) give the logits each sequence gives alone with SDPA."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=1024, hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048)
    packed_model = Qwen2ForCausalLM._from_config(config, attn_implementation="flash_attention_2",
                                                 dtype=torch.bfloat16).cuda().eval()
    # A config of its own: a model reads its attention implementation from its config at every forward.
    alone_model = Qwen2ForCausalLM._from_config(copy.deepcopy(config), attn_implementation="sdpa",
                                                dtype=torch.bfloat16).cuda().eval()
    alone_model.load_state_dict(packed_model.state_dict())
    lengths = [300, 17, 129]
    ids = torch.randint(0, 1024, (1, sum(lengths)), device="cuda")
    positions = torch.cat([torch.arange(n, device="cuda") for n in lengths]).unsqueeze(0)
    with torch.no_grad():
        packed = packed_model(input_ids=ids, position_ids=positions).logits.float()
        alone, start = [], 0
        for n in lengths:
            alone.append(alone_model(input_ids=ids[:, start:start + n]).logits.float())
            start += n
    error = float((packed - torch.cat(alone, dim=1)).abs().max())
    return {"attn_implementation": packed_model.config._attn_implementation, "max_abs_logit_error": error,
            "logit_scale": float(packed.abs().max())}


def matmul_tflops(size: int = 8192, repeats: int = 20) -> float:
    a = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeats):
        a @ b
    torch.cuda.synchronize()
    return round(2 * size**3 * repeats / (time.perf_counter() - start) / 1e12, 1)


def main() -> int:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    report = {"gpu": torch.cuda.get_device_name(), "stand_in": stand_in_check(),
              "packed_attention": packed_attention_check(), "packed_model": packed_model_check(),
              "matmul_bf16_tflops": matmul_tflops()}
    (out / "machine.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"gpu: machine check {json.dumps(report)}", flush=True)
    check, packed, model = report["stand_in"], report["packed_attention"], report["packed_model"]
    good = True
    if not (check["patched"] and check["max_abs_error"] < 0.05 and check["max_grad_relative_error"] < 0.02):
        print("gpu: the shim's log-prob stand-in is missing or differs from log_softmax + gather: not running",
              file=sys.stderr)
        good = False
    # bf16 inputs against a float32 reference: about 1e-2 absolute on unit-scale outputs.
    if not (packed["max_abs_error"] < 0.03 and packed["max_grad_relative_error"] < 0.03
            and model["attn_implementation"] == "flash_attention_2" and model["max_abs_logit_error"] < 0.1):
        print("gpu: the shim's flash-attn stand-in differs from per-sequence SDPA on packed rows: not running",
              file=sys.stderr)
        good = False
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
