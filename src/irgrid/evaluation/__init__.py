"""Per-query evaluation and what is computed from it: ir-measures' values of a run
(:mod:`.evaluator`), the measures' names (:mod:`.measure_names`), tie-aware values
(:mod:`.ties`) and the paired tests and parameter selection over them (:mod:`.stats`)."""
