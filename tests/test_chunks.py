"""Grid cells grouped into jobs (irgrid.config.split_by_hash, retrieval_chunks), without Snakemake.

What the workflow relies on: every cell is in exactly one chunk, no chunk holds more than
``chunk_size`` points, the grouping depends only on the set of points (not their order, not the
process), adding a point changes only the chunk it falls into, and cells shared by experiments
are grouped once.
"""

from __future__ import annotations

import copy
import json
import os
import random
import subprocess
import sys

import pytest
from common import REGISTRY
from hypothesis import given, settings
from hypothesis import strategies as st

from irgrid.config import (
    HASH_BITS,
    WHOLE_GROUP,
    Chunk,
    ChunkCell,
    all_cells,
    cell_hash,
    experiment_cells,
    group_chunk_size,
    load_config,
    point_hash,
    retrieval_chunks,
    split_by_hash,
)
from irgrid.errors import ConfigError
from irgrid.grid import POINT_DIGEST_BITS, encode_point, interleaved_point_digest

encoded_points = st.sets(st.from_regex(r"k1~[0-9]{1,3}(\.[0-9]{1,2})?_b~0\.[0-9]{1,2}", fullmatch=True), max_size=120)


def hash_bits(encoded: str) -> str:
    return format(point_hash(encoded), f"0{HASH_BITS}b")


def as_sets(chunks) -> set[tuple[str, frozenset[str]]]:
    return {(label, frozenset(points)) for label, points in chunks}


@settings(max_examples=200, deadline=None)
@given(encoded_points, st.integers(1, 20))
def test_every_point_in_exactly_one_chunk_of_at_most_chunk_size(points, chunk_size):
    chunks = split_by_hash(points, chunk_size)
    listed = [point for _, members in chunks for point in members]
    assert sorted(listed) == sorted(points)
    assert all(1 <= len(members) <= chunk_size for _, members in chunks)
    labels = [label for label, _ in chunks]
    assert len(set(labels)) == len(labels)
    for label, members in chunks:
        if label != WHOLE_GROUP:
            # The label is the hash prefix its points share: no label is a prefix of another.
            assert all(hash_bits(point).startswith(label) for point in members)
            assert not any(other != label and other.startswith(label) for other in labels)


@settings(max_examples=200, deadline=None)
@given(encoded_points, st.integers(1, 20), st.randoms(use_true_random=False))
def test_grouping_depends_on_the_set_of_points_only(points, chunk_size, rng):
    shuffled = list(points) + list(points)[:3]  # another order, with repeats
    rng.shuffle(shuffled)
    assert split_by_hash(shuffled, chunk_size) == split_by_hash(sorted(points), chunk_size)


@settings(max_examples=300, deadline=None)
@given(encoded_points, st.from_regex(r"mu~[0-9]{1,5}", fullmatch=True), st.integers(1, 20))
def test_adding_a_point_changes_only_the_chunk_it_falls_into(points, new_point, chunk_size):
    before = split_by_hash(points, chunk_size)
    after = split_by_hash(points | {new_point}, chunk_size)
    new_bits = hash_bits(new_point)
    # The chunk the new point falls into: the one whose prefix it shares (or none, when the new
    # point's half of the trie was empty).
    receiving = [(label, members) for label, members in before if label == WHOLE_GROUP or new_bits.startswith(label)]
    assert len(receiving) <= 1
    unchanged = as_sets(before) - as_sets(receiving)
    assert unchanged <= as_sets(after)
    # What changed holds exactly the receiving chunk's points and the new one.
    changed = as_sets(after) - unchanged
    assert set().union(*(members for _, members in changed)) == {new_point, *(p for _, m in receiving for p in m)}


def test_chunk_size_one_is_one_chunk_per_point_and_a_large_one_a_single_chunk():
    points = [f"mu~{mu}" for mu in (50, 100, 250, 500, 1000, 2000, 3000, 5000, 10000)]
    assert sorted(members for _, members in split_by_hash(points, 1)) == sorted((p,) for p in points)
    assert split_by_hash(points, 9) == [(WHOLE_GROUP, tuple(sorted(points)))]
    assert split_by_hash([], 5) == []
    with pytest.raises(ConfigError, match="chunk_size"):
        split_by_hash(points, 0)


def test_a_grid_larger_than_chunk_size_is_split_into_at_least_points_over_size_chunks():
    points = [f"k1~{k1}_b~{b}" for k1 in range(1, 13) for b in range(10)]  # 120 points
    chunks = split_by_hash(points, 50)
    assert len(chunks) >= 3
    assert max(len(members) for _, members in chunks) <= 50


def test_the_grouping_is_the_same_in_another_process():
    """A digest, not Python's per-process salted hash(): a new process must group identically."""
    points = [f"mu~{mu}" for mu in range(100, 4000, 37)]
    here = split_by_hash(points, 7)
    code = ("import json, sys; from irgrid.config import split_by_hash; "
            "print(json.dumps(split_by_hash(json.loads(sys.argv[1]), 7)))")
    for seed in ("1", "2"):
        result = subprocess.run([sys.executable, "-c", code, json.dumps(points)], capture_output=True, text=True,
                                env={**os.environ, "PYTHONHASHSEED": seed}, check=True)
        assert [(label, tuple(members)) for label, members in json.loads(result.stdout)] == here


# ------------------------------------------------------------------ chunks of a whole config

ANALYZER = {"tokenizer": "lucene", "lowercase": True, "possessive": True, "stemmer": "porter", "stopwords": "none"}


def config_of(experiments: dict, chunk_size: int | None = None, max_chunks: int | None | str = "default") -> dict:
    config = {
        "registry": str(REGISTRY),
        "analyzers": {"porter": dict(ANALYZER), "porter_smart": {**ANALYZER, "stopwords": "smart"}},
        "measures": ["AP", "P@10"],
        "experiments": copy.deepcopy(experiments),
    }
    if chunk_size is not None:
        config["retrieval"] = {"chunk_size": chunk_size}
    if max_chunks != "default":
        config.setdefault("retrieval", {})["max_chunks"] = max_chunks
    return load_config(config)


def experiment(collections, analyzer, models) -> dict:
    # the classic collections' own query set (CACM also has text_authors, the request with its authors)
    return {"title": "t", "collections": collections, "querysets": ["text"], "analyzer": analyzer,
            "models": models, "baseline": next(iter(models)), "table_measures": ["AP"]}


BM25_WIDE = {"family": "bm25", "grid": {"k1": [round(0.2 * i, 1) for i in range(1, 21)], "b": [0.3, 0.5, 0.75]}}  # 60 points
BM25_NARROW = {"family": "bm25", "grid": {"k1": [0.4, 0.8, 1.2, 7.5], "b": [0.75]}}  # 3 shared, 1 of its own
QL = {"family": "ql_dirichlet", "grid": {"mu": [500, 1000]}}
EXPERIMENTS = {
    "wide": experiment(["adi", "cacm"], "porter", {"bm25": BM25_WIDE, "ql": QL}),
    "narrow": experiment(["adi"], ["porter", "porter_smart"], {"bm25": BM25_NARROW}),
}


def test_the_default_chunk_size_comes_from_the_schema():
    config = config_of(EXPERIMENTS)
    assert config["retrieval"]["chunk_size"] == 50


def test_every_cell_of_every_experiment_is_in_exactly_one_chunk():
    config = config_of(EXPERIMENTS, chunk_size=8)
    chunks = retrieval_chunks(config)
    produced = [path for chunk in chunks for path in chunk.run_paths]
    assert len(produced) == len(set(produced))
    wanted = {cell.run_path for name in EXPERIMENTS for cell in experiment_cells(config, name)}
    assert set(produced) == wanted
    evaluated = [path for chunk in chunks for path in chunk.eval_paths]
    assert set(evaluated) == {cell.eval_path for name in EXPERIMENTS for cell in experiment_cells(config, name)}
    assert all(len(chunk.params) <= 8 for chunk in chunks)


def test_cells_shared_by_experiments_are_grouped_once_over_their_union():
    config = config_of(EXPERIMENTS, chunk_size=200)
    groups = {(c.collection, c.analyzer): c for c in retrieval_chunks(config)}
    # With room for everything, one chunk per (collection, analyzer, query set), its models mixed.
    assert sorted(groups) == sorted([("adi", "porter"), ("cacm", "porter"), ("adi", "porter_smart")])
    # adi/porter: the 60 wide bm25 points, narrow's one extra point (k1=7.5; its 3 others are
    # shared) and the 2 ql points.
    adi = groups[("adi", "porter")]
    assert adi.label == WHOLE_GROUP and not adi.uses_parses
    assert len(adi.cells) == 63 and len(adi.params) == len(adi.families) == 63
    assert ChunkCell("bm25", "bm25", "k1~7.5_b~0.75") in adi.cells and ChunkCell("bm25", "bm25", "k1~0.4_b~0.75") in adi.cells
    assert {cell.model for cell in adi.cells if cell.family == "ql_dirichlet"} == {"ql"}
    assert len(groups[("adi", "porter_smart")].cells) == 4
    assert len(all_cells(config)) == 61 + 2 + 60 + 2 + 4


def test_a_models_grid_up_to_chunk_size_stays_in_one_chunk_and_a_changed_value_reruns_one():
    """Many models on one query set: each model's points share a chunk (cell_hash puts the model's
    digest first), so changing a value of one grid (here a row of 4 points) changes one chunk."""
    def models(k1_values):
        grids = {f"m{i}": {"family": "ql_dirichlet", "grid": {"mu": [100 * (i + 1), 100 * (i + 2)]}} for i in range(30)}
        grids["bm25"] = {"family": "bm25", "grid": {"k1": k1_values, "b": [0.3, 0.5, 0.75, 0.9]}}
        return grids

    k1 = [0.6, 0.9, 1.2, 1.5, 2.0, 3.0, 4.0, 6.0]  # 32 points
    before = retrieval_chunks(config_of({"e": experiment(["adi"], "porter", models(k1))}, chunk_size=50))
    after = retrieval_chunks(config_of({"e": experiment(["adi"], "porter", models(k1[:-1] + [5.0]))}, chunk_size=50))
    assert len(before) > 1
    holding_bm25 = [chunk for chunk in before if any(cell.model == "bm25" for cell in chunk.cells)]
    assert len(holding_bm25) == 1 and sum(cell.model == "bm25" for cell in holding_bm25[0].cells) == 32
    changed = [chunk for chunk in after if chunk not in before]
    assert len(changed) == 1 and {c.params for c in changed[0].cells if c.model == "bm25"} >= {"k1~5_b~0.3"}
    # the digest of the model leads: every point of a model shares its leading 32 bits
    assert len({cell_hash(f"bm25/k1~{k}_b~0.3") >> 32 for k in k1}) == 1


def test_a_points_digest_takes_each_parameters_bits_in_turn():
    """The point's half of cell_hash, rebuilt with strings: bit j is bit j // d of parameter j % d's
    value digest (the leading bits of the digest of its ``name~value``)."""
    def value_bits(piece):
        return hash_bits(piece)[:POINT_DIGEST_BITS]

    for encoded, pieces in [("k1~1.2_b~0.75", ["k1~1.2", "b~0.75"]),
                            ("lambda~0.1_bigram_weight~0.3_mu~1500", ["lambda~0.1", "bigram_weight~0.3", "mu~1500"])]:
        bits = [value_bits(piece) for piece in pieces]
        expected = "".join(bits[j % len(bits)][j // len(bits)] for j in range(POINT_DIGEST_BITS))
        assert format(interleaved_point_digest(encoded), f"0{POINT_DIGEST_BITS}b") == expected
    # one parameter, or none: the digest of the whole encoded point, as before there were grids of several
    for encoded in ["mu~1000", "default"]:
        assert interleaved_point_digest(encoded) == int(hash_bits(encoded)[:POINT_DIGEST_BITS], 2)
    assert cell_hash("bm25/k1~1.2_b~0.75") & (1 << POINT_DIGEST_BITS) - 1 == interleaved_point_digest("k1~1.2_b~0.75")


grid_axis = st.lists(st.integers(1, 400), min_size=1, max_size=14, unique=True)


@settings(max_examples=150, deadline=None)
@given(grid_axis, grid_axis, st.lists(st.integers(1, 9), max_size=4, unique=True), st.integers(1, 12))
def test_the_chunks_of_a_full_grid_are_tiles(k1_values, b_values, mu_values, chunk_size):
    """Each chunk holds every combination of a set of k1 values and a set of b values (a tile): a
    prefix of the interleaved digest constrains each parameter's value digest apart."""
    grid = {f"bm25/{encode_point({'k1': k / 10, 'b': b / 400}, ['k1', 'b'])}": (k, b)
            for k in k1_values for b in b_values}
    others = [f"ql_dirichlet/mu~{100 * mu}" for mu in mu_values]
    for _, members in split_by_hash([*grid, *others], chunk_size, digest=cell_hash):
        cells = {grid[key] for key in members if key in grid}
        k1_set, b_set = {k for k, _ in cells}, {b for _, b in cells}
        assert cells == {(k, b) for k in k1_set for b in b_set}


def test_a_changed_value_of_a_large_grid_reruns_the_tiles_of_its_row():
    """A 40 x 40 grid in chunks of 50 (about 50 tiles, seven a side): changing one b value changes the
    chunks holding the old value and those the new one falls into, a column of tiles each, far
    fewer than half (a digest of the whole point spreads the 40 changed cells over nearly all)."""
    def whole_point_digest(key):  # the model's bits, then the digest of the whole encoded point
        model, _, params = key.partition("/")
        return cell_hash(f"{model}/default") >> POINT_DIGEST_BITS << POINT_DIGEST_BITS | point_hash(params) >> 32

    def chunks(b_values, digest):
        keys = [f"bm25/{encode_point({'k1': k1, 'b': b}, ['k1', 'b'])}"
                for k1 in [0.1 * i for i in range(1, 41)] for b in b_values]
        return as_sets(split_by_hash(keys, 50, digest=digest))

    b_values = [round(0.025 * i, 3) for i in range(40)]
    changed_b = [0.505 if b == 0.5 else b for b in b_values]
    before, after = chunks(b_values, cell_hash), chunks(changed_b, cell_hash)
    changed = after - before
    holding = {members for _, members in after if any(key.endswith("_b~0.505") for key in members)}
    assert len(before) >= 32
    assert holding <= {members for _, members in changed}
    assert len(changed) < len(before) / 2
    spread = chunks(changed_b, whole_point_digest) - chunks(b_values, whole_point_digest)
    assert len(spread) > len(chunks(b_values, whole_point_digest)) / 2


def test_two_models_at_the_same_point_are_two_cells_of_a_chunk():
    models = {"ql": {"family": "ql_dirichlet", "grid": {"mu": [500, 1000]}},
              "ql_again": {"family": "ql_dirichlet", "grid": {"mu": [500]}}}
    (chunk,) = retrieval_chunks(config_of({"e": experiment(["adi"], "porter", models)}))
    assert chunk.run_paths == ["results/adi/runs/porter/text/ql/mu~1000.parquet",
                               "results/adi/runs/porter/text/ql/mu~500.parquet",
                               "results/adi/runs/porter/text/ql_again/mu~500.parquet"]


def test_models_scoring_parse_trees_get_chunks_of_their_own():
    # mrf_sentence reads the collection's sentence parses: its chunk alone depends on them.
    models = {"ql": {"family": "ql_dirichlet", "grid": {"mu": [500]}},
              "mrf": {"family": "mrf_sentence", "grid": {}}}
    chunks = retrieval_chunks(config_of({"e": experiment(["adi"], "porter", models)}))
    by_parses = {chunk.uses_parses: chunk for chunk in chunks}
    assert sorted(by_parses) == [False, True]
    assert by_parses[True].families == ["mrf_sentence"] and by_parses[False].families == ["ql_dirichlet"]
    assert by_parses[True].rule_name("retrieve") == "retrieve.adi.porter.text.parses-all"
    assert by_parses[False].rule_name("retrieve") == "retrieve.adi.porter.text.all"


def test_chunk_paths_names_and_logs():
    cells = (ChunkCell("bm25", "bm25", "k1~0.9_b~0.4"), ChunkCell("ql", "ql_dirichlet", "mu~1000"))
    chunk = Chunk("adi", "porter", "text", "01", cells)
    assert chunk.run_paths == ["results/adi/runs/porter/text/bm25/k1~0.9_b~0.4.parquet",
                               "results/adi/runs/porter/text/ql/mu~1000.parquet"]
    assert chunk.eval_paths == ["results/adi/eval/porter/text/bm25/k1~0.9_b~0.4.parquet",
                                "results/adi/eval/porter/text/ql/mu~1000.parquet"]
    assert chunk.families == ["bm25", "ql_dirichlet"] and chunk.params == ["k1~0.9_b~0.4", "mu~1000"]
    assert chunk.log_path("runs") == "logs/adi/runs/porter/text/chunk-01.log"
    # one file of the chunk's evaluations, its label in the path; its job's log mirrors that path
    assert chunk.evaluation_path == "results/adi/eval/porter/text/chunk-01.parquet"
    assert chunk.log_path() == "logs/adi/eval/porter/text/chunk-01.log"
    assert json.loads(chunk.cells_json) == [["bm25", "bm25", "k1~0.9_b~0.4"], ["ql", "ql_dirichlet", "mu~1000"]]
    assert chunk.rule_name("retrieve") == "retrieve.adi.porter.text.01"
    odd = Chunk("my coll/x", "porter", "title desc", WHOLE_GROUP, cells[1:])
    assert odd.rule_name("evaluate") == "evaluate.my-coll-x.porter.title-desc.all"


def test_two_groups_with_the_same_job_name_are_refused():
    # Analyzers "porter.x" and "porter-x" both become "porter-x" in a job name.
    config = config_of({"e": experiment(["adi"], "porter", {"ql": QL})})
    config["analyzers"]["porter.x"] = config["analyzers"]["porter-x"] = dict(ANALYZER)
    config["_experiments"]["e2"] = {**config["_experiments"]["e"], "analyzer": "porter.x"}
    config["_experiments"]["e3"] = {**config["_experiments"]["e"], "analyzer": "porter-x"}
    with pytest.raises(ConfigError, match=r"porter\.x.*porter-x|porter-x.*porter\.x"):
        retrieval_chunks(config)


def test_chunk_size_must_be_a_positive_integer():
    for bad in (0, "50"):
        with pytest.raises(ConfigError, match="retrieval/chunk_size"):
            config_of(EXPERIMENTS, chunk_size=bad)


def test_points_of_a_chunk_are_listed_in_a_fixed_order():
    points = [f"mu~{mu}" for mu in range(100, 2000, 100)]
    random.Random(0).shuffle(points)
    for _, members in split_by_hash(points, 4):
        assert list(members) == sorted(members)


def test_tie_aware_experiments_get_expected_values_beside_their_measures_and_only_their_chunks_compute_them():
    tied = {**experiment(["adi"], ["porter", "porter_smart"], {"bm25": BM25_NARROW}),
            "tie_aware": True, "table_measures": ["AP", "P@10"]}
    config = config_of({"wide": EXPERIMENTS["wide"], "narrow": tied}, chunk_size=200)
    narrow = config["_experiments"]["narrow"]
    assert narrow["table_measures"] == ["AP", "E[AP]", "P@10", "E[P@10]", "tied_relevant@10", "tied_relevant"]
    assert config["_experiments"]["wide"]["table_measures"] == ["AP"]
    groups = {(c.collection, c.analyzer): c for c in retrieval_chunks(config)}
    # adi/porter holds narrow's cells (with wide's): evaluated with the tie-aware names once; cacm has none of
    # narrow's cells and is evaluated as without the option
    assert groups[("adi", "porter")].tie_measures == ("E[AP]", "E[P@10]", "tied_relevant@10", "tied_relevant")
    assert groups[("adi", "porter_smart")].tie_measures == groups[("adi", "porter")].tie_measures
    assert groups[("cacm", "porter")].tie_measures == ()


def test_a_claim_may_name_a_tie_aware_measure_only_where_it_is_evaluated():
    claim = {"better": "bm25", "than": "bm25", "measure": "E[AP]", "text": "t"}
    tied = {**experiment(["adi"], "porter", {"bm25": BM25_NARROW, "ql": QL}), "tie_aware": True,
            "claims": [{**claim, "better": "ql"}]}
    config = config_of({"tied": tied})
    assert config["_experiments"]["tied"]["claims"][0]["measure"] == "E[AP]"
    with pytest.raises(ConfigError, match="E\\[AP\\]"):
        config_of({"plain": {**tied, "tie_aware": False}})


def test_a_tie_aware_table_may_list_expected_values_itself():
    tied = {**experiment(["adi"], "porter", {"bm25": BM25_NARROW}), "tie_aware": True,
            "table_measures": ["AP", "E[AP]", "worst[P@10]"]}
    config = config_of({"tied": tied})
    assert config["_experiments"]["tied"]["table_measures"] == ["AP", "E[AP]", "worst[P@10]", "tied_relevant@10",
                                                                 "tied_relevant"]
    assert config["_experiments"]["tied"]["tie_measures"] == ["E[AP]", "worst[P@10]", "tied_relevant@10",
                                                              "tied_relevant"]
    with pytest.raises(ConfigError, match="E\\[AP\\]' is not among the evaluated measures"):
        config_of({"plain": {**tied, "tie_aware": False}})


# ------------------------------------------------------------------ large grids: larger chunks, as many jobs

def test_a_query_set_beyond_max_chunks_gets_chunk_size_doubled_until_it_fits():
    # 50 x 64 = 3,200 cells fill 64 chunks of 50; one more needs chunks of 100, 6,401 chunks of 200;
    # 100,000 chunks of 1,600 (800 x 64 = 51,200 < 100,000 <= 1,600 x 64)
    assert [group_chunk_size(cells, 50, 64) for cells in (1, 3200, 3201, 6400, 6401, 100_000)] == [50, 50, 100, 100, 200,
                                                                                                   1600]
    assert group_chunk_size(100_000, 50, None) == 50


def test_the_default_run_is_chunked_by_chunk_size_alone():
    """The default config's query sets hold fewer cells than max_chunks chunks of chunk_size: its chunks
    are the ones chunk_size alone makes (no query set's jobs change with the option)."""
    from common import REPO

    from irgrid.config import load_yaml, validate

    config = validate(load_yaml(REPO / "config" / "config.yaml"), "config.schema.yaml", "config")
    assert config["retrieval"]["max_chunks"] == 64
    default = retrieval_chunks(load_config(config))
    alone = retrieval_chunks(load_config({**config, "retrieval": {**config["retrieval"], "max_chunks": None}}))
    assert default == alone


def big_grid(b_values: list[float]) -> dict:
    # 100 k1 x len(b) BM25 points and 4 QL points on ADI's one query set
    return {"e": experiment(["adi"], "porter", {
        "bm25": {"family": "bm25", "grid": {"k1": [round(0.1 + 0.05 * i, 2) for i in range(100)], "b": b_values}},
        "ql": {"family": "ql_dirichlet", "grid": {"mu": [500, 1000, 1500, 2000]}}})}


def test_a_large_grid_plans_about_max_chunks_jobs_and_a_changed_value_keeps_the_other_chunks():
    b = [round(0.02 * i, 2) for i in range(1, 51)]  # 5,004 cells: more than 64 chunks of 50
    chunks = retrieval_chunks(config_of(big_grid(b), chunk_size=50, max_chunks=64))
    sizes = [len(chunk.cells) for chunk in chunks]
    assert sum(sizes) == 5004 and max(sizes) <= 100 and 5004 / 100 <= len(chunks) <= 2 * 64
    small = retrieval_chunks(config_of(big_grid(b), chunk_size=50, max_chunks=None))
    assert max(len(chunk.cells) for chunk in small) <= 50 and len(small) > 2 * 64
    # b 0.5 -> 0.505: the count stays, so does the size; a chunk changes only where a changed cell left
    # (it held a b=0.5 cell) or arrived (its hash prefix meets that of a chunk holding a b=0.505 cell)
    changed = retrieval_chunks(config_of(big_grid([0.505 if value == 0.5 else value for value in b]), chunk_size=50,
                                         max_chunks=64))
    assert max(len(chunk.cells) for chunk in changed) <= 100
    left = {chunk.label for chunk in chunks if any(cell.params.endswith("_b~0.5") for cell in chunk.cells)}
    arrived = {chunk.label for chunk in changed if any(cell.params.endswith("_b~0.505") for cell in chunk.cells)}
    for chunk in chunks:
        if chunk not in changed:
            assert chunk.label in left or any(chunk.label.startswith(label) or label.startswith(chunk.label)
                                              for label in arrived), chunk.label
    assert sum(chunk in changed for chunk in chunks) >= len(chunks) - len(left) - len(arrived)
