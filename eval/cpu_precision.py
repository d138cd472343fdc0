"""Which precision computes fastest on this CPU: bf16 where the CPU multiplies bf16 matrices
fast enough to pay for autocast's casts (AMX, or AMD's avx512_bf16), fp32 everywhere else.

Measured on the CPU kinds this project's machines come with (docs/training.md, "Precision on
CPU"): with AMX-BF16, bf16 autocast ran SmolLM2 twice as fast as fp32; on an AMD EPYC with
avx512_bf16 (2026-11-30) the quick demo's SFT steps took 28% less time in bf16; on an Intel CPU
with avx512_bf16 and no AMX a raw training step was faster in fp32 (~190 tokens/s against ~133);
with AVX2 only, bf16 fell back to ATen's single-threaded reference GEMM and an SFT step did not
finish in 19 minutes (27 s in fp32). The CPU's vendor and flags say which kind this is, at no
cost (a timed probe would cost seconds in every process and flip with the load); they are read
once.
"""
from __future__ import annotations

import functools
from pathlib import Path

# kind -> (precision, why), the kinds in the order they are told apart
KINDS = {
    "amx": ("bf16", "this CPU has AMX-BF16 matrix units: bf16 is about twice as fast as fp32"),
    "amd-avx512_bf16": ("bf16", "this AMD CPU has avx512_bf16: the quick demo's SFT steps took 28% less "
                                "time in bf16 than in fp32"),
    "avx512_bf16": ("fp32", "this CPU has avx512_bf16 but no AMX: fp32 is faster than bf16 autocast"),
    "avx2": ("fp32", "this CPU has neither AMX nor avx512_bf16: bf16 would run on a slow reference GEMM"),
}
# How a log line names each kind
DESCRIBED = {"amx": "a CPU with AMX-BF16", "amd-avx512_bf16": "an AMD CPU with avx512_bf16",
             "avx512_bf16": "an Intel CPU with avx512_bf16 and no AMX", "avx2": "a CPU with AVX2 only"}


def cpu_kind(cpuinfo: str | None = None) -> str:
    """The kind (a key of KINDS) of the first processor in /proc/cpuinfo, or of `cpuinfo`'s text;
    "avx2" where there is none to read."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            cpuinfo = ""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    flags = set((fields.get("flags") or fields.get("Features") or "").split())
    if "amx_bf16" in flags:
        return "amx"
    if "avx512_bf16" in flags:
        return "amd-avx512_bf16" if fields.get("vendor_id") == "AuthenticAMD" else "avx512_bf16"
    return "avx2"


@functools.lru_cache(maxsize=1)
def cpu_precision() -> tuple[str, str]:
    """("bf16" or "fp32", why) for the CPU this process runs on."""
    return KINDS[cpu_kind()]
