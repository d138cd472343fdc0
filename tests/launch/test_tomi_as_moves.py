"""launch/tomi_as_moves.py: a stated placement becomes a move by someone in the room; the copy
loads as ToMi with the same questions, answers and kinds."""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "launch"))
import tomi_as_moves  # noqa: E402

from eval.benchmarks import tomi  # noqa: E402
from eval.rows import meta  # noqa: E402

STORY = """1 Aria entered the front_yard.
2 Noah entered the playroom.
3 Aiden entered the front_yard.
4 The grapefruit is in the green_bucket.
5 Aria moved the grapefruit to the blue_container.
6 Aiden exited the front_yard.
7 Where will Aiden look for the grapefruit?\tgreen_bucket\t4
1 The pear is in the red_box.
2 Where is the pear really?\tred_box\t1""".splitlines()


def test_a_stated_placement_is_made_by_the_latest_person_of_the_busiest_room():
    out, rewritten = tomi_as_moves.as_moves(STORY)
    # Aria and Aiden are in the front yard, Noah alone in the playroom: Aiden came in last
    assert out[3] == "4 Aiden moved the grapefruit to the green_bucket."
    # nobody in any room: the sentence stays
    assert out[7] == "1 The pear is in the red_box." and rewritten == 1
    assert [o for k, o in enumerate(out) if k != 3] == [s for k, s in enumerate(STORY) if k != 3]


def test_the_copy_of_the_shared_sample_loads_with_the_same_questions(tmp_path):
    src = ROOT.parent / "shared" / "benchmarks" / "tomi"
    assert tomi_as_moves.main([str(src), str(tmp_path)]) == 0
    before, after = tomi.load(src), tomi.load(tmp_path)

    def questions(rows):
        return [(r["id"], r["answer"], meta(r)["question_type"]) for r in rows]

    assert questions(before) == questions(after) and len(after) == 99
    assert all(" is in the " not in r["prompt"][-1]["content"] for r in after)


def test_a_folder_without_the_files_is_refused_in_one_line(tmp_path, capsys):
    assert tomi_as_moves.main([str(tmp_path), str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
