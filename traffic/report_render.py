"""Rendering of a report's sections: Markdown (figures written beside it as PNGs) and
self-contained HTML (plots embedded as base64, no external assets, no JavaScript)."""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

from traffic.report_model import Note, Section, Table


def render_markdown(title: str, intro: list[str], sections: list[Section],
                     figure_dir: Path) -> str:
    lines = [f"# {title}", ""]
    for line in intro:
        lines += [line, ""]
    for section in sections:
        lines += [f"## {section.title}", ""]
        for block in section.blocks:
            if isinstance(block, Note):
                lines += [block.text, ""]
            elif isinstance(block, Table):
                lines.append("| " + " | ".join(block.headers) + " |")
                lines.append("|" + "|".join("---" for _ in block.headers) + "|")
                lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |"
                          for row in block.rows]
                lines.append("")
            else:
                figure_dir.mkdir(exist_ok=True)
                (figure_dir / f"{block.name}.png").write_bytes(block.png)
                lines += [f"![{block.caption}]({figure_dir.name}/{block.name}.png)", "",
                          f"*{block.caption}*", ""]
    return "\n".join(lines)


CSS = """body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;
text-align:right;font-size:90%}th{background:#f0f0f0}td:first-child{text-align:left}
img{max-width:100%}.note{color:#666}figcaption{font-size:85%;color:#555}"""


def _inline_markup(text: str) -> str:
    escaped = html.escape(text)
    escaped = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", escaped)
    escaped = re.sub(r"`(.+?)`", r"<code>\1</code>", escaped)
    return re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", r"<a href='\2'>\1</a>", escaped)


def render_html(title: str, intro: list[str], sections: list[Section]) -> str:
    out = ["<!DOCTYPE html>", "<html><head><meta charset='utf-8'>",
           f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>",
           f"<h1>{html.escape(title)}</h1>"]
    out += [f"<p>{_inline_markup(line)}</p>" for line in intro if line]
    for section in sections:
        out.append(f"<h2>{html.escape(section.title)}</h2>")
        for block in section.blocks:
            if isinstance(block, Note):
                out.append(f"<p class='note'>{_inline_markup(block.text)}</p>")
            elif isinstance(block, Table):
                out.append("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>"
                                                   for h in block.headers) + "</tr>")
                out += ["<tr>" + "".join(f"<td>{_inline_markup(c)}</td>" for c in row) + "</tr>"
                        for row in block.rows]
                out.append("</table>")
            else:
                data = base64.b64encode(block.png).decode()
                out.append(f"<figure><img alt='{html.escape(block.caption)}' "
                           f"src='data:image/png;base64,{data}'><figcaption>"
                           f"{html.escape(block.caption)}</figcaption></figure>")
    out.append("</body></html>")
    return "\n".join(out)


def write_document(directory: Path, title: str, intro: list[str],
           sections: list[Section]) -> tuple[Path, Path]:
    md, page = directory / "report.md", directory / "report.html"
    md.write_text(render_markdown(title, intro, sections, directory / "figures"))
    page.write_text(render_html(title, intro, sections))
    return md, page
