// Grid function storage and global norms.
#include "grid/grid.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace saguaro::grid {

int GridFunctions::add(const std::string& name) {
  if (const int found = find(name); found >= 0) return found;
  names_.push_back(name);
  data_.emplace_back(patch_.points(), 0.0);
  return count() - 1;
}

int GridFunctions::find(const std::string& name) const {
  const auto it = std::find(names_.begin(), names_.end(), name);
  return it == names_.end() ? -1 : static_cast<int>(it - names_.begin());
}

Norms reduce_norms(const Decomposition& decomposition, const double* field) {
  const Patch& p = decomposition.patch();
  const Box& own = p.owned;
  double mn = std::numeric_limits<double>::infinity();
  double mx = -std::numeric_limits<double>::infinity();
  double linf = 0;
  // Long double sums per rank keep the result (nearly) independent of the decomposition.
  long double sums[2] = {0.0L, 0.0L}; // sum |u|, sum u^2
  for (int k = own.lo[2]; k < own.hi[2]; ++k)
    for (int j = own.lo[1]; j < own.hi[1]; ++j) {
      const double* row = field + p.linear(own.lo[0], j, k);
      for (int i = 0, n = own.hi[0] - own.lo[0]; i < n; ++i) {
        const double v = row[i];
        mn = std::min(mn, v);
        mx = std::max(mx, v);
        linf = std::max(linf, std::fabs(v));
        sums[0] += std::fabs(static_cast<long double>(v));
        sums[1] += static_cast<long double>(v) * static_cast<long double>(v);
      }
    }

  MPI_Comm comm = decomposition.comm();
  double extremes[3] = {-mn, mx, linf}, gextremes[3];
  MPI_Allreduce(extremes, gextremes, 3, MPI_DOUBLE, MPI_MAX, comm);
  long double gsums[2] = {0.0L, 0.0L};
  MPI_Allreduce(sums, gsums, 2, MPI_LONG_DOUBLE, MPI_SUM, comm);

  Norms n;
  n.count = 1;
  for (int a = 0; a < 3; ++a) n.count *= p.spec.points[a];
  n.min = -gextremes[0];
  n.max = gextremes[1];
  n.linf = gextremes[2];
  const long double count = static_cast<long double>(n.count);
  n.l1 = static_cast<double>(gsums[0] / count);
  n.l2 = static_cast<double>(std::sqrt(gsums[1] / count));
  return n;
}

} // namespace saguaro::grid
