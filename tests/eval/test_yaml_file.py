from pathlib import Path

import pytest

from eval.yaml_file import YamlFileError, parse_yaml, read_yaml

ROOT = Path(__file__).resolve().parents[2]


def test_reads_a_mapping(tmp_path):
    p = tmp_path / "run.yaml"
    p.write_text("train:\n  max_steps: 5\n  lr: 1.0e-3\n")
    assert read_yaml(p) == {"train": {"max_steps": 5, "lr": 1e-3}}


def test_a_key_written_twice_names_both_lines(tmp_path):
    p = tmp_path / "run.yaml"
    p.write_text("# header\nmodel: runs/old\ntrain:\n  max_steps: 5\nmodel:\n  path: runs/new\n")
    with pytest.raises(YamlFileError) as e:
        read_yaml(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}:5: not valid YAML")
    assert "'model' appears twice (lines 2 and 5)" in msg
    assert "\n" not in msg


def test_the_same_key_in_different_mappings_is_fine():
    assert parse_yaml("a: {x: 1}\nb: {x: 2}\n") == {"a": {"x": 1}, "b": {"x": 2}}


@pytest.mark.parametrize("text, line", [("a: [1, 2\nb: 3\n", 2), ("a: 1\n  b: 2\n", 2),
                                        ("a: !!python/object:os.system ls\n", 1)])
def test_invalid_yaml_names_the_line(tmp_path, text, line):
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    with pytest.raises(YamlFileError, match=rf"^{p}:{line}: not valid YAML \("):
        read_yaml(p)


def test_missing_directory_and_binary_files(tmp_path):
    with pytest.raises(YamlFileError, match="no such file"):
        read_yaml(tmp_path / "none.yaml")
    with pytest.raises(YamlFileError, match="is a directory"):
        read_yaml(tmp_path)
    (tmp_path / "bin.yaml").write_bytes(b"\xff\xfe\x00\x81")
    with pytest.raises(YamlFileError, match="not a text file"):
        read_yaml(tmp_path / "bin.yaml")


def test_every_shipped_config_reads_without_duplicate_keys():
    files = sorted((ROOT / "configs").rglob("*.yaml")) + sorted((ROOT / "eval").rglob("*.yaml"))
    assert len(files) > 10
    for f in files:
        read_yaml(f)
