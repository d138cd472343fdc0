"""precision auto on CPU: bf16 where the CPU has AMX-BF16 or is an AMD one with avx512_bf16
(eval.cpu_precision)."""
from __future__ import annotations

import pytest

from eval.cpu_precision import KINDS, cpu_kind

AMD_AVX2 = "processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu sse sse2 avx avx2 fma\n"
AMD_AVX512_BF16 = "processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu avx2 avx512f avx512_bf16\n"
INTEL_AVX512_BF16 = "processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu avx2 avx512f avx512_bf16 avx512_vnni\n"
INTEL_AMX = "processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu avx2 avx512f avx512_bf16 amx_bf16 amx_tile\n"


@pytest.mark.parametrize("cpuinfo, kind, want", [(AMD_AVX2, "avx2", "fp32"),
                                                 (AMD_AVX512_BF16, "amd-avx512_bf16", "bf16"),
                                                 (INTEL_AVX512_BF16, "avx512_bf16", "fp32"),
                                                 (INTEL_AMX, "amx", "bf16")],
                         ids=["avx2-only", "amd-avx512_bf16", "intel-avx512_bf16-no-amx", "amx"])
def test_bf16_with_amx_or_amds_avx512_bf16(cpuinfo, kind, want):
    assert cpu_kind(cpuinfo) == kind
    precision, why = KINDS[kind]
    assert precision == want and why.startswith("this ")


def test_no_cpuinfo_is_the_plain_kind():
    assert cpu_kind("") == "avx2"


def test_a_run_says_what_auto_chose_and_why(monkeypatch, capsys):
    import eval.cpu_precision as cp
    from rl.config import GRPORun
    from rl.run import resolve_device

    monkeypatch.setattr(cp, "cpu_precision", lambda: KINDS[cpu_kind(INTEL_AMX)])
    cfg = GRPORun.model_validate({"model": {"path": "m"}, "data": {"train": [{"path": "d"}]},
                                  "train": {"output_dir": "o", "learning_rate": 1e-5, "per_device_train_batch_size": 4,
                                            "device": "cpu", "precision": "auto"}})
    assert resolve_device(cfg) == (True, "bf16")
    assert "train.precision auto: bf16 (this CPU has AMX-BF16" in capsys.readouterr().err
    cfg.train.precision = "fp32"
    assert resolve_device(cfg) == (True, "fp32")
