// The grid the io tests write and read: small, uneven, periodic along z only, two ghost layers.
#pragma once

#include "grid/grid.hpp"

namespace saguaro::test {

inline grid::GridSpec test_spec() {
  grid::GridSpec spec;
  spec.points = {9, 7, 5};
  spec.origin = {-1.0, 0.5, 2.0};
  spec.spacing = {0.25, 0.5, 0.125};
  spec.periodic = {false, false, true};
  spec.ghost = 2;
  return spec;
}

} // namespace saguaro::test
