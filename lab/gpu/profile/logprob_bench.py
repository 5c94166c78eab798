"""veRL 0.9.1's log-prob fallback without flash-attn (logprobs_from_logits_v2: one log_softmax per row, and a
packed micro batch has one row per token) against one batched log_softmax + gather, on Qwen2.5's vocabulary.
Usage: python3 logprob_bench.py   (prints ms per call and per token, forward and forward+backward)"""
import time
import torch
import torch.nn.functional as F

V = 151936


def v2_loop(logits, labels):  # veRL 0.9.1 torch_functional.logprobs_from_logits_v2, bf16 branch
    out = []
    for row_logits, row_labels in zip(logits, labels, strict=True):
        row = F.log_softmax(row_logits, dim=-1)
        out.append(row.gather(dim=-1, index=row_labels.unsqueeze(-1)).squeeze(-1))
    return torch.stack(out)


def batched(logits, labels):
    return F.log_softmax(logits.float(), dim=-1).gather(-1, labels.unsqueeze(-1)).squeeze(-1)


def timed(fn, tokens, backward):
    logits = torch.randn(tokens, V, device="cuda", dtype=torch.bfloat16, requires_grad=backward)
    labels = torch.randint(0, V, (tokens,), device="cuda")
    for _ in range(2):
        out = fn(logits, labels)
        if backward:
            out.sum().backward()
    torch.cuda.synchronize()
    start = time.time()
    out = fn(logits, labels)
    if backward:
        out.sum().backward()
    torch.cuda.synchronize()
    return time.time() - start


for tokens in (2048, 8192):
    for backward in (False, True):
        for name, fn in (("v2_loop", v2_loop), ("batched", batched)):
            s = timed(fn, tokens, backward)
            print(f"{name:8s} tokens {tokens:5d} {'fwd+bwd' if backward else 'fwd    '}: {s*1e3:9.1f} ms, "
                  f"{s/tokens*1e6:7.1f} us/token", flush=True)
        torch.cuda.empty_cache()
