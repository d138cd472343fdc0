"""The one loader of the config files users write (run configs, suites, search runs).

`load_config(path, model, overrides)` reads a YAML file, applies command-line overrides, validates
the result with the pydantic model and turns any problem into one `ConfigError` line:

    FILE:LINE: FIELD.PATH: message      a field written in the file (LINE: its key's, or that of
                                        the nearest key above it that the file has)
    FILE: --KEY: FIELD.PATH: message    a field an override set (FIELD.PATH left out when it is KEY)
    FILE: message                       the file itself: missing, not YAML, not a mapping

An unknown field's message lists the allowed ones. Overrides are `--section.field value` or
`--section.field=value`, the value read as YAML (`--model.lora null`, `--orders "[1, 2]"`); a bare
`--field` goes to the one section that has such a field, else to the top-level field of that
name. A command's own flags pass a mapping {dotted key: value} instead, their values as they are.

A key written twice in one mapping is an error: PyYAML keeps the last value silently, so a stale
block left above the real one would override nothing and confuse everyone reading the file.
"""
from __future__ import annotations

import dataclasses
import json
import types
import typing
from pathlib import Path
from typing import Any, Hashable, Iterator, Mapping, Sequence, TypeVar

import yaml
from pydantic import BaseModel, Tag, ValidationError

M = TypeVar("M", bound=BaseModel)
Overrides = Sequence[str] | Mapping[str, Any]


class ConfigError(ValueError):
    """A config that cannot be used; the message is one line naming the file, line and field."""


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


def _parse_yaml(text: str, source: str) -> Any:
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f":{mark.line + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ConfigError(f"{source}{where}: not valid YAML ({problem})") from None


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, expected a YAML file") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a text file (not UTF-8)") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read ({e.strerror})") from None


def read_yaml(path: str | Path) -> Any:
    """The parsed file, with no model to check it against; ConfigError for a missing,
    unreadable or invalid one."""
    return _parse_yaml(_read_text(Path(path)), str(path))


def load_config(path: str | Path | None, model: type[M], overrides: Overrides = ()) -> M:
    """The file at `path`, with `overrides` applied, as a `model`; ConfigError otherwise.
    `path` None: no file, the settings come from the overrides alone (a command line)."""
    source = None if path is None else str(path)
    text, data = "", {}
    if source is not None:
        text = _read_text(Path(source))
        data = _parse_yaml(text, source)
        if not isinstance(data, dict) or not data:
            what = "empty" if data in (None, {}, [], "") else f"a {type(data).__name__}"
            raise ConfigError(f"{source}: the config is {what}; expected a mapping of: "
                              f"{', '.join(_fields(model))}")
    set_by: dict[tuple[str, ...], str] = {}  # field path -> the override that set it
    for shown, key, value in _overrides(overrides):
        parts = _field_path(model, key, shown, source)
        node = data
        for part in parts[:-1]:
            if not isinstance(node.get(part), dict):
                node[part] = {}
            node = node[part]
        node[parts[-1]] = value
        set_by[parts] = shown
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise ConfigError(_one_line(e, model, source, text, set_by)) from None


# --------------------------------------------------------------------------------------------
# Overrides


def _overrides(overrides: Overrides) -> Iterator[tuple[str, str, Any]]:
    """(the override as written, its dotted key, its value)."""
    if isinstance(overrides, Mapping):
        yield from ((f"--{key}", key, value) for key, value in overrides.items())
        return
    i = 0
    while i < len(overrides):
        arg = overrides[i]
        if not arg.startswith("--") or len(arg) == 2:
            raise ConfigError(f"unexpected argument {arg!r}: overrides look like "
                              "--section.field value")
        key = arg[2:]
        if "=" in key:
            key, raw = key.split("=", 1)
            i += 1
        elif i + 1 < len(overrides):
            raw = overrides[i + 1]
            i += 2
        else:
            raise ConfigError(f"--{key}: missing value")
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError:
            value = raw
        yield f"--{key}", key if "." in key else key.replace("-", "_"), value


def _field_path(model: type, key: str, shown: str, source: str | None) -> tuple[str, ...]:
    """The parts of a dotted key; a bare key goes to the one section defining it (else to the
    top-level field of that name)."""
    if "." in key:
        return tuple(key.split("."))
    owners = [name for name, ann in _fields(model).items()
              if isinstance(ann, type) and key in _fields(ann)]
    if len(owners) == 1:
        return owners[0], key
    if key in _fields(model):
        return (key,)
    where = f"sections {', '.join(owners)}" if owners else "no section"
    prefix = f"{source}: " if source else ""
    raise ConfigError(f"{prefix}{shown}: {where} define(s) it; use --section.{key}")


# --------------------------------------------------------------------------------------------
# Help from the fields


def settings_help(model: type, *, flag: str = "", prefix: str = "", indent: str = "") -> list[str]:
    """One line per setting of a config model, from the fields themselves (a pydantic field's
    description, a dataclass field's `metadata["help"]`), as TRL generates its help from its
    config's metadata: `key (default X): help`, `flag` before the key (`--` where the command line
    overrides settings); a nested model is a heading `key:` over its own settings, as dotted keys."""
    lines = []
    for name, (default, text, inner) in _settings(model).items():
        key = f"{prefix}{name}"
        if inner is not None:
            lines.append(f"{indent}{key}:")
            lines += settings_help(inner, flag=flag, prefix=f"{key}.", indent=indent + "  ")
            if getattr(inner, "other_keys", ""):  # a model that takes further keys says which
                lines.append(f"{indent}  {flag}{key}.KEY: {inner.other_keys}")
        else:
            lines.append(f"{indent}{flag}{key} ({default}): {text}".rstrip(": "))
    return lines


def _settings(model: type) -> dict[str, tuple[str, str, type | None]]:
    """name -> (the default as text, the help, the nested model or None)."""
    out: dict[str, tuple[str, str, type | None]] = {}
    if isinstance(model, type) and issubclass(model, BaseModel):
        for name, f in model.model_fields.items():
            value = None if f.is_required() else f.get_default(call_default_factory=True)
            default = "required" if f.is_required() else "default " + _shown(value)
            # an optional section (default null: off) and a choice of models are one line
            models = [m for m in _members(f.annotation) if _fields(m)]
            off = value is None and not f.is_required()
            inner = models[0] if len(models) == 1 and not off else None
            out[name] = (default, f.description or "", inner)
    elif dataclasses.is_dataclass(model):
        for f in dataclasses.fields(model):
            value = (f.default if f.default is not dataclasses.MISSING
                     else f.default_factory() if f.default_factory is not dataclasses.MISSING
                     else None)
            out[f.name] = ("default " + _shown(value), f.metadata.get("help", ""), None)
    return out


def _shown(value: Any) -> str:
    if isinstance(value, Path):
        value = str(value)
    elif isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    elif isinstance(value, tuple):
        value = list(value)
    try:
        return json.dumps(value)
    except TypeError:
        return str(value)


# --------------------------------------------------------------------------------------------
# One line per validation error


def _one_line(e: ValidationError, model: type, source: str | None, text: str,
              set_by: dict[tuple[str, ...], str]) -> str:
    err = e.errors()[0]
    unknown = err["type"] in ("extra_forbidden", "unexpected_keyword_argument")
    loc, owner = _resolve(model, err["loc"][:-1] if unknown else err["loc"])
    if unknown:
        loc += (err["loc"][-1],)
        msg = f"unknown field; allowed: {', '.join(_fields(owner))}"
    else:
        msg = err["msg"].removeprefix("Value error, ")
        got = err.get("input")
        if err["type"] != "value_error" and not isinstance(got, (dict, list)):
            msg += f" (got {got!r})"
    field = ".".join(map(str, loc))
    as_text = tuple(map(str, loc))
    covering = [p for p in set_by if as_text[:len(p)] == p]
    if covering:
        parts = max(covering, key=len)
        where = f"{source}: {set_by[parts]}" if source else set_by[parts]
        if set_by[parts] == f"--{field}":
            field = ""
    elif source is not None:
        line = _line_of(text, loc)
        where = f"{source}:{line}" if line else source
    else:
        where = "command line"
    # a validator's message that names its field itself ("search.budget must be >= 1") is not
    # prefixed with it again
    if field and not msg.startswith((f"{field}.", f"{field}:", f"{field} ")):
        msg = f"{field}: {msg}"
    return f"{where}: {msg}"


def _fields(t: Any) -> dict[str, Any]:
    """The fields of a model or dataclass, name -> annotation; {} for anything else."""
    if isinstance(t, type) and issubclass(t, BaseModel):
        return {name: f.annotation for name, f in t.model_fields.items()}
    if isinstance(t, type) and dataclasses.is_dataclass(t):
        return {f.name: f.type for f in dataclasses.fields(t)}
    return {}


def _open(t: Any) -> bool:
    """A model that takes keys beyond its fields (`extra="allow"`)."""
    return isinstance(t, type) and issubclass(t, BaseModel) and t.model_config.get("extra") == "allow"


def _members(t: Any) -> list[Any]:
    """The alternatives of a union (Optional, Annotated and nesting undone)."""
    origin = typing.get_origin(t)
    if origin is typing.Annotated:
        return _members(typing.get_args(t)[0])
    if origin in (typing.Union, types.UnionType):
        return [m for a in typing.get_args(t) for m in _members(a)]
    return [t]


def _resolve(model: type, loc: Sequence[Any]) -> tuple[tuple[Any, ...], Any]:
    """A pydantic error location as the path of keys in the file, and the model the path ends
    in. Pydantic also puts the member of a union it tried into the path (a tag such as
    `reasoner`, a type such as `list[str]`): those are left out."""
    path: list[Any] = []
    candidates = [model]
    for part in loc:
        members = [m for c in candidates for m in _members(c)]
        tagged = {tag: m for c in candidates for tag, m in _tag_map(c).items()}
        inner = []
        for m in members:
            origin, args = typing.get_origin(m), typing.get_args(m)
            if isinstance(part, str) and part in _fields(m):
                inner.append(_fields(m)[part])
            elif isinstance(part, int) and origin in (list, tuple, set, frozenset) and args:
                inner.append(args[0])
            elif origin is dict and len(args) == 2:
                inner.append(args[1])
        if inner:
            path.append(part)
            candidates = inner
        elif isinstance(part, Hashable) and part in tagged:  # a discriminated union's Tag
            candidates = [tagged[part]]
        elif isinstance(part, str) and any(_open(m) for m in members):
            # a key of a model that takes any further keys (a backend's options): its own line
            path.append(part)
            candidates = []
        else:  # a union member's label: keep the members it names, if it is a tag
            candidates = [m for m in members if part in _tags(m)] or members
    models = [m for c in candidates for m in _members(c) if _fields(m)]
    return tuple(path), models[0] if models else None


def _tag_map(t: Any) -> dict[str, Any]:
    """The members of a discriminated union by their pydantic `Tag`."""
    origin = typing.get_origin(t)
    if origin is typing.Annotated:
        inner, *metadata = typing.get_args(t)
        return {m.tag: inner for m in metadata if isinstance(m, Tag)} or _tag_map(inner)
    if origin in (typing.Union, types.UnionType):
        return {tag: m for a in typing.get_args(t) for tag, m in _tag_map(a).items()}
    return {}


def _tags(t: Any) -> set[Any]:
    """The values of a model's Literal fields (what a discriminated union tells it by)."""
    return {v for ann in _fields(t).values() if typing.get_origin(ann) is typing.Literal
            for v in typing.get_args(ann)}


def _line_of(text: str, loc: Sequence[Any]) -> int | None:
    """The 1-based line of the YAML key at `loc` (or of its deepest parent in the file)."""
    try:
        node = yaml.compose(text)
    except yaml.YAMLError:
        return None
    line = None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            found = next(((k, v) for k, v in node.value if k.value == str(part)), None)
            if found is None:
                break
            line = found[0].start_mark.line + 1
            node = found[1]
        elif (isinstance(node, yaml.SequenceNode) and isinstance(part, int)
              and part < len(node.value)):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line
