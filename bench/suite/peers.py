#!/usr/bin/env python3
"""The peers of Saguaro's generated kernels: the same stencil right-hand sides in JAX
(jax.jit), CuPy (array expressions) and PyTorch (torch.compile), checked against the CPU
reference that bench_suite writes, then timed the way the C++ side times its kernels.

    python3 bench/suite/peers.py DATA_DIR --json OUT.json [--systems jax,cupy,torch,numpy]
        [--benchmarks wave2,...,bssn,step] [--repeats 30] [--batch 10] [--warmup 5]
        [--no-step] [--generated]

DATA_DIR/manifest.json describes the benchmarks (see read_benchmarks and run_step for the
keys used): the inputs are rebuilt from each benchmark's fill (base + amplitude * sin(0.001 i
+ gf), as bench/common/patch.hpp fills them).  B1-B4 are written by hand, idiomatically;
B5 (BSSN, 25 right-hand sides) and any other benchmark without a hand-written stencil run
the formula generated at run time from Saguaro's own lowering: bench_suite writes it as the
straight-line code of `saguaro inspect --expressions` and GeneratedFormula translates it
(--generated uses it everywhere, as a test of the translation).  Each right-hand side is
written once over an array module: slicing of the allocated arrays and arithmetic are the
same in numpy, jax.numpy, cupy and torch, so only roll, copy, a few function names,
compilation and synchronisation differ per system.  The whole steps (B1, B5) are RK4 on the
periodic state with roll for the neighbours.  numpy runs on the CPU and exists only to test
this script on a machine without a GPU.

The modules beside this script: peers_formulas.py holds the formulas (the hand-written
stencils of B1-B4 and the wave's RK4 step, GeneratedFormula and the generated formula's RK4
step), peers_systems.py the systems (a class per array module: transfers, roll, copy, the
functions' names, compilation, synchronisation; the libraries' versions).  This script reads
the manifest, rebuilds the inputs, checks, times and reports (the command line, the JSON).

Exit status 1 (after writing the JSON) when any result is wrong or failed (an error while
compiling or running); 0 otherwise, also when a system is unavailable.
"""

import argparse
import contextlib
import functools
import json
import os
import platform
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Optional

import numpy as np

# The modules beside this script (its directory is on sys.path when it runs).
from peers_formulas import (STENCILS, GeneratedFormula, Stencil, build_rk4_generated,
                            build_rk4_wave, generated_formula, interior)
from peers_systems import ALL_SYSTEMS, GPU_SYSTEMS, library_versions, make_system

TOLERANCE = 1e-10
SLOW_CALL_S = 0.1   # slower calls are timed one per sample (time_calls)
SLOW_SECONDS = 60   # and in as many samples as fit in this time (at least 3)


# ---------------------------------------------------------------------------------------
# Inputs, references, checking and timing.

def initial_data(shape_zyx, gf, amplitude=1.0, base=0.0):
    """Grid function number gf over its whole allocated array, as bench_suite fills it
    (bench/common/patch.hpp): base + amplitude * sin(0.001 i + gf), i the linear index."""
    size = int(np.prod(shape_zyx))
    wave = np.sin(0.001 * np.arange(size, dtype=np.float64) + gf)
    return (base + amplitude * wave).reshape(shape_zyx)


def relative_error(x, ref):
    x = np.asarray(x, dtype=np.float64)
    if x.shape != ref.shape:
        raise ValueError(f"shape {x.shape} differs from the reference's {ref.shape}")
    scale = np.max(np.abs(ref))
    diff = np.max(np.abs(x - ref))
    return float(diff / scale) if scale > 0 else float(diff)


def check(system, outputs, names, references):
    """(max relative error over the outputs, the worst output's name)."""
    worst, worst_name = 0.0, ""
    for name, out in zip(names, outputs):
        err = relative_error(system.to_host(out), references[name])
        if not err <= worst:  # also catches NaN
            worst, worst_name = err, name
            if np.isnan(err):
                break
    return worst, worst_name


def statistics(samples):
    s = np.asarray(samples)
    p10, p50, p90 = np.percentile(s, [10, 50, 90])
    return {"median_s": float(p50), "min_s": float(s.min()), "max_s": float(s.max()),
            "p10_s": float(p10), "p90_s": float(p90), "samples_s": [float(x) for x in s]}


def time_calls(system, fn, args, warmup, repeats, batch, max_seconds=SLOW_SECONDS):
    """(seconds per call, the batch and the number of samples used): `repeats` samples,
    each the wall time of `batch` back-to-back calls between synchronisations, divided by
    `batch`.  One call is timed first (after the check's call, which compiled it): a call
    slower than SLOW_CALL_S (CuPy's BSSN, one kernel per operation) is timed alone (batch 1;
    synchronising then costs under 0.1%), without further warm-up, in as many samples as fit
    in max_seconds (at least 3, at most `repeats`): 30 x 10 calls of such a system would take
    hours at 256^3."""
    system.sync(args)
    t0 = time.perf_counter()
    out = fn(*args)
    system.sync(out)
    probe = time.perf_counter() - t0
    if probe > SLOW_CALL_S:
        batch, warmup = 1, 0
        repeats = min(repeats, max(3, int(max_seconds / probe)))
    for _ in range(warmup):
        out = None  # outputs live only until the next call
        out = fn(*args)
    system.sync(out)
    samples = []
    # A named range around the timed calls (torch: NVTX), so that a profiler can take only
    # these launches and not the compiler's or autotuner's (bench/profile/ncu.sh).
    timed = getattr(system, "timed_range", contextlib.nullcontext)
    with timed():
        for _ in range(repeats):
            system.sync(out)
            t0 = time.perf_counter()
            for _ in range(batch):
                out = None
                out = fn(*args)
            system.sync(out)
            samples.append((time.perf_counter() - t0) / batch)
    return samples, batch


def evaluate(system, fn, host_inputs, output_names, references, args):
    """Check fn once from fresh inputs, then time it: the result's fields."""
    result = {"status": "ok", "error": "", "max_rel_error": None, "compile_s": None,
              "first_call_s": None}
    inputs = [system.to_device(a) for a in host_inputs]
    system.sync(inputs)
    t0 = time.perf_counter()
    out = fn(*inputs)
    system.sync(out)
    first = time.perf_counter() - t0
    result["first_call_s"] = first
    if system.compiles:
        result["compile_s"] = first
    err, worst = check(system, out, output_names, references)
    del out
    result["max_rel_error"] = err if np.isfinite(err) else None
    if not err <= TOLERANCE:
        result["status"] = "wrong"
        result["error"] = f"relative error {err:.3e} > {TOLERANCE:g} (output {worst})"
        return result
    samples, batch = time_calls(system, fn, inputs, args.warmup, args.repeats, args.batch)
    result.update(statistics(samples), batch=batch)
    return result


def load_references(data_dir, files):
    return {name: np.load(os.path.join(data_dir, path)) for name, path in files.items()}


@dataclass
class Benchmark:
    name: str
    spec: dict
    stencil: Optional[Stencil]  # None: the generated formula
    _formula: Optional[GeneratedFormula] = None

    def formula(self, data_dir):
        """The generated formula (parsed once, shared by the systems)."""
        if self._formula is None:
            spec = self.spec
            self._formula = generated_formula(data_dir, spec, spec["inputs"], spec["outputs"],
                                              spec.get("parameters", {}), spec["spacing"],
                                              spec.get("ghost"))
        return self._formula


def read_benchmarks(manifest, wanted, generated=False):
    """The manifest's benchmarks that this script knows, in manifest order: those with a
    hand-written stencil (unless `generated`), and those whose manifest entry names an
    expressions file (the generated formula)."""
    known = []
    for spec in manifest.get("benchmarks", []):
        name = spec.get("name", "?")
        if wanted is not None and name not in wanted:
            continue
        stencil = None if generated else STENCILS.get(spec.get("calculation"))
        if stencil is None:
            if spec.get("expressions"):
                known.append(Benchmark(name, spec, None))
            else:
                warn(f"skipping benchmark {name}: unknown calculation "
                     f"{spec.get('calculation')!r} and no expressions file")
            continue
        order, g = spec.get("fd_order"), spec.get("ghost")
        if stencil.orders and order not in stencil.orders:
            warn(f"skipping benchmark {name}: no weights for fd_order {order}")
            continue
        if g is None or g < stencil.radius(order):
            warn(f"skipping benchmark {name}: ghost {g} < stencil radius "
                 f"{stencil.radius(order)}")
            continue
        if (set(spec.get("inputs", [])) != set(stencil.inputs)
                or set(spec.get("outputs", [])) != set(stencil.outputs)):
            warn(f"skipping benchmark {name}: inputs {spec.get('inputs')} / outputs "
                 f"{spec.get('outputs')} are not {list(stencil.inputs)} / "
                 f"{list(stencil.outputs)}")
            continue
        known.append(Benchmark(name, spec, stencil))
    return known


def whole_steps(manifest):
    """The manifest's whole steps: "whole_steps" (a list), or an older manifest's single
    "whole_step"."""
    if "whole_steps" in manifest:
        return list(manifest["whole_steps"])
    return [manifest["whole_step"]] if manifest.get("whole_step") else []


def warn(message):
    print(f"peers.py: warning: {message}", file=sys.stderr, flush=True)


class Report:
    """Collects results, prints the table as it goes and rewrites the JSON after each
    result, so that a run cut short still leaves what it measured."""

    def __init__(self, path, header):
        self.path, self.doc = path, dict(header, results=[])
        self.wrong = self.failed = False
        print(f"{'system':<7} {'benchmark':<11} {'kind':<4} {'status':<11} "
              f"{'rel.error':>9} {'median[us]':>11}  note", flush=True)

    def add(self, result):
        self.doc["results"].append(result)
        err = result.get("max_rel_error")
        median = result.get("median_s")
        print(f"{result['system']:<7} {result['benchmark']:<11} {result['kind']:<4} "
              f"{result['status']:<11} "
              f"{'-' if err is None else format(err, '.1e'):>9} "
              f"{'-' if median is None else format(median * 1e6, '.1f'):>11}  "
              f"{result['error'][:100]}", flush=True)
        if result["status"] == "wrong":
            self.wrong = True
            print(f"WRONG: {result['system']} {result['benchmark']}"
                  f"{' (whole step)' if result['kind'] == 'step' else ''}: "
                  f"{result['error']}", file=sys.stderr, flush=True)
        elif result["status"] == "failed":
            self.failed = True
            print(f"FAILED: {result['system']} {result['benchmark']} {result['kind']}: "
                  f"{result['error']}", file=sys.stderr, flush=True)
        self.write()

    def write(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.doc, f, indent=1)
            f.write("\n")
        os.replace(tmp, self.path)


def base_result(system, benchmark, kind):
    return {"system": system, "benchmark": benchmark, "kind": kind, "status": "ok",
            "error": "", "max_rel_error": None, "compile_s": None, "median_s": None,
            "min_s": None, "max_s": None, "p10_s": None, "p90_s": None, "samples_s": []}


def failure(result, e):
    traceback.print_exc(file=sys.stderr)
    result["status"] = "failed"
    result["error"] = f"{type(e).__name__}: {e}".strip().replace("\n", " ")[:2000]
    return result


def run_rhs(system, bench, data_dir, host_input, args):
    spec, stencil = bench.spec, bench.stencil
    result = base_result(system.name, bench.name, "rhs")
    result.update(fd_order=spec.get("fd_order"), ghost=spec.get("ghost"),
                  alloc=spec.get("alloc"), compulsory_bytes=spec.get("compulsory_bytes"),
                  formula="hand-written" if stencil else "generated")
    try:
        g = spec["ghost"]
        n = [a - 2 * g for a in spec["alloc"]]
        if stencil is not None:
            rhs = stencil.build(spec.get("fd_order"), g, n, spec["spacing"], system)
            inputs, outputs = stencil.inputs, stencil.outputs
        else:
            formula = bench.formula(data_dir)
            result.update(statements=formula.statements, peak_live_arrays=formula.peak_live)
            rhs = formula.build(interior(g, n), system)
            inputs, outputs = formula.inputs, formula.outputs
        references = load_references(data_dir, spec["reference"])
        result.update(evaluate(system, system.compile(rhs),
                               [host_input(bench.name, name) for name in inputs],
                               outputs, references, args))
    except Exception as e:
        failure(result, e)
    if result["median_s"] and spec.get("compulsory_bytes"):
        result["gbytes_per_s"] = spec["compulsory_bytes"] / result["median_s"] / 1e9
    return result


def run_step(system, step, manifest, data_dir, args):
    """A whole step of the manifest: keys benchmark, method, dt, spacing, points, periodic,
    variables, state0 and reference (variable -> file); fd_order from the step or its
    benchmark; for the generated formula also expressions, parameters and evolves.  The
    wave's step (B1) is written by hand (build_rk4_wave) unless --generated."""
    result = base_result(system.name, step.get("benchmark", "?"), "step")
    # Every call steps the same state0 (no chaining), like the right-hand sides.
    result.update(method="RK4", chained=False, points=step.get("points"))
    try:
        if step.get("method", "RK4") != "RK4" or not step.get("periodic", True):
            raise ValueError(f"unsupported whole step: method {step.get('method')}, "
                             f"periodic {step.get('periodic')}")
        order = step.get("fd_order")
        if order is None:
            order = next(b["fd_order"] for b in manifest["benchmarks"]
                         if b.get("name") == step["benchmark"])
        result["fd_order"] = order
        variables = list(step.get("variables") or step["state0"])
        state0 = load_references(data_dir, step["state0"])
        expected = tuple(reversed(step["points"]))
        for name in variables:
            if state0[name].shape != expected:
                raise ValueError(f"state0 {name} has shape {state0[name].shape}, "
                                 f"points (z, y, x) are {expected}")
        spec = next((b for b in manifest.get("benchmarks", [])
                     if b.get("name") == step["benchmark"]), {})
        if (not args.generated and variables == ["phi", "pi"]
                and spec.get("calculation", "wave_rhs") == "wave_rhs"):
            result["formula"] = "hand-written"
            fn = build_rk4_wave(order, step["spacing"], step["dt"], system)
        else:
            result["formula"] = "generated"
            formula = GeneratedFormula(os.path.join(data_dir, step["expressions"]),
                                       spec.get("inputs") or variables,
                                       spec.get("outputs") or list(step["evolves"]),
                                       step.get("parameters", {}), step["spacing"])
            result.update(statements=formula.statements, peak_live_arrays=formula.peak_live)
            fn = build_rk4_generated(formula, step, step["dt"], system)  # compiled
        if result["formula"] == "hand-written":
            fn = system.compile(fn)
        result.update(evaluate(system, fn, [state0[v] for v in variables],
                               variables, load_references(data_dir, step["reference"]),
                               args))
    except Exception as e:
        failure(result, e)
    return result


def parse_list(text, allowed=None):
    items = [s.strip() for s in text.split(",") if s.strip()]
    if allowed is not None:
        bad = [s for s in items if s not in allowed]
        if bad:
            raise argparse.ArgumentTypeError(f"unknown {bad}; choose from {list(allowed)}")
    return items


def positive(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not >= 1")
    return value


def non_negative(text):
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is not >= 0")
    return value


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Time the JAX, CuPy and torch.compile peers of bench_suite's stencils.")
    parser.add_argument("data_dir", help="directory with manifest.json and the references")
    parser.add_argument("--json", help="output file (default DATA_DIR/peers.json)")
    parser.add_argument("--systems", type=lambda s: parse_list(s, ALL_SYSTEMS),
                        help="comma-separated among jax,cupy,torch,numpy (default "
                             "jax,cupy,torch; numpy when none of those can run)")
    parser.add_argument("--benchmarks", type=parse_list,
                        help="comma-separated benchmark names (default all); the whole "
                             "step runs when its benchmark's name or 'step' is listed")
    parser.add_argument("--repeats", type=positive, default=30)
    parser.add_argument("--batch", type=positive, default=10)
    parser.add_argument("--warmup", type=non_negative, default=5)
    parser.add_argument("--no-step", action="store_true", help="leave out the whole steps")
    parser.add_argument("--generated", action="store_true",
                        help="use the generated formula (the benchmark's expressions file) "
                             "for every benchmark and step, also where a hand-written one "
                             "exists (a test of the translation)")
    args = parser.parse_args(argv)

    manifest_path = os.path.join(args.data_dir, "manifest.json")
    try:
        with open(manifest_path) as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"peers.py: cannot read {manifest_path}: {e}")
    wanted = set(args.benchmarks) if args.benchmarks is not None else None
    benchmarks = read_benchmarks(manifest, wanted, args.generated)
    steps = [] if args.no_step else [
        st for st in whole_steps(manifest)
        if wanted is None or wanted & {"step", st.get("benchmark")}]
    if wanted is not None:
        listed = {b.get("name") for b in manifest.get("benchmarks", [])} | {"step"}
        for name in sorted(wanted - listed):
            warn(f"benchmark {name} is not in {manifest_path}")

    # Start the systems first: the default falls back to numpy only when no GPU peer runs.
    names = args.systems if args.systems is not None else list(GPU_SYSTEMS)
    systems = {name: make_system(name) for name in names}
    if args.systems is None and all(s is None for s, _ in systems.values()):
        warn("none of jax, cupy, torch can run here; testing with numpy")
        systems["numpy"] = make_system("numpy")

    versions = library_versions()
    devices = {}
    for name, (system, _) in systems.items():
        if system is not None:
            versions.update(system.versions)
            devices[name] = system.device
    gpu_devices = [d for n, d in devices.items() if n != "numpy"]
    out_path = args.json or os.path.join(args.data_dir, "peers.json")
    report = Report(out_path, {
        "python": platform.python_version(), "numpy": np.__version__, "versions": versions,
        "device": gpu_devices[0] if gpu_devices else next(iter(devices.values()), None),
        "devices": devices, "host": platform.node(), "manifest": manifest_path,
        "n": manifest.get("n"), "repeats": args.repeats, "batch": args.batch,
        "warmup": args.warmup, "tolerance": TOLERANCE, "results": []})

    # Built once on the host and shared by the systems (sin over 10^8 points takes a while).
    @functools.lru_cache(maxsize=None)
    def host_input(bench_name, array_name):
        spec = next(b.spec for b in benchmarks if b.name == bench_name)
        gf = spec["grid_functions"].index(array_name)
        fill = spec.get("fill", {})  # older manifests: sin(0.001 i + gf) everywhere
        return initial_data(tuple(reversed(spec["alloc"])), gf, fill.get("amplitude", 1.0),
                            fill.get("base", {}).get(array_name, 0.0))

    for name, (system, reason) in systems.items():
        kinds = [(b.name, "rhs") for b in benchmarks]
        kinds += [(st.get("benchmark", "?"), "step") for st in steps]
        if system is None:
            for bench_name, kind in kinds:
                result = base_result(name, bench_name, kind)
                result.update(status="unavailable", error=reason)
                report.add(result)
            continue
        for bench in benchmarks:
            report.add(run_rhs(system, bench, args.data_dir, host_input, args))
            system.release()
        for st in steps:
            report.add(run_step(system, st, manifest, args.data_dir, args))
            system.release()

    report.write()
    print(f"wrote {out_path}", flush=True)
    return 1 if report.wrong or report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
