"""The Qwen2.5-0.5B-shaped random model alone (no veRL, no FSDP): forward+backward of a micro batch of
B rows x 266 tokens (the run's mean length) with and without gradient checkpointing, bf16 autocast over fp32
weights as veRL's FSDP mixed precision, SDPA; the model's own ceiling per micro batch. Loss: mean logit of
the label (log-softmax left out: the log-prob cost is logprob_bench.py's).
Usage: PYTHONPATH=site python3 model_bench.py MODEL_DIR"""
import sys
import time
import torch
from transformers import AutoModelForCausalLM

model = AutoModelForCausalLM.from_pretrained(sys.argv[1], torch_dtype=torch.float32, attn_implementation="sdpa").cuda()
n = sum(p.numel() for p in model.parameters())
print(f"parameters {n/1e6:.1f}M", flush=True)
T = 266
for ckpt in (True, False):
    if ckpt:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    else:
        model.gradient_checkpointing_disable()
    model.train()
    for rows in (8, 32, 64):
        ids = torch.randint(0, model.config.vocab_size, (rows, T), device="cuda")
        def step(ids=ids):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(input_ids=ids, use_cache=False).logits
                loss = logits.float().gather(-1, ids.unsqueeze(-1)).mean()
            loss.backward()
        try:
            step()
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            start = time.time()
            for _ in range(3):
                step()
            torch.cuda.synchronize()
            s = (time.time() - start) / 3
            tokens = rows * T
            peak = torch.cuda.max_memory_allocated() / 2**30
            print(f"ckpt {ckpt!s:5} rows {rows:3d} ({tokens:6d} tokens): {s*1e3:7.1f} ms, "
                  f"{s/tokens*1e6:5.2f} us/token, 6N MFU {6*n*tokens/s/790e12*100:5.1f}%, peak {peak:5.1f} GiB",
                  flush=True)
        except torch.OutOfMemoryError:
            print(f"ckpt {ckpt} rows {rows}: OOM", flush=True)
        model.zero_grad(set_to_none=True)
        torch.cuda.empty_cache()
