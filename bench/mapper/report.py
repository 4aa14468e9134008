"""Table (Markdown) and chart (SVG) of bench_mapper's JSON: per benchmark, the model's mapping
against the best of all measured candidates (ratio = best / model's, target >= 0.95), the
default mapping, the mapper's search time (target < 100 ms), and every candidate's predicted and
measured time.

    python3 bench/mapper/report.py RUN.json COMMAND OUT.md OUT.svg

The Markdown needs nothing but the standard library; the SVG needs matplotlib (skipped with a
message when it is missing). Runs without measurements (bench_mapper --plan-only or
--compile-only) are tabulated with their predictions only."""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from numbers_common import num, spearman, us  # noqa: E402


def get(d, *keys):
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def model_lines(cands):
    """The model against the measured candidates, once with the fitted estimate and once with
    ptxas's registers and spills: Spearman, median and 90th percentile of |pred - meas| / meas,
    and the measured time of each one's pick against the fastest measured (the issues' lines)."""
    lines = []
    timed = [c for c in cands if measured(c) is not None]
    if len(timed) < 3:
        return lines
    best = min(measured(c) for c in timed)
    for label, key in (("with its register estimate", "predicted_s"),
                       ("with ptxas's registers and spills", "predicted_ptxas_s")):
        pairs = [(num(c.get(key)), measured(c)) for c in timed]
        pairs = [(p, m) for p, m in pairs if p is not None]
        if len(pairs) < 3:
            continue
        errors = sorted(abs(p - m) / m for p, m in pairs)
        median = statistics.median(errors)
        p90 = errors[min(len(errors) - 1, int(round(0.9 * (len(errors) - 1))))]
        rho = spearman([p for p, _ in pairs], [m for _, m in pairs])
        pick = min(pairs, key=lambda pm: pm[0])
        lines.append(f"The model {label} over {len(pairs)} measured candidates: Spearman "
                     f"{'–' if rho is None else f'{rho:.2f}'}, median |error| {100 * median:.1f}%, 90th percentile "
                     f"{100 * p90:.1f}%; its pick measured {pick[1] * 1e6:.1f} us, "
                     f"{best / pick[1]:.3f} of the fastest ({best * 1e6:.1f} us).\n")
    return lines


def role(c):
    roles = c.get("roles") or [k.split(" ")[0].split(":")[0] for k in c.get("kinds", [])]
    for r in ("model", "default", "runner-up", "uniform", "model-strategies", "sample"):
        if r in roles:
            return r
    return roles[0] if roles else "?"


def measured(c):
    """The candidate's time: the interleaved re-timing when it has one, else its first pass."""
    return num(c.get("final_s")) or num(c.get("measured_s"))


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    data = json.load(open(sys.argv[1]))
    command, md_path, svg_path = sys.argv[2], sys.argv[3], sys.argv[4]
    benches = [b for b in data.get("benchmarks", []) if isinstance(b, dict)]
    targets = data.get("targets", {})
    t_ratio = num(targets.get("ratio")) or 0.95
    t_search = num(targets.get("search_s")) or 0.1
    measuring = data.get("mode", "measure") == "measure"

    out = []
    gpu = data.get("gpu") or "no GPU"
    out.append(f"# The mapper against measured alternatives: {gpu}\n")
    out.append(
        f"Command: `{command}` (`{data.get('command', '?')}`), {data.get('date', '?')}; GPU {gpu} "
        f"({data.get('arch', '?')}), driver {data.get('driver') or '?'} (CUDA "
        f"{data.get('cuda_driver_api') or '?'}), NVRTC {data.get('nvrtc') or '?'}; model "
        f"description `{data.get('device_description', '?')}` ({data.get('device_name', '?')}); "
        f"{data.get('n', '?')}^3 interior, double precision.\n")
    out.append(
        f"Candidates per benchmark: the model's mapping, the default, the mapper's runners-up, "
        f"each uniform strategy at the model's block(s), the model's strategies at 6 other "
        f"blocks, {data.get('samples', '?')} random mappings (seed {data.get('seed', '?')}; "
        f"random block, random applicable strategy per input) and, where a calculation does not "
        f"fit one kernel's registers, its register-fit fissions at 25 pairs of budgets, each at 4 "
        f"blocks; those the model finds invalid left out. Each is compiled on its own and timed "
        f"(median of {data.get('repeats', '?')} runs after {data.get('warmup', '?')} warm-up; a run is the sum of its kernels' CUDA "
        f"event times); the model's mapping, the default and the {data.get('finalists', 5)} "
        f"fastest are then timed again interleaved ({data.get('final_repeats', '?')} rounds) and "
        f"those medians give **ratio = best / model's** (target >= {t_ratio}) and the speedup "
        f"over the default. Search time: median of {data.get('search_runs', 5)} runs of the "
        f"mapper (target < {t_search * 1e3:.0f} ms).\n")
    if not measuring:
        out.append(f"**No measurements** (mode `{data.get('mode')}`): predictions only.\n")

    out.append("| benchmark | model's mapping | predicted [us] | measured [us] | best measured [us] "
               "| ratio | default [us] | model vs default | search [ms] | model calls | "
               "timed | skipped |")
    out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    notes = []
    for b in benches:
        if "error" in b and "candidates" not in b:
            out.append(f"| {b.get('name', '?')} | failed: {b['error']} |" + " |" * 10)
            continue
        ratio = num(b.get("ratio"))
        ratio_s = "–" if ratio is None else (f"**{ratio:.3f}**" if ratio >= t_ratio else f"{ratio:.3f} (below)")
        sp = num(b.get("model_speedup_over_default"))
        search = num(get(b, "search", "median_s"))
        search_s = "–" if search is None else (f"{search * 1e3:.1f}" + ("" if search < t_search else " (over)"))
        sk = b.get("skipped", {}) or {}
        skipped = sum((sk.get(k, 0) or 0) for k in ("compile_failed", "load_failed", "launch_failed"))
        model_time = us(get(b, "model", "final_s"))
        status = b.get("model_status")
        if measuring and status and status != "timed":
            model_time = f"{status}"
            notes.append(f"**{b.get('name')}: the model's mapping did not run** ({status}: "
                         f"{b.get('model_error') or '?'}).")
        stand_in = b.get("predicted_best_that_ran") or {}
        sr = num(b.get("ratio_predicted_best_that_ran"))
        if stand_in and stand_in.get("mapping") != get(b, "model", "mapping") and sr is not None:
            notes.append(f"{b.get('name')}: the model's first choice among the candidates that "
                         f"ran, `{stand_in.get('mapping')}` ({', '.join(stand_in.get('kinds', []))}), "
                         f"predicted {us(stand_in.get('predicted_s'))} us, measured "
                         f"{us(stand_in.get('final_s'))} us: best / it = {sr:.3f}.")
        out.append(
            f"| {b.get('name')} | `{get(b, 'model', 'mapping') or '?'}` | "
            f"{us(get(b, 'model', 'predicted_s'))} | {model_time} | "
            f"{us(get(b, 'best', 'final_s'))} | {ratio_s} | {us(get(b, 'default', 'final_s'))} | "
            f"{'–' if sp is None else f'{sp:.2f}x'} | {search_s} | "
            f"{get(b, 'search', 'model_calls') or '–'} | {b.get('candidates_timed', 0)} | "
            f"{skipped} (+{sk.get('model_invalid', 0)} invalid for the model) |")
    if notes:
        out.append("")
        out.extend(f"- {n}" for n in notes)
    summary = data.get("summary", {}) or {}
    if measuring:
        wr = num(summary.get("worst_ratio"))
        out.append(f"\nWorst ratio {('–' if wr is None else f'{wr:.3f}')}, slowest search "
                   f"{(num(summary.get('worst_search_s')) or 0) * 1e3:.1f} ms: targets "
                   f"{'**met**' if summary.get('all_targets_met') else '**not all met**'}.\n")

    for b in benches:
        cands = b.get("candidates") or []
        out.append(f"\n## {b.get('name')} ({b.get('edl', '?')}, fd order {b.get('fd_order', '?')}, "
                   f"calculation `{b.get('calculation', '?')}`)\n")
        if "error" in b:
            out.append(f"Error: {b['error']}\n")
        s = b.get("search") or {}
        if s:
            runs = ", ".join(f"{x * 1e3:.1f}" for x in s.get("runs_s", []) if num(x) is not None)
            median = num(s.get("median_s"))
            median_ms = "–" if median is None else f"{median * 1e3:.1f}"
            out.append(
                f"Mapper: {s.get('origin', '?')}; search median {median_ms} ms "
                f"(runs: {runs} ms); {s.get('model_calls', '?')} model calls, "
                f"{s.get('kernels_priced', '?')} kernels priced, {s.get('configurations', '?')} "
                f"block configurations searched ({s.get('pruned', '?')} pruned), "
                f"{s.get('partitions', '?')} partitions, {s.get('ilp_solves', '?')} ILP solves.\n")
        pb = b.get("predicted_best") or {}
        if pb and pb.get("mapping") != get(b, "model", "mapping"):
            out.append(f"Note: the model prices candidate `{pb.get('mapping')}` "
                       f"({', '.join(pb.get('kinds', []))}) at {us(pb.get('predicted_s'))} us, "
                       f"below the mapper's choice ({us(get(b, 'model', 'predicted_s'))} us).\n")
        out.extend(model_lines(cands))
        sk = b.get("skipped") or {}
        if sk.get("examples"):
            out.append("Left out before compiling (first few): " + "; ".join(
                f"`{e.get('mapping')}` ({e.get('kind')}): {e.get('why')}" for e in sk["examples"][:5]) + "\n")
        out.append("| # | measured [us] | re-timed [us] | predicted [us] | with ptxas [us] | "
                   "kinds | mapping | registers | status |")
        out.append("|---:|---:|---:|---:|---:|---|---|---|---|")
        for i, c in enumerate(cands, 1):
            regs = ",".join(str(k.get("registers", "?")) for k in c.get("kernels", []))
            kinds = ", ".join(c.get("kinds", []))
            mark = "**" if role(c) in ("model", "default") else ""
            out.append(f"| {i} | {us(c.get('measured_s'))} | {us(c.get('final_s'))} | "
                       f"{us(c.get('predicted_s'))} | {us(c.get('predicted_ptxas_s'))} | "
                       f"{mark}{kinds}{mark} | `{c.get('mapping', '?')}` | {regs} | "
                       f"{c.get('status', '?')}{(': ' + c['error']) if c.get('error') else ''} |")
    open(md_path, "w").write("\n".join(out) + "\n")
    print(f"report.py: wrote {md_path}")

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report.py: no matplotlib; no chart", file=sys.stderr)
        return
    plotted = [b for b in benches if b.get("candidates")]
    if not plotted:
        print("report.py: no candidates to plot; no chart", file=sys.stderr)
        return
    styles = {  # role: (colour, marker, size, label)
        "sample": ("#aaaaaa", "o", 14, "random sample"),
        "model-strategies": ("#1f77b4", "o", 18, "model's strategies, other block"),
        "uniform": ("#2ca02c", "o", 18, "uniform strategy"),
        "runner-up": ("#ff7f0e", "o", 22, "mapper's runner-up"),
        "default": ("black", "s", 60, "default mapping"),
        "model": ("#d62728", "*", 160, "model's mapping"),
    }
    cols = len(plotted)
    fig, axes = plt.subplots(2, cols, figsize=(4.4 * cols, 8.2), squeeze=False)
    for j, b in enumerate(plotted):
        cands = b["candidates"]
        key = measured if measuring else (lambda c: num(c.get("predicted_s")))
        pts = [(key(c), c) for c in cands if key(c) is not None]
        pts.sort(key=lambda t: t[0])
        ax = axes[0][j]
        seen = set()
        for order in ("sample", "model-strategies", "uniform", "runner-up", "default", "model"):
            xs = [i for i, (t, c) in enumerate(pts) if role(c) == order]
            ys = [pts[i][0] * 1e6 for i in xs]
            if not xs:
                continue
            colour, marker, size, label = styles[order]
            ax.scatter(xs, ys, c=colour, marker=marker, s=size, zorder=3 if order in ("model", "default") else 2,
                       label=label if order not in seen else None, edgecolors="none")
            seen.add(order)
        stand_in = get(b, "predicted_best_that_ran", "mapping")
        if measuring and stand_in and stand_in != get(b, "model", "mapping"):
            xs = [i for i, (t, c) in enumerate(pts) if c.get("mapping") == stand_in]
            if xs:
                ax.scatter(xs, [pts[i][0] * 1e6 for i in xs], facecolors="none", edgecolors="#d62728",
                           marker="*", s=160, zorder=4, label="model's first choice that ran")
        status = b.get("model_status")
        if measuring and status and status != "timed":
            ax.text(0.98, 0.04, f"model's mapping: {status}", transform=ax.transAxes, ha="right",
                    va="bottom", fontsize=8, color="#d62728")
        best = num(get(b, "best", "final_s"))
        if measuring and best is not None:
            ax.axhline(best / t_ratio * 1e6, color="#d62728", lw=0.7, ls="--",
                       label=f"best / {t_ratio} (model must be below)")
        ratio = num(b.get("ratio"))
        search = num(get(b, "search", "median_s"))
        title = b.get("name", "?")
        if ratio is not None:
            title += f": ratio {ratio:.3f}"
        if search is not None:
            title += f", search {search * 1e3:.0f} ms"
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("candidates, fastest first")
        if j == 0:
            ax.set_ylabel(("measured" if measuring else "predicted") + " time per run [us]")
        if pts and pts[-1][0] > 4 * pts[0][0]:
            ax.set_yscale("log")
        ax.legend(fontsize=6.5, loc="upper left")

        ax = axes[1][j]
        pairs = [(num(c.get("predicted_s")), measured(c), c) for c in cands]
        pairs = [(p, m, c) for p, m, c in pairs if p is not None and m is not None]
        if pairs:
            lo = min(min(p, m) for p, m, _ in pairs) * 1e6 / 1.2
            hi = max(max(p, m) for p, m, _ in pairs) * 1e6 * 1.2
            ax.plot([lo, hi], [lo, hi], color="black", lw=0.7)
            for order in ("sample", "model-strategies", "uniform", "runner-up", "default", "model"):
                sel = [(p, m) for p, m, c in pairs if role(c) == order]
                if sel:
                    colour, marker, size, _ = styles[order]
                    ax.scatter([m * 1e6 for _, m in sel], [p * 1e6 for p, _ in sel], c=colour,
                               marker=marker, s=size, edgecolors="none",
                               zorder=3 if order in ("model", "default") else 2)
            if hi / lo > 20:  # a log scale only where it spans decades (else it has no labels)
                ax.set_xscale("log")
                ax.set_yscale("log")
                from matplotlib.ticker import NullFormatter
                ax.xaxis.set_minor_formatter(NullFormatter())
                ax.yaxis.set_minor_formatter(NullFormatter())
            ax.set_xlim(lo, hi)
            ax.set_ylim(lo, hi)
            rho = spearman([p for p, _, _ in pairs], [m for _, m, _ in pairs])
            ax.set_title("predicted vs measured" + (f" (Spearman {rho:.2f})" if rho is not None else ""),
                         fontsize=9)
        else:
            ax.text(0.5, 0.5, "no measurements", ha="center", va="center", transform=ax.transAxes)
        ax.set_xlabel("measured [us]")
        if j == 0:
            ax.set_ylabel("predicted [us]")
    fig.suptitle(f"Mapper vs measured candidates: {gpu}, {data.get('n', '?')}^3, double precision",
                 fontsize=11)
    fig.tight_layout()
    fig.savefig(svg_path)
    print(f"report.py: wrote {svg_path}")


if __name__ == "__main__":
    main()
