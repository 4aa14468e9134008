#!/usr/bin/env python3
"""The peers of Saguaro's generated kernels: the same stencil right-hand sides in JAX
(jax.jit), CuPy (array expressions) and PyTorch (torch.compile), checked against the CPU
reference that bench_suite writes, then timed the way the C++ side times its kernels.

    python3 bench/suite/peers.py DATA_DIR --json OUT.json [--systems jax,cupy,torch,numpy]
        [--benchmarks wave2,...,bssn,step] [--repeats 30] [--batch 10] [--warmup 5]
        [--no-step] [--generated]

DATA_DIR/manifest.json describes the benchmarks (see read_benchmarks and run_step for the
keys used): the inputs are rebuilt from each benchmark's fill (base + amplitude * sin(0.001 i
+ gf), as bench/common/patch.hpp fills them).  B1-B4 are written here by hand, idiomatically;
B5 (BSSN, 25 right-hand sides) and any other benchmark without a hand-written stencil run
the formula generated at run time from Saguaro's own lowering: bench_suite writes it as the
straight-line code of `saguaro inspect --expressions` and GeneratedFormula translates it
(--generated uses it everywhere, as a test of the translation).  Each right-hand side is
written once over an array module: slicing of the allocated arrays and arithmetic are the
same in numpy, jax.numpy, cupy and torch, so only roll, copy, a few function names,
compilation and synchronisation differ per system.  The whole steps (B1, B5) are RK4 on the
periodic state with roll for the neighbours.  numpy runs on the CPU and exists only to test
this script on a machine without a GPU.

Exit status 1 (after writing the JSON) when any result is wrong or failed (an error while
compiling or running); 0 otherwise, also when a system is unavailable.
"""

import argparse
import ast
import contextlib
import functools
import importlib.metadata
import json
import math
import operator
import os
import platform
import re
import sys
import time
import traceback
from dataclasses import dataclass
from fractions import Fraction as F
from typing import Callable, Optional

import numpy as np

TOLERANCE = 1e-10
SLOW_CALL_S = 0.1   # slower calls are timed one per sample (time_calls)
SLOW_SECONDS = 60   # and in as many samples as fit in this time (at least 3)
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
# Generated right-hand sides (B5, BSSN, and any benchmark without a hand-written stencil
# above): Saguaro's own lowering of the calculation, translated at run time.  bench_suite
# writes <benchmark>-expressions.txt with calc::print_calculation, the straight-line code
# that `saguaro inspect FILE.edl --expressions` prints: the common-subexpression-eliminated
# DAG, shared values as temporaries `tN = ...`, then one line per output.  Each load
# gf[i+a,j+b,k+c] becomes at(gf, (a, b, c)) (a shifted slice of the allocated array, as
# in the hand-written stencils; a roll in the whole step), `^` (integer powers) becomes
# `**`, the functions map to the array module's, and the parameters and dx, dy, dz become
# the manifest's numbers.  Values that do not vary over the grid (parameters, spacings and
# what is computed from them alone) are computed once here, as Saguaro hoists them.  Each
# temporary is deleted after its last use, so that eager modules (CuPy, NumPy) free it.

# Saguaro's function names (calc/dag.cpp) -> the array module's (numpy, jax.numpy, cupy;
# TorchSystem.function maps the few that torch names otherwise).  min and max are C's
# fmin and fmax.
ARRAY_FUNCTIONS = {"sin": "sin", "cos": "cos", "tan": "tan", "asin": "arcsin",
                   "acos": "arccos", "atan": "arctan", "atan2": "arctan2", "sinh": "sinh",
                   "cosh": "cosh", "tanh": "tanh", "exp": "exp", "log": "log",
                   "sqrt": "sqrt", "abs": "abs", "pow": "power", "min": "fmin",
                   "max": "fmax", "sign": "sign", "fmod": "fmod"}
SCALAR_FUNCTIONS = {"sin": math.sin, "cos": math.cos, "tan": math.tan, "asin": math.asin,
                    "acos": math.acos, "atan": math.atan, "atan2": math.atan2,
                    "sinh": math.sinh, "cosh": math.cosh, "tanh": math.tanh,
                    "exp": math.exp, "log": math.log, "sqrt": math.sqrt, "abs": math.fabs,
                    "pow": math.pow,
                    "min": lambda a, b: b if math.isnan(a) else (a if math.isnan(b) else min(a, b)),
                    "max": lambda a, b: b if math.isnan(a) else (a if math.isnan(b) else max(a, b)),
                    "sign": lambda a: 1.0 if a > 0 else (-1.0 if a < 0 else 0.0),
                    "fmod": math.fmod}

_LOAD = re.compile(r"([A-Za-z_]\w*)\[i([+-]\d+)?,j([+-]\d+)?,k([+-]\d+)?\]")
_COORDINATE = re.compile(r"\(([xyz]) [+-]\d+ d[xyz]\)")
_TEMPORARY = re.compile(r"t\d+")


class FormulaError(Exception):
    pass


def read_expressions(path):
    """The statements of an expressions file: [(name, right-hand side)], in order."""
    statements = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            text = line.strip()
            if not text:
                continue
            if text.startswith("#"):
                if text.startswith("# stage") and text != "# stage 0":
                    raise FormulaError(f"{path}:{number}: a calculation of several stages "
                                       "(later stages read earlier ones' stores at offsets)")
                continue
            name, eq, rhs = text.partition(" = ")
            if not eq or not re.fullmatch(r"[A-Za-z_]\w*", name):
                raise FormulaError(f"{path}:{number}: not a statement: {text!r}")
            statements.append((name, rhs))
    if not statements:
        raise FormulaError(f"{path}: no statements")
    return statements


class _Rewrite(ast.NodeTransformer):
    """One right-hand side, parsed by Python's own parser, to the generated function's
    code: loads to at() calls, names to their values, calls to the array module's."""

    def __init__(self, formula, loads):
        self.f, self.loads = formula, loads
        self.uniform = True   # no load and no varying temporary below
        self.temps = set()    # varying temporaries read

    def visit_Name(self, node):
        f, name = self.f, node.id
        if name in self.loads:
            self.uniform = False
            gf, off = self.loads[name]
            return ast.Call(ast.Name("at", ast.Load()),
                            [ast.Name("g_" + gf, ast.Load()),
                             ast.Tuple([ast.Constant(o) for o in off], ast.Load())], [])
        if name in f.constants:
            return ast.Name(f.constants[name], ast.Load())
        if name in f.varying:
            self.uniform = False
            self.temps.add(name)
            return ast.Name(name, ast.Load())
        if name in ("x", "y", "z", "t"):
            raise FormulaError(f"the coordinate or time {name!r} (not supported here)")
        raise FormulaError(f"unknown name {name!r} (not a temporary defined before, a "
                           "parameter of the manifest, or dx dy dz)")

    def visit_Call(self, node):
        if not isinstance(node.func, ast.Name) or node.keywords:
            raise FormulaError(f"unexpected call {ast.unparse(node)}")
        name = node.func.id
        if name not in ARRAY_FUNCTIONS:
            raise FormulaError(f"function {name!r} is not in peers.py's ARRAY_FUNCTIONS")
        before = self.uniform
        self.uniform = True
        args = [self.visit(a) for a in node.args]
        if self.uniform:  # every argument is a number: computed once, here
            value = SCALAR_FUNCTIONS[name](*[self.f.evaluate(a) for a in args])
            self.uniform = before
            return ast.Name(self.f.constant(f"c{len(self.f.scope)}", value), ast.Load())
        return ast.Call(ast.Name("fn_" + name, ast.Load()), args, [])


class GeneratedFormula:
    """The calculation of an expressions file as a Python function over an array module.

    build(at, system) returns rhs(*inputs) -> outputs (in the manifest's orders)."""

    def __init__(self, path, inputs, outputs, parameters, spacing, ghost=None):
        self.path, self.inputs, self.outputs = path, list(inputs), list(outputs)
        # The numbers: a name of the formula -> the variable of the generated code that holds
        # it (never a literal: ast.unparse would write -0.5 ** 2 for (-0.5)^2).
        self.scope, self.constants = {}, {}
        for name, value in parameters.items():
            self.constants[name] = self.constant("p_" + name, value)
        for axis, name in enumerate(("dx", "dy", "dz")):
            self.constants[name] = self.constant("s_" + name, spacing[axis])
        self.varying = set()
        statements = read_expressions(path)
        body, uses, stored = [], [], {}
        radius = 0
        for number, (name, text) in enumerate(statements):
            where = f"{path}, statement {number + 1} ({name})"
            if _COORDINATE.search(text):
                raise FormulaError(f"{where}: a shifted coordinate (not supported here)")
            loads = {}

            def load(m):
                gf = m.group(1)
                off = tuple(int(m.group(g) or 0) for g in (2, 3, 4))
                token = f"_load_{len(loads)}"
                loads[token] = (gf, off)
                return token
            text = _LOAD.sub(load, text).replace("^", "**")
            try:
                tree = ast.parse(text, mode="eval")
            except SyntaxError as e:
                raise FormulaError(f"{where}: cannot parse {text[:200]!r}: {e}") from e
            for gf, off in loads.values():
                if gf not in self.inputs:
                    raise FormulaError(f"{where}: loads {gf}, which is not an input")
                radius = max([radius] + [abs(o) for o in off])
            rewrite = _Rewrite(self, loads)
            expr = ast.fix_missing_locations(ast.Expression(rewrite.visit(tree.body)))
            is_output = name in self.outputs and not _TEMPORARY.fullmatch(name)
            if is_output:
                if name in stored:
                    raise FormulaError(f"{where}: {name} is stored twice")
                stored[name] = (expr, rewrite.uniform, loads)
            elif not _TEMPORARY.fullmatch(name):
                raise FormulaError(f"{where}: {name} is neither a temporary tN nor an output")
            elif rewrite.uniform:
                self.constants[name] = self.constant("u_" + name, self.evaluate(expr.body))
                continue
            else:
                self.varying.add(name)
            body.append((name, expr, rewrite.uniform, is_output, loads))
            uses.append(rewrite.temps)
        missing = [o for o in self.outputs if o not in stored]
        if missing:
            raise FormulaError(f"{path}: no statement for the outputs {missing}")
        if ghost is not None and radius > ghost:
            raise FormulaError(f"{path}: stencil radius {radius} > ghost {ghost}")
        self.radius = radius
        self.statements = len(body)
        self.source, self.peak_live = self._source(body, uses)

    def constant(self, variable, value):
        """A variable of the generated code holding a number; its name."""
        self.scope[variable] = float(value)
        return variable

    def evaluate(self, node):
        """A uniform expression's value (numbers, the constants' variables, arithmetic)."""
        if not isinstance(node, ast.Expression):
            node = ast.fix_missing_locations(ast.Expression(node))
        return float(eval(compile(node, self.path, "eval"), {"__builtins__": {}},
                          dict(self.scope)))

    def _source(self, body, uses):
        last = {}
        for k, temps in enumerate(uses):
            for t in temps:
                last[t] = k
        lines = [f"def rhs({', '.join('g_' + name for name in self.inputs)}):"]
        live = peak = 0
        for k, (name, expr, uniform, is_output, loads) in enumerate(body):
            code = ast.unparse(expr)
            target = "o_" + name if is_output else name
            if is_output and uniform:
                # A number: the whole output array holds it.
                code = f"fn_full_like(at(g_{self.inputs[0]}, (0, 0, 0)), {code})"
            elif is_output and isinstance(expr.body, ast.Call) and \
                    getattr(expr.body.func, "id", "") == "at":
                code = f"copy({code})"  # a view of an input: the output is written
            lines.append(f"    {target} = {code}")
            live += 1
            peak = max(peak, live)
            dead = sorted(t for t, k_last in last.items() if k_last == k)
            if dead:
                lines.append(f"    del {', '.join(dead)}")
                live -= len(dead)
        lines.append(f"    return ({', '.join('o_' + o for o in self.outputs)},)")
        return "\n".join(lines) + "\n", peak

    def build(self, at, system):
        scope = dict(self.scope, at=at, copy=system.copy,
                     fn_full_like=system.function("full_like"))
        for name in ARRAY_FUNCTIONS:
            scope["fn_" + name] = system.function(ARRAY_FUNCTIONS[name])
        exec(compile(self.source, self.path + " (translated)", "exec"), scope)
        return scope["rhs"]


def generated_formula(data_dir, spec, inputs, outputs, parameters, spacing, ghost=None):
    if not spec.get("expressions"):
        raise FormulaError("the manifest names no expressions file (bench_suite too old?)")
    return GeneratedFormula(os.path.join(data_dir, spec["expressions"]), inputs, outputs,
                            parameters, spacing, ghost)


def rolled(ops):
    """at() of the whole step: the periodic array shifted by the offset (roll(u, -off)[i] =
    u[i + off]); arrays are [z][y][x]."""
    def at(u, off):
        shifts = tuple(-d for d in reversed(off) if d)
        axes = tuple(a for a, d in enumerate(reversed(off)) if d)
        return u if not shifts else ops.roll(u, shifts, axes)
    return at


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

    def compile(self, fn, fresh=True):
        return fn

    def sync(self, arrays):
        pass

    def roll(self, a, shift, axis):
        return np.roll(a, shift, axis)

    def copy(self, a):
        return a.copy()

    def function(self, name):
        return getattr(np, name)

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

    def compile(self, fn, fresh=True):
        return self.jax.jit(fn)

    def sync(self, arrays):
        for a in arrays:
            a.block_until_ready()

    def roll(self, a, shift, axis):
        return self.jnp.roll(a, shift, axis)

    def copy(self, a):
        return self.jnp.copy(a)

    def function(self, name):
        return getattr(self.jnp, name)

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

    def compile(self, fn, fresh=True):
        return fn

    def sync(self, arrays):
        self.cupy.cuda.Device().synchronize()

    def roll(self, a, shift, axis):
        return self.cupy.roll(a, shift, axis)

    def copy(self, a):
        return a.copy()

    def function(self, name):
        return getattr(self.cupy, name)

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

    def compile(self, fn, fresh=True):
        # A fresh Dynamo cache per function, as in a fresh process: the closures of one
        # builder share a code object, and a second compile of it with other shapes would
        # make Dynamo switch to dynamic shapes.  (fresh=False: a further piece of the same
        # measurement, of other code, whose compiled companions must stay.)  fullgraph: a
        # graph break would run part of the function eagerly, a silent fallback; make it an
        # error instead.
        if fresh:
            self.torch._dynamo.reset()
        return self.torch.compile(fn, fullgraph=True)

    def sync(self, arrays):
        self.torch.cuda.synchronize()

    @contextlib.contextmanager
    def timed_range(self):
        self.torch.cuda.nvtx.range_push("timed")
        try:
            yield
        finally:
            self.torch.cuda.nvtx.range_pop()

    def roll(self, a, shift, axis):
        return self.torch.roll(a, shifts=shift, dims=axis)

    def copy(self, a):
        return a.clone()

    def function(self, name):
        """The numpy-named function in torch; a number beside a tensor in a binary
        function becomes a tensor of its shape (torch.fmin and the like take tensors)."""
        torch = self.torch
        binary = {"fmin": torch.fmin, "fmax": torch.fmax, "arctan2": torch.atan2,
                  "fmod": torch.fmod, "power": torch.pow}
        if name not in binary:
            return getattr(torch, name)
        op = binary[name]

        def apply(a, b):
            if not isinstance(a, torch.Tensor):
                a = torch.full_like(b, a)
            if not isinstance(b, torch.Tensor):
                b = torch.full_like(a, b)
            return op(a, b)
        return apply

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


def build_rk4_generated(formula, step, dt, system):
    """The whole step of a generated formula, compiled: RK4 in the arithmetic of the wave's
    step (y + (dt/6) (k1 + 2 k2 + 2 k3 + k4), the sum accumulated from the left as Python
    evaluates it there, so that each k can go once it is added), the right-hand sides
    evaluated on the periodic arrays through roll (rolled).  The right-hand side is compiled
    on its own and called four times, the stage arithmetic compiled apart: a whole step
    inlines four BSSN right-hand sides, and torch.compile took over 5 minutes on that
    (200 s on one)."""
    variables = list(step["variables"])
    evolves = step["evolves"]
    index = {v: i for i, v in enumerate(variables)}
    missing = [v for v in formula.inputs if v not in index]
    if missing:
        raise FormulaError(f"the right-hand side reads {missing}, which are not evolved")
    out_of = {}
    for o, name in enumerate(formula.outputs):
        if evolves.get(name) not in index:
            raise FormulaError(f"output {name} evolves no variable of the step")
        out_of[index[evolves[name]]] = o
    if sorted(out_of) != list(range(len(variables))):
        raise FormulaError("not every evolved variable has a right-hand side")
    rhs = system.compile(formula.build(rolled(system), system))
    ins = [index[v] for v in formula.inputs]
    order = [out_of[v] for v in range(len(variables))]
    m = len(variables)

    def f(y):
        out = rhs(*[y[i] for i in ins])
        return [out[o] for o in order]

    # (y..., k...) -> the next stage's state; (acc..., k...) -> acc + 2 k; the last.
    half = system.compile(lambda *yk: tuple(u + (dt / 2) * a for u, a in zip(yk[:m], yk[m:])),
                          fresh=False)
    full = system.compile(lambda *yk: tuple(u + dt * a for u, a in zip(yk[:m], yk[m:])),
                          fresh=False)
    acc2 = system.compile(lambda *sk: tuple(s + 2 * a for s, a in zip(sk[:m], sk[m:])),
                          fresh=False)
    last = system.compile(lambda *ysk: tuple(u + (dt / 6) * (s + a) for u, s, a in
                                             zip(ysk[:m], ysk[m:2 * m], ysk[2 * m:])),
                          fresh=False)

    def rk4_step(*y):
        k = f(y)
        acc = k
        k = f(half(*y, *k))
        acc = acc2(*acc, *k)
        k = f(half(*y, *k))
        acc = acc2(*acc, *k)
        k = f(full(*y, *k))
        return last(*y, *acc, *k)
    return rk4_step


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
