"""The one config loader: YAML read with unique keys, dotted overrides, and one-line errors
`FILE:LINE: FIELD.PATH: message` (an override named in place of the line)."""
from pathlib import Path
from typing import Annotated, Literal, Optional, Union

import pytest
from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

from eval.config_file import ConfigError, load_config, read_yaml

ROOT = Path(__file__).resolve().parents[2]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Lora(_Strict):
    r: int = Field(16, gt=0)
    target_modules: list[str] | Literal["all-linear"] = "all-linear"


class Model(_Strict):
    path: str
    lora: Optional[Lora] = None


class Source(_Strict):
    path: str
    weight: float = Field(1.0, gt=0)


class Data(_Strict):
    train: list[Source] = Field(min_length=1)
    seed: int = 0


class Train(_Strict):
    max_steps: int = -1
    seed: int = 0


class Reasoner(_Strict):
    kind: Literal["reasoner"] = "reasoner"
    name: str = "world"


class Noisy(_Strict):
    kind: Literal["noisy"]
    p: float = Field(0.5, ge=0, le=1)


class Run(_Strict):
    model: Model
    data: Data
    train: Train = Train()
    prices: dict[str, float] = {}
    target: Annotated[Union[Annotated[Reasoner, Tag("reasoner")], Annotated[Noisy, Tag("noisy")]],
                      Discriminator(lambda v: v.get("kind", "reasoner") if isinstance(v, dict)
                                    else getattr(v, "kind", None))] = Reasoner()
    note: str = ""


GOOD = """\
# a run
model:
  path: runs/tiny
data:
  train:
    - path: a.jsonl
    - path: b.jsonl
      weight: 2
train:
  max_steps: 5
"""


def write(tmp_path, text: str = GOOD) -> Path:
    p = tmp_path / "run.yaml"
    p.write_text(text)
    return p


def error(path, overrides=()) -> str:
    with pytest.raises(ConfigError) as e:
        load_config(path, Run, overrides)
    msg = str(e.value)
    assert "\n" not in msg
    return msg


def test_a_good_file_and_its_defaults(tmp_path):
    run = load_config(write(tmp_path), Run)
    assert run.model.path == "runs/tiny" and run.model.lora is None
    assert [s.weight for s in run.data.train] == [1.0, 2.0] and run.train.max_steps == 5
    assert run.target == Reasoner()


# ------------------------------------------------------------------------------------ the file


def test_bad_yaml_names_the_line(tmp_path):
    p = write(tmp_path, "model:\n  path: [a, b\ndata: 1\n")
    assert error(p).startswith(f"{p}:3: not valid YAML (")


def test_a_key_written_twice_names_both_lines(tmp_path):
    p = write(tmp_path,
              "# header\nmodel: runs/old\ntrain:\n  max_steps: 5\nmodel:\n  path: runs/new\n")
    msg = error(p)
    assert msg.startswith(f"{p}:5: not valid YAML")
    assert "'model' appears twice (lines 2 and 5)" in msg


def test_the_same_key_in_different_mappings_is_fine(tmp_path):
    assert read_yaml(write(tmp_path, "a: {x: 1}\nb: {x: 2}\n")) == {"a": {"x": 1}, "b": {"x": 2}}


@pytest.mark.parametrize("text, line", [("a: [1, 2\nb: 3\n", 2), ("a: 1\n  b: 2\n", 2),
                                        ("a: !!python/object:os.system ls\n", 1)])
def test_invalid_yaml_names_the_line(tmp_path, text, line):
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    with pytest.raises(ConfigError, match=rf"^{p}:{line}: not valid YAML \("):
        read_yaml(p)


def test_missing_directory_and_binary_files(tmp_path):
    with pytest.raises(ConfigError, match="no such file"):
        read_yaml(tmp_path / "none.yaml")
    with pytest.raises(ConfigError, match="is a directory"):
        load_config(tmp_path, Run)
    (tmp_path / "bin.yaml").write_bytes(b"\xff\xfe\x00\x81")
    with pytest.raises(ConfigError, match="not a text file"):
        load_config(tmp_path / "bin.yaml", Run)


@pytest.mark.parametrize("text, what", [("", "empty"), ("{}\n", "empty"), ("- 1\n", "a list"),
                                        ("just words\n", "a str")])
def test_a_file_that_is_not_a_mapping(tmp_path, text, what):
    p = write(tmp_path, text)
    assert error(p) == (f"{p}: the config is {what}; expected a mapping of: model, data, train, "
                        "prices, target, note")


def test_every_shipped_config_reads_without_duplicate_keys():
    files = sorted((ROOT / "configs").rglob("*.yaml")) + sorted((ROOT / "eval").rglob("*.yaml"))
    assert len(files) > 10
    for f in files:
        read_yaml(f)


# --------------------------------------------------------------------------- validation errors


def test_unknown_field_with_its_line_and_the_allowed_ones(tmp_path):
    p = write(tmp_path, GOOD.replace("  max_steps: 5\n", "  max_steps: 5\n  max_step: 6\n"))
    assert error(p) == f"{p}:11: train.max_step: unknown field; allowed: max_steps, seed"
    p = write(tmp_path, GOOD + "trian: {}\n")
    assert error(p) == (f"{p}:11: trian: unknown field; allowed: model, data, train, prices, "
                        "target, note")


def test_wrong_type_with_its_line(tmp_path):
    p = write(tmp_path, GOOD.replace("max_steps: 5", "max_steps: many"))
    assert error(p) == (f"{p}:10: train.max_steps: Input should be a valid integer, unable to "
                        "parse string as an integer (got 'many')")


def test_nested_field_path_through_lists_and_dicts(tmp_path):
    p = write(tmp_path, GOOD.replace("weight: 2", "weight: 0"))
    assert error(p) == f"{p}:8: data.train.1.weight: Input should be greater than 0 (got 0)"
    p = write(tmp_path, GOOD + "prices:\n  big-model: lots\n")
    assert error(p).startswith(f"{p}:12: prices.big-model: Input should be a valid number")


def test_a_missing_field_names_its_parent_line(tmp_path):
    p = write(tmp_path, GOOD.replace("    - path: a.jsonl\n", "    - weight: 3\n"))
    assert error(p) == f"{p}:6: data.train.0.path: Field required"
    p = write(tmp_path, GOOD.replace("model:\n  path: runs/tiny\n", ""))
    assert error(p) == f"{p}: model: Field required"


def test_union_members_are_not_part_of_the_path(tmp_path):
    p = write(tmp_path, GOOD + "target: {kind: noisy, p: 2}\n")
    assert error(p) == f"{p}:11: target.p: Input should be less than or equal to 1 (got 2)"
    p = write(tmp_path, GOOD + "target: {kind: reasoner, p: 0.5}\n")
    assert error(p) == f"{p}:11: target.p: unknown field; allowed: kind, name"
    p = write(tmp_path, GOOD.replace("path: runs/tiny",
                                     "path: runs/tiny\n  lora: {target_modules: 5}"))
    assert error(p) == f"{p}:4: model.lora.target_modules: Input should be a valid list (got 5)"


# ----------------------------------------------------------------------------------- overrides


def test_dotted_overrides_are_applied(tmp_path):
    p = write(tmp_path)
    run = load_config(p, Run, ["--train.max_steps", "7", "--model.lora", "{r: 4}", "--note=a b",
                               "--model.lora.target_modules", "[q, v]", "--target.kind=noisy"])
    assert run.train.max_steps == 7 and run.note == "a b" and run.target == Noisy(kind="noisy")
    assert run.model.lora == Lora(r=4, target_modules=["q", "v"])
    # values are YAML: null, lists, numbers
    assert load_config(p, Run, ["--model.lora", "null"]).model.lora is None
    # a bare field goes to the one section that has it, else to the top-level field
    assert load_config(p, Run, ["--max-steps", "9"]).train.max_steps == 9
    assert load_config(p, Run, ["--note", "x"]).note == "x"
    # a command's own flags: a mapping, values as given (a path stays a string)
    run = load_config(p, Run, {"model.path": "2024-01-01", "note": "null"})
    assert (run.model.path, run.note) == ("2024-01-01", "null")


def test_a_bad_override_is_named(tmp_path):
    p = write(tmp_path)
    assert error(p, ["--train.max_steps", "x"]) == (
        f"{p}: --train.max_steps: Input should be a valid integer, unable to parse string as an "
        "integer (got 'x')")
    assert error(p, ["--train.max_stepz", "1"]) == (
        f"{p}: --train.max_stepz: unknown field; allowed: max_steps, seed")
    assert error(p, ["--max_steps", "x"]).startswith(f"{p}: --max_steps: train.max_steps: Input")
    assert error(p, ["--data.train", "[{path: x, weight: -1}]"]) == (
        f"{p}: --data.train: data.train.0.weight: Input should be greater than 0 (got -1)")
    assert error(p, ["--seed", "1"]) == (
        f"{p}: --seed: sections data, train define(s) it; use --section.seed")
    assert error(p, ["--nope", "1"]) == f"{p}: --nope: no section define(s) it; use --section.nope"
    assert error(p, ["--note"]) == "--note: missing value"
    assert error(p, ["note", "x"]) == (
        "unexpected argument 'note': overrides look like --section.field value")


def test_no_file_only_overrides():
    run = load_config(None, Run, {"model.path": "m", "data.train": [{"path": "a"}]})
    assert run.model.path == "m" and run.data.train[0].path == "a"
    with pytest.raises(ConfigError) as e:
        load_config(None, Run, {"model.path": "m", "data.train": []})
    assert str(e.value) == "--data.train: List should have at least 1 item after validation, not 0"
    with pytest.raises(ConfigError) as e:
        load_config(None, Run, {"model.path": "m"})
    assert str(e.value) == "command line: data: Field required"


def test_settings_help_is_generated_from_the_fields():
    """eval.config_file.settings_help: each setting's line from its field (pydantic description or
    a dataclass field's metadata), a section as a heading over dotted keys, an optional section
    and a choice of models as one line, and the further keys an open model takes."""
    import dataclasses
    from typing import ClassVar, Optional, Union

    from pydantic import BaseModel, ConfigDict, Field

    from eval.config_file import settings_help

    @dataclasses.dataclass
    class Search:
        budget: int = dataclasses.field(default=50, metadata={"help": "evaluations per story"})

    class Lora(BaseModel):
        r: int = Field(16, description="rank")

    class Other(BaseModel):
        p: float = Field(0.5, description="p")

    class Model(BaseModel):
        model_config = ConfigDict(extra="allow")
        other_keys: ClassVar[str] = "any backend option"
        name: str = Field(description="which model")

    class Run(BaseModel):
        out: str = Field("runs/x", description="where it goes")
        model: Model = Field(description="the model")
        search: Search = Field(default_factory=Search, description="the search")
        lora: Optional[Lora] = Field(None, description="LoRA adapters; null: all weights")
        target: Union[Lora, Other] = Field(default_factory=Other, description="one of two")

    assert settings_help(Run, flag="--") == [
        '--out (default "runs/x"): where it goes',
        "model:", "  --model.name (required): which model", "  --model.KEY: any backend option",
        "search:", "  --search.budget (default 50): evaluations per story",
        "--lora (default null): LoRA adapters; null: all weights",
        '--target (default {"p": 0.5}): one of two']


@pytest.mark.parametrize("command, shows", [
    (["python", "-m", "tomsynth", "--help"], ["filter.max_text_chars (default 1000): ",
                                              "generator.KEY: any option of that backend"]),
    (["python", "-m", "exploretom", "search", "--help"], ["search.budget (default 50): ",
                                                          "grid.people (default [2, 3, 4]): "]),
    (["python", "-m", "exploretom", "bench-search", "--help"], ["unreadable (default \"wrong\"): "]),
    (["python", "-m", "eval", "run", "--help"], ["  permutations (default null): ask every",
                                                 "    sample (default null): N items drawn"]),
])
def test_config_files_settings_are_in_the_commands_help(command, shows, capsys):
    """Every field of the data modules' config files carries its help, and their commands print
    it (as rl.sft/rl.train do for training runs: tests/rl/test_config.py)."""
    import dataclasses
    import importlib

    from pydantic import BaseModel

    from exploretom.search.astar import SearchConfig
    from exploretom.search.run import RunConfig
    from tomsynth.config import Config

    def models_in(model):
        yield model
        for f in model.model_fields.values():
            if isinstance(f.annotation, type) and issubclass(f.annotation, BaseModel):
                yield from models_in(f.annotation)

    for m in (*models_in(Config), *models_in(RunConfig)):
        for name, f in m.model_fields.items():
            assert f.description, f"{m.__name__}.{name} has no help"
    assert all(f.metadata.get("help") for f in dataclasses.fields(SearchConfig))
    main = importlib.import_module(f"{command[2]}.cli").main
    with pytest.raises(SystemExit):
        main(command[3:])
    out = capsys.readouterr().out
    for text in shows:
        assert text in out, text
