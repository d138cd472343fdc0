"""rl.run.last_checkpoint: the run resumes from its last WHOLE checkpoint. The trainer writes
trainer_state.json last, so a folder without it was torn by a kill while it was being written."""
import json

from rl.run import last_checkpoint


def _checkpoint(folder, step, whole=True):
    path = folder / f"checkpoint-{step}"
    path.mkdir(parents=True)
    (path / "model.safetensors").write_bytes(b"")
    if whole:
        (path / "trainer_state.json").write_text(json.dumps({"global_step": step}))
    return path


def test_a_torn_checkpoint_is_passed_over_for_the_last_whole_one(tmp_path):
    assert last_checkpoint(str(tmp_path / "none")) is None
    _checkpoint(tmp_path, 1, whole=False)
    assert last_checkpoint(str(tmp_path)) is None  # only a torn one: start over
    _checkpoint(tmp_path, 2)
    _checkpoint(tmp_path, 10)  # ordered by step, not by name
    _checkpoint(tmp_path, 11, whole=False)
    (tmp_path / "checkpoint-x").mkdir()
    assert last_checkpoint(str(tmp_path)) == str(tmp_path / "checkpoint-10")
