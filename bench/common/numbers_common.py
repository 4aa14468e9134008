"""Number formatting shared by the benchmarks' report scripts (bench/*/report.py)."""
import math


def num(x):
    """x as a float, or None when it is missing or not a finite number."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def us(x, digits=1):
    """Seconds as microseconds with `digits` decimals, or a dash when there is no number."""
    v = num(x)
    return "–" if v is None else f"{v * 1e6:.{digits}f}"
