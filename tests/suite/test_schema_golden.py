"""The JSON Schemas ``wopeval schema`` prints are an interface: what they say is pinned here,
generated in process (no subprocess), against the copies in ``tests/data/schemas``. A change to
the suite or summary models that changes them must change those files with it:

    python -c "import json; from wopeval.suite.json_schemas import suite_json_schema as s; \
print(json.dumps(s(), indent=2, sort_keys=True))" > tests/data/schemas/suite.schema.json
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from wopeval.suite.json_schemas import suite_json_schema, summary_json_schema

SCHEMAS = Path(__file__).parent.parent / "data" / "schemas"


@pytest.mark.parametrize(
    ("name", "generate"), [("suite", suite_json_schema), ("summary", summary_json_schema)]
)
def test_the_generated_schema_is_the_pinned_one(
    name: str, generate: Callable[[], dict[str, object]]
) -> None:
    pinned = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    assert generate() == pinned
