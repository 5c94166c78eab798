"""Two flash-attn-absent costs of veRL 0.9.1 on the GPU machine, standalone (issue 27).
1. logprobs_from_logits_v2's per-token loop with the tiny model's 958-token vocabulary (host-bound?).
2. Packed rows (use_remove_padding) through SDPA with a block-diagonal causal mask over the whole micro batch,
   against the same rows padded to one length with is_causal: one Qwen2.5-0.5B attention layer (14 heads,
   head dim 64, 266-token rows), forward+backward, bf16."""
import time
import torch
import torch.nn.functional as F


def v2_loop(logits, labels):
    out = []
    for row_logits, row_labels in zip(logits, labels, strict=True):
        row = F.log_softmax(row_logits, dim=-1)
        out.append(row.gather(dim=-1, index=row_labels.unsqueeze(-1)).squeeze(-1))
    return torch.stack(out)


def timed(fn, repeat=3):
    fn()
    torch.cuda.synchronize()
    start = time.time()
    for _ in range(repeat):
        fn()
    torch.cuda.synchronize()
    return (time.time() - start) / repeat


for vocab in (958, 151936):
    tokens = 8192
    logits = torch.randn(tokens, vocab, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    labels = torch.randint(0, vocab, (tokens,), device="cuda")
    fwd = timed(lambda logits=logits, labels=labels: v2_loop(logits, labels), 1)
    both = timed(lambda logits=logits, labels=labels: v2_loop(logits, labels).sum().backward(), 1)
    print(f"v2 loop vocab {vocab:6d}: fwd {fwd/tokens*1e6:5.1f} us/token, fwd+bwd {both/tokens*1e6:5.1f} us/token",
          flush=True)
    del logits
    torch.cuda.empty_cache()

H, D, T = 14, 64, 266
for rows in (8, 32, 64, 123):
    L = rows * T
    q, k, v = (torch.randn(1, H, L, D, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    seq = torch.arange(L, device="cuda") // T
    mask = (seq[:, None] == seq[None, :]) & torch.ones(L, L, device="cuda", dtype=torch.bool).tril()
    try:
        packed = timed(lambda q=q, k=k, v=v, mask=mask:
                       F.scaled_dot_product_attention(q, k, v, attn_mask=mask).sum().backward())
    except torch.OutOfMemoryError:
        packed = float("nan")
    qp, kp, vp = (torch.randn(rows, H, T, D, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    padded = timed(lambda qp=qp, kp=kp, vp=vp:
                   F.scaled_dot_product_attention(qp, kp, vp, is_causal=True).sum().backward())
    print(f"attention {rows:3d} rows ({L:5d} tokens), one layer fwd+bwd: packed+mask {packed*1e3:7.2f} ms, "
          f"padded causal {padded*1e3:6.2f} ms, x24 layers: {packed*24:5.2f} s vs {padded*24:5.3f} s", flush=True)
    del q, k, v, mask, qp, kp, vp
    torch.cuda.empty_cache()
