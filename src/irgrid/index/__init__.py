"""The Parquet inverted index: Dask build and reader (see docs/architecture.md, section Index)."""

from .build import build_index
from .format import bucket_of
from .reader import IndexReader, Postings

__all__ = ["IndexReader", "Postings", "bucket_of", "build_index"]
