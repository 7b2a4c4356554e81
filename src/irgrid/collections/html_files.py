"""Reader for collections of HTML files: a tar archive of them, one file, or a directory of either.

The layout and the text are those of Anserini's ``HtmlCollection`` (``io.anserini.collection``),
which its CACM regression indexes (``src/main/resources/cacm/cacm.tar.gz``: 3,204 members
``CACM-0001.html`` ...):

- every regular file of a tar archive (plain, gzip, bzip2 or xz) is one document, in archive
  order; a file that is not an archive is one document itself; a directory is read file by file
  in sorted order (:func:`irgrid.collections.textio.iter_files`);
- the docno is the file's base name with a final ``.html`` removed, and nothing else removed
  (Anserini's ``stripHtmlExtension``: ``CACM-0001.html`` -> ``CACM-0001``, ``a.htm`` stays
  ``a.htm``);
- the text is what ``Jsoup.parse(raw).text().trim()`` gives (Anserini's ``contents()``, through
  ``JsoupStringTransform``): the text nodes in document order with entities decoded, without
  markup, comments, or the content of ``<script>`` and ``<style>``; a blank where a block element
  (``<p>``, ``<div>``, ``<pre>``...) or ``<br>`` starts or ends; runs of blanks made one outside
  ``<pre>``, kept inside it (whitespace separates tokens either way, so the analysed terms do not
  depend on it). A ``<`` that cannot open a tag (``1 <= m``) is text, as in HTML5.

Each document has one field, ``text``. Anserini skips a document whose text is empty; here it is
kept with empty text, as every reader of this package keeps empty documents (CACM has none).

The extraction follows Jsoup's rules with :class:`html.parser.HTMLParser`, not Jsoup's HTML5 tree
builder: markup that a browser would repair (misnested tags, text outside ``<html>``) gives the
same words in the same order but, between inline tags, may differ in where a blank falls.

Errors are :class:`~irgrid.errors.InputFormatError` naming an archive's member as
``archive[member]``: a page that is not text in the registry's ``encoding`` at its line
(``cacm.tar.gz[CACM-0001.html]:3``), a member that is a link or a device, a file name with blanks
(a docno is one token); an archive that cannot be read to its end names the archive and the member
where reading stopped.
"""

from __future__ import annotations

import io
import lzma
import os
import re
import tarfile
import zlib
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath

from ..errors import InputFormatError
from .reading import Format, role_path
from .records import Document, located
from .textio import check_identifier, iter_files, open_binary, read_compressed_error

# Jsoup's block-level tags (org.jsoup.parser.Tag's blockTags) and <br>: text() puts a blank
# between the text before and after them.
_BLOCK_TAGS = frozenset("""
    html head body frameset script noscript style meta link title frame noframes section nav aside hgroup
    header footer p h1 h2 h3 h4 h5 h6 ul ol pre div blockquote hr address figure figcaption form fieldset
    ins del dl dt dd li table caption thead tfoot tbody colgroup col tr th td video audio canvas details
    menu plaintext template article main svg math center dir applet marquee listing br
""".split())
# Elements whose content is data, not text (Jsoup's DataNode): not part of text().
_DATA_TAGS = frozenset({"script", "style"})
# Whitespace as Jsoup's StringUtil.isActuallyWhitespace sees it (no-break space included).
_BLANKS = re.compile(r"[ \t\n\f\r\u00a0]+")
_HTML_SUFFIX = ".html"
# What a damaged or cut-short compressed tar stream raises while its members are read.
_ARCHIVE_ERRORS = (tarfile.TarError, EOFError, OSError, zlib.error, lzma.LZMAError)


class _TextExtractor(HTMLParser):
    """The text of an HTML page as Jsoup's ``Element.text()`` gives it (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._pre_depth = 0
        self._data_depth = 0

    def _blank(self) -> None:
        if self.parts and not self.parts[-1][-1:].isspace():
            self.parts.append(" ")

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag in _BLOCK_TAGS:
            self._blank()
        if tag == "pre":
            self._pre_depth += 1
        elif tag in _DATA_TAGS:
            self._data_depth += 1

    def handle_startendtag(self, tag: str, attrs) -> None:
        if tag in _BLOCK_TAGS:
            self._blank()  # <br/>, <hr/>: no content, no depth

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre" and self._pre_depth:
            self._pre_depth -= 1
        elif tag in _DATA_TAGS and self._data_depth:
            self._data_depth -= 1
        if tag in _BLOCK_TAGS:
            self._blank()

    def handle_data(self, data: str) -> None:
        if self._data_depth or not data:
            return
        if not self._pre_depth:
            data = _BLANKS.sub(" ", data)
            if data.startswith(" ") and (not self.parts or self.parts[-1][-1:].isspace()):
                data = data[1:]
        if data:
            self.parts.append(data)

    def text(self) -> str:
        return "".join(self.parts).strip()


def html_text(markup: str) -> str:
    """The text of an HTML page as Anserini's HtmlCollection indexes it (``Jsoup.parse(raw).text().trim()``)."""
    extractor = _TextExtractor()
    extractor.feed(markup)
    extractor.close()
    return extractor.text()


def html_docno(name: str) -> str:
    """The docno of an HTML file: its base name, a final ``.html`` removed (Anserini's rule)."""
    base = PurePosixPath(name.replace("\\", "/")).name
    return base[: -len(_HTML_SUFFIX)] if base.endswith(_HTML_SUFFIX) else base


def _decode(raw: bytes, source: str, encoding: str) -> str:
    """``raw`` as text, or an InputFormatError at ``source`` naming the line of the first bad byte."""
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise InputFormatError(source, line, f"text encoded as {encoding} (set 'encoding' for this collection "
                                             "in the registry)",
                               found=repr(raw[max(0, error.start - 20): error.end + 20])) from None
    return text[1:] if text.startswith("\ufeff") else text  # a byte-order mark is no text


def _document(raw: bytes, name: str, source: str, encoding: str) -> Document:
    docno = html_docno(name)
    check_identifier(docno, source, 1, "file name (the docno)", found=name)
    return located(Document(docno, {"text": html_text(_decode(raw, source, encoding))}), source, 1)


def _is_tar(path: Path) -> bool:
    try:
        return tarfile.is_tarfile(path)
    except _ARCHIVE_ERRORS:
        return False  # not readable as an archive: read as one page, which names what is wrong


def _iter_archive(path: Path, encoding: str) -> Iterator[Document]:
    member = None
    try:
        with tarfile.open(path, "r:*") as archive:
            for member in archive:
                if member.isdir():
                    continue
                source = f"{path}[{member.name}]"
                if not member.isfile():
                    raise InputFormatError(source, None, "a regular file (an HTML page) as the archive's member",
                                           found="a link or device")
                handle = archive.extractfile(member)  # bytes only: nothing from the archive touches the disk
                raw = handle.read() if handle is not None else b""
                yield _document(raw, member.name, source, encoding)
    except _ARCHIVE_ERRORS as error:
        where = f" (reading stopped at member {member.name!r})" if member is not None else ""
        raise InputFormatError(path, None, f"a complete tar archive (plain, gzip, bzip2 or xz) of HTML files{where}",
                               found=f"{type(error).__name__}: {error}") from None


def _read_page(path: Path) -> bytes:
    handle = open_binary(path)  # gzip, bzip2 and xz pages are read decompressed, as by every reader here
    compressed = not isinstance(handle, io.BufferedReader)
    with handle:
        try:
            return handle.read()
        except (EOFError, OSError, lzma.LZMAError, zlib.error) as error:
            if not compressed:
                raise
            raise read_compressed_error(path, None, error) from None


def iter_html_documents(path: str | os.PathLike, encoding: str = "utf-8") -> Iterator[Document]:
    """Documents of a tar archive of HTML files, of one HTML file, or of a directory of either."""
    for file_path in iter_files(path):
        if _is_tar(file_path):
            yield from _iter_archive(file_path, encoding)
        else:
            yield _document(_read_page(file_path), file_path.name, str(file_path), encoding)


def _documents(spec, files):
    return iter_html_documents(role_path(spec, files, "docs"), spec.encoding)


# HTML pages carry no topics: TREC topics and qrels are what an HTML collection most often comes with.
FORMATS = {"html": Format(documents=_documents, queries_format="trec", qrels_format="trec")}
