// Folding pointwise combinations into the calculation that produces their input: where a
// calculation stores grid function R (an evolved variable's right-hand side k), its folded
// form stores instead targets T = sum_i p_i X_i, each X_i the value it would have stored or
// another grid function at the point, each p_i a parameter. The time integrator's stage
// updates (acc = acc + 1/3 dt k; y1 = y0 + 1/2 dt k) then cost no pass of their own over
// memory: the kernel that computes k writes them (schedule/step_fold.hpp decides where).
#pragma once

#include "calc/calculation.hpp"

#include <string>
#include <vector>

namespace saguaro::calc {

struct FoldedStore {
  struct Term {
    int parameter = 0;  // index into the program's parameters (the coefficient)
    std::string source; // a grid function read at the point; "" the replaced store's value
  };
  struct Target {
    std::string grid_function;
    std::vector<Term> terms;
  };
  std::string replaced;        // the grid function whose store is replaced
  std::vector<Target> targets; // in order: a later term reads an earlier target's new value
};

// `calc` under `name` with each fold's store replaced by its targets' (in the last stage,
// the targets' grid functions added to the calculation's). Throws std::invalid_argument when
// a replaced grid function is not stored by the last stage, when a target is a grid function
// the calculation reads away from the point, or when a calculation reads a replaced one.
Calculation fold_stores(const Calculation& calc, const std::vector<FoldedStore>& folds,
                        const std::string& name);

} // namespace saguaro::calc
