"""Before the vllm profile's runs (lab/gpu/run.sh): the shim's log-prob stand-in gives veRL's log-probs and
their gradient, and the GPU's measured bf16 matmul rate, the denominator of the proof's MFU figures.

Writes DIR/machine.json: {"stand_in": {...}, "matmul_bf16_tflops": ...}; exits 1 when the stand-in is wrong.
Usage: python3 lab/gpu/machine_check.py DIR   (after lab/gpu/install.sh put the shim on PYTHONPATH)
"""

from __future__ import annotations

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
        "max_abs_error": float((ours.float() - expected).abs().max()),
        "max_grad_relative_error": float((grad_ours - grad_expected).abs().max() / grad_expected.abs().max()),
        "us_per_token_fwd_bwd": round(seconds / tokens * 1e6, 2),
        "tokens": tokens,
    }


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
    report = {"gpu": torch.cuda.get_device_name(), "stand_in": stand_in_check(), "matmul_bf16_tflops": matmul_tflops()}
    (out / "machine.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"gpu: machine check {json.dumps(report)}", flush=True)
    check = report["stand_in"]
    good = check["patched"] and check["max_abs_error"] < 0.05 and check["max_grad_relative_error"] < 0.02
    if not good:
        print("gpu: the shim's log-prob stand-in is missing or differs from log_softmax + gather: not running",
              file=sys.stderr)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
