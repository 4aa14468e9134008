# Independent check of bssn.edl, part 1 (needs sympy): analytic ADM data -> the 25 BSSN
# variables tabulated on a cube of stencil points around P (data_H.txt, for two spacings),
# and the expected BSSN right-hand sides and constraints at P (expected.json), derived from
# the ADM equations with exact derivatives:
#   phi, gt_ij, At_ij: kinematic time derivatives of their definitions under ADM evolution;
#   trK: ADM's d_t K - alpha H (BSSN adds the Hamiltonian constraint);
#   Xt^i: kinematic d_t (-d_j gt^ij) + 2 alpha gt^ij M_j (BSSN adds the momentum constraint);
#   gauge: the formulas of the header of bssn.edl; H, M_i: the physical ADM constraints.
# Usage: python3 gen.py OUTDIR
import sys, os, math, itertools
import sympy as sp
x, y, z = X = sp.symbols('x y z', real=True)
P = (0.31, -0.17, 0.23)
def s(a,b,c,d): return sp.sin(a*x+b*y+c*z+d)
def c(a,b,c_,d): return sp.cos(a*x+b*y+c_*z+d)
G = sp.Matrix([[1+0.2*s(0.9,0.4,-0.3,0.1), 0.1*s(0.5,-0.8,0.6,0.7), 0.1*c(0.3,0.7,0.9,-0.2)],
               [0, 1.1+0.2*c(-0.6,0.5,0.8,0.3), 0.1*s(0.8,0.2,-0.7,1.1)],
               [0, 0, 0.9+0.2*s(0.4,-0.9,0.5,-0.4)]])
G[1,0]=G[0,1]; G[2,0]=G[0,2]; G[2,1]=G[1,2]
Km = sp.Matrix([[0.2*c(0.7,-0.3,0.5,0.4), 0.15*s(-0.4,0.6,0.9,0.2), 0.1*s(0.8,0.8,-0.2,-0.5)],
                [0, -0.1+0.2*s(0.3,0.9,-0.6,0.9), 0.12*c(0.5,-0.5,0.7,0.1)],
                [0, 0, 0.1+0.2*c(-0.8,0.2,0.6,-0.3)]])
Km[1,0]=Km[0,1]; Km[2,0]=Km[0,2]; Km[2,1]=Km[1,2]
alpha = 1+0.2*s(0.7,0.3,-0.5,0.2)
beta = [0.2*s(0.6,-0.4,0.8,0.3), 0.2*c(0.9,0.5,-0.3,-0.6), 0.15*s(-0.5,0.7,0.4,1.0)]
Aval = 0.2*c(0.4,0.6,0.9,0.5)
Bv = [0.2*c(0.5,0.3,-0.8,0.2), 0.2*s(0.7,-0.6,0.4,0.8), 0.1*c(-0.3,0.9,0.6,-0.7)]

detg = G.det()
Ginv = G.adjugate()/detg
phi = sp.log(detg)/12
gt = G*detg**sp.Rational(-1,3)
trK = sum(Ginv[i,j]*Km[i,j] for i in range(3) for j in range(3))
At = (Km - G*trK/3)*detg**sp.Rational(-1,3)
gtinv = G.adjugate()*detg**sp.Rational(-2,3)      # inverse of gt (det gt = 1)
Xt = [-sum(sp.diff(gtinv[i,j], X[j]) for j in range(3)) for i in range(3)]

fields = {'phi': phi, 'trK': trK, 'alpha': alpha, 'A': Aval}
for (i,j) in [(0,0),(0,1),(0,2),(1,1),(1,2),(2,2)]:
    fields['gt%d%d'%(i+1,j+1)] = gt[i,j]; fields['At%d%d'%(i+1,j+1)] = At[i,j]
for i in range(3):
    fields['Xt%d'%(i+1)] = Xt[i]; fields['beta%d'%(i+1)] = beta[i]; fields['B%d'%(i+1)] = Bv[i]

def write_data(h, fname, R=5):  # the upwind stencils reach 5 points at fd_order 8
    with open(fname,'w') as f:
        for name, e in fields.items():
            fn = sp.lambdify((x,y,z), e, 'math')
            for o in itertools.product(range(-R,R+1), repeat=3):
                v = fn(P[0]+o[0]*h, P[1]+o[1]*h, P[2]+o[2]*h)
                f.write('%s %d %d %d %.17g\n' % (name, o[0], o[1], o[2], v))

# ---- expected values (exact derivatives at P) ------------------------------------------
sub = dict(zip(X, P))
def N(e): return float(sp.N(e.subs(sub) if hasattr(e,'subs') else e, 30))
R3 = range(3)
g   = [[N(G[i,j]) for j in R3] for i in R3]
dg  = [[[N(sp.diff(G[i,j],X[k])) for k in R3] for j in R3] for i in R3]          # dg[i][j][k] = d_k g_ij
ddg = [[[[N(sp.diff(G[i,j],X[k],X[l])) for l in R3] for k in R3] for j in R3] for i in R3]
K   = [[N(Km[i,j]) for j in R3] for i in R3]
dK  = [[[N(sp.diff(Km[i,j],X[k])) for k in R3] for j in R3] for i in R3]
al  = N(alpha); dal = [N(sp.diff(alpha,X[k])) for k in R3]
ddal = [[N(sp.diff(alpha,X[k],X[l])) for l in R3] for k in R3]
be  = [N(b) for b in beta]; dbe = [[N(sp.diff(beta[i],X[k])) for k in R3] for i in R3]  # dbe[i][k] = d_k beta^i
Av  = N(Aval); dA = [N(sp.diff(Aval,X[k])) for k in R3]
Bn  = [N(b) for b in Bv]; dB = [[N(sp.diff(Bv[i],X[k])) for k in R3] for i in R3]
gi  = [[N(Ginv[i,j]) for j in R3] for i in R3]
dgi = [[[-sum(gi[i][a]*dg[a][b][k]*gi[b][j] for a in R3 for b in R3) for k in R3] for j in R3] for i in R3]
Gam = [[[0.5*sum(gi[k][l]*(dg[l][j][i]+dg[l][i][j]-dg[i][j][l]) for l in R3) for j in R3] for i in R3] for k in R3]  # Gam[k][i][j]
dGam = [[[[0.5*sum(dgi[k][l][m]*(dg[l][j][i]+dg[l][i][j]-dg[i][j][l]) + gi[k][l]*(ddg[l][j][i][m]+ddg[l][i][j][m]-ddg[i][j][l][m]) for l in R3)
          for m in R3] for j in R3] for i in R3] for k in R3]  # dGam[k][i][j][m] = d_m Gam^k_ij
Ric = [[sum(dGam[k][i][j][k] - dGam[k][i][k][j] for k in R3) + sum(Gam[k][k][l]*Gam[l][i][j] - Gam[k][j][l]*Gam[l][i][k] for k in R3 for l in R3) for j in R3] for i in R3]
trR = sum(gi[i][j]*Ric[i][j] for i in R3 for j in R3)
tK = sum(gi[i][j]*K[i][j] for i in R3 for j in R3)
Ku = [[sum(gi[i][a]*K[a][b]*gi[b][j] for a in R3 for b in R3) for j in R3] for i in R3]
Km_ = [[sum(gi[i][a]*K[a][j] for a in R3) for j in R3] for i in R3]       # K^i_j
KK = sum(K[i][j]*Ku[i][j] for i in R3 for j in R3)
H = trR + tK**2 - KK
dtK_ = [0]*3
dKmix = [[[sum(dgi[i][a][k]*K[a][j] + gi[i][a]*dK[a][j][k] for a in R3) for k in R3] for j in R3] for i in R3]  # d_k K^i_j
dtrK = [sum(dKmix[i][i][k] for i in R3) for k in R3]
Mom = [sum(dKmix[j][i][j] for j in R3) + sum(Gam[j][j][l]*Km_[l][i] - Gam[l][j][i]*Km_[j][l] for j in R3 for l in R3) - dtrK[i] for i in R3]
DDal = [[ddal[i][j] - sum(Gam[k][i][j]*dal[k] for k in R3) for j in R3] for i in R3]
dtG = [[-2*al*K[i][j] + sum(be[k]*dg[i][j][k] + g[i][k]*dbe[k][j] + g[j][k]*dbe[k][i] for k in R3) for j in R3] for i in R3]
dtKij = [[-DDal[i][j] + al*(Ric[i][j] - 2*sum(K[i][k]*Km_[k][j] for k in R3) + tK*K[i][j])
          + sum(be[k]*dK[i][j][k] + K[i][k]*dbe[k][j] + K[j][k]*dbe[k][i] for k in R3) for j in R3] for i in R3]
dttrK_adm = sum(gi[i][j]*dtKij[i][j] - Ku[i][j]*dtG[i][j] for i in R3 for j in R3)
dttrK = dttrK_adm - al*H
dtphi = sum(gi[i][j]*dtG[i][j] for i in R3 for j in R3)/12
detv = N(detg); em4 = detv**(-1/3)
dtgt = [[em4*(dtG[i][j] - 4*g[i][j]*dtphi) for j in R3] for i in R3]
Atn = [[N(At[i,j]) for j in R3] for i in R3]
dtAt = [[-4*dtphi*Atn[i][j] + em4*(dtKij[i][j] - dtG[i][j]*tK/3 - g[i][j]*dttrK_adm/3) for j in R3] for i in R3]
# Kinematic d_t Xt^i = - d_j d_t gtinv^ij, symbolic.
dtGs = sp.Matrix(3,3, lambda i,j: -2*alpha*Km[i,j] + sum(beta[k]*sp.diff(G[i,j],X[k]) + G[i,k]*sp.diff(beta[k],X[j]) + G[j,k]*sp.diff(beta[k],X[i]) for k in R3))
trdt = sum(Ginv[a,b]*dtGs[a,b] for a in R3 for b in R3)
dtgts = detg**sp.Rational(-1,3)*(dtGs - G*trdt/3)
dtgtinv = -gtinv*dtgts*gtinv
dtXt_kin = [-sum(N(sp.diff(dtgtinv[i,j], X[j])) for j in R3) for i in R3]
gtin = [[N(gtinv[i,j]) for j in R3] for i in R3]
dtXt = [dtXt_kin[i] + 2*al*sum(gtin[i][j]*Mom[j] for j in R3) for i in R3]
dXt = [[N(sp.diff(Xt[i],X[k])) for k in R3] for i in R3]

def expected(pr):
    F, Nn, cA, aD, lAC, sGC, bD, sAC = (pr[k] for k in ['harmonicF','harmonicN','lapseACoeff','alphaDriver','lapseAdvectionCoeff','shiftGammaCoeff','betaDriver','shiftAdvectionCoeff'])
    e = {'phirhs': dtphi, 'trKrhs': dttrK}
    for (i,j) in [(0,0),(0,1),(0,2),(1,1),(1,2),(2,2)]:
        e['gt%d%drhs'%(i+1,j+1)] = dtgt[i][j]; e['At%d%drhs'%(i+1,j+1)] = dtAt[i][j]
    for i in R3:
        e['Xt%drhs'%(i+1)] = dtXt[i]
        e['beta%drhs'%(i+1)] = sGC*Bn[i] + sAC*sum(be[k]*dbe[i][k] for k in R3)
        e['B%drhs'%(i+1)] = dtXt[i] - bD*Bn[i] + sAC*sum(be[k]*(dB[i][k]-dXt[i][k]) for k in R3)
    e['alpharhs'] = -F*al**Nn*((1-cA)*tK + cA*Av) + lAC*sum(be[k]*dal[k] for k in R3)
    e['Arhs'] = cA*(dttrK - aD*Av) + lAC*sum(be[k]*dA[k] for k in R3)
    e['H'] = H
    for i in R3: e['M%d'%(i+1)] = Mom[i]
    return e

if __name__ == '__main__':
    import json
    out = sys.argv[1] if len(sys.argv) > 1 else '.'
    for h in [0.04, 0.02, 0.01]:
        write_data(h, os.path.join(out, 'data_%g.txt' % h))
    pr1 = dict(harmonicF=1.3, harmonicN=2, lapseACoeff=0.0, alphaDriver=0.0, lapseAdvectionCoeff=1.0, shiftGammaCoeff=0.75, betaDriver=0.9, shiftAdvectionCoeff=1.0)
    pr2 = dict(harmonicF=2.0, harmonicN=1, lapseACoeff=1.0, alphaDriver=0.4, lapseAdvectionCoeff=0.5, shiftGammaCoeff=0.6, betaDriver=1.7, shiftAdvectionCoeff=0.3)
    json.dump({'p1': [pr1, expected(pr1)], 'p2': [pr2, expected(pr2)], 'detg': detv}, open(os.path.join(out, 'expected.json'),'w'), indent=1)
    print('Xtn check (Xt analytic vs gt^jk Gt^i_jk):', [N(Xt[i]) for i in R3])
