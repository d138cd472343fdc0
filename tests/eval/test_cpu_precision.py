"""precision auto on CPU: bf16 only where the CPU has AMX-BF16 (eval.cpu_precision)."""
from __future__ import annotations

import pytest

from eval.cpu_precision import choose, cpu_flags

AMD_AVX2 = "processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu sse sse2 avx avx2 fma\n"
INTEL_AVX512_BF16 = "processor\t: 0\nflags\t\t: fpu avx2 avx512f avx512_bf16 avx512_vnni\n"
INTEL_AMX = "processor\t: 0\nflags\t\t: fpu avx2 avx512f avx512_bf16 amx_bf16 amx_tile amx_int8\n"


@pytest.mark.parametrize("cpuinfo, want", [(AMD_AVX2, "fp32"), (INTEL_AVX512_BF16, "fp32"), (INTEL_AMX, "bf16")],
                         ids=["avx2-only", "avx512_bf16-no-amx", "amx"])
def test_bf16_only_with_amx(cpuinfo, want):
    precision, why = choose(cpu_flags(cpuinfo))
    assert precision == want and why.startswith("this CPU has")


def test_no_cpuinfo_means_no_flags():
    assert cpu_flags("") == set()


def test_a_run_says_what_auto_chose_and_why(monkeypatch, capsys):
    import eval.cpu_precision as cp
    from rl.config import GRPORun
    from rl.run import resolve_device

    monkeypatch.setattr(cp, "cpu_precision", lambda: choose(cpu_flags(INTEL_AMX)))
    cfg = GRPORun.model_validate({"model": {"path": "m"}, "data": {"train": [{"path": "d"}]},
                                  "train": {"output_dir": "o", "learning_rate": 1e-5, "per_device_train_batch_size": 4,
                                            "device": "cpu", "precision": "auto"}})
    assert resolve_device(cfg) == (True, "bf16")
    assert "train.precision auto: bf16 (this CPU has AMX-BF16" in capsys.readouterr().err
    cfg.train.precision = "fp32"
    assert resolve_device(cfg) == (True, "fp32")
