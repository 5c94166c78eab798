"""Kubernetes resource quantities as numbers, for fit checks."""

from __future__ import annotations

import re

_MEMORY_FACTORS = {
    "": 1, "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40,
}
_MEMORY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(Ki|Mi|Gi|Ti|k|K|M|G|T)?$")


def cpu_millis(quantity: str | int | float) -> int:
    text = str(quantity)
    if text.endswith("m"):
        return int(float(text[:-1]))
    return int(float(text) * 1000)


def memory_bytes(quantity: str | int) -> int:
    match = _MEMORY.match(str(quantity))
    if not match:
        raise ValueError(f"not a memory quantity: {quantity!r}")
    return int(float(match.group(1)) * _MEMORY_FACTORS[match.group(2) or ""])


def format_cpu(millis: int) -> str:
    """Whole cores as "30", otherwise millicores as "1500m"."""
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def format_memory_gi(num_bytes: int) -> str:
    return f"{num_bytes // 2**30}Gi"
