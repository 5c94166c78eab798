"""GPU proof only: run models that veRL asks for with attn_implementation="flash_attention_2" on PyTorch SDPA.

flash-attn has no wheel for the GPU machine's torch and cannot be built within one command there. veRL
(0.3 hard-codes it, 0.9.1 defaults to it) asks transformers for flash_attention_2; when transformers'
modeling_utils is first imported, this swaps the check that resolves the attention implementation for
one that picks "sdpa" instead (transformers 4: _check_and_enable_flash_attn_2; transformers 5:
_check_and_adjust_attn_implementation). Every Python process that Ray starts imports this file, because
lab/gpu/install.sh puts this folder on PYTHONPATH; nothing is imported eagerly.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys

_MODULE = "transformers.modeling_utils"


def _use_sdpa_for_flash_attention(modeling_utils) -> None:
    model = modeling_utils.PreTrainedModel
    if hasattr(model, "_check_and_enable_flash_attn_2"):  # transformers 4
        def check_and_enable_flash_attn_2(cls, config, *args, **kwargs):
            config._attn_implementation = "sdpa"
            return config

        model._check_and_enable_flash_attn_2 = classmethod(check_and_enable_flash_attn_2)
        return
    adjust = model._check_and_adjust_attn_implementation  # transformers 5

    def check_and_adjust_attn_implementation(self, attn_implementation, *args, **kwargs):
        if attn_implementation == "flash_attention_2":
            attn_implementation = "sdpa"
        return adjust(self, attn_implementation, *args, **kwargs)

    model._check_and_adjust_attn_implementation = check_and_adjust_attn_implementation


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself; wraps the real loader of one module to patch it once it has run."""

    def find_spec(self, fullname, path, target=None):
        if fullname != _MODULE:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        run_module = spec.loader.exec_module

        def exec_module(module):
            run_module(module)
            _use_sdpa_for_flash_attention(module)

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _AfterImport())
