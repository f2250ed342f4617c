"""How smoke prints rates: one unit per figure's size, so lab Mbit/s and real Gb/s both read well."""

from __future__ import annotations


def rate_text(bits_per_second: float) -> str:
    if bits_per_second >= 10e9:
        return f"{bits_per_second / 1e9:.1f} Gb/s"
    return f"{bits_per_second / 1e6:.0f} Mbit/s"


def pct(share: float) -> str:
    return f"{share * 100:.1f}%"


def bytes_rate_text(bytes_per_second: float) -> str:
    if bytes_per_second >= 1e9:
        return f"{bytes_per_second / 1e9:.2f} GB/s"
    return f"{bytes_per_second / 1e6:.0f} MB/s"
