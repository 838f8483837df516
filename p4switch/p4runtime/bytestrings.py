"""P4Runtime binary strings (spec section "Bytestrings").

A receiver accepts any big-endian string whose value fits the declared width,
whatever its length (the shortest form, the byte-padded legacy form, or longer
zero-padded forms all decode to the same value); an empty string is refused.
A sender uses the canonical form: the shortest string holding the value, with
zero encoded as one zero byte.
"""

from __future__ import annotations

from .errors import invalid


def decode(data: bytes, bitwidth: int, what: str) -> int:
    """The unsigned value of `data`, checked against `bitwidth` (INVALID_ARGUMENT otherwise)."""
    if not data:
        raise invalid(f"{what}: empty byte string")
    value = int.from_bytes(data, "big")
    if bitwidth > 0 and value >> bitwidth:
        raise invalid(
            f"{what}: value 0x{data.hex()} does not fit in {bitwidth} bits"
        )
    return value


def encode(value: int) -> bytes:
    """The canonical (shortest) byte string of a non-negative integer."""
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def canonical(data: bytes) -> bytes:
    """The canonical form of an already validated byte string."""
    return encode(int.from_bytes(data, "big"))
