#!/usr/bin/env bash
# A CPU run of the `saguaro` executable leaves a prediction log (one row per calculation that
# ran, measured and predicted times positive); `saguaro report` draws it as an SVG that parses
# as XML, and refuses a directory without a log (or with a broken one) with status 2.
# Usage: cli_report.sh SAGUARO PYTHON3 SOURCE_DIR
set -euo pipefail
saguaro=$1 python=$2 src=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=1
cat > "$work/r.par" <<PAR
ActiveThorns = "Saguaro WaveDemo"
Saguaro::equations = "$src/par/wave.edl"
Saguaro::backend = "cpu"
Saguaro::cache_dir = "$work/cache"
Cactus::cctk_show_schedule = no
CoordBase::spacing = "numcells"
CoordBase::ncells_x = 10
CoordBase::ncells_y = 10
CoordBase::ncells_z = 10
Periodic::periodic = yes
Cactus::cctk_itlast = 4
IO::out_dir = "$work/out"
IO::out_every = 2
PAR
"$saguaro" "$work/r.par" > "$work/log"
grep -q "^Prediction log: " "$work/log" || { echo "no prediction table in the log:"; cat "$work/log"; exit 1; }

# predictions.tsv: rows of wave_init, wave_energy and wave_rhs's two folded forms (ICN's stage
# 1 and stages 2-3: Saguaro::fold_updates) with positive times.
awk -F'\t' '
  /^# calculation/ { for (c = 2; c <= NF; ++c) col[$c] = c; col["calculation"] = 1; next }
  /^#/ { next }
  { rows[$col["calculation"]] = 1
    if (!($col["measured_median"] > 0)) { print "measured not > 0: " $0; bad = 1 }
    if (!($col["predicted_hu"] > 0)) { print "predicted not > 0: " $0; bad = 1 }
    ++n }
  END { if (n != 4 || !rows["wave_init"] || !rows["wave_rhs (stage 1)"] ||
            !rows["wave_rhs (stages 2, 3)"] || !rows["wave_energy"]) {
          print n " rows, expected wave_init, wave_rhs (stage 1), wave_rhs (stages 2, 3) " \
                "and wave_energy"; bad = 1 }
        exit bad }' "$work/out/predictions.tsv" || { cat "$work/out/predictions.tsv"; exit 1; }

"$saguaro" report "$work/out" > "$work/report"
grep -q "wrote $work/out/predictions.svg" "$work/report" || { cat "$work/report"; exit 1; }
"$saguaro" report "$work/out" --out "$work/other.svg" > /dev/null
for svg in "$work/out/predictions.svg" "$work/other.svg"; do
  "$python" - "$svg" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
assert root.tag == ns + "svg", root.tag
texts = " ".join(t.text or "" for t in root.iter(ns + "text"))
for name in ("wave_init", "wave_rhs", "wave_energy", "cpu backend"):
    assert name in texts, name + " not in the SVG's text"
assert len(list(root.iter(ns + "circle"))) >= 4, "fewer than 4 points"
PY
done

# No log, a broken log: status 2 and a message.
mkdir "$work/empty"
set +e
"$saguaro" report "$work/empty" > "$work/out2" 2> "$work/err2"; status=$?
set -e
[[ $status == 2 ]] || { echo "report of a directory without a log: status $status"; exit 1; }
grep -q "no prediction log" "$work/err2" || { cat "$work/err2"; exit 1; }
echo '{"calculation": 1}' > "$work/empty/predictions.jsonl"
set +e
"$saguaro" report "$work/empty" > "$work/out2" 2> "$work/err2"; status=$?
set -e
[[ $status == 2 ]] || { echo "report of a broken log: status $status"; exit 1; }
grep -q "predictions.jsonl:1:" "$work/err2" || { cat "$work/err2"; exit 1; }
echo "prediction log written and reported"
