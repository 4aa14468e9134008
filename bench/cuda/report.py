"""Table (Markdown) and bar chart (SVG) of bench_cuda's JSON: per benchmark, the compulsory
bandwidth of every buffering strategy and block configuration as a share of the measured
device-to-device copy bandwidth."""
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
