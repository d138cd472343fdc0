"""An option a backend does not take is one line naming it and the options it accepts, for every
backend (`python -m eval run ... -O foo=1`), before any model is looked for or loaded. "Every
backend" is every kind the registry finds (eval.backends.BACKENDS)."""
import pytest

from eval.backends import BACKENDS, BackendError, accepted_options, backend_class, load_backend
from eval.cli import main

# the kinds that name the options they take (vLLM's lets unknown ones through to its engine)
NAMING_THEIR_OPTIONS = [k for k in BACKENDS if accepted_options(backend_class(k)) is not None]
WITH_AN_OPTIONS_MODEL = [k for k in BACKENDS if getattr(backend_class(k), "options_model", None)]


@pytest.mark.parametrize("kind", NAMING_THEIR_OPTIONS)
def test_unknown_option_names_it_and_the_accepted_ones(kind):
    with pytest.raises(BackendError) as e:
        load_backend(kind, "no/such-model", foo=1)
    msg = str(e.value)
    accepted = ", ".join(accepted_options(backend_class(kind))) or "none"
    assert msg == f"{kind} backend: unknown option 'foo'; accepted: {accepted}"


def test_several_unknown_options_are_named_together():
    with pytest.raises(BackendError, match=r"unknown options 'bar', 'foo'; accepted: batch_size, chat_template, "):
        load_backend("hf", "no/such-model", foo=1, bar=2)


def test_accepted_options_come_from_each_backends_options_model():
    assert accepted_options(backend_class("hf"))[:3] == ["batch_size", "chat_template", "device"]
    assert "concurrency" in accepted_options(backend_class("openai"))
    # vLLM's options model lets the ones it does not name through to its engine
    assert accepted_options(backend_class("vllm")) is None
    assert "chunk_size" in backend_class("vllm").options_model.model_fields
    for kind in WITH_AN_OPTIONS_MODEL:
        model = backend_class(kind).options_model
        assert accepted_options(backend_class(kind)) == (
            None if model.model_config.get("extra") == "allow" else sorted(model.model_fields))


@pytest.mark.parametrize("kind, option, value", [("hf", "batch_size", 0), ("hf", "dtype", "int8"),
                                                  ("openai", "concurrency", 0),
                                                  ("anthropic", "timeout_s", -1),
                                                  ("vllm", "chunk_size", 0)])
def test_a_value_out_of_range_is_one_line_naming_the_option(kind, option, value):
    from eval.backends import BackendConfigError

    with pytest.raises(BackendConfigError) as e:
        load_backend(kind, "runs/none", **{option: value})
    assert str(e.value).startswith(f"{kind} backend option '{option}': ") and "\n" not in str(e.value)


@pytest.mark.parametrize("kind", WITH_AN_OPTIONS_MODEL)
def test_a_bad_value_is_one_line_naming_the_option_for_every_backend(kind):
    """Each option of each backend, given a value no option takes (a Python object)."""
    from eval.backends import BackendConfigError

    for option in backend_class(kind).options_model.model_fields:
        with pytest.raises(BackendConfigError) as e:
            load_backend(kind, "runs/none", **{option: object()})
        assert str(e.value).startswith(f"{kind} backend option '{option}': ") and "\n" not in str(e.value)


def test_known_options_still_reach_the_model_check():
    with pytest.raises(BackendError, match="model ./no-such-folder"):
        load_backend("hf", "./no-such-folder", batch_size=2)


@pytest.mark.parametrize("kind", NAMING_THEIR_OPTIONS)
def test_cli_prints_one_line_and_exits_with_an_error(kind, capsys, tmp_path):
    code = main(["run", "tomi", "--backend", kind, "-O", "foo=1", "--model", "X",
                 "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert code != 0 and "Traceback" not in err and len(err.splitlines()) == 1
    assert err.startswith(f"error: {kind} backend: unknown option 'foo'; accepted: ")


def test_a_model_in_a_config_file_refuses_what_its_backend_refuses_on_the_options_line(tmp_path):
    """eval.backends.spec.ModelSpec: `backend` and `model`, every other key an option of that
    backend, checked when the file loads; an error names the option's own line."""
    from pydantic import BaseModel

    from eval.backends.spec import ModelSpec
    from eval.config_file import ConfigError, load_config

    class Run(BaseModel):
        generator: ModelSpec

    good = "generator:\n  backend: openai\n  model: m\n  base_url: http://x/v1\n  concurrency: 8\n"
    path = tmp_path / "run.yaml"
    path.write_text(good)
    spec = load_config(path, Run).generator
    assert (spec.backend, spec.model) == ("openai", "m")
    assert spec.options == {"base_url": "http://x/v1", "concurrency": 8}
    for edit, error in (
            (("concurrency: 8", "concurrency: 0"),
             ":5: generator.concurrency: Input should be greater than or equal to 1 (got 0)"),
            (("base_url", "bas_url"), ":4: generator.bas_url: unknown key; allowed: backend, model, "
                                      "or an option of the openai backend: api_key_env, "),
            (("backend: openai", "backend: bedrock"), ":2: generator.backend: unknown backend "
                                                      f"'bedrock'; choose one of: {', '.join(BACKENDS)}")):
        path.write_text(good.replace(*edit))
        with pytest.raises(ConfigError) as e:
            load_config(path, Run)
        assert str(e.value).startswith(f"{path}{error}"), str(e.value)


def test_every_backend_is_found_by_its_file_and_named_as_it():
    """A backend is its module in eval/backends/kinds/ (and its test): the kind is the file's name,
    its `BACKEND` a Backend subclass of that name. (tests/eval/test_registries.py adds one.)"""
    from pathlib import Path

    import eval.backends.kinds as package
    from eval.backends import Backend

    files = sorted(p.stem for p in Path(package.__file__).parent.glob("*.py") if not p.stem.startswith("_"))
    assert BACKENDS == {k: f"eval.backends.kinds.{k}" for k in files}
    assert {"hf", "vllm", "openai", "anthropic"} <= set(BACKENDS)
    for kind in BACKENDS:
        cls = backend_class(kind)
        assert issubclass(cls, Backend) and cls.name == kind


@pytest.mark.parametrize("kind", [k for k in BACKENDS if backend_class(k).local_weights])
def test_a_backend_of_local_weights_names_a_missing_model_folder_before_loading(kind):
    with pytest.raises(BackendError) as e:
        load_backend(kind, "./no-such-folder")
    assert str(e.value).startswith("model ./no-such-folder: no such folder") and "\n" not in str(e.value)
