// Deciding which right-hand sides fold the stage combinations, and making their folded forms
// (see step_fold.hpp).
#include "schedule/step_fold.hpp"

#include "calc/fold.hpp"
#include "support/text.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace saguaro::schedule {

namespace {

// Above this many operations a right-hand side is bound by arithmetic (BSSN: ~6,700 flops a
// point); on the host its combinations' traffic is a small part of its step, and compiling two
// more forms of it would take a minute: "auto" leaves it plain there. On a GPU it is split into
// kernels that fit the registers (mapper/fission.hpp), its combinations took 17% of BSSN's step
// (H100, 256^3: 29 of 170 ms) and its folded forms take the plain form's kernels, compiled in
// parallel: "auto" folds it (fold_step's `fold_large`).
constexpr std::size_t kAutoFoldLimit = 2000;

// A stage's form: its combinations' registers, not their coefficients.
std::string form_key(const Stage& stage) {
  std::string key;
  for (const Combination& c : stage.updates) {
    key += std::to_string(c.target) + "=";
    for (const Combination::Term& t : c.terms) key += std::to_string(t.x) + ",";
    key += ";";
  }
  return key;
}

} // namespace

std::string StepFolding::register_field(const Integrator& integrator, int reg,
                                        const std::string& variable, const std::string& rhs) {
  if (reg == kStateRegister) return variable;
  if (reg == kRhsRegister) return rhs;
  return variable + "_" + integrator.register_name(reg);
}

std::vector<std::string> rhs_fields(const calc::Program& program) {
  std::vector<std::string> out;
  for (const std::string& v : program.evolved) {
    std::string rhs;
    for (const calc::Calculation& c : program.calculations)
      for (const calc::GridFunctionRef& gf : c.grid_functions)
        if (gf.role == calc::GridFunctionRole::RightHandSide && gf.evolves == v) rhs = gf.name;
    out.push_back(rhs.empty() ? v + "rhs" : rhs);
  }
  return out;
}

StepFolding fold_step(calc::Program& program, const Integrator& integrator,
                      const std::vector<std::string>& rhs_fields, const std::string& mode,
                      bool ghosts_refilled, bool fold_large) {
  StepFolding out;
  out.first_coefficient = int(program.parameters.size());
  if (mode == "no") {
    out.note = "stage combinations: a kernel per stage (Saguaro::fold_updates = \"no\")";
    return out;
  }
  if (!ghosts_refilled) {
    out.note = "stage combinations: a kernel per stage (static or radiative outer faces take "
               "their own right-hand side)";
    return out;
  }
  // Who touches each right-hand side.
  const std::size_t original = program.calculations.size();
  std::vector<int> users(rhs_fields.size(), 0);
  for (const calc::Calculation& c : program.calculations)
    for (std::size_t v = 0; v < rhs_fields.size(); ++v)
      if (c.find_grid_function(rhs_fields[v]) >= 0) ++users[v];

  std::vector<std::string> folded_names, large;
  for (std::size_t ci = 0; ci < original; ++ci) {
    const calc::Calculation c = program.calculations[ci]; // a copy: folded forms join the list
    if (!support::iequals(c.schedule_bin, "MoL_CalcRHS") || c.on_boundary) continue;
    std::vector<int> produces;
    for (std::size_t v = 0; v < rhs_fields.size(); ++v) {
      const int gf = c.find_grid_function(rhs_fields[v]);
      if (gf < 0 || users[v] != 1) continue;
      const bool stored = std::find(c.outputs.begin(), c.outputs.end(), gf) != c.outputs.end();
      const bool read =
          std::any_of(c.inputs.begin(), c.inputs.end(),
                      [&](const calc::InputStencil& in) { return in.grid_function == gf; });
      if (stored && !read) produces.push_back(int(v));
    }
    if (produces.empty()) continue;
    if (mode == "auto" && !fold_large && c.node_count > kAutoFoldLimit) {
      large.push_back(c.name);
      continue;
    }
    std::vector<int> forms(integrator.stages.size() + 1, -1);
    std::map<std::string, int> by_form;
    for (std::size_t s = 0; s < integrator.stages.size(); ++s) {
      const Stage& stage = integrator.stages[s];
      if (stage.writes_state() || stage.updates.empty()) continue;
      const std::string key = form_key(stage);
      if (auto it = by_form.find(key); it != by_form.end()) {
        forms[s + 1] = it->second;
        continue;
      }
      std::vector<calc::FoldedStore> folds;
      for (int v : produces) {
        const std::string& var = program.evolved[std::size_t(v)];
        const std::string& rhs = rhs_fields[std::size_t(v)];
        calc::FoldedStore fold;
        fold.replaced = rhs;
        int parameter = out.first_coefficient;
        for (const Combination& comb : stage.updates) {
          calc::FoldedStore::Target t;
          t.grid_function = StepFolding::register_field(integrator, comb.target, var, rhs);
          for (const Combination::Term& term : comb.terms)
            t.terms.push_back(
                {parameter++, term.x == kRhsRegister
                                  ? std::string()
                                  : StepFolding::register_field(integrator, term.x, var, rhs)});
          fold.targets.push_back(std::move(t));
        }
        out.coefficients = std::max(out.coefficients, parameter - out.first_coefficient);
        folds.push_back(std::move(fold));
      }
      program.calculations.push_back(calc::fold_stores(c, folds, c.name));
      program.folded_forms[program.calculations.size() - 1] =
          calc::folded_form(ci, c, program.calculations.back(), folds);
      forms[s + 1] = int(program.calculations.size()) - 1;
      by_form[key] = forms[s + 1];
    }
    if (by_form.empty()) continue;
    // Each form named by the stages it serves: "wave_rhs (stages 2, 3)".
    for (const auto& [key, index] : by_form) {
      std::vector<std::size_t> stages;
      for (std::size_t s = 1; s < forms.size(); ++s)
        if (forms[s] == index) stages.push_back(s);
      program.calculations[std::size_t(index)].name = fmt::format(
          "{} (stage{} {})", c.name, stages.size() == 1 ? "" : "s", fmt::join(stages, ", "));
    }
    out.forms[int(ci)] = forms;
    out.produces[int(ci)] = produces;
    folded_names.push_back(
        fmt::format("{} ({} form{})", c.name, by_form.size(), by_form.size() == 1 ? "" : "s"));
  }
  for (int i = 0; i < out.coefficients; ++i) {
    calc::Parameter p;
    p.name = fmt::format("MoL_coefficient{}", i + 1);
    p.description = "a stage combination's coefficient, set by the step";
    program.parameters.push_back(p);
  }
  if (folded_names.empty())
    out.note = large.empty()
                   ? "stage combinations: a kernel per stage (no right-hand side alone "
                     "computes its variables' k)"
                   : fmt::format("stage combinations: a kernel per stage ({} too large to "
                                 "fold under Saguaro::fold_updates = \"auto\")",
                                 fmt::format("{}", fmt::join(large, ", ")));
  else
    out.note = fmt::format("stage combinations folded into {}",
                           fmt::format("{}", fmt::join(folded_names, ", ")));
  return out;
}

} // namespace saguaro::schedule
