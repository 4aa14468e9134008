// Outer boundary conditions: flat, static and radiative (Sommerfeld, as Cactus NewRad).
#include "grid/grid.hpp"

#include "support/text.hpp"

#include <stdexcept>

namespace saguaro::grid {

BoundaryKind boundary_kind_from_string(const std::string& word) {
  const std::string w = support::lower(word);
  if (w == "flat") return BoundaryKind::Flat;
  if (w == "static") return BoundaryKind::Static;
  if (w == "radiative") return BoundaryKind::Radiative;
  if (w == "none") return BoundaryKind::None;
  throw std::invalid_argument("saguaro::grid: unknown boundary condition '" + word +
                              "' (expected flat, static, radiative or none)");
}

runtime::OuterFaces outer_faces(const Patch& patch) {
  runtime::OuterFaces f{};
  const Index3 alloc = patch.alloc();
  f.ghost = patch.ghost();
  f.pitch = patch.pitch();
  for (int a = 0; a < 3; ++a) {
    f.alloc[a] = alloc[a];
    f.outer[a][0] = patch.outer[a][0];
    f.outer[a][1] = patch.outer[a][1];
    f.origin[a] = patch.spec.origin[a];
    f.index_offset[a] = patch.owned.lo[a] - patch.ghost();
    f.spacing[a] = patch.spec.spacing[a];
  }
  return f;
}

// The loops are the space's (for the host: runtime/host_array_space.cpp), the pointwise
// conditions runtime/boundary_point.hpp's.

void apply_flat(const Patch& patch, double* field, runtime::ArraySpace& space) {
  space.apply_flat(outer_faces(patch), field);
}

void apply_static_rhs(const Patch& patch, double* rhs, runtime::ArraySpace& space) {
  space.apply_static_rhs(outer_faces(patch), rhs);
}

void apply_radiative_rhs(const Patch& patch, const double* u, double* rhs, double u0, double v0,
                         runtime::ArraySpace& space) {
  space.apply_radiative_rhs(outer_faces(patch), u, rhs, u0, v0);
}

} // namespace saguaro::grid
