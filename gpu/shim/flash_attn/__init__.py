"""GPU proof only: an import-time stand-in for flash-attn (see gpu/shim/sitecustomize.py). It has no
kernels; veRL calls these helpers only with use_remove_padding=true, which the chart never renders."""
