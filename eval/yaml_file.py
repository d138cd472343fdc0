"""Reading the YAML files users write (run configs, suites, search runs).

One reader for every package so that a bad file gets the same one-line message everywhere,
naming the file and the line. A key written twice in one mapping is an error: PyYAML keeps the
last value silently, so a stale block left above the real one would override nothing and
confuse everyone reading the file.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


class YamlFileError(ValueError):
    """A YAML file that cannot be read; the message is one line naming the file."""


class _UniqueKeyLoader(yaml.SafeLoader):
    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            line = key_node.start_mark.line + 1
            if isinstance(key, str) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} appears twice (lines {seen[key]} and {line})",
                    key_node.start_mark)
            if isinstance(key, str):
                seen[key] = line
        return super().construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
                                 _UniqueKeyLoader.construct_mapping)


def parse_yaml(text: str, source: str = "<string>") -> Any:
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f":{mark.line + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise YamlFileError(f"{source}{where}: not valid YAML ({problem})") from None


def read_yaml(path: str | Path) -> Any:
    """The parsed file; YamlFileError for a missing, unreadable or invalid one."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise YamlFileError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise YamlFileError(f"{path}: is a directory, expected a YAML file") from None
    except UnicodeDecodeError:
        raise YamlFileError(f"{path}: not a text file (not UTF-8)") from None
    except OSError as e:
        raise YamlFileError(f"{path}: cannot read ({e.strerror})") from None
    return parse_yaml(text, str(path))
