# Independent check of bssn.edl, part 2: evaluates bssn_rhs and bssn_constraints with the
# reference interpreter (./driver) on the tabulated data and compares with expected.json.
# fd_order 4 must converge at 4th order; fd_order 8 must agree to round-off.  Also checks the
# Kreiss-Oliger terms against the stencil in the header.  Exit status 1 on a failure.
# The upwinded advection terms add an h^5 error to the h^4 one (DupwindSymm is h^4 times a
# 6th derivative at fd_order 4), so where the h^4 terms nearly cancel a two-spacing rate
# can stray from 4 (4.34, 3.33) although the scheme is right.  So at fd_order 4 the errors
# at h and h/2 fix e(h) = a h^4 + b h^5, which must predict the error at h/4 within 10% (plus
# 2e-11: the round-off of second differences at h/4 = 0.01 is about 1e-11).  A first-order
# mistake would leave an error of ~1e-10 at h/4 and fail.
# Usage: python3 cmp.py EDL WORKDIR DRIVER
import json, math, os, subprocess, sys
edl, work, driver = sys.argv[1], sys.argv[2], sys.argv[3]
E = json.load(open(os.path.join(work, 'expected.json')))
def run(calc, fd, h, params):
    ps = ','.join('%s=%r' % kv for kv in params.items())
    out = subprocess.run([driver, edl, fd, calc, os.path.join(work, 'data_%s.txt' % h), h, ps],
                         capture_output=True, text=True, check=True).stdout
    return {l.split()[0]: float(l.split()[1]) for l in out.strip().split('\n')}
bad = 0
for key in ['p1', 'p2']:
    pr, exp = E[key]
    res = {}
    for h, fds in [('0.04', ['4', '8']), ('0.02', ['4', '8']), ('0.01', ['4'])]:
        for fd in fds:
            for calc in ['bssn_rhs', 'bssn_constraints']:
                for n, v in run(calc, fd, h, pr).items(): res[(n, h, fd)] = v
    print('== parameter set', key, pr)
    print('%-10s %14s %11s %11s %11s %11s %6s %11s %11s' % ('gf', 'expected', 'err4 h', 'err4 h/2', 'err4 h/4', 'predicted', 'rate', 'err8 h', 'err8 h/2'))
    for n, v in exp.items():
        e4a, e4b, e4c = (res[(n, h, '4')] - v for h in ['0.04', '0.02', '0.01'])
        e8a, e8b = res[(n, '0.04', '8')] - v, res[(n, '0.02', '8')] - v
        # A = a h^4, B = b h^5 from e(h) = A + B, e(h/2) = A/16 + B/32.
        A = 32 * e4b - e4a
        B = e4a - A
        predicted = A / 256 + B / 1024
        rate = math.log2(abs(e4b) / abs(e4c)) if e4b and e4c else float('nan')
        fits = abs(predicted - e4c) <= 0.1 * abs(e4c) + 2e-11  # round-off at h/4: ~1e-11
        ok = (fits or max(abs(e4a), abs(e4b), abs(e4c)) < 1e-11) and max(abs(e8a), abs(e8b)) < 1e-10
        bad += not ok
        print('%-10s %14.8g %11.2e %11.2e %11.2e %11.2e %6.2f %11.2e %11.2e %s' % (n, v, e4a, e4b, e4c, predicted, rate, e8a, e8b, '' if ok else 'FAIL'))
# Dissipation: RHS(epsdiss) - RHS(0) = - epsdiss sum_k (stencil along k) / (16 h).
h = 0.04
D = {}
for line in open(os.path.join(work, 'data_0.04.txt')):
    n, i, j, k, v = line.split(); D[(n, int(i), int(j), int(k))] = float(v)
r0, r1 = run('bssn_rhs', '8', '0.04', {'epsdiss': 0.0}), run('bssn_rhs', '8', '0.04', {'epsdiss': 0.5})
print('== Kreiss-Oliger dissipation, epsdiss = 0.5')
for gf in sorted({k[0] for k in D}):
    ko = 0.0
    for ax in range(3):
        def f(s):
            o = [0, 0, 0]; o[ax] = s; return D[(gf, *o)]
        ko += (f(2) - 4*f(1) + 6*f(0) - 4*f(-1) + f(-2)) / (16*h)
    d = r1[gf + 'rhs'] - r0[gf + 'rhs']
    ok = abs(d + 0.5*ko) < 1e-12
    bad += not ok
    print('%-6s %14.6e %14.6e %s' % (gf, d, -0.5*ko, '' if ok else 'FAIL'))
print('%d failed' % bad)
sys.exit(1 if bad else 0)
