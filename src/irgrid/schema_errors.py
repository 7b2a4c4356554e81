"""A JSON-schema violation as one line a user can act on (config files and the collection registry)."""

from __future__ import annotations

import difflib

import jsonschema


def describe_schema_error(error: jsonschema.ValidationError) -> str:
    """One line saying where a schema violation is and what was expected.

    An unknown key gets the closest known keys (``did you mean 'num_shards'?``); a value that fits
    none of several alternatives (``oneOf``) is described by the alternative it came closest to,
    e.g. ``[] should be non-empty`` for an empty grid list.
    """
    if error.validator in ("oneOf", "anyOf") and error.context:
        # The alternative whose type the value has says what is wrong with it ("[] should be
        # non-empty"), not the one of another type ("[] is not of type 'number'").
        right_type = [e for e in error.context if e.validator != "type"]
        error = jsonschema.exceptions.best_match(right_type or error.context)
    where = "/".join(str(part) for part in error.absolute_path) or "(top level)"
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = list(error.schema.get("properties", {}))
        unknown = [key for key in error.instance if key not in known]
        if unknown and known:
            key = unknown[0]
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            place = "top-level key" if not error.absolute_path else f"key at {where!r}:"
            return f"unknown {place} {key!r} ({hint}known keys: {', '.join(known)})"
    return f"invalid value at {where!r}: {error.message}"
