"""What the runtime needs to know of the CPU it runs on: which kernels are fast, and what a packed session depends on."""
from __future__ import annotations

import platform
from functools import lru_cache

# x86 flags of an 8-bit dot product (VNNI, AMX): onnxruntime's 8-bit `MatMulNBits` is fast with one of them
INT8_DOT_FLAGS = frozenset({"avx512_vnni", "avx_vnni", "amx_int8"})


@lru_cache(maxsize=1)
def _first_processor() -> tuple[tuple[str, str], ...]:
    """`/proc/cpuinfo`'s first processor block as (key, value) pairs; empty where there is none."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            lines = []
            for line in f:
                if not line.strip():
                    break
                key, _, value = line.partition(":")
                lines.append((key.strip(), value.strip()))
            return tuple(lines)
    except OSError:
        return ()


def cpu_signature() -> str:
    """What a packed layout may depend on: the machine, and the CPU's vendor, model and instruction-set flags
    (`/proc/cpuinfo`'s first processor; elsewhere what `platform` knows)."""
    keys = ("vendor_id", "cpu family", "model", "flags", "Features", "CPU implementer", "CPU part")
    found = [f"{k}: {v}" for k, v in _first_processor() if k in keys]
    return "\n".join([platform.machine(), *(found or [platform.processor()])])


def slow_int8_matmul() -> bool:
    """An x86 CPU without an 8-bit dot product: there the integer decode graph runs a request's tokens ~2x
    faster than the decode graph (docs/runtime.md). Elsewhere (VNNI, AMX, Arm, or nothing known) False."""
    if platform.machine().lower() not in ("x86_64", "amd64", "i686", "x86"):
        return False
    flags = next((v.split() for k, v in _first_processor() if k == "flags"), None)
    return flags is not None and not INT8_DOT_FLAGS & set(flags)
