"""Errors that name what went wrong where, so a user can fix their input."""

from __future__ import annotations

from os import PathLike


class InputFormatError(ValueError):
    """A line of an input file does not have the expected form.

    The message always names the file, the 1-based line number and what was
    expected, e.g. ``qrels.txt:17: expected 'qid docno relevance' (3 or 4
    columns), found 2 columns: '5 184'``.
    """

    def __init__(self, path: str | PathLike, line: int | None, expected: str, found: str | None = None):
        self.path = str(path)
        self.line = line
        self.expected = expected
        self.found = found
        where = f"{self.path}:{line}" if line is not None else self.path
        message = f"{where}: expected {expected}"
        if found is not None:
            shown = found if len(found) <= 120 else found[:117] + "..."
            message += f", found {shown!r}"
        super().__init__(message)

    def __reduce__(self):
        # Rebuild from the constructor's arguments: lets the error cross process
        # boundaries (Dask workers, multiprocessing) with its message intact.
        return (type(self), (self.path, self.line, self.expected, self.found))


class ConfigError(ValueError):
    """The configuration names something that does not exist or has a wrong value."""
