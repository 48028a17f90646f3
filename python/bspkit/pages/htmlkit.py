"""The HTML toolkit of bspkit's pages (the run report, the comparison, the IMH sections, the
validation and profile reports): escaping, the number formats (all through units.quantity),
tables, embedded images, a report section, the contents and the page with its style."""

from __future__ import annotations

import base64
import datetime as _dt
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bspkit.units import quantity
from bspkit.version import __version__

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1.5em auto; max-width: 1250px;
       color: #222; line-height: 1.4; padding: 0 1em; }
h1 { font-size: 1.6em; border-bottom: 2px solid #345; padding-bottom: .2em; }
h2 { font-size: 1.25em; margin-top: 1.8em; border-bottom: 1px solid #bbb; }
h3 { font-size: 1.05em; margin-top: 1.2em; }
table { border-collapse: collapse; margin: .6em 0 1em 0; font-size: .88em; }
th, td { border: 1px solid #ccc; padding: .25em .55em; text-align: right; vertical-align: top; }
th { background: #eef2f6; text-align: center; }
td.l, th.l { text-align: left; }
td { white-space: nowrap; }
td.l, td:last-child { white-space: normal; }
tr.group td { background: #f6f6f6; font-style: italic; text-align: left; }
.fail { color: #a00; font-size: .92em; }
.pass { color: #060; font-weight: bold; }
.bad { color: #a00; font-weight: bold; }
.warn { background: #fff4e0; border-left: 4px solid #e90; padding: .4em .8em; margin: .5em 0; }
.ok { background: #eef8ee; border-left: 4px solid #4a4; padding: .4em .8em; margin: .5em 0; }
.note { color: #555; font-size: .9em; }
img { max-width: 100%; border: 1px solid #ddd; margin: .3em 0; }
figure { margin: 1em 0; }
figcaption { color: #555; font-size: .88em; }
.best { font-weight: bold; background: #eaf5ea; }
code { background: #f3f3f3; padding: 0 .2em; }
p.summary { font-size: 1.05em; }
nav.toc { background: #f6f8fa; border: 1px solid #dde; padding: .4em 1em; margin: 1em 0; }
nav.toc ul { columns: 3; margin: .3em 0; padding-left: 1.2em; }
details > summary { cursor: pointer; color: #a00; margin: .5em 0; }
details > summary.plain { color: #235; }
"""


def esc(v: Any) -> str:
    return html.escape("" if v is None else str(v))


# Every number of the pages goes through units.quantity; these name its common uses.


def num(v: Any, digits: int = 4) -> str:
    """A number without a unit (a ratio, a count)."""
    return quantity(v, "", digits)


def seconds(v: float | None) -> str:
    """A time, scaled to ns, µs, ms or s."""
    return quantity(v, "s")


def per_word(v: float | None) -> str:
    """A time per word (g), in ns/word."""
    return quantity(v, "s/word")


def words(v: float | None) -> str:
    """A size in words, the unit in the column's header."""
    return quantity(v, "words", 3, show_unit=False)


def pct(v: float | None, digits: int = 3) -> str:
    return quantity(v, "%", digits)


def signed_pct(v: float | None) -> str:
    """A relative error with its sign: +3.2 %."""
    return "–" if v is None else ("+" if v >= 0 else "") + pct(v)


def ns_col(v: float | None) -> str:  # for columns headed [ns/word] or [ns]
    return quantity(v, "ns", show_unit=False)


def us_col(v: float | None) -> str:  # for columns headed [µs]
    return quantity(v, "µs", show_unit=False)


def img(png: bytes, alt: str, caption: str = "") -> str:
    b64 = base64.b64encode(png).decode("ascii")
    cap = f"<figcaption>{esc(caption)}</figcaption>" if caption else ""
    return f'<figure><img src="data:image/png;base64,{b64}" alt="{esc(alt)}">{cap}</figure>'


def table(head: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> str:
    """Cells are HTML already; the first `left` columns are left-aligned."""
    out = ["<table><tr>"]
    out += [f'<th class="{"l" if i < left else ""}">{h}</th>' for i, h in enumerate(head)]
    out.append("</tr>")
    for r in rows:
        if isinstance(r, str):  # a group row
            out.append(f'<tr class="group"><td colspan="{len(head)}">{r}</td></tr>')
            continue
        out.append(
            "<tr>" + "".join(f'<td class="{"l" if i < left else ""}">{c}</td>' for i, c in enumerate(r)) + "</tr>"
        )
    out.append("</table>")
    return "".join(out)


@dataclass
class Section:
    """HTML of one report section and the number of images in it."""

    parts: list[str] = field(default_factory=list)
    images: int = 0

    def add(self, *html: str) -> None:
        self.parts.extend(html)

    def image(self, png: bytes, alt: str, caption: str = "") -> None:
        self.parts.append(img(png, alt, caption))
        self.images += 1

    @classmethod
    def headed(cls, anchor: str, section_id: str, title: str) -> Section:
        """A section that starts with its heading (id anchor + section_id, for the contents)."""
        section = cls()
        section.add(f'<h2 id="{anchor}{section_id}">{title}</h2>')
        return section


NOT_MEASURED_HTML = "<p>not measured in this run</p>"


def contents(html: str, anchor: str) -> str:
    """The table of contents: a link to every section heading (h2 with an id) of a run's body."""
    items = re.findall(r'<h2 id="([^"]+)">(.*?)</h2>', html)
    links = "".join(f'<li><a href="#{i}">{title}</a></li>' for i, title in items if i != f"{anchor}summary")
    return f'<nav class="toc" id="{anchor}contents"><b>Contents</b><ul>{links}</ul></nav>'


def page(title: str, body: str) -> str:
    """A self-contained page: the style inline, the title, which bspkit wrote it and when."""
    now = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>\n"
        f'<h1>{esc(title)}</h1>\n<p class="note">written by bspkit {__version__} on {now}</p>\n'
        f"{body}\n</body></html>\n"
    )


def verdict_box(level: str, sentence: str, advice: str, notes: Sequence[str] = ()) -> str:
    """A verdict (bspkit.model.verdict.Verdict) for a page: a box, green unless a re-run is
    advised, with the verdict, what next and each note."""
    css = "warn" if level == "re-run" else "ok"
    extra = "".join(f'<p class="note">{esc(n)}</p>' for n in notes)
    return f'<div class="{css} verdict"><p><b>{esc(sentence)}</b></p><p>Next: {esc(advice)}</p>{extra}</div>'
