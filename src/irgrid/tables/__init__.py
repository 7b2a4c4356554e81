"""Significance-marked result tables, generated from per-query evaluation files.

One table per experiment: a row per collection (and query set, when a collection
has several), a column per model. Each model is represented by its best
parameter point on that row (highest mean of ``select_by``), each cell shows the
mean of the table's measures, and a dagger marks a difference from the named
baseline with paired t-test p < alpha. Nothing is typed in by hand: every
number comes from the per-query files.

A table, figure or findings job reads its cells with :func:`read_table_evaluations`:
each cell's aggregates (:mod:`irgrid.tables.aggregates`), file by file, and the per-query
rows of only the cells it chooses. :func:`load_cells` reads every row of every cell.
"""

from .aggregates import CellAggregates, point_means, read_cell_aggregates, read_table_evaluations
from .loading import load_cells
from .render import SIGNIFICANT_MARK, to_html, to_latex, to_markdown, write_tables
from .selection import best_points, chosen_means, chosen_points, grid_positions, select_point, summarise
from .spec import EDGE_MARK, QUERY_SUBSETS, GridPosition, TableSpec, grid_position, query_subsets, read_topics_file, subset_qids

__all__ = ["EDGE_MARK", "QUERY_SUBSETS", "SIGNIFICANT_MARK", "CellAggregates", "GridPosition", "TableSpec",
           "best_points", "chosen_means", "chosen_points", "grid_position", "grid_positions", "load_cells",
           "point_means", "query_subsets", "read_cell_aggregates", "read_table_evaluations", "read_topics_file",
           "select_point", "subset_qids",
           "summarise", "to_html", "to_latex", "to_markdown", "write_tables"]
