#!/usr/bin/env python3
"""Validates JSON documents against the draft-07 subset used by data/check.schema.json
(type, required, properties, items, enum, pattern, minimum, minLength). stdlib only.
usage: schema_check.py SCHEMA [FILE...]   (stdin when no FILE); exit 1 on the first violation."""
import json, re, sys

def check(s, v, path):
    t = s.get("type")
    if t is not None:
        types = t if isinstance(t, list) else [t]
        ok = False
        for ty in types:
            if ty == "null" and v is None: ok = True
            elif ty == "number" and isinstance(v, (int, float)) and not isinstance(v, bool): ok = True
            elif ty == "string" and isinstance(v, str): ok = True
            elif ty == "object" and isinstance(v, dict): ok = True
            elif ty == "array" and isinstance(v, list): ok = True
            elif ty == "boolean" and isinstance(v, bool): ok = True
        if not ok:
            raise ValueError(f"{path}: {v!r} is not of type {t}")
    if "enum" in s and v not in s["enum"]:
        raise ValueError(f"{path}: {v!r} not in {s['enum']}")
    if "pattern" in s and isinstance(v, str) and not re.search(s["pattern"], v):
        raise ValueError(f"{path}: {v!r} does not match {s['pattern']}")
    if "minimum" in s and isinstance(v, (int, float)) and v < s["minimum"]:
        raise ValueError(f"{path}: {v} < {s['minimum']}")
    if "minLength" in s and isinstance(v, str) and len(v) < s["minLength"]:
        raise ValueError(f"{path}: too short")
    if isinstance(v, dict):
        for k in s.get("required", []):
            if k not in v:
                raise ValueError(f"{path}: missing required {k!r}")
        for k, sub in s.get("properties", {}).items():
            if k in v:
                check(sub, v[k], f"{path}.{k}")
    if isinstance(v, list) and "items" in s:
        for i, item in enumerate(v):
            check(s["items"], item, f"{path}[{i}]")

def main():
    schema = json.load(open(sys.argv[1]))
    files = sys.argv[2:] or ["-"]
    for f in files:
        doc = json.load(sys.stdin if f == "-" else open(f))
        try:
            check(schema, doc, "$")
        except ValueError as e:
            print(f"{f}: {e}")
            return 1
    return 0

if __name__ == "__main__":
    sys.exit(main())
