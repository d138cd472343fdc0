"""eval.report_html: the one Markdown-to-page writer of every report.html."""
from eval.report_html import html


def test_a_page_keeps_what_the_reports_write(tmp_path):
    (tmp_path / "chart.png").write_bytes(b"\x89PNG fake")
    md = "\n".join(["# Evaluation of `sft`", "", "| Model | ToMi |", "|---|---:|", "| sft | 50.00% |",
                    "", "**sft**", "- model `runs/sft` via `hf`", "- suite `tom`", "",
                    "![Scores](chart.png)", "", "![Missing](none.png)"])
    page = html(md, tmp_path)
    assert "<title>Evaluation of `sft`</title>" in page
    # a column the alignment row right-aligns is marked so; the others are not
    assert "<tr><th>Model</th><th class='num'>ToMi</th></tr>" in page
    assert "<tr><td>sft</td><td class='num'>50.00%</td></tr>" in page
    assert ".num{text-align:right}" in page and "|---|" not in page
    assert "<p><b>sft</b></p><ul><li>model <code>runs/sft</code> via <code>hf</code></li>" in page
    assert '<img alt="Scores" src="data:image/png;base64,' in page
    assert "![Missing](none.png)" in page  # a missing image stays text


def test_a_page_without_aligned_columns_has_no_alignment_rule(tmp_path):
    page = html("# Report\n\n| a | b |\n|---|---|\n| 1 | 2 |\n", tmp_path)
    assert "<tr><td>1</td><td>2</td></tr>" in page and ".num" not in page


def test_an_indented_line_goes_on_in_the_list_item_above_it(tmp_path):
    page = html("- ToMi by kind: true 50.\n  Names: last 51 / 30.\n- Hi-ToM by kind: true 28.\n\nAfter.", tmp_path)
    assert ("<ul><li>ToMi by kind: true 50.<br>Names: last 51 / 30.</li>"
            "<li>Hi-ToM by kind: true 28.</li></ul><p>After.</p>") in page
