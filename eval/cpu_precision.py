"""Which precision computes fastest on this CPU: bf16 only where the CPU multiplies bf16 matrices
in hardware (AMX), fp32 everywhere else.

Measured on the CPU kinds this project's machines come with (docs/training.md, "Precision on
CPU"): with AMX-BF16, bf16 autocast ran SmolLM2 twice as fast as fp32; with avx512_bf16 and no
AMX, fp32 was faster (~190 tokens/s against ~133); with AVX2 only, bf16 fell back to ATen's
single-threaded reference GEMM and an SFT step did not finish in 19 minutes (27 s in fp32). The
CPU's flags say which kind this is, at no cost; they are read once.
"""
from __future__ import annotations

import functools
from pathlib import Path


def cpu_flags(cpuinfo: str | None = None) -> set[str]:
    """The `flags` of the first processor in /proc/cpuinfo (empty where there is none)."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return set()
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return set(value.split())
    return set()


def choose(flags: set[str]) -> tuple[str, str]:
    """("bf16" or "fp32", why) for a CPU with these flags."""
    if "amx_bf16" in flags:
        return "bf16", "this CPU has AMX-BF16 matrix units: bf16 is about twice as fast as fp32"
    if "avx512_bf16" in flags:
        return "fp32", "this CPU has avx512_bf16 but no AMX: fp32 is faster than bf16 autocast"
    return "fp32", "this CPU has neither AMX nor avx512_bf16: bf16 would run on a slow reference GEMM"


@functools.lru_cache(maxsize=1)
def cpu_precision() -> tuple[str, str]:
    """("bf16" or "fp32", why) for the CPU this process runs on."""
    return choose(cpu_flags())
