"""Number formatting and rank correlation shared by the benchmarks' scripts (bench/*/report.py,
bench/model/fit_constants.py)."""
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


def ranks(values):
    """Average ranks (1-based) of values, ties sharing the mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(xs, ys):
    """Spearman's rank correlation of paired values; None for fewer than 3 pairs."""
    if len(xs) < 3:
        return None
    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return None if sxx == 0 or syy == 0 else sxy / math.sqrt(sxx * syy)
