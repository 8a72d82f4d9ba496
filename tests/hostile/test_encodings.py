"""Text encodings by one stated rule, with a note in the build report whenever a file was not clean
UTF-8 (issue 35): a UTF-8 file with one stray byte was read as cp1252 on main and stored as
"ZoÃ« Brennick … MalmÃ¶" without a word."""

from __future__ import annotations

import codecs

import pytest

from memrag.config import IndexParams
from memrag.index.readers import read_paths, read_uploads

probe = pytest.mark.probe
GROUP = "encodings"


def _read(tmp_path, name: str, data: bytes):
    (tmp_path / name).write_bytes(data)
    report = read_paths([tmp_path / name], IndexParams())
    [doc] = report.documents
    notes = [p.reason for p in report.problems if not p.fatal]
    return doc, notes


@probe("a UTF-8 file with one stray byte: printf 'Zo\\xc3\\xab Brennick … \\xff … Malm\\xc3\\xb6'",
       "read as UTF-8 (Zoë, Malmö) with that byte replaced by U+FFFD; the build report notes one replacement",
       group=GROUP)
def test_utf8_with_a_stray_byte_stays_utf8(tmp_path):
    doc, notes = _read(tmp_path, "zoe.txt", b"Zo\xc3\xab Brennick sailed from \xff Malm\xc3\xb6 to Port Alder.")
    assert doc.text == "Zoë Brennick sailed from \ufffd Malmö to Port Alder."
    assert doc.meta["encoding"] == "utf-8"
    assert notes == ["read as UTF-8 with 1 byte sequence(s) not valid UTF-8 replaced by \ufffd"]


@probe("a Windows-1252 file (Café, Malmö as single bytes; no UTF-8 sequence anywhere)",
       "read as cp1252, and the build report says so", group=GROUP)
def test_single_byte_western_text_is_cp1252_with_a_note(tmp_path):
    doc, notes = _read(tmp_path, "cafe.txt", "Café au lait in Malmö, “quoted”.".encode("cp1252"))
    assert doc.text == "Café au lait in Malmö, “quoted”." and doc.meta["encoding"] == "cp1252"
    assert notes == ["read as Windows-1252 (cp1252): it is not UTF-8 and holds no UTF-8 character"]


def test_clean_utf8_gets_no_note(tmp_path):
    doc, notes = _read(tmp_path, "clean.md", "# Zoë\n\nMalmö lies on the coast.".encode())
    assert doc.meta["encoding"] == "utf-8" and notes == []


@probe("an HTML page declaring <meta charset=\"windows-1251\"> (Cyrillic bytes), and one declaring utf-8 with a "
       "stray byte", "the declared charset wins (Привет), noted; a declared UTF-8 keeps the UTF-8 rule", group=GROUP)
def test_a_declared_charset_wins(tmp_path):
    page = ('<html><head><meta charset="windows-1251"><title>Привет</title></head>'
            "<body><p>Привет, Port Alder.</p></body></html>").encode("cp1251")
    doc, notes = _read(tmp_path, "ru.html", page)
    assert "Привет, Port Alder." in doc.text and doc.meta["encoding"] == "cp1251"
    assert notes == ["read as cp1251, the charset it declares"]
    page = b'<html><head><meta http-equiv="Content-Type" content="text/html; charset=UTF-8"></head>' \
           b"<body><p>Zo\xc3\xab \xff Malm\xc3\xb6</p></body></html>"
    doc, notes = _read(tmp_path, "utf.html", page)
    assert "Zoë \ufffd Malmö" in doc.text and notes[0].startswith("read as UTF-8 with 1")


def test_a_byte_order_mark_wins_over_a_declared_charset_and_an_unknown_charset_is_said(tmp_path):
    page = '<html><head><meta charset="iso-8859-5"></head><body><p>Zoë</p></body></html>'
    doc, notes = _read(tmp_path, "bom.html", codecs.BOM_UTF16_LE + page.encode("utf-16-le"))
    assert "Zoë" in doc.text and notes == ["read as UTF-16 (its byte-order mark says so)"]
    doc, notes = _read(tmp_path, "odd.html", b'<meta charset="x-klingon"><p>Zo\xc3\xab</p>')
    assert "Zoë" in doc.text and "declared charset 'x-klingon' is unknown" in notes[0]


@probe("the same stray-byte file uploaded in the app (read_uploads)", "the same text and the same note",
       group=GROUP)
def test_uploads_follow_the_same_rule():
    report = read_uploads([("zoe.txt", b"Zo\xc3\xab \xff Malm\xc3\xb6")], IndexParams())
    assert report.documents[0].text == "Zoë \ufffd Malmö"
    assert [p.reason for p in report.problems] == ["read as UTF-8 with 1 byte sequence(s) not valid UTF-8 "
                                                   "replaced by \ufffd"]
