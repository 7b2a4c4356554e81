"""The Parquet inverted index: Dask build and reader (see docs/architecture.md, section Index)."""

from .format import bucket_of
from .reader import IndexReader, Postings

__all__ = ["IndexReader", "Postings", "bucket_of", "build_index"]


def __getattr__(name: str):
    # The builder (Dask and the analysis tasks) is imported when asked for: a job that only reads an
    # index, as every retrieval job does, would pay for importing it.
    if name == "build_index":
        from .build import build_index

        return build_index
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
