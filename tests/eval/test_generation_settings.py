"""The generation settings, declared once (eval.backends.base.GenerationSettings): their bounds
as one-line errors, what results and cache keys record of them, and the config sections built
from them (`generation_model`) keeping each field's bound, help and the section's defaults."""
from __future__ import annotations

import pytest

from eval.backends.base import GenerationConfig, GenerationSettings, generation_model
from eval.config_file import ConfigError, load_config, settings_help


@pytest.mark.parametrize("given, message", [
    ({"max_new_tokens": 0}, "max_new_tokens must be >= 1, got 0"),
    ({"temperature": -1}, "temperature must be >= 0, got -1.0"),
    ({"top_p": 1.5}, "top_p must be in (0, 1], got 1.5"),
    ({"n": 0}, "n must be >= 1, got 0"),
    ({"top_k": 0}, "top_k must be >= 1, got 0"),
    ({"max_new_tokens": "many"}, "max_new_tokens: Input should be a valid integer"),
    ({"temprature": 1}, "temprature: Extra inputs are not permitted"),
])
def test_a_bad_setting_is_one_line(given, message):
    with pytest.raises(ValueError) as e:
        GenerationSettings(**given)
    assert str(e.value).startswith(message) and "\n" not in str(e.value)


def test_what_results_record_top_k_only_when_set():
    assert GenerationConfig is GenerationSettings
    plain = GenerationSettings(stop=["X"])
    assert plain.stop == ("X",) and plain == GenerationSettings(stop=("X",))
    # the order and keys results and cache keys had before top_k existed
    assert plain.as_dict() == {"max_new_tokens": 512, "temperature": 0.0, "top_p": 1.0, "n": 1,
                               "seed": 0, "stop": ["X"]}
    assert list(plain.as_dict()) == ["max_new_tokens", "temperature", "top_p", "n", "seed", "stop"]
    assert GenerationSettings(top_k=5).as_dict()["top_k"] == 5
    assert hash(plain) == hash(GenerationSettings(stop=("X",)))


def test_a_section_of_some_settings_keeps_their_bounds_help_and_its_defaults(tmp_path):
    class Section(generation_model("max_new_tokens", "temperature", temperature=0.8)):
        pass

    assert list(Section.model_fields) == ["max_new_tokens", "temperature"]
    assert Section().max_new_tokens == 512 and Section().temperature == 0.8
    assert settings_help(Section) == ["max_new_tokens (default 512): token limit of each reply",
                                      "temperature (default 0.8): sampling temperature (0: greedy)"]
    path = tmp_path / "c.yaml"
    path.write_text("max_new_tokens: 4\ntemperature: -2\n")
    with pytest.raises(ConfigError, match=r"c.yaml:2: temperature must be >= 0, got -2.0$"):
        load_config(path, Section)
    path.write_text("top_p: 0.5\n")
    with pytest.raises(ConfigError, match="top_p: unknown field; allowed: max_new_tokens, temperature"):
        load_config(path, Section)


def test_an_optional_section_leaves_settings_to_the_level_below(tmp_path):
    Optional = generation_model("max_new_tokens", optional=True, null="the run's limit")
    assert Optional().max_new_tokens is None
    assert settings_help(Optional) == [
        "max_new_tokens (default null): token limit of each reply; null: the run's limit"]
    path = tmp_path / "c.yaml"
    path.write_text("max_new_tokens: 0\n")
    with pytest.raises(ConfigError, match="max_new_tokens must be >= 1, got 0"):
        load_config(path, Optional)
    with pytest.raises(TypeError, match="top_p"):
        generation_model("max_new_tokens", top_p=0.5)
