#!/usr/bin/env python3
"""The peers of Saguaro's generated kernels: the same stencil right-hand sides written
idiomatically in JAX (jax.jit), CuPy (array expressions) and PyTorch (torch.compile),
checked against the CPU reference that bench_suite writes, then timed the way the C++ side
times its kernels.

    python3 bench/suite/peers.py DATA_DIR --json OUT.json [--systems jax,cupy,torch,numpy]
        [--benchmarks wave2,...,step] [--repeats 30] [--batch 10] [--warmup 5]

DATA_DIR/manifest.json describes the benchmarks (see read_benchmarks and run_step for the
keys used).  Each right-hand side is written once over an array module: slicing of the
allocated arrays and arithmetic are the same in numpy, jax.numpy, cupy and torch, so only
roll, copy, compilation and synchronisation differ per system.  numpy runs on the CPU and
exists only to test this script on a machine without a GPU.

Exit status 1 (after writing the JSON) when any result is wrong or failed (an error while
compiling or running); 0 otherwise, also when a system is unavailable.
"""

import argparse
import functools
import importlib.metadata
import json
import operator
import os
import platform
import sys
import time
import traceback
from dataclasses import dataclass
from fractions import Fraction as F
from typing import Callable

import numpy as np

TOLERANCE = 1e-10
GPU_SYSTEMS = ("jax", "cupy", "torch")
ALL_SYSTEMS = GPU_SYSTEMS + ("numpy",)

# Centred finite-difference weights for offsets -r..r, before division by h (first
# derivative) or h^2 (second derivative), keyed by the order of accuracy.  Written as
# fractions, used as floats: traced code (torch.compile) cannot call float() on a Fraction.
FIRST_DERIVATIVE = {
    2: [F(-1, 2), 0, F(1, 2)],
    4: [F(1, 12), F(-2, 3), 0, F(2, 3), F(-1, 12)],
    6: [F(-1, 60), F(3, 20), F(-3, 4), 0, F(3, 4), F(-3, 20), F(1, 60)],
    8: [F(1, 280), F(-4, 105), F(1, 5), F(-4, 5), 0,
        F(4, 5), F(-1, 5), F(4, 105), F(-1, 280)],
}
SECOND_DERIVATIVE = {
    2: [1, -2, 1],
    4: [F(-1, 12), F(4, 3), F(-5, 2), F(4, 3), F(-1, 12)],
    6: [F(1, 90), F(-3, 20), F(3, 2), F(-49, 18), F(3, 2), F(-3, 20), F(1, 90)],
    8: [F(-1, 560), F(8, 315), F(-1, 5), F(8, 5), F(-205, 72),
        F(8, 5), F(-1, 5), F(8, 315), F(-1, 560)],
}
FIRST_DERIVATIVE = {k: [float(w) for w in v] for k, v in FIRST_DERIVATIVE.items()}
SECOND_DERIVATIVE = {k: [float(w) for w in v] for k, v in SECOND_DERIVATIVE.items()}

# Hu, Koppelman & Brandt eq. 4: the offset (di, dj, dk) of term m of every A_n.
MICROBENCH_OFFSETS = [(0, 0, 0), (-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0),
                      (0, 0, -1), (0, 0, 1), (-1, 1, 0), (-1, 0, 1)]


def microbench_coefficient(n, m):
    return round(0.01 * (9 * n + m + 1), 2)


def unit(axis, offset):
    """The offset (di, dj, dk) of `offset` points along axis 0 = x, 1 = y, 2 = z."""
    off = [0, 0, 0]
    off[axis] = offset
    return tuple(off)


def add_all(terms):
    # reduce rather than sum(): sum() starts from 0, an extra operation on the arrays.
    return functools.reduce(operator.add, terms)


def weighted(weights, values):
    """sum of w * v over the non-zero weights, without multiplying by 1."""
    return add_all([v if w == 1 else w * v for w, v in zip(weights, values) if w != 0])


# ---------------------------------------------------------------------------------------
# Right-hand sides over the ghosted arrays: functions of the input arrays returning the
# output arrays over the interior.  `at(u, (di, dj, dk))` is u shifted by the offset, a
# slice of the allocated array; `ops` gives the few operations that differ per module.

def interior(g, n):
    nx, ny, nz = n

    def at(u, off=(0, 0, 0)):
        di, dj, dk = off
        return u[g + dk:g + dk + nz, g + dj:g + dj + ny, g + di:g + di + nx]
    return at


def centred(at, u, weights, axis):
    r = len(weights) // 2
    return weighted(weights, [at(u, unit(axis, m - r)) for m in range(len(weights))])


def build_wave(order, g, n, spacing, ops):
    weights = SECOND_DERIVATIVE[order]
    at = interior(g, n)

    def wave_rhs(phi, pi):
        laplacian = add_all([centred(at, phi, weights, a) * (1.0 / spacing[a] ** 2)
                             for a in range(3)])
        # An explicit copy: the RHS writes phirhs, as the generated kernel does; a view of
        # pi would skip half of the compulsory traffic.
        return ops.copy(at(pi)), laplacian
    return wave_rhs


def build_maxwell(order, g, n, spacing, ops):
    weights = FIRST_DERIVATIVE[order]
    at = interior(g, n)

    def d(a, u):  # D_a u, a = 1, 2, 3 for x, y, z
        return centred(at, u, weights, a - 1) * (1.0 / spacing[a - 1])

    def maxwell_rhs(El1, El2, El3, B1, B2, B3):
        return (d(2, B3) - d(3, B2),
                d(3, B1) - d(1, B3),
                d(1, B2) - d(2, B1),
                -(d(2, El3) - d(3, El2)),
                -(d(3, El1) - d(1, El3)),
                -(d(1, El2) - d(2, El1)))
    return maxwell_rhs


def build_microbench(order, g, n, spacing, ops):
    at = interior(g, n)

    def microbench(B, *A):
        total = add_all([microbench_coefficient(k, m) * at(a, off)
                         for k, a in enumerate(A)
                         for m, off in enumerate(MICROBENCH_OFFSETS)])
        return (at(B) + total,)
    return microbench


@dataclass(frozen=True)
class Stencil:
    inputs: tuple
    outputs: tuple
    radius: Callable[[int], int]  # ghost points needed at a finite-difference order
    orders: tuple                 # the orders it is written for
    build: Callable               # (order, g, n, spacing, ops) -> rhs(*inputs) -> outputs


# Keyed by the manifest's "calculation" (the EDL's calculation name).
STENCILS = {
    "wave_rhs": Stencil(("phi", "pi"), ("phirhs", "pirhs"), lambda o: o // 2,
                        tuple(SECOND_DERIVATIVE), build_wave),
    "maxwell_rhs": Stencil(("El1", "El2", "El3", "B1", "B2", "B3"),
                           ("El1rhs", "El2rhs", "El3rhs", "B1rhs", "B2rhs", "B3rhs"),
                           lambda o: o // 2, tuple(FIRST_DERIVATIVE), build_maxwell),
    "microbench": Stencil(("B",) + tuple(f"A{k}" for k in range(10)), ("B",),
                          lambda o: 1, (), build_microbench),
}


# ---------------------------------------------------------------------------------------
# The whole step: classical RK4 of the wave system on a periodic grid without ghosts,
# periodicity by roll.  State arrays are [z][y][x]; array axis 2 - a is axis a (x = 0).

def build_rk4_wave(order, spacing, dt, ops):
    weights = SECOND_DERIVATIVE[order]
    r = len(weights) // 2

    def laplacian(u):
        terms = []
        for a in range(3):
            # roll(u, -off)[i] = u[i + off]
            shifted = [u if m == r else ops.roll(u, r - m, 2 - a)
                       for m in range(len(weights))]
            terms.append(weighted(weights, shifted) * (1.0 / spacing[a] ** 2))
        return add_all(terms)

    def f(phi, pi):
        return pi, laplacian(phi)

    def rk4_step(phi, pi):
        k1 = f(phi, pi)
        k2 = f(phi + (dt / 2) * k1[0], pi + (dt / 2) * k1[1])
        k3 = f(phi + (dt / 2) * k2[0], pi + (dt / 2) * k2[1])
        k4 = f(phi + dt * k3[0], pi + dt * k3[1])
        return tuple(y + (dt / 6) * (a + 2 * b + 2 * c + d)
                     for y, a, b, c, d in zip((phi, pi), k1, k2, k3, k4))
    return rk4_step


# ---------------------------------------------------------------------------------------
# Systems.  Each imports its library when constructed and raises Unavailable when it
# cannot run here (no library, no GPU).

class Unavailable(Exception):
    pass


class NumpySystem:
    name = "numpy"
    compiles = False
    device = "CPU (numpy)"

    def __init__(self):
        self.versions = {}

    def to_device(self, a):
        return a

    def to_host(self, a):
        return np.asarray(a)

    def compile(self, fn):
        return fn

    def sync(self, arrays):
        pass

    def roll(self, a, shift, axis):
        return np.roll(a, shift, axis)

    def copy(self, a):
        return a.copy()

    def release(self):
        pass


class JaxSystem:
    name = "jax"
    compiles = True

    def __init__(self):
        # Allocate on demand: cupy and torch share the GPU in this process.
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        try:
            import jax
            import jax.numpy as jnp
        except Exception as e:
            raise Unavailable(f"import jax: {type(e).__name__}: {e}") from e
        jax.config.update("jax_enable_x64", True)
        # jax quietly falls back to the CPU without a CUDA jaxlib: that is not the peer.
        if jax.default_backend() != "gpu":
            raise Unavailable(f"jax has no GPU backend (default backend "
                              f"{jax.default_backend()})")
        import jaxlib
        self.jax, self.jnp = jax, jnp
        self.dev = jax.devices()[0]
        self.device = self.dev.device_kind
        self.versions = {"jax": jax.__version__, "jaxlib": jaxlib.__version__}

    def to_device(self, a):
        return self.jax.device_put(a, self.dev)

    def to_host(self, a):
        return np.asarray(a)

    def compile(self, fn):
        return self.jax.jit(fn)

    def sync(self, arrays):
        for a in arrays:
            a.block_until_ready()

    def roll(self, a, shift, axis):
        return self.jnp.roll(a, shift, axis)

    def copy(self, a):
        return self.jnp.copy(a)

    def release(self):
        pass


class CupySystem:
    name = "cupy"
    compiles = False

    def __init__(self):
        try:
            import cupy
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as e:
            raise Unavailable(f"cupy: {type(e).__name__}: {e}") from e
        if count < 1:
            raise Unavailable("cupy: no CUDA device")
        self.cupy = cupy
        name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
        self.device = name.decode() if isinstance(name, bytes) else str(name)
        self.versions = {"cupy": cupy.__version__}

    def to_device(self, a):
        return self.cupy.asarray(a)

    def to_host(self, a):
        return self.cupy.asnumpy(a)

    def compile(self, fn):
        return fn

    def sync(self, arrays):
        self.cupy.cuda.Device().synchronize()

    def roll(self, a, shift, axis):
        return self.cupy.roll(a, shift, axis)

    def copy(self, a):
        return a.copy()

    def release(self):
        self.cupy.get_default_memory_pool().free_all_blocks()


class TorchSystem:
    name = "torch"
    compiles = True

    def __init__(self):
        try:
            import torch
        except Exception as e:
            raise Unavailable(f"import torch: {type(e).__name__}: {e}") from e
        if not torch.cuda.is_available():
            raise Unavailable("torch: CUDA is not available")
        self.torch = torch
        self.device = torch.cuda.get_device_name(0)
        self.versions = {"torch": torch.__version__}
        try:
            import triton
            self.versions["triton"] = triton.__version__
        except Exception:
            pass

    def to_device(self, a):
        return self.torch.from_numpy(a).to("cuda")

    def to_host(self, a):
        return a.cpu().numpy()

    def compile(self, fn):
        # A fresh Dynamo cache per function, as in a fresh process: the closures of one
        # builder share a code object, and a second compile of it with other shapes would
        # make Dynamo switch to dynamic shapes.  fullgraph: a graph break would run part of
        # the function eagerly, a silent fallback; make it an error instead.
        self.torch._dynamo.reset()
        return self.torch.compile(fn, fullgraph=True)

    def sync(self, arrays):
        self.torch.cuda.synchronize()

    def roll(self, a, shift, axis):
        return self.torch.roll(a, shifts=shift, dims=axis)

    def copy(self, a):
        return a.clone()

    def release(self):
        self.torch.cuda.empty_cache()


SYSTEM_CLASSES = {"jax": JaxSystem, "cupy": CupySystem, "torch": TorchSystem,
                  "numpy": NumpySystem}


def installed_version(*distributions):
    """A package's version from its metadata, without importing it."""
    for dist in distributions:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def library_versions():
    cupy = installed_version("cupy")
    if cupy is None:
        for dist in importlib.metadata.distributions():
            name = dist.metadata["Name"] or ""
            if name.lower().startswith("cupy"):
                cupy = dist.version
                break
    return {"jax": installed_version("jax"), "jaxlib": installed_version("jaxlib"),
            "cupy": cupy, "torch": installed_version("torch"),
            "triton": installed_version("triton", "pytorch-triton")}


# ---------------------------------------------------------------------------------------
# Inputs, references, checking and timing.

def initial_data(shape_zyx, gf):
    """Grid function number gf over its whole allocated array, as bench_suite fills it."""
    size = int(np.prod(shape_zyx))
    return np.sin(0.001 * np.arange(size, dtype=np.float64) + gf).reshape(shape_zyx)


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


def time_calls(system, fn, args, warmup, repeats, batch):
    """Seconds per call: `repeats` samples, each the wall time of `batch` back-to-back calls
    between synchronisations, divided by `batch`."""
    out = None
    for _ in range(warmup):
        out = None  # outputs live only until the next call
        out = fn(*args)
    if out is not None:
        system.sync(out)
    samples = []
    for _ in range(repeats):
        system.sync(out if out is not None else args)
        t0 = time.perf_counter()
        for _ in range(batch):
            out = None
            out = fn(*args)
        system.sync(out)
        samples.append((time.perf_counter() - t0) / batch)
    return samples


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
    result.update(statistics(time_calls(system, fn, inputs, args.warmup, args.repeats,
                                        args.batch)))
    return result


def load_references(data_dir, files):
    return {name: np.load(os.path.join(data_dir, path)) for name, path in files.items()}


@dataclass
class Benchmark:
    name: str
    spec: dict
    stencil: Stencil


def read_benchmarks(manifest, wanted):
    """The manifest's benchmarks that this script knows, in manifest order."""
    known = []
    for spec in manifest.get("benchmarks", []):
        name = spec.get("name", "?")
        if wanted is not None and name not in wanted:
            continue
        stencil = STENCILS.get(spec.get("calculation"))
        if stencil is None:
            warn(f"skipping benchmark {name}: unknown calculation "
                 f"{spec.get('calculation')!r}")
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
                  alloc=spec.get("alloc"), compulsory_bytes=spec.get("compulsory_bytes"))
    try:
        g = spec["ghost"]
        n = [a - 2 * g for a in spec["alloc"]]
        rhs = stencil.build(spec.get("fd_order"), g, n, spec["spacing"], system)
        references = load_references(data_dir, spec["reference"])
        result.update(evaluate(system, system.compile(rhs),
                               [host_input(bench.name, name) for name in stencil.inputs],
                               stencil.outputs, references, args))
    except Exception as e:
        failure(result, e)
    if result["median_s"] and spec.get("compulsory_bytes"):
        result["gbytes_per_s"] = spec["compulsory_bytes"] / result["median_s"] / 1e9
    return result


def run_step(system, step, manifest, data_dir, args):
    """The manifest's "whole_step": keys benchmark, method, dt, spacing, points, periodic,
    state0 {phi, pi}, reference {phi, pi}; fd_order from the step or its benchmark."""
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
        state0 = load_references(data_dir, step["state0"])
        expected = tuple(reversed(step["points"]))
        for name in ("phi", "pi"):
            if state0[name].shape != expected:
                raise ValueError(f"state0 {name} has shape {state0[name].shape}, "
                                 f"points (z, y, x) are {expected}")
        fn = build_rk4_wave(order, step["spacing"], step["dt"], system)
        result.update(evaluate(system, system.compile(fn), [state0["phi"], state0["pi"]],
                               ("phi", "pi"), load_references(data_dir, step["reference"]),
                               args))
    except Exception as e:
        failure(result, e)
    return result


def make_system(name):
    try:
        return SYSTEM_CLASSES[name](), ""
    except Unavailable as e:
        return None, str(e)
    except Exception as e:  # a library that imports but fails to start
        return None, f"{type(e).__name__}: {e}"


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
    args = parser.parse_args(argv)

    manifest_path = os.path.join(args.data_dir, "manifest.json")
    try:
        with open(manifest_path) as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"peers.py: cannot read {manifest_path}: {e}")
    wanted = set(args.benchmarks) if args.benchmarks is not None else None
    benchmarks = read_benchmarks(manifest, wanted)
    step = manifest.get("whole_step")
    if step and wanted is not None and not wanted & {"step", step.get("benchmark")}:
        step = None
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
        return initial_data(tuple(reversed(spec["alloc"])), gf)

    for name, (system, reason) in systems.items():
        kinds = [(b.name, "rhs") for b in benchmarks]
        if step:
            kinds.append((step.get("benchmark", "?"), "step"))
        if system is None:
            for bench_name, kind in kinds:
                result = base_result(name, bench_name, kind)
                result.update(status="unavailable", error=reason)
                report.add(result)
            continue
        for bench in benchmarks:
            report.add(run_rhs(system, bench, args.data_dir, host_input, args))
            system.release()
        if step:
            report.add(run_step(system, step, manifest, args.data_dir, args))
            system.release()

    report.write()
    print(f"wrote {out_path}", flush=True)
    return 1 if report.wrong or report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
