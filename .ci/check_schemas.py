"""Validates the committed JSON Schemas from Python, as a consumer in another language would.

For every `schemas/<Name>.schema.json`:
  * the schema itself is a valid draft 2020-12 schema;
  * every instance in `fixtures/protocol/<Name>.json` validates;
  * when the schema is strict (`additionalProperties: false` at the top level), an instance
    with an extra field is rejected.
For every tool definition in `schemas/tools/` (OpenAI function and MCP forms), its parameter
and output schemas are valid draft 2020-12 schemas.
Exits non-zero on any failure.
"""

import json
import pathlib
import sys

from jsonschema import Draft202012Validator

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main() -> int:
    failures = []
    schemas = sorted((ROOT / "schemas").glob("*.schema.json"))
    if not schemas:
        print("no schemas found", file=sys.stderr)
        return 1
    validated = 0
    strict_checked = 0
    for schema_path in schemas:
        name = schema_path.name[: -len(".schema.json")]
        schema = json.loads(schema_path.read_text())
        try:
            Draft202012Validator.check_schema(schema)
        except Exception as err:  # noqa: BLE001 - report every kind of failure
            failures.append(f"{name}: invalid schema: {err}")
            continue
        validator = Draft202012Validator(schema)
        fixture_path = ROOT / "fixtures" / "protocol" / f"{name}.json"
        if not fixture_path.exists():
            failures.append(f"{name}: no fixture file {fixture_path.relative_to(ROOT)}")
            continue
        instances = json.loads(fixture_path.read_text())
        if not instances:
            failures.append(f"{name}: fixture file has no instances")
        for index, instance in enumerate(instances):
            errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.path))
            for error in errors:
                failures.append(f"{name}[{index}]: {error.message} at {list(error.path)}")
            validated += 1
        if schema.get("additionalProperties") is False:
            for index, instance in enumerate(instances):
                if isinstance(instance, dict):
                    extended = dict(instance, unexpected_field_from_python=1)
                    if validator.is_valid(extended):
                        failures.append(f"{name}[{index}]: an unknown field was accepted")
                    strict_checked += 1
                    break
    tools = sorted((ROOT / "schemas" / "tools").glob("*.json"))
    for tool_path in tools:
        tool = json.loads(tool_path.read_text())
        for key in ("parameters", "inputSchema", "outputSchema"):
            if key in tool:
                try:
                    Draft202012Validator.check_schema(tool[key])
                except Exception as err:  # noqa: BLE001
                    failures.append(f"tools/{tool_path.name}: invalid {key}: {err}")
    for failure in failures:
        print(failure, file=sys.stderr)
    print(
        f"schemas: {len(schemas)}, instances validated: {validated}, "
        f"strict types rejecting unknown fields: {strict_checked}, "
        f"tool definitions: {len(tools)}, failures: {len(failures)}"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
