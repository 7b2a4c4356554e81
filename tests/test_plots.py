import pandas as pd

from irgrid.tables import TableSpec, summarise
from irgrid.tables.figures import sensitivity_curves, write_figures


def evaluations():
    rows = []
    for collection in ["c1", "c2"]:
        for mu, ap in [(100, 0.2), (1000, 0.3), (10000, 0.25)]:
            for qid in ["1", "2"]:
                rows.append((collection, "text", "dir", f"mu~{mu}", qid, "AP", ap))
        for k1, b, ap in [(0.9, 0.4, 0.31), (0.9, 0.75, 0.33), (1.2, 0.4, 0.29), (1.2, 0.75, 0.28)]:
            for qid in ["1", "2"]:
                rows.append((collection, "text", "bm25", f"k1~{k1}_b~{b}", qid, "AP", ap))
    return pd.DataFrame(rows, columns=["collection", "queryset", "model", "params", "qid", "measure", "value"])


def test_sensitivity_profile_takes_the_best_over_other_parameters():
    curves = sensitivity_curves(evaluations(), "AP")
    c1 = curves[(curves["collection"] == "c1") & (curves["model"] == "bm25")].set_index(["parameter", "value"])["mean"]
    assert c1[("k1", 0.9)] == 0.33  # best over b at k1=0.9
    assert c1[("k1", 1.2)] == 0.29
    assert c1[("b", 0.75)] == 0.33
    dirichlet = curves[(curves["collection"] == "c2") & (curves["model"] == "dir")]
    assert list(dirichlet["value"]) == [100, 1000, 10000]


def test_figures_are_written_as_svg_and_png_and_svg_is_reproducible(tmp_path):
    data = evaluations()
    spec = TableSpec(experiment="e", models=["bm25", "dir"], baseline="dir", measures=["AP"])
    summary = summarise(data, spec)
    paths = write_figures(data, summary, "AP", ["bm25", "dir"], {}, tmp_path / "a")
    assert sorted(p.name for p in paths) == ["by_method.png", "by_method.svg", "sensitivity.png", "sensitivity.svg"]
    assert all(p.stat().st_size > 1000 for p in paths)
    write_figures(data, summary, "AP", ["bm25", "dir"], {}, tmp_path / "b")
    for name in ["by_method.svg", "sensitivity.svg"]:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_table_rows_in_the_order_they_first_appear():
    from irgrid.tables.figures import table_rows

    frame = pd.DataFrame({"collection": ["b", "a", "b", "a", "c", "b"], "queryset": ["x", "y", "x", "x", "y", "y"]})
    assert table_rows(frame) == [("b", "x"), ("a", "y"), ("a", "x"), ("c", "y"), ("b", "y")]
    assert table_rows(evaluations()) == [("c1", "text"), ("c2", "text")]
