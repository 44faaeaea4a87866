"""How much drawing a PDF page asks for, measured before any page is rendered.

A page's content stream is a program: a few kB of Flate (or Flate of Flate) can inflate to
hundreds of MB of operators, and a Form XObject drawn ten times from a form drawn ten times
... multiplies a tiny stream into millions of operators. MuPDF renders, extracts text from
and OCR-renders such a page for minutes (13 s for 28 MB of short lines, before the OCR and
chart passes) and cannot be interrupted from Python (its calls hold the GIL). So the PDF
loader measures every page first and refuses the document (`TooLarge`) past
CARTA_MAX_PAGE_CONTENT_BYTES on a page or CARTA_MAX_CONTENT_BYTES in all.

The measure is the decoded bytes a page executes: its content streams, plus each Form
XObject's own measure once per `Do` that draws it. Streams are decoded by MuPDF itself
(every filter, chains included) a buffer at a time and skipped, never held, and the count
stops just past the limit, so measuring costs bounded memory and at most about `limit` bytes
of decoding. What it does not bound: operators that are each expensive (ten thousand
full-page fills are 170 kB and seconds per rendering), patterns and Type 3 glyphs.
"""

from __future__ import annotations

import re
from collections import Counter

import pymupdf

# `/Name Do`: a name runs until whitespace or a delimiter (PDF 32000-1, 7.2.2)
_DO = re.compile(rb"/([^\s/\[\]()<>{}%]+)\s*Do\b")


def decoded_length(doc: pymupdf.Document, xref: int, limit: int) -> int:
    """The decoded length of stream `xref`, counted up to `limit` + 1 bytes (a broken
    stream counts what MuPDF can decode of it, as rendering would)."""
    pdf = pymupdf.mupdf.pdf_specifics(doc.this)
    try:
        stream = pymupdf.mupdf.pdf_open_stream_number(pdf, xref)
        return int(pymupdf.mupdf.fz_skip(stream, limit + 1))
    except Exception:  # noqa: BLE001 - MuPDF's errors: an unreadable stream draws nothing
        return 0


def page_content_bytes(doc: pymupdf.Document, page: pymupdf.Page, limit: int) -> int:
    """The decoded bytes of operators `page` executes, forms counted once per use; a value
    over `limit` means "over the limit" (counting stops there)."""
    forms: dict[int, list[tuple[str, int]]] = {}  # invoker xref (0: the page) -> (name, form xref)
    try:
        contents, xobjects = page.get_contents(), page.get_xobjects()
    except Exception:  # noqa: BLE001 - a resource tree MuPDF cannot list: it draws none of it
        return 0
    for xref, name, invoker, _bbox in xobjects:
        forms.setdefault(invoker, []).append((name, xref))
    total = 0
    for xref in contents:
        total += decoded_length(doc, xref, limit - total)
        if total > limit:
            return total
    if not forms.get(0):
        return total
    uses = _uses(doc, contents)
    measured: dict[int, int] = {}
    for name, xref in forms[0]:
        total += uses.get(name.encode(), 1) * _form_bytes(doc, xref, forms, measured, limit, set())
        if total > limit:
            return total
    return total


def _form_bytes(
    doc: pymupdf.Document,
    xref: int,
    forms: dict[int, list[tuple[str, int]]],
    measured: dict[int, int],
    limit: int,
    open_forms: set[int],
) -> int:
    """A form's measure: its stream, plus the forms it draws times their uses (a form that
    draws itself, which MuPDF refuses to follow, counts once)."""
    if xref in measured:
        return measured[xref]
    if xref in open_forms:
        return 0
    open_forms.add(xref)
    total = decoded_length(doc, xref, limit)
    children = forms.get(xref, [])
    if children and total <= limit:
        uses = _uses(doc, [xref])
        for name, child in children:
            total += uses.get(name.encode(), 1) * _form_bytes(doc, child, forms, measured, limit, open_forms)
            if total > limit:
                break
    open_forms.discard(xref)
    measured[xref] = min(total, limit + 1)
    return measured[xref]


def _uses(doc: pymupdf.Document, xrefs: list[int]) -> Counter[bytes]:
    """How often each XObject name is drawn (`/Name Do`) in the streams `xrefs`, whose
    decoded length is already known to be within the limit."""
    found: Counter[bytes] = Counter()
    for xref in xrefs:
        try:
            found.update(_DO.findall(doc.xref_stream(xref) or b""))
        except Exception:  # noqa: BLE001 - as decoded_length: unreadable, nothing drawn
            continue
    return found
