"""Tier 1: Kubernetes quantities as the fit checks and discover read them."""

import pytest

from generator.quantity import cpu_millis, format_cpu, format_memory_gi, memory_bytes


@pytest.mark.parametrize("quantity, expected", [
    ("512", 512), (2048, 2048), ("1k", 10**3), ("1K", 10**3), ("2M", 2 * 10**6), ("3G", 3 * 10**9), ("1T", 10**12),
    ("1Ki", 2**10), ("5Mi", 5 * 2**20), ("125Gi", 125 * 2**30), ("1.5Ti", 3 * 2**39), ("0.5Gi", 2**29),
])
def test_memory_quantities_in_bytes(quantity, expected):
    assert memory_bytes(quantity) == expected


@pytest.mark.parametrize("quantity", ["100GB", "lots", "1.5.2Gi", "-1Gi", "Gi"])
def test_what_is_no_memory_quantity_is_named(quantity):
    with pytest.raises(ValueError, match=f"not a memory quantity: '{quantity}'"):
        memory_bytes(quantity)


@pytest.mark.parametrize("quantity, expected", [("37500m", 37500), ("2", 2000), (2.5, 2500), (4, 4000), ("0.1", 100)])
def test_cpu_quantities_in_millicores(quantity, expected):
    assert cpu_millis(quantity) == expected


def test_formats_whole_cores_and_gib():
    assert (format_cpu(30000), format_cpu(1500), format_cpu(999)) == ("30", "1500m", "999m")
    assert format_cpu(1_000_000) == "1000"  # a thousand cores: the division is by 1000, not nearly
    assert (format_memory_gi(100 * 2**30), format_memory_gi(100 * 2**30 + 2**29)) == ("100Gi", "100Gi")
