// Grid function storage and global norms.
#include "grid/grid.hpp"

#include <algorithm>
#include <cmath>

namespace saguaro::grid {

GridFunctions::~GridFunctions() {
  for (double* d : data_) space_->release(d - patch_.row_offset());
}

int GridFunctions::add(const std::string& name) {
  if (const int found = find(name); found >= 0) return found;
  data_.reserve(data_.size() + 1); // so that push_back cannot throw after the allocation
  mirror_.reserve(mirror_.size() + 1);
  names_.reserve(names_.size() + 1);
  // From row_offset() on, so that every row's first owned point is aligned (Patch::pitch).
  double* array =
      space_->allocate(patch_.points() + std::size_t(patch_.row_offset())) + patch_.row_offset();
  data_.push_back(array);
  mirror_.emplace_back();
  names_.push_back(name);
  return count() - 1;
}

int GridFunctions::find(const std::string& name) const {
  const auto it = std::find(names_.begin(), names_.end(), name);
  return it == names_.end() ? -1 : static_cast<int>(it - names_.begin());
}

double* GridFunctions::host_mirror(int index) {
  if (!space_->on_device()) return data_[index];
  std::vector<double>& m = mirror_[index];
  if (m.size() != patch_.points()) m.assign(patch_.points(), 0.0);
  return m.data();
}

const double* GridFunctions::host(int index) {
  if (!space_->on_device()) return data_[index];
  double* m = host_mirror(index);
  space_->to_host(m, data_[index], patch_.points());
  return m;
}

void GridFunctions::upload(int index) {
  if (!space_->on_device()) return;
  space_->from_host(data_[index], host_mirror(index), patch_.points());
}

Norms reduce_norms(const Decomposition& decomposition, const double* field,
                   runtime::ArraySpace& space) {
  const Patch& p = decomposition.patch();
  runtime::ArrayBox own;
  own.alloc = p.alloc();
  own.pitch = p.pitch();
  for (int a = 0; a < 3; ++a) {
    own.lo[a] = p.ghost();
    own.hi[a] = p.ghost() + p.size()[a];
  }
  // Long double sums per rank keep the result (nearly) independent of the decomposition.
  const runtime::BoxSums local = space.reduce(field, own);
  const double mn = local.min, mx = local.max, linf = local.max_abs;
  long double sums[2] = {local.sum_abs, local.sum_sq}; // sum |u|, sum u^2

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
