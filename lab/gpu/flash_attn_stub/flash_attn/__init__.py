"""GPU proof only, HF profile only: an import-time stand-in for flash-attn, which veRL 0.3 imports on
CUDA (lab/gpu/install.sh puts this folder on PYTHONPATH for that profile; veRL 0.9.1 and vLLM check for
flash-attn and fall back to their own kernels when it is absent, so it must not be there for them).
No kernels; veRL calls these helpers only with use_remove_padding=true, which the chart never renders."""
