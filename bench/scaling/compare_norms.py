"""The norms check of bench/scaling/run.sh: every number of every norms file (<VAR>.norms.tsv,
written by IOScalar) of a run on N ranks against the same run on 1 rank.

    python3 bench/scaling/compare_norms.py OUT.tsv SYSTEM REF_DIR N DIR [N DIR ...]

REF_DIR is the 1-rank run's directory, each N DIR a run on N ranks; the norms files are found
anywhere below each directory and matched by file name. Per pair: the maximum over all numbers
of |a - b| / max(|a|, |b|, 1e-300) (numbers that are exactly zero on both sides count as equal)
and where it occurs; PASS when it is <= the tolerance ($SCALING_NORMS_TOL, default 1e-14), FAIL
above it or when the files, their rows or their columns differ, MISSING when a run left no norms
files. Appends one row per pair to OUT.tsv (writing the header when the file is new) and prints
the rows; exits 0 whatever the result (report.py reports it)."""
import math
import os
import sys

COLUMNS = ["system", "n", "ref_n", "files", "values", "max_rel_diff", "worst", "tolerance",
           "status", "note"]


def norms_files(root):
    """{file name: path} of every *.norms.tsv below root."""
    found = {}
    for dirpath, _, names in os.walk(root):
        for name in names:
            if name.endswith(".norms.tsv"):
                found.setdefault(name, os.path.join(dirpath, name))
    return found


def read_norms(path):
    """(column names, rows of strings); the names come from the last comment line before the
    data that has as many tab-separated fields as a row (else col0, col1, ...)."""
    comments, rows = [], []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                continue
            if line.startswith("#"):
                if not rows:
                    comments.append(line.lstrip("#").strip())
                continue
            rows.append(line.split("\t"))
    width = len(rows[0]) if rows else 0
    names = None
    for c in reversed(comments):
        fields = c.split("\t")
        if len(fields) == width:
            names = fields
            break
    return names or [f"col{i}" for i in range(width)], rows


def rel_diff(a, b):
    """|a - b| / max(|a|, |b|, 1e-300); 0 for equal numbers (zeros, infinities and NaNs alike),
    inf when exactly one side is not finite."""
    if a == b or (math.isnan(a) and math.isnan(b)):
        return 0.0
    if not (math.isfinite(a) and math.isfinite(b)):
        return math.inf
    return abs(a - b) / max(abs(a), abs(b), 1e-300)


def compare(ref_dir, dir_, tol):
    """(files, values, max_rel_diff, worst, status, note)."""
    ref, other = norms_files(ref_dir), norms_files(dir_)
    if not ref or not other:
        which = " and ".join(d for d, f in ((ref_dir, ref), (dir_, other)) if not f)
        return 0, 0, None, "", "MISSING", f"no *.norms.tsv under {which}"
    notes = []
    if set(ref) != set(other):
        notes.append("files differ: only in 1 rank: " + ",".join(sorted(set(ref) - set(other))) +
                     "; only in N ranks: " + ",".join(sorted(set(other) - set(ref))))
    worst, worst_at, values = 0.0, "", 0
    for name in sorted(set(ref) & set(other)):
        names, a_rows = read_norms(ref[name])
        _, b_rows = read_norms(other[name])
        if len(a_rows) != len(b_rows):
            notes.append(f"{name}: {len(a_rows)} rows on 1 rank, {len(b_rows)} on N")
        for a_row, b_row in zip(a_rows, b_rows):
            if len(a_row) != len(b_row):
                notes.append(f"{name}: row {a_row[0]}: {len(a_row)} columns against {len(b_row)}")
                continue
            for j, (x, y) in enumerate(zip(a_row, b_row)):
                try:
                    a, b = float(x), float(y)
                except ValueError:
                    if x != y:
                        notes.append(f"{name}: row {a_row[0]}: '{x}' against '{y}'")
                    continue
                values += 1
                d = rel_diff(a, b)
                if d > worst:
                    col = names[j] if j < len(names) else f"col{j}"
                    worst, worst_at = d, f"{name} iteration {a_row[0]} {col}: {x} vs {y}"
    status = "PASS" if worst <= tol and not notes else "FAIL"
    return len(set(ref) & set(other)), values, worst, worst_at, status, "; ".join(notes)


def main():
    args = sys.argv[1:]
    if len(args) < 5 or (len(args) - 3) % 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    out, system, ref_dir = args[:3]
    tol = float(os.environ.get("SCALING_NORMS_TOL", "1e-14"))
    new = not os.path.exists(out) or os.path.getsize(out) == 0
    with open(out, "a") as f:
        if new:
            f.write("\t".join(COLUMNS) + "\n")
        for n, dir_ in zip(args[3::2], args[4::2]):
            files, values, worst, where, status, note = compare(ref_dir, dir_, tol)
            row = [system, n, "1", str(files), str(values),
                   "" if worst is None else f"{worst:.3e}", where, f"{tol:g}", status,
                   note.replace("\t", " ")]
            f.write("\t".join(row) + "\n")
            print(f"norms check {system} N={n} against N=1: {status}, max rel diff "
                  f"{row[5] or '-'} over {values} numbers in {files} files"
                  f"{' (' + where + ')' if where else ''}{'; ' + note if note else ''}")


if __name__ == "__main__":
    main()
