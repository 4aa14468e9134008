// Folding pointwise combinations into the calculation that produces their input: where a
// calculation stores grid function R (an evolved variable's right-hand side k), its folded
// form stores instead targets T = sum_i p_i X_i, each X_i the value it would have stored or
// another grid function at the point, each p_i a parameter. The time integrator's stage
// updates (acc = 1/3 y0 + 1/3 y + 1/3 dt k; y1 = y0 + 1/2 dt k) then cost no pass of their own over
// memory: the kernel that computes k writes them (schedule/step_fold.hpp decides where).
#pragma once

#include "calc/calculation.hpp"
#include "calc/mapping.hpp"

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

// How `folded` (fold_stores(plain, folds, ...)) relates to `plain`, for Program::folded_forms.
FoldedForm folded_form(std::size_t plain_index, const Calculation& plain, const Calculation& folded,
                       const std::vector<FoldedStore>& folds);

// The folded form's mapping made from its plain form's: the same kernels (stores, temporaries,
// block, buffering), each that stored a replaced grid function storing the targets instead. A
// fold adds a few loads and stores at the point to the kernels that store k, so the partition
// and blocks chosen for the plain form serve its folded forms: they are not searched again (a
// right-hand side like BSSN's would otherwise triple its start-up); the empirical finish may
// time one of them in the plain form's place. A kernel whose points the plain form sums by input
// (BlockConfig::sums_by_input) keeps that only where `folded`'s stores still follow the rule
// (calc/sums_by_input.hpp).
Mapping fold_mapping(const FoldedForm& form, const Calculation& plain, const Calculation& folded,
                     const Mapping& mapping);

// mappings[f] = fold_mapping of its plain form's mapping, for every folded form f of `program`
// (`mappings`: one per calculation).
void follow_plain_forms(const Program& program, std::vector<Mapping>& mappings);

} // namespace saguaro::calc
