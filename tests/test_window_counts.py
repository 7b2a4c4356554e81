"""Window postings (irgrid.features.windows): counts worked out by hand, and a brute-force reference.

The rules (docs/models.md, "Window counting rules"): #odN takes each occurrence of the first term
in turn and, for every next term, its first occurrence after the previous term's; a match when each
step is at most N. #uwN keeps one current occurrence per term, counts a match when they span at most
N positions, then moves every one at the earliest position on.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irgrid.features import PositionalPostings, ordered, phrase, unordered, window_postings


def postings_of(docs: list[list[str]]) -> PositionalPostings:
    lists = {}
    for word in sorted({w for doc in docs for w in doc}):
        docids = [i for i, doc in enumerate(docs) if word in doc]
        lists[word] = (docids, [[p for p, w in enumerate(docs[i]) if w == word] for i in docids])
    return PositionalPostings.from_lists(lists)


def counts(feature, *texts: str) -> dict[int, int]:
    found = window_postings(feature, postings_of([text.split() for text in texts]))
    return dict(zip(found.docids.tolist(), found.counts.tolist()))


@pytest.mark.parametrize(
    ("feature", "text", "expected"),
    [
        (phrase("ab"), "a b a b", 2),        # (0,1) and (2,3)
        (phrase("ab"), "a c b", 0),          # b is 2 after a
        (phrase("ab"), "b a", 0),            # order matters
        (phrase("abc"), "a b c a b x c", 1),  # (0,1,2); from a@3: b@4, then c@6 is 2 on
        (ordered("ab", 2), "a c b", 1),      # b 2 after a
        (ordered("ab", 2), "a c c b", 0),    # b 3 after a
        (phrase("aa"), "a a a", 2),          # a@0 with a@1, a@1 with a@2; a@2 has no next
        (unordered("ab", 8), "a b c a b", 3),  # (0,1) a->3; (3,1) b->4; (3,4) a done
        (unordered("ab", 2), "a b a", 2),    # (0,1) a->2; (2,1) span 2, b done
        (unordered("ab", 2), "b a", 1),      # any order
        (unordered("abc", 3), "c a b", 1),   # (1,2,0) spans 3
        (unordered("abc", 3), "c x a b", 0),  # (2,3,0) spans 4; c, the earliest, has no next
        (unordered("ab", 1000), "a x x x x x x b", 1),  # a window wider than the document
        (unordered("aa", 2), "a a", 2),      # a repeated term: both cursors at 0 (span 1), then both at 1 (Galago's rule)
        (unordered("aa", 2), "a", 1),        # one occurrence fills both cursors of a repeated term (Galago's rule too)
        (phrase("aa"), "a", 0),              # a@0 has no later a
        (phrase("abc"), "a b c x a b c", 2),  # (0,1,2) and (4,5,6)
        (phrase("abc"), "a b x c", 0),       # c is 2 after b
        (unordered("abc", 4), "c x a b", 1),  # (2,3,0) spans 4
        (phrase("ba"), "b a", 1),            # the same document, the other order
        (unordered("ab", 1000), "a x x b x a", 2),  # (0,3) a->5; (5,3) b has no next
        (ordered("ab", 1000), "a x x b x a", 1),    # a@0 with b@3; a@5 has no later b

    ],
)
def test_counts_worked_out_by_hand(feature, text, expected):
    assert counts(feature, text).get(0, 0) == expected


@pytest.mark.parametrize(
    ("feature", "text", "expected"),
    [
        (phrase("aa"), "a a a", 1),           # spans 0-1 and 1-2 overlap: Indri keeps the first
        (phrase("aa"), "a a a a", 2),         # 0-1 and 2-3
        (ordered("ab", 3), "a a b", 1),       # spans 0-2 and 1-2 overlap
        (unordered("ab", 8), "a b a b", 2),   # spans 0-1, 1-2, 2-3: the middle one overlaps
        (unordered("ab", 8), "a b c a b", 2),  # spans 0-1, 1-3 (overlaps), 3-4
        (phrase("ab"), "a b a b", 2),         # distinct terms in a phrase never overlap
    ],
)
def test_indri_counts_matches_without_overlaps(feature, text, expected):
    found = window_postings(feature, postings_of([text.split()]), overlapping=False)
    assert dict(zip(found.docids.tolist(), found.counts.tolist())).get(0, 0) == expected


def test_df_and_cf_over_documents_and_a_document_missing_a_term():
    found = window_postings(phrase("ab"), postings_of([["a", "b"], ["b", "b"], ["x", "a", "b", "a", "b"], ["a"]]))
    assert found.docids.tolist() == [0, 2]
    assert found.counts.tolist() == [1, 2]
    assert (found.df, found.cf) == (2, 3)
    assert window_postings(phrase(["a", "zz"]), postings_of([["a", "b"]])).df == 0


# ------------------------------------------------------------------------------- brute force


def brute_ordered(positions: list[list[int]], width: int) -> list[tuple[int, int]]:
    """The #odN rule spelled out: for each start, greedy next occurrences; stop when a term runs out.

    Returns the matches as (first, last) positions.
    """
    matches = []
    for start in positions[0]:
        previous, ok = start, True
        for later in positions[1:]:
            following = [p for p in later if p > previous]
            if not following:
                return matches
            if following[0] - previous > width:
                ok = False
                break
            previous = following[0]
        if ok:
            matches.append((start, previous))
    return matches


def brute_unordered(positions: list[list[int]], width: int) -> list[tuple[int, int]]:
    cursor = [0] * len(positions)
    matches = []
    while True:
        current = [plist[i] for plist, i in zip(positions, cursor)]
        if max(current) - min(current) + 1 <= width:
            matches.append((min(current), max(current)))
        earliest = min(current)
        for j, position in enumerate(current):
            if position == earliest:
                cursor[j] += 1
                if cursor[j] == len(positions[j]):
                    return matches


def brute(feature, doc: list[str], overlapping: bool = True) -> int:
    positions = [[p for p, w in enumerate(doc) if w == word] for word in feature.terms]
    if any(not plist for plist in positions):
        return 0
    matches = (brute_ordered if feature.op == "od" else brute_unordered)(positions, feature.width)
    if overlapping:
        return len(matches)
    kept, last_end = 0, -1  # Indri: left to right, a match beginning before the last kept one ends is dropped
    for first, last in matches:
        if first >= last_end:
            kept, last_end = kept + 1, last + 1
    return kept


@settings(max_examples=300, deadline=None)
@given(docs=st.lists(st.lists(st.sampled_from("abc"), min_size=1, max_size=12), min_size=1, max_size=6),
       words=st.lists(st.sampled_from("abc"), min_size=2, max_size=3), width=st.integers(1, 6),
       kind=st.sampled_from(["od", "uw"]), overlapping=st.booleans())
def test_kernels_agree_with_the_rules_spelled_out(docs, words, width, kind, overlapping):
    if kind == "uw":
        width = max(width, len(words))
        feature = unordered(words, width)
    else:
        feature = ordered(words, width)
    expected = {i: n for i, doc in enumerate(docs) if (n := brute(feature, doc, overlapping))}
    found = window_postings(feature, postings_of(docs), overlapping)
    assert dict(zip(found.docids.tolist(), found.counts.tolist())) == expected


# ------------------------------------------------------------------------------- a real index


def test_the_index_reader_gives_the_positions_of_the_postings(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from irgrid.index import IndexReader, build_index

    docs = {"d1": "the effect of flow on the wing", "d2": "effect flow effect of the flow", "d3": "no match here"}
    shards = tmp_path / "docs"
    shards.mkdir()
    pq.write_table(pa.table({"docno": list(docs), "text": list(docs.values())}), shards / "part-0000.parquet")
    build_index(shards, tmp_path / "index", {"tokenizer": "lucene", "stemmer": "none", "stopwords": "lucene"},
                scheduler="sync", progress=False)
    reader = IndexReader(tmp_path / "index")
    words = ["effect", "flow", "wing", "absent"]
    positional = reader.positional_postings(words)
    plain = reader.postings(words, positions=True)
    assert set(positional.spans) == set(plain) == {"effect", "flow", "wing"}
    for word, (lo, hi) in positional.spans.items():
        assert positional.docids[lo:hi].tolist() == plain[word].docids.tolist()
        assert positional.tfs[lo:hi].tolist() == plain[word].tfs.tolist()
        got = [positional.positions[positional.offsets[p]:positional.offsets[p + 1]].tolist() for p in range(lo, hi)]
        assert got == [p.tolist() for p in plain[word].positions]
    # "of" and "the" are Lucene stop words: they leave a gap, so "effect of flow" is no phrase
    exact = window_postings(phrase(["effect", "flow"]), positional)
    near = window_postings(ordered(["effect", "flow"], 2), positional)
    docid = {docno: i for i, docno in enumerate(reader.docnos.tolist())}
    assert dict(zip(exact.docids.tolist(), exact.counts.tolist())) == {docid["d2"]: 1}
    assert dict(zip(near.docids.tolist(), near.counts.tolist())) == {docid["d1"]: 1, docid["d2"]: 1}
