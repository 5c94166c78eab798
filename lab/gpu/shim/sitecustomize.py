"""GPU proof only: make up for what the GPU machine lacks against the images the chart runs (flash-attn).

flash-attn has no wheel for the GPU machine's torch and cannot be built within one command there. Two
stand-ins, each applied when its module is first imported (nothing is imported eagerly); every Python
process that Ray starts imports this file, because lab/gpu/install.sh puts this folder on PYTHONPATH:
- transformers 4 (veRL 0.3's HF profile): models that veRL asks for with attn_implementation="flash_attention_2"
  run on PyTorch SDPA instead (_check_and_enable_flash_attn_2); veRL 0.3 leaves packed rows off.
- transformers 5 (veRL 0.9.1): flash_attention_2 stays the implementation, and transformers' own flash path
  (unpadding, packed rows found from position_ids) calls flash-attn's two entry points, which stand on
  PyTorch's own flash kernels (aten._flash_attention_forward/_backward take cumulative sequence lengths, as
  flash-attn's varlen function does): so veRL's packed rows (use_remove_padding, its default) attend within
  each sequence only, at flash-attn's cost. lab/gpu/machine_check.py compares them with per-sequence SDPA.
- verl.utils.torch_functional (veRL 0.9.1): with flash-attn, veRL's logprobs_from_logits uses its fused
  cross entropy (one pass over the vocabulary a row, log-sum-exp kept for the backward pass); without it,
  veRL falls back to logprobs_from_logits_v2, one log_softmax per row, and a packed micro batch has one row
  per token: 95-106 us a token forward and backward on an H200 against 2.2 us batched (docs/sizing.md).
  label_log_probs computes the same log-probabilities in chunks of rows and keeps the same state as the
  fused kernel (the logits and the row's log-sum-exp), so the step's time and memory are the image's,
  not the fallback's.
And one stand-in for what a pod has: its own GPUs only. Where the proof starts several raylets on one machine
(lab/gpu/proof.py's RayHead), each gets its share in CUDA_VISIBLE_DEVICES and again in VERL_PPO_LAB_NODE_GPUS; a
process started without CUDA_VISIBLE_DEVICES (the chart's preflight counts a node's GPUs so, past Ray's narrowing
per task) gets the node's share back, as a pod's device plugin would keep it to the pod's, not the whole machine.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys

CHUNK_ROWS = 2048  # rows of fp32 logits in flight: 2048 x 151,936 x 4 bytes = 1.2 GB


def _flash_attention_without_flash_attn(modeling_utils) -> None:
    model = modeling_utils.PreTrainedModel
    # transformers 5 keeps _check_and_enable_flash_attn_2 beside the newer check: test for the newer one.
    if not hasattr(model, "_check_and_adjust_attn_implementation"):  # transformers 4
        def check_and_enable_flash_attn_2(cls, config, *args, **kwargs):
            config._attn_implementation = "sdpa"
            return config

        model._check_and_enable_flash_attn_2 = classmethod(check_and_enable_flash_attn_2)
        return
    adjust = model._check_and_adjust_attn_implementation  # transformers 5

    def check_and_adjust_attn_implementation(self, attn_implementation, *args, **kwargs):
        if attn_implementation == "flash_attention_2":  # flash-attn's availability check would refuse it
            from transformers.modeling_flash_attention_utils import lazy_import_flash_attention

            lazy_import_flash_attention(attn_implementation)
            return attn_implementation
        return adjust(self, attn_implementation, *args, **kwargs)

    model._check_and_adjust_attn_implementation = check_and_adjust_attn_implementation


def flash_attention_functions():
    """flash-attn's flash_attn_func and flash_attn_varlen_func, on PyTorch's kernels (imports torch when called).
    Layouts as flash-attn's: (batch, seq, heads, dim) and (tokens, heads, dim); grouped KV heads as they come."""
    import torch
    import torch.nn.functional as F

    class VarlenAttention(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, cu_q, cu_k, max_q, max_k, causal, scale):
            out, lse, rng_state, unused, _ = torch.ops.aten._flash_attention_forward(
                q, k, v, cu_q, cu_k, max_q, max_k, 0.0, causal, False, scale=scale)
            ctx.save_for_backward(q, k, v, out, lse, cu_q, cu_k, rng_state, unused)
            ctx.options = (max_q, max_k, causal, scale)
            return out

        @staticmethod
        def backward(ctx, grad):
            q, k, v, out, lse, cu_q, cu_k, rng_state, unused = ctx.saved_tensors
            max_q, max_k, causal, scale = ctx.options
            dq, dk, dv = torch.ops.aten._flash_attention_backward(
                grad.contiguous(), q, k, v, out, lse, cu_q, cu_k, max_q, max_k, 0.0, causal, rng_state, unused,
                scale=scale)
            return dq, dk, dv, None, None, None, None, None, None

    def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p=0.0,
                               softmax_scale=None, causal=False):
        if dropout_p:
            raise NotImplementedError("the GPU proof's flash-attn stand-in has no dropout")
        return VarlenAttention.apply(q.contiguous(), k.contiguous(), v.contiguous(), cu_seqlens_q.to(torch.int32),
                                     cu_seqlens_k.to(torch.int32), int(max_seqlen_q), int(max_seqlen_k), bool(causal),
                                     softmax_scale)

    def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False):
        # Unpadded rows of equal length (training: queries and keys alike, so top-left causal is flash-attn's).
        out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                             dropout_p=dropout_p, is_causal=causal, scale=softmax_scale,
                                             enable_gqa=k.shape[2] != q.shape[2])
        return out.transpose(1, 2)

    return flash_attn_func, flash_attn_varlen_func


def _flash_attention_on_torch_kernels(flash_utils) -> None:
    if not hasattr(flash_utils, "_lazy_imports"):  # transformers 4: SDPA instead (above)
        return
    lazy_imports = flash_utils._lazy_imports

    def lazy_imports_on_torch(implementation, *args, **kwargs):
        if implementation != "flash_attention_2":
            return lazy_imports(implementation, *args, **kwargs)
        flash_fn, varlen_fn = flash_attention_functions()
        return flash_fn, varlen_fn, None, flash_utils._pad_input, flash_utils._unpad_input

    flash_utils._lazy_imports = lazy_imports_on_torch


def label_log_probs_function():
    """log p(label) over the last dimension of logits, as an autograd Function (imports torch when called)."""
    import torch

    class LabelLogProbs(torch.autograd.Function):
        @staticmethod
        def forward(ctx, logits, labels):
            lse = torch.empty(logits.shape[0], device=logits.device, dtype=torch.float32)
            for start in range(0, logits.shape[0], CHUNK_ROWS):
                lse[start:start + CHUNK_ROWS] = torch.logsumexp(logits[start:start + CHUNK_ROWS].float(), dim=-1)
            picked = logits.gather(-1, labels.unsqueeze(-1)).squeeze(-1).float()
            ctx.save_for_backward(logits, labels, lse)
            return picked - lse

        @staticmethod
        def backward(ctx, grad):
            logits, labels, lse = ctx.saved_tensors
            grad_logits = torch.empty_like(logits)
            grad = grad.float()
            for start in range(0, logits.shape[0], CHUNK_ROWS):
                rows = slice(start, start + CHUNK_ROWS)
                # d(x_label - lse)/dx = onehot(label) - softmax(x)
                part = torch.exp(logits[rows].float() - lse[rows].unsqueeze(-1)).mul_(-grad[rows].unsqueeze(-1))
                part.scatter_add_(-1, labels[rows].unsqueeze(-1), grad[rows].unsqueeze(-1))
                grad_logits[rows] = part.to(logits.dtype)
            return grad_logits, None

    def label_log_probs(logits, labels):
        flat = LabelLogProbs.apply(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))
        return flat.view(labels.shape)

    return label_log_probs


def _use_batched_log_probs(torch_functional) -> None:
    if hasattr(torch_functional, "logprobs_from_logits_v2"):
        torch_functional.logprobs_from_logits_v2 = label_log_probs_function()


_PATCHES = {
    "transformers.modeling_flash_attention_utils": _flash_attention_on_torch_kernels,
    "transformers.modeling_utils": _flash_attention_without_flash_attn,
    "verl.utils.torch_functional": _use_batched_log_probs,
}


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself; wraps the real loader of each patched module to patch it once it has run."""

    def find_spec(self, fullname, path, target=None):
        patch = _PATCHES.pop(fullname, None)
        if patch is None:
            return None
        if not _PATCHES:
            sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        run_module = spec.loader.exec_module

        def exec_module(module):
            run_module(module)
            patch(module)

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _AfterImport())
NODE_GPUS = "VERL_PPO_LAB_NODE_GPUS"
if NODE_GPUS in os.environ and "CUDA_VISIBLE_DEVICES" not in os.environ:
    os.environ["CUDA_VISIBLE_DEVICES"] = os.environ[NODE_GPUS]
