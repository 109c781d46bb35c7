#!/usr/bin/env python3
"""check_json_schema.py SCHEMA INSTANCE: exit 0 when INSTANCE (a JSON file) is valid, else
print every violation and exit 1. Used by the e2e suites to hold commands to docs/schemas."""
import json
import sys

import jsonschema


def main() -> int:
    schema_path, instance_path = sys.argv[1], sys.argv[2]
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    with open(instance_path, encoding="utf-8") as f:
        instance = json.load(f)
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.path))
    for error in errors:
        print(f"{schema_path}: {'/'.join(map(str, error.path)) or '(root)'}: {error.message}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
