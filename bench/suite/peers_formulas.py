"""The peers' formulas (bench/suite/peers.py runs them): each benchmark's right-hand side
and the whole steps, written once over an array module.  `ops` (or `system`) is a system of
peers_systems.py: it gives the few operations that differ per module (roll, copy, the
functions, compilation).  B1-B4 (wave, Maxwell, the microbenchmark) and the wave's RK4 step
are written here by hand; B5 (BSSN) and any other benchmark without a hand-written stencil
run GeneratedFormula, the translation of Saguaro's own lowering, and its whole step
build_rk4_generated.  No array library is imported here.
"""

import ast
import functools
import math
import operator
import os
import re
from dataclasses import dataclass
from fractions import Fraction as F
from typing import Callable

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
# TorchSystem.function in peers_systems.py maps the few that torch names otherwise).  min and
# max are C's fmin and fmax.
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
            raise FormulaError(f"function {name!r} is not in peers_formulas.py's ARRAY_FUNCTIONS")
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
