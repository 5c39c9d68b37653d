"""Parse a report page with html.parser: the claims table rows, the images (decoded), sections."""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from PIL import Image


@dataclass
class Page:
    rows: list[dict] = field(default_factory=list)  # id, status, class, text
    images: list[dict] = field(default_factory=list)  # src kind, width, height
    sections: set[str] = field(default_factory=set)


class _Parser(HTMLParser):
    def __init__(self, base: Path) -> None:
        super().__init__()
        self.base = base
        self.page = Page()
        self.in_claims = self.in_row = False
        self.cell: dict | None = None
        self.row: list[dict] = []
        self.row_id = ""
        self.depth_table = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.depth_table += 1
            if a.get("id") == "claims":
                self.in_claims = True
        elif tag == "tr" and self.in_claims:
            self.in_row, self.row, self.row_id = True, [], a.get("data-claim", "")
        elif tag == "td" and self.in_row:
            self.cell = {"class": a.get("class", ""), "text": ""}
        elif tag == "section" and a.get("class") == "claim":
            self.page.sections.add(a.get("id", ""))
        elif tag == "img":
            self.page.images.append(self._image(a.get("src", "")))

    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None:
            self.row.append(self.cell)
            self.cell = None
        elif tag == "tr" and self.in_row:
            self.in_row = False
            if self.row:  # header rows have <th> only
                first, status = self.row[0], self.row[-1]
                assert self.row_id and self.row_id in first["text"], (self.row_id, first["text"])
                self.page.rows.append({
                    "id": self.row_id,
                    "status": next(s for s in ("not applicable", "incomplete", "holds", "violated")
                                   if status["text"].startswith(s)),
                    "class": status["class"],
                    "text": status["text"],
                })
        elif tag == "table":
            self.depth_table -= 1
            self.in_claims = False

    def handle_data(self, data):
        if self.cell is not None:
            self.cell["text"] += data

    def _image(self, src: str) -> dict:
        if src.startswith("data:image/png;base64,"):
            data = base64.b64decode(src.split(",", 1)[1], validate=True)
        else:
            data = (self.base / src).read_bytes()  # raises if the file is missing
        img = Image.open(io.BytesIO(data))
        img.load()  # decodes fully; raises on a corrupt PNG
        return {"kind": "embedded" if src.startswith("data:") else "file",
                "width": img.width, "height": img.height}


def parse_report(index: Path) -> Page:
    p = _Parser(Path(index).parent)
    p.feed(Path(index).read_text(encoding="utf-8"))
    return p.page
