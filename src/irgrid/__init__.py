"""irgrid: reproduce the tables of information-retrieval papers.

The package holds all logic (readers, analyzers, the Dask index build, models,
evaluation, statistics, tables); the Snakemake workflow only wires it together.
"""

__version__ = "0.1.0"
