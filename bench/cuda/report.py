"""Table (Markdown) and bar chart (SVG) of bench_cuda's JSON: per benchmark, the compulsory
bandwidth of every buffering strategy and block configuration as a share of the measured
device-to-device copy bandwidth; with the model's predictions (bench_cuda --device), their
accuracy (median and 90th percentile of |predicted - measured| / measured, both combination
formulas) and a predicted-vs-measured plot (<svg>-model.svg)."""
import json
import sys

data = json.load(open(sys.argv[1]))
command, md_path, svg_path = sys.argv[2], sys.argv[3], sys.argv[4]
rows = data["results"]
names = {"u": "unbuffered", "r": "register", "b": "shared", "p": "plus (2.5D)", "c": "read-only"}

out = []
out.append(f"# Generated CUDA kernels vs the copy bandwidth: {data['gpu']}\n")
out.append(f"Command: `{command}`; GPU {data['gpu']} ({data['arch']}), driver {data['driver']}, "
           f"NVRTC {data['nvrtc']}; {data['n']}^3 interior points, double precision; median of "
           f"{data['repeats']} launches (CUDA events) after 3 warm-up launches. Compulsory "
           f"traffic: each input grid function read once and each output written once over the "
           f"interior. Device-to-device copy measured in the same run: "
           f"**{data['copy_bandwidth_GBs']:.0f} GB/s** (read + write).\n")
for bench in dict.fromkeys(r["benchmark"] for r in rows):
    rs = [r for r in rows if r["benchmark"] == bench]
    best = max(rs, key=lambda r: r["percent_of_copy"])
    out.append(f"\n## {bench} ({rs[0]['edl']}, fd order {rs[0]['fd_order']}, calculation "
               f"`{rs[0]['calculation']}`)\n")
    out.append(f"Best: {names[best['buffering']]} with block `{best['block']}`: "
               f"{best['median_s']*1e6:.1f} us, {best['bandwidth_GBs']:.0f} GB/s, "
               f"**{best['percent_of_copy']:.1f}% of copy**.\n")
    out.append("| block | buffering | median [us] | min..max [us] | GB/s | % of copy | Gpoints/s | registers | spill [B] |")
    out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rs:
        out.append(f"| `{r['block']}` | {r['buffering']} ({names[r['buffering']]}) | "
                   f"{r['median_s']*1e6:.1f} | {r['min_s']*1e6:.1f}..{r['max_s']*1e6:.1f} | "
                   f"{r['bandwidth_GBs']:.0f} | {r['percent_of_copy']:.1f} | "
                   f"{r['points_per_s']/1e9:.2f} | {r['registers']} | {r['spill_stores']} |")

if "accuracy" in data:
    acc = data["accuracy"]
    out.append(f"\n## The performance model against these measurements\n")
    out.append(f"Description: `{data.get('device_description', '?')}`. Error = |predicted - "
               f"measured| / measured per kernel launch (median of the samples above); *Hu* is "
               f"eq. 1 with beta, *Chemora* the 0.35 formula with the issue term. Target: median "
               f"<= 10%, 90th percentile <= 25%.\n")
    out.append("| benchmark | kernels | Hu median | Hu p90 | Chemora median | Chemora p90 |")
    out.append("|---|---:|---:|---:|---:|---:|")
    for name, a in acc.items():
        label = "**all**" if name == "all" else name
        out.append(f"| {label} | {a['kernels']} | {100*a['hu_median']:.1f}% | {100*a['hu_p90']:.1f}% | "
                   f"{100*a['chemora_median']:.1f}% | {100*a['chemora_p90']:.1f}% |")
    out.append("\n| benchmark | block | buffering | measured [us] | Hu [us] | error | Chemora [us] | error | limiter | occupancy |")
    out.append("|---|---|---|---:|---:|---:|---:|---:|---|---|")
    for r in rows:
        m = r.get("model")
        if not m:
            continue
        out.append(f"| {r['benchmark']} | `{r['block']}` | {r['buffering']} | {r['median_s']*1e6:.1f} | "
                   f"{m['predicted_hu_s']*1e6:.1f} | {100*m['error_hu']:+.1f}% | "
                   f"{m['predicted_chemora_s']*1e6:.1f} | {100*m['error_chemora']:+.1f}% | "
                   f"{m['limiter']} | {m['blocks_per_sm']} blocks ({m['occupancy_limit']}) |")
open(md_path, "w").write("\n".join(out) + "\n")

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("report.py: no matplotlib; no chart", file=sys.stderr)
    sys.exit(0)
benches = list(dict.fromkeys(r["benchmark"] for r in rows))
fig, axes = plt.subplots(1, len(benches), figsize=(4.2 * len(benches), 4.2), sharey=True)
if len(benches) == 1:
    axes = [axes]
colors = {"u": "#777777", "r": "#1f77b4", "b": "#2ca02c", "p": "#d62728", "c": "#9467bd"}
for ax, bench in zip(axes, benches):
    rs = [r for r in rows if r["benchmark"] == bench]
    blocks = list(dict.fromkeys(r["block"] for r in rs))
    width = 0.8 / 5
    for s_i, s in enumerate("urbpc"):
        xs, ys = [], []
        for b_i, b in enumerate(blocks):
            for r in rs:
                if r["block"] == b and r["buffering"] == s:
                    xs.append(b_i + (s_i - 2) * width)
                    ys.append(r["percent_of_copy"])
        if xs:
            ax.bar(xs, ys, width, color=colors[s], label=names[s])
    ax.axhline(100, color="black", lw=0.8)
    ax.axhline(80, color="black", lw=0.6, ls="--")
    ax.set_xticks(range(len(blocks)))
    ax.set_xticklabels(blocks, rotation=45, ha="right", fontsize=8)
    ax.set_title(bench)
axes[0].set_ylabel("compulsory bandwidth, % of device copy")
axes[-1].legend(fontsize=8)
fig.suptitle(f"{data['gpu']}, {data['n']}^3, double precision ({data['copy_bandwidth_GBs']:.0f} GB/s copy)")
fig.tight_layout()
fig.savefig(svg_path)

if "accuracy" in data:
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.8), sharey=True)
    marks = {"wave2": "o", "wave4": "s", "wave8": "^", "maxwell": "D", "microbench": "v"}
    for ax, key, title in [(axes[0], "predicted_hu_s", "Hu et al. eq. 1"),
                           (axes[1], "predicted_chemora_s", "Chemora 0.35 formula")]:
        ms = [r for r in rows if r.get("model")]
        lo = min(min(r["median_s"], r["model"][key]) for r in ms) * 1e6 / 1.3
        hi = max(max(r["median_s"], r["model"][key]) for r in ms) * 1e6 * 1.3
        xs = [lo, hi]
        ax.fill_between(xs, [x / 1.25 for x in xs], [x * 1.25 for x in xs], color="#eeeeee", label="±25%")
        ax.fill_between(xs, [x / 1.1 for x in xs], [x * 1.1 for x in xs], color="#cccccc", label="±10%")
        ax.plot(xs, xs, color="black", lw=0.8, label="y = x")
        for bench in dict.fromkeys(r["benchmark"] for r in ms):
            rs = [r for r in ms if r["benchmark"] == bench]
            ax.scatter([r["median_s"] * 1e6 for r in rs], [r["model"][key] * 1e6 for r in rs],
                       s=18, marker=marks.get(bench, "o"), label=bench)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        from matplotlib.ticker import NullFormatter
        ax.xaxis.set_minor_formatter(NullFormatter())  # decades only: minor labels collide
        ax.yaxis.set_minor_formatter(NullFormatter())
        a = data["accuracy"]["all"]
        k = "hu" if key == "predicted_hu_s" else "chemora"
        ax.set_title(f"{title}: median {100*a[k+'_median']:.0f}%, p90 {100*a[k+'_p90']:.0f}%", fontsize=10)
        ax.set_xlabel("measured time per launch [us]")
    axes[0].set_ylabel("predicted time per launch [us]")
    axes[1].legend(fontsize=7, loc="upper left")
    fig.suptitle(f"Model vs measurement: {data['gpu']}, {data['n']}^3, every strategy x block")
    fig.tight_layout()
    fig.savefig(svg_path.replace(".svg", "-model.svg"))
