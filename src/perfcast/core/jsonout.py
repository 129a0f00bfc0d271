"""JSON output of the diagnoses: numpy numbers become plain ones, NaN and infinities null."""

from __future__ import annotations

import json
import math
import sys
from fractions import Fraction
from typing import Any


def plain(value: Any) -> Any:
    """A copy of ``value`` made of dicts, lists, str, int, float (finite), bool and None."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    # No value is a numpy one before numpy is imported (a static report's output never does)
    np = sys.modules.get("numpy")
    if np is not None and isinstance(value, np.ndarray):
        return [plain(v) for v in value.tolist()]
    if isinstance(value, bool) or (np is not None and isinstance(value, np.bool_)):
        return bool(value)
    if isinstance(value, int) or (np is not None and isinstance(value, np.integer)):
        return int(value)
    if isinstance(value, float | Fraction) or (np is not None and isinstance(value, np.floating)):
        number = float(value)
        return number if math.isfinite(number) else None
    return value


def dumps(value: Any) -> str:
    """Strict JSON text (no NaN) of ``value``, indented for reading."""
    return json.dumps(plain(value), indent=2, allow_nan=False)
