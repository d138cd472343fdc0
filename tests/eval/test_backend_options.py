"""An option a backend does not take is one line naming it and the options it accepts, for every
backend (`python -m eval run ... -O foo=1`), before any model is looked for or loaded."""
import pytest

from eval.backends import BACKENDS, BackendError, accepted_options, backend_class, load_backend
from eval.cli import main


@pytest.mark.parametrize("kind", ["hf", "openai", "anthropic"])
def test_unknown_option_names_it_and_the_accepted_ones(kind):
    with pytest.raises(BackendError) as e:
        load_backend(kind, "no/such-model", foo=1)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(f"{kind} backend: unknown option 'foo'; accepted: ")
    assert ("batch_size" if kind == "hf" else "base_url") in msg


def test_several_unknown_options_are_named_together():
    with pytest.raises(BackendError, match=r"unknown options 'bar', 'foo'; accepted: device, "):
        load_backend("hf", "no/such-model", foo=1, bar=2)


def test_accepted_options_come_from_the_constructor_or_the_options_model():
    assert accepted_options(backend_class("hf"))[:3] == ["device", "dtype", "batch_size"]
    assert "concurrency" in accepted_options(backend_class("openai"))
    # vLLM passes options it does not name on to its engine: any name is accepted here
    assert accepted_options(backend_class("vllm")) is None
    assert set(BACKENDS) == {"hf", "vllm", "openai", "anthropic"}


def test_known_options_still_reach_the_model_check():
    with pytest.raises(BackendError, match="model ./no-such-folder"):
        load_backend("hf", "./no-such-folder", batch_size=2)


@pytest.mark.parametrize("kind", ["hf", "openai"])
def test_cli_prints_one_line_and_exits_with_an_error(kind, capsys, tmp_path):
    code = main(["run", "tomi", "--backend", kind, "-O", "foo=1", "--model", "X",
                 "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert code != 0 and "Traceback" not in err and len(err.splitlines()) == 1
    assert err.startswith(f"error: {kind} backend: unknown option 'foo'; accepted: ")
