"""Tables (Markdown, TSV) and plot (SVG, PNG) of bench/scaling/run.sh's runs: weak scaling
(efficiency T1/TN per step), strong scaling (speedup T1/TN, efficiency T1/(N TN)), the step's
breakdown (interior, boundary, exchange, idle), the exchange overlap switched off, and the norms
check on 1, 2 and 4 ranks.

    python3 bench/scaling/report.py RUNS_DIR OUT_PREFIX COMMAND GPU_NAME
    python3 bench/scaling/report.py --median-step RUN_DIR     (one run's median step, for run.sh)

RUNS_DIR is run.sh's scratch directory: runs.tsv (one row per run: name, kind = norms | weak |
strong | overlap-off, system, n, ncells_x/y/z, zmax, itlast, rc, wall_s, dir), machine.tsv (key,
value), norms_check.tsv (compare_norms.py) and one directory per run, below which the run wrote
step_breakdown.tsv: '#' comment lines (the first says what ran: ranks, dims, patch, transport,
overlap), a header line, then one row per iteration with at least iteration, step_s,
interior_s, boundary_s, exchange_s, idle_s (seconds per step, maximum over ranks), read by the
header's names. Per run and column: the median over the iterations after the first 2 (warm-up).
Writes OUT_PREFIX.md and OUT_PREFIX.tsv (standard library only) and OUT_PREFIX.svg and .png
(matplotlib; without it the tables are written and the Markdown says why there is no plot)."""
import csv
import datetime
import math
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from numbers_common import num  # noqa: E402

WARMUP = 2           # iterations left out of the medians
TARGET = 0.95        # weak-scaling efficiency target (1 -> 4 GPUs)
STRONG_TARGET = 3.5  # strong-scaling speedup of the wave equation on 4 GPUs (0.875 of linear)
PARTS = ["interior_s", "boundary_s", "exchange_s", "idle_s"]
SYSTEMS = [("wave", "B1, the wave equation (par/wave.edl, fd order 4)"),
           ("bssn", "B5, BSSN (par/bssn/bssn.edl, fd order 4)")]
LABEL = {"wave": "B1 wave", "bssn": "BSSN"}
TSV_COLUMNS = ["table", "system", "n", "grid", "ranks_as", "points_per_gpu", "run", "status", "iterations",
               "step_s", "interior_s", "boundary_s", "exchange_s", "idle_s", "weak_efficiency",
               "strong_speedup", "strong_efficiency", "overlap_on_step_s", "off_over_on",
               "max_rel_diff", "result"]




def read_tsv(path):
    """Rows of a TSV with a header line, as dicts; [] when the file is missing."""
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        lines = [ln for ln in f if ln.strip() and not ln.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


def find_breakdown(run_dir):
    """The step_breakdown.tsv below run_dir (the shallowest), or None."""
    best = None
    for dirpath, _, names in os.walk(run_dir):
        if "step_breakdown.tsv" in names:
            p = os.path.join(dirpath, "step_breakdown.tsv")
            if best is None or p.count(os.sep) < best.count(os.sep):
                best = p
    return best


def read_breakdown(path):
    """(comment lines, header names, rows as {name: float or None})."""
    comments, header, rows = [], None, []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                continue
            if line.startswith("#"):
                comments.append(line.lstrip("#").strip())
                continue
            fields = [x.strip() for x in line.split("\t")]
            if header is None:
                header = fields
                continue
            rows.append({k: num(v) for k, v in zip(header, fields)})
    return comments, header or [], rows


def summarise(run_dir):
    """A run's medians: {'status', 'iterations', 'comments', 'columns': {name: median s}}."""
    path = find_breakdown(run_dir) if os.path.isdir(run_dir) else None
    if path is None:
        return {"status": "no step_breakdown.tsv", "iterations": 0, "comments": [], "columns": {}}
    comments, header, rows = read_breakdown(path)
    used = rows[WARMUP:] if len(rows) > WARMUP else rows
    cols = {}
    for name in header:
        if name == "iteration":
            continue
        vals = [r[name] for r in used if r.get(name) is not None]
        if vals:
            cols[name] = statistics.median(vals)
    status = "ok" if "step_s" in cols else "no step_s rows"
    return {"status": status, "iterations": len(used), "comments": comments, "columns": cols,
            "warmup_skipped": len(rows) > WARMUP}


def decomposition(run_dir):
    """'a x b x c' from the run's log line '... N ranks as a x b x c', or '?'."""
    try:
        text = open(os.path.join(run_dir, "run.log"), errors="replace").read(20000)
    except OSError:
        return "?"
    m = re.search(r"\branks? as (\d+ x \d+ x \d+)", text)
    return m.group(1).replace(" ", "") if m else "?"


def ms(x):
    if x is None:
        return "–"
    v = x * 1e3
    return f"{v:.3f}" if v < 10 else f"{v:.1f}"


def fmt(x, digits=3):
    return "–" if x is None else f"{x:.{digits}f}"


def grid_of(r):
    return f"{r['ncells_x']}x{r['ncells_y']}x{r['ncells_z']}"


def points_per_gpu(r):
    try:
        p = int(r["ncells_x"]) * int(r["ncells_y"]) * int(r["ncells_z"]) / int(r["n"])
    except (KeyError, ValueError, ZeroDivisionError):
        return "?"
    c = round(p ** (1 / 3))
    return f"{c}^3" if c ** 3 == p else (f"{p / 1e6:.2f}M" if p >= 1e5 else f"{p:.0f}")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--median-step":
        s = summarise(sys.argv[2])
        step = s["columns"].get("step_s")
        if step is None:
            print(s["status"])
            return
        print(f"{ms(step)} ms ({s['iterations']} iterations"
              f"{', after ' + str(WARMUP) + ' warm-up' if s.get('warmup_skipped') else ''})")
        return
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    runs_dir, prefix, command, gpu_name = sys.argv[1:]
    runs = read_tsv(os.path.join(runs_dir, "runs.tsv"))
    machine = {}
    mpath = os.path.join(runs_dir, "machine.tsv")
    if os.path.exists(mpath):
        for line in open(mpath):
            k, _, v = line.rstrip("\n").partition("\t")
            if k:
                machine[k] = v
    norms = read_tsv(os.path.join(runs_dir, "norms_check.tsv"))
    size = machine.get("points_per_gpu", "256^3")

    for r in runs:
        r["n_int"] = int(r["n"])
        r["rc_int"] = int(r["rc"]) if r.get("rc", "").lstrip("-").isdigit() else None
        s = summarise(os.path.join(runs_dir, r["dir"]))
        if r["rc_int"] != 0:
            s["status"] = f"failed (exit {r['rc']})"
        r["sum"] = s
        r["dims"] = decomposition(os.path.join(runs_dir, r["dir"]))
        r["step"] = s["columns"].get("step_s") if s["status"] == "ok" else None

    def pick(kind, system):
        return sorted((r for r in runs if r["kind"] == kind and r["system"] == system),
                      key=lambda r: r["n_int"])

    tsv_rows = []
    out = []
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out.append(f"# Multi-GPU scaling: {gpu_name}, up to {machine.get('max_gpus', '?')} GPUs\n")
    out.append(
        f"Command: `{command}`; {machine.get('date', now)}; machine {machine.get('host', '?')} "
        f"({machine.get('cpus', '?')} CPUs, {machine.get('gpus_listed', '?')} GPUs listed); GPU "
        f"{gpu_name}, driver {machine.get('driver', machine.get('gpu_driver', '?'))}; "
        f"{machine.get('mpi', 'MPI ?')}; commit {machine.get('commit', '?')}; backend "
        f"{machine.get('backend', '?')}.\n")
    out.append(
        f"One MPI rank per GPU (`mpirun --bind-to none -n N saguaro X.par`), RK4, periodic box of "
        f"spacing 1/n, the model's mapping, `Saguaro::exchange_overlap = \"auto\"` unless said. "
        f"Weak scaling: {size} points per GPU (N GPUs: n x n x nN cells for {size} = n^3, zmax = N); "
        f"strong scaling: {size} cells in all (1 GPU: the weak run). Times "
        f"are per step, the maximum over ranks, each the median over the iterations after the "
        f"first {WARMUP} (warm-up) of the run's `step_breakdown.tsv`; each part (interior, "
        f"boundary, exchange, idle) is its own median over the steps that measured it (the "
        f"sampled ones, `Saguaro::device_timer_every`; the step's marks cost the GPU time), so the "
        f"parts need not add up to the step. "
        f"Efficiency: weak T1/TN, strong T1/(N TN); speedup T1/TN.\n")

    # weak scaling
    verdicts = []
    for system, title in SYSTEMS:
        rows = pick("weak", system)
        if not rows:
            continue
        out.append(f"## Weak scaling: {title}\n")
        out.append("| GPUs | global grid | ranks as | points per GPU | step [ms] | efficiency T1/TN | "
                   "interior [ms] | boundary [ms] | exchange [ms] | idle [ms] | status |")
        out.append("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
        t1 = next((r["step"] for r in rows if r["n_int"] == 1), None)
        effs = []
        for r in rows:
            eff = t1 / r["step"] if t1 and r["step"] else None
            r["weak_eff"] = eff
            if r["n_int"] > 1:
                effs.append((r["n_int"], eff))
            c = r["sum"]["columns"]
            out.append(f"| {r['n']} | {grid_of(r)} | {r['dims']} | {points_per_gpu(r)} | "
                       f"{ms(r['step'])} | {fmt(eff)} | " + " | ".join(ms(c.get(p)) for p in PARTS) +
                       f" | {r['sum']['status']} |")
            tsv_rows.append(dict(table="weak", system=system, n=r["n"], grid=grid_of(r),
                                 ranks_as=r["dims"], points_per_gpu=points_per_gpu(r), run=r["name"],
                                 status=r["sum"]["status"], iterations=r["sum"]["iterations"],
                                 step_s=r["step"], weak_efficiency=eff,
                                 **{p: c.get(p) for p in PARTS}))
        measured = [(n, e) for n, e in effs if e is not None]
        if not effs:
            v = f"{LABEL[system]}: weak scaling not measured beyond 1 GPU"
        elif len(measured) < len(effs) or t1 is None:
            v = (f"{LABEL[system]}: **not met** (efficiency not measured on every GPU count: a run "
                 f"failed or wrote no step_breakdown.tsv)")
        else:
            worst_n, worst = min(measured, key=lambda x: x[1])
            v = (f"{LABEL[system]}: lowest efficiency {worst:.3f} (N = {worst_n}) against the "
                 f"target {TARGET:.2f}: **{'met' if worst >= TARGET else 'not met'}**")
        verdicts.append(v)
        out.append(f"\n{v}.\n")

    # strong scaling
    strong_verdicts = []
    for system, title in SYSTEMS:
        rows = pick("strong", system)
        if not rows:
            continue
        out.append(f"## Strong scaling: {title}, {size} in all\n")
        out.append("| GPUs | global grid | ranks as | points per GPU | step [ms] | speedup T1/TN | "
                   "efficiency T1/(N TN) | interior [ms] | boundary [ms] | exchange [ms] | "
                   "idle [ms] | status |")
        out.append("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        t1 = next((r["step"] for r in rows if r["n_int"] == 1), None)
        for r in rows:
            sp = t1 / r["step"] if t1 and r["step"] else None
            eff = sp / r["n_int"] if sp else None
            r["speedup"], r["strong_eff"] = sp, eff
            c = r["sum"]["columns"]
            note = " (the weak run)" if r["dir"] != r["name"] else ""
            out.append(f"| {r['n']} | {grid_of(r)} | {r['dims']} | {points_per_gpu(r)} | "
                       f"{ms(r['step'])} | {fmt(sp, 2)} | {fmt(eff)} | " + " | ".join(ms(c.get(p)) for p in PARTS) +
                       f" | {r['sum']['status']}{note} |")
            tsv_rows.append(dict(table="strong", system=system, n=r["n"], grid=grid_of(r),
                                 ranks_as=r["dims"], points_per_gpu=points_per_gpu(r), run=r["dir"],
                                 status=r["sum"]["status"], iterations=r["sum"]["iterations"],
                                 step_s=r["step"], strong_speedup=sp, strong_efficiency=eff,
                                 **{p: c.get(p) for p in PARTS}))
        out.append("")
        on4 = next((r for r in rows if r["n_int"] == 4), None)
        if system == "wave" and on4 is not None:
            sp = on4["speedup"]
            strong_verdicts.append(
                f"{LABEL[system]} on 4 GPUs: speedup {fmt(sp, 2)} against the target "
                f"{STRONG_TARGET:.1f}: **{'met' if sp and sp >= STRONG_TARGET else 'not met'}**")
            out.append(f"{strong_verdicts[-1]}.\n")

    # overlap off
    offs = [r for system, _ in SYSTEMS for r in pick("overlap-off", system)]
    if offs:
        out.append("## Exchange overlap off\n")
        out.append("The weak-scaling run on the most GPUs again with `Saguaro::exchange_overlap = "
                   "\"no\"`: off / on > 1 is what the overlap (the mapper's `auto`) buys.\n")
        out.append("| system | GPUs | step, overlap auto [ms] | step, overlap off [ms] | off / on | "
                   "exchange on / off [ms] | idle on / off [ms] | interior on / off [ms] | status |")
        out.append("|---|---:|---:|---:|---:|---:|---:|---:|---|")
        for r in offs:
            on = next((w for w in pick("weak", r["system"]) if w["n_int"] == r["n_int"]), None)
            t_on = on["step"] if on else None
            ratio = r["step"] / t_on if r["step"] and t_on else None
            c_on = on["sum"]["columns"] if on else {}
            c_off = r["sum"]["columns"]

            def pair(p):
                return f"{ms(c_on.get(p))} / {ms(c_off.get(p))}"
            out.append(f"| {LABEL[r['system']]} | {r['n']} | {ms(t_on)} | {ms(r['step'])} | "
                       f"{fmt(ratio)} | {pair('exchange_s')} | {pair('idle_s')} | "
                       f"{pair('interior_s')} | {r['sum']['status']} |")
            tsv_rows.append(dict(table="overlap-off", system=r["system"], n=r["n"], grid=grid_of(r),
                                 ranks_as=r["dims"], points_per_gpu=points_per_gpu(r), run=r["name"],
                                 status=r["sum"]["status"], iterations=r["sum"]["iterations"],
                                 step_s=r["step"], overlap_on_step_s=t_on, off_over_on=ratio,
                                 **{p: c_off.get(p) for p in PARTS}))
        out.append("")

    # norms check
    out.append("## Norms on N ranks against 1 rank\n")
    norm_runs = [r for r in runs if r["kind"] == "norms"]
    failed_norm_runs = [r["name"] for r in norm_runs if r["rc_int"] != 0]
    if norms:
        out.append(f"Wave equation at 64^3 (20 iterations) and BSSN at 48^3 (8 iterations), norms "
                   f"(min, max, L1, L2, L-inf, with iteration and time) every iteration, mapper "
                   f"`{machine.get('norms_mapper', '?')}`; every number of every norms file on "
                   f"N ranks against 1 rank: max |a-b| / max(|a|, |b|, 1e-300).\n")
        out.append("| system | ranks | against | files | numbers | max relative difference | "
                   "where | tolerance | result |")
        out.append("|---|---:|---:|---:|---:|---:|---|---:|---|")
        for row in norms:
            res = row.get("status", "?")
            note = row.get("note") or ""
            out.append(f"| {LABEL.get(row.get('system'), row.get('system'))} | {row.get('n')} | "
                       f"{row.get('ref_n')} | {row.get('files')} | {row.get('values')} | "
                       f"{row.get('max_rel_diff') or '–'} | {row.get('worst') or '–'} | "
                       f"{row.get('tolerance')} | **{res}**{' (' + note + ')' if note else ''} |")
            tsv_rows.append(dict(table="norms", system=row.get("system"), n=row.get("n"),
                                 run=f"norms-{row.get('system')}-n{row.get('n')}",
                                 status=res, max_rel_diff=num(row.get("max_rel_diff")), result=res))
        ok = all(r.get("status") == "PASS" for r in norms)
        out.append(f"\nNorms check: **{'PASS' if ok else 'FAIL'}**"
                   f"{' (runs failed: ' + ', '.join(failed_norm_runs) + ')' if failed_norm_runs else ''}.\n")
    else:
        out.append("Not compared (no norms_check.tsv: one GPU only, or the comparison did not run)"
                   f"{'; runs failed: ' + ', '.join(failed_norm_runs) if failed_norm_runs else ''}.\n")

    # targets
    out.append("## Targets\n")
    out.extend(f"- Weak-scaling efficiency >= {TARGET:.2f}: {v}." for v in verdicts)
    out.extend(f"- Strong-scaling speedup >= {STRONG_TARGET:.1f}: {v}." for v in strong_verdicts)
    if norms:
        out.append(f"- Same norms on 1 and N ranks (<= {norms[0].get('tolerance', '1e-14')} relative): "
                   f"**{'met' if all(r.get('status') == 'PASS' for r in norms) else 'not met'}**.")
    out.append("")

    # plot
    fig_note = plot(runs, prefix, size)
    out.append(f"![scaling]({os.path.basename(prefix)}.svg)\n" if fig_note is None
               else f"No plot: {fig_note}.\n")

    # every run
    out.append("## Runs\n")
    out.append("| run | ranks | grid | iterations used | wall [s] | exit | step [ms] | other columns "
               "[ms] | what ran (step_breakdown.tsv) |")
    out.append("|---|---:|---|---:|---:|---:|---:|---|---|")
    for r in runs:
        if r["dir"] != r["name"]:
            continue
        c = r["sum"]["columns"]
        extra = ", ".join(f"{k} {ms(v)}" for k, v in c.items() if k not in PARTS + ["step_s"])
        what = " / ".join(r["sum"]["comments"][:1]).replace("|", "\\|")
        what = what.replace("saguaro step breakdown: ", "")
        out.append(f"| {r['name']} | {r['n']} | {grid_of(r)} | {r['sum']['iterations']} | "
                   f"{r.get('wall_s', '?')} | {r['rc']} | {ms(c.get('step_s'))} | {extra or '–'} | "
                   f"{what or r['sum']['status']} |")
    out.append("")

    with open(prefix + ".md", "w") as f:
        f.write("\n".join(out))
    with open(prefix + ".tsv", "w") as f:
        f.write(f"# {command}; {gpu_name}; {machine.get('date', now)}; times in seconds per step "
                f"(medians after {WARMUP} warm-up iterations)\n")
        f.write("\t".join(TSV_COLUMNS) + "\n")
        for row in tsv_rows:
            vals = []
            for k in TSV_COLUMNS:
                v = row.get(k)
                vals.append("" if v is None else (f"{v:.6g}" if isinstance(v, float) else str(v)))
            f.write("\t".join(vals) + "\n")
    for v in verdicts:
        print(v)
    print(f"wrote {prefix}.md, {prefix}.tsv" + ("" if fig_note else f", {prefix}.svg, {prefix}.png"))


def plot(runs, prefix, size):
    """Draws the three panels; returns None, or why there is no plot."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (the tables above are complete)"
    fig, axes = plt.subplots(1, 3, figsize=(17, 5.2), gridspec_kw={"width_ratios": [1, 1, 1.7]})
    colors = {"wave": "tab:blue", "bssn": "tab:red"}
    ns_all = sorted({r["n_int"] for r in runs}) or [1]

    ax = axes[0]
    for system, _ in SYSTEMS:
        pts = [(r["n_int"], r.get("weak_eff")) for r in runs
               if r["kind"] == "weak" and r["system"] == system and r.get("weak_eff") is not None]
        if pts:
            ax.plot(*zip(*sorted(pts)), "o-", color=colors[system], label=LABEL[system])
    ax.axhline(TARGET, ls="--", color="gray", label=f"target {TARGET:.2f}")
    ax.set_xticks(ns_all)
    ax.set_ylim(0, 1.15)
    ax.set_xlabel("GPUs")
    ax.set_ylabel("weak-scaling efficiency T1/TN")
    ax.set_title(f"Weak scaling, {size} per GPU")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower left")

    ax = axes[1]
    for system, _ in SYSTEMS:
        pts = [(r["n_int"], r.get("speedup")) for r in runs
               if r["kind"] == "strong" and r["system"] == system and r.get("speedup") is not None]
        if pts:
            ax.plot(*zip(*sorted(pts)), "o-", color=colors[system], label=LABEL[system])
    ax.plot(ns_all, ns_all, "--", color="gray", label="ideal")
    ax.set_xticks(ns_all)
    ax.set_xlabel("GPUs")
    ax.set_ylabel("speedup T1/TN")
    ax.set_title(f"Strong scaling, {size} in all")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left")

    ax = axes[2]
    bars = [r for r in runs if r["kind"] in ("weak", "strong", "overlap-off")
            and r["dir"] == r["name"] and r.get("step")]
    part_colors = {"interior_s": "tab:green", "boundary_s": "tab:olive",
                   "exchange_s": "tab:orange", "idle_s": "tab:gray"}
    short = {"weak": "W", "strong": "S", "overlap-off": "W off"}
    rest_labelled = False
    for i, r in enumerate(bars):
        c, step, bottom = r["sum"]["columns"], r["step"], 0.0
        for p in PARTS:
            v = (c.get(p) or 0.0) / step
            ax.bar(i, v, bottom=bottom, color=part_colors[p], label=p[:-2] if i == 0 else None)
            bottom += v
        if bottom < 1:
            ax.bar(i, 1 - bottom, bottom=bottom, color="white", edgecolor="lightgray", hatch="//",
                   label=None if rest_labelled else "rest of the step")
            rest_labelled = True
        ax.text(i, max(bottom, 1) + 0.02, f"{ms(step)}", ha="center", va="bottom", fontsize=7,
                rotation=90)
    ax.axhline(1, color="black", lw=0.8)
    ax.set_xticks(range(len(bars)))
    ax.set_xticklabels([f"{LABEL[r['system']]}\n{short[r['kind']]}{r['n']}" for r in bars],
                       fontsize=7)
    ax.set_ylabel("fraction of the step (median parts / median step)")
    ax.set_title("Breakdown per step (W: weak, S: strong, off: overlap off; ms per step on top)")
    ax.set_ylim(0, max([1.35] + [sum((r["sum"]["columns"].get(p) or 0) for p in PARTS) / r["step"]
                                 + 0.3 for r in bars]))
    ax.legend(fontsize=7, loc="upper right", ncol=3)
    fig.tight_layout()
    fig.savefig(prefix + ".svg")
    fig.savefig(prefix + ".png", dpi=110)
    plt.close(fig)
    return None


if __name__ == "__main__":
    main()
