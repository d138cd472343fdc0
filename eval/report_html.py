"""Markdown to one self-contained HTML page, the plots inlined: every report.html of the project
(`eval run` and `compare`, the demo's and the transfer report). Only what those reports write:
headings, paragraphs with bold and code, lists of `- ` lines (an indented line goes on in the item
above it), tables (a column whose alignment row says `---:` is right-aligned, as numbers are) and
images next to the Markdown file."""
from __future__ import annotations

import base64
import html as h
import re
from pathlib import Path


def html(md: str, folder: Path) -> str:
    """The page of `md`; images are read from `folder` and inlined (a missing one stays text)."""
    body, table = [], []

    def inline(text: str) -> str:
        text = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", h.escape(text))
        return re.sub(r"`(.+?)`", r"<code>\1</code>", text)

    def flush_table():
        if table:
            # the separator row, alignment colons included ("|---|---:|")
            rule = next((r for r in table if re.fullmatch(r"\|[-:| ]+\|", r)), "")
            right = [c.strip().endswith(":") for c in rule.strip("|").split("|")] if rule else []
            rows = [r for r in table if r != rule]
            cells = [[inline(c.strip()) for c in r.strip("|").split("|")] for r in rows]

            def row(tag: str, values: list[str]) -> str:
                return "<tr>" + "".join(
                    f"<{tag} class='num'>{c}</{tag}>" if j < len(right) and right[j]
                    else f"<{tag}>{c}</{tag}>" for j, c in enumerate(values)) + "</tr>"

            body.append("<table>" + row("th", cells[0])
                        + "".join(row("td", r) for r in cells[1:]) + "</table>")
            table.clear()

    def image(m):
        path = folder / m.group(2)
        if not path.exists():
            return h.escape(m.group(0))
        data = base64.b64encode(path.read_bytes()).decode()
        return f'<img alt="{h.escape(m.group(1))}" src="data:image/png;base64,{data}">'

    for line in md.splitlines():
        if line.startswith("|"):
            table.append(line)
            continue
        flush_table()
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            body.append(f"<h{level}>{h.escape(line.lstrip('#').strip())}</h{level}>")
        elif line.startswith("- "):  # a list item (consecutive items form one list)
            item = f"<li>{inline(line[2:])}</li>"
            if body and body[-1].endswith("</ul>"):
                body[-1] = body[-1][:-len("</ul>")] + item + "</ul>"
            else:
                body.append(f"<ul>{item}</ul>")
        elif line.startswith("  ") and line.strip() and body and body[-1].endswith("</li></ul>"):
            # an indented line under a list item goes on in that item, as Markdown reads it
            body[-1] = body[-1][:-len("</li></ul>")] + f"<br>{inline(line.strip())}</li></ul>"
        elif line.strip():
            text = re.sub(r"!\[(.*?)\]\((.*?)\)", image, inline(line))
            body.append(f"<p>{text}</p>")
    flush_table()
    style = ("body{font-family:sans-serif;max-width:1000px;margin:2em auto}"
             "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px}"
             + ("th{text-align:left}.num{text-align:right}" if any("class='num'" in b for b in body)
                else "")
             + "img{max-width:100%}")
    title = h.escape(md.splitlines()[0].lstrip("#").strip()) if md.strip() else "report"
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>"
            f"<style>{style}</style></head><body>{''.join(body)}</body></html>")
