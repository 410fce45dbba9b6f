"""Joint constraints (filled in by the constraints work; none are accepted yet)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def check_constraints(skeleton: Any, constraints: Mapping[str, Any]) -> dict[str, tuple[Any, ...]]:
    """Validated constraints per joint name."""
    if constraints:
        raise ValueError("constraints: joint limits are not supported by this version")
    return {}


def constraint_from_dict(data: Any, where: str) -> Any:
    """A constraint from its JSON form."""
    raise ValueError(f"{where}: joint limits are not supported by this version")
