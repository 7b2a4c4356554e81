"""The registry of collection formats: one module a format, looked up by name, no dispatch chains."""

from __future__ import annotations

import ast
import dataclasses
import types
from pathlib import Path

import pytest

import irgrid
from irgrid.collections import formats, readers
from irgrid.collections.reading import Format, role_path
from irgrid.collections.records import Document
from irgrid.collections.spec import CollectionSpec
from irgrid.errors import ConfigError

PACKAGE = Path(irgrid.__file__).parent
COLLECTIONS = PACKAGE / "collections"


def _imported_packages(path: Path) -> set[str]:
    """The first-level irgrid packages a module of ``irgrid.collections`` imports (relative imports)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 2:
            found.add((node.module or "").split(".")[0])
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("irgrid."):
            found.add(node.module.split(".")[1])
    return found


def test_collections_import_only_lower_layers():
    """Reading collections needs no model, experiment or sentence code (no import up the layers)."""
    allowed = {"errors", "io", "schema_errors"}
    for path in sorted(COLLECTIONS.glob("*.py")):
        assert _imported_packages(path) <= allowed, path.name


def test_readers_dispatch_without_format_names():
    """readers.py looks formats up in the registry: it compares nothing with a format name."""
    tree = ast.parse((COLLECTIONS / "readers.py").read_text(encoding="utf-8"))
    names = set(formats.FORMATS)
    compared = {
        node.value
        for compare in ast.walk(tree) if isinstance(compare, ast.Compare)
        for node in ast.walk(compare) if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    assert not compared & names


def test_every_format_lives_in_collections():
    """The registry is built from modules of irgrid.collections alone."""
    for module in formats.MODULES:
        assert Path(module.__file__).parent == COLLECTIONS, module.__name__


def test_names_read_what_the_schema_allows():
    """The registry's names are the ones the registry schema lets an entry give, and the reverse."""
    import yaml

    schema = yaml.safe_load((Path(irgrid.__file__).parents[2] / "workflow/schemas/collections.schema.yaml").read_text())
    entry = schema["$defs"]["collection"]["properties"]
    assert set(entry["format"]["enum"]) == set(formats.DOCUMENT_FORMATS)
    assert set(entry["queries_format"]["enum"]) == set(formats.QUERY_FORMATS)
    assert set(entry["qrels_format"]["enum"]) == set(formats.QRELS_FORMATS)


def test_one_name_from_two_modules_is_one_format():
    """``smart`` documents (smart.py) and ``smart`` judgements (qrels.py) are one registry entry."""
    smart = formats.FORMATS["smart"]
    assert smart.documents and smart.queries and smart.qrels


def test_two_modules_may_not_set_the_same_reader():
    def read(spec, files):
        return iter(())

    first = types.SimpleNamespace(FORMATS={"x": Format(documents=read)})
    second = types.SimpleNamespace(FORMATS={"x": Format(documents=lambda spec, files: iter(()))})
    with pytest.raises(TypeError, match="documents"):
        formats._registry((first, second))


def test_a_new_format_is_one_module(tmp_path, monkeypatch):
    """A format module's table is all a new layout needs: the registry and the readers take it."""

    def documents(spec, files):
        for line in role_path(spec, files, "docs").read_text().splitlines():
            docno, _, text = line.partition("|")
            yield Document(docno, {"text": text})

    pipe = types.SimpleNamespace(FORMATS={"pipe": Format(documents=documents, queries_format="jsonl")})
    registry = formats._registry((*formats.MODULES, pipe))
    monkeypatch.setattr(readers, "FORMATS", registry)
    monkeypatch.setattr(formats, "FORMATS", registry)
    (tmp_path / "d.txt").write_text("a|one two\nb|three\n")
    spec = CollectionSpec(id="toy", format="pipe", files={"docs": "d.txt"}, mirror="toy")
    documents_read = list(readers.iter_documents(spec, {"docs": tmp_path / "d.txt"}))
    assert [(d.docno, readers.document_text(spec, d)) for d in documents_read] == [("a", "one two"), ("b", "three")]


def test_unknown_format_names_the_ones_that_read_it():
    with pytest.raises(ConfigError, match="'qrels'.*cranfield|cranfield"):
        formats.get_format("html", "qrels")


def test_format_defaults_fill_every_field():
    """A format declared with no options reads as the defaults of every attribute (none is required)."""
    assert all(field.default is not dataclasses.MISSING or field.default_factory is not dataclasses.MISSING
               for field in dataclasses.fields(Format))


def test_an_answer_sentence_collection_reranks_candidates_unless_told(tmp_path):
    """An experiment naming no query sets runs X+judged on an answer-sentence collection (the questions
    with a positive, each re-ranking its candidates), and the plain query sets elsewhere."""
    from irgrid.config import experiment_querysets

    answers = CollectionSpec.from_dict("qa", {"format": "answer_tsv", "files": {"dev": "d.tsv", "test": "t.tsv"}})
    assert experiment_querysets({}, answers) == ["dev+judged", "test+judged"]
    assert experiment_querysets({"querysets": ["test+alljudged"]}, answers) == ["test+alljudged"]
    smart = CollectionSpec.from_dict("s", {"format": "smart", "files": {"docs": "a", "queries": "b", "qrels": "c"},
                                           "qrels_format": "smart"})
    assert experiment_querysets({}, smart) == ["text"]
