// The lowering driver: the list of passes, in one place, and running them in sequence.
#include "calc/lower.hpp"

#include "calc/lower_passes.hpp"
#include "support/diagnostics.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace saguaro::calc {

// The passes, in the order they run. A pass acts once for the program (.program), per
// calculation before its equations (.open), per equation (.equation) and per calculation
// after its equations (.close); a new pass is one entry here and a file of its own.
const std::vector<LoweringPass>& lowering_passes() {
  static const std::vector<LoweringPass> passes = {
      {.name = "names",
       .summary = "name resolution: grid functions, temporaries and their components declared",
       .program = resolve_names},
      {.name = "parameters",
       .summary = "parameter declaration: defaults and ranges evaluated and checked",
       .program = declare_parameters},
      {.name = "indices",
       .summary = "index analysis and tensor expansion: free and summed indices checked, each "
                  "equation expanded into its components",
       .program = analyse_declarations,
       .open = open_calculation,
       .equation = expand_equation},
      {.name = "stencils",
       .summary = "finite-difference stencils: each component's DAG, derivatives replaced by "
                  "stencils",
       .equation = build_equation},
      {.name = "staging",
       .summary = "stages: intermediates computed before their readers, on the extents they are "
                  "read on; inputs, flops, radius",
       .close = build_stages},
      {.name = "races",
       .summary = "the race check: a grid function a calculation writes is read by it only at "
                  "the point itself",
       .close = check_races},
  };
  return passes;
}

int find_lowering_pass(std::string_view name) {
  const auto& passes = lowering_passes();
  for (std::size_t k = 0; k < passes.size(); ++k)
    if (name == passes[k].name) return static_cast<int>(k);
  return -1;
}

std::string lowering_pass_names() {
  std::string out;
  for (const LoweringPass& pass : lowering_passes())
    out += (out.empty() ? "" : ", ") + std::string(pass.name);
  return out;
}

namespace {

void check_fd_order(int fd_order) {
  if (fd_order < 2 || fd_order > 8 || fd_order % 2 != 0)
    throw edl::EdlError({}, fmt::format("finite-difference order {} is not supported: expected 2, "
                                        "4, 6 or 8",
                                        fd_order));
}

} // namespace

LoweringState start_lowering(const edl::Thorn& thorn, const LowerOptions& options) {
  check_fd_order(options.fd_order);
  LoweringState state;
  state.thorn = &thorn;
  state.options = options;
  Program& program = state.program;
  program.thorn = thorn.name;
  program.implements = thorn.implements.empty() ? thorn.name : thorn.implements;
  program.inherits = thorn.inherits;
  program.features = thorn.features;
  program.fd_order = options.fd_order;
  return state;
}

// Passes [first, end) run: each pass's program step in order, then calculation by
// calculation (one finished before the next starts) each pass's opening, equation by
// equation each pass's equation step, and each pass's closing. That is the order the
// lowering has always found errors in, so the first error of a file does not depend on
// where the passes are split.
void run_lowering(LoweringState& state, std::string_view last) {
  const auto& passes = lowering_passes();
  const int stop = find_lowering_pass(last);
  if (stop < 0)
    throw std::invalid_argument(
        fmt::format("unknown lowering pass '{}': expected one of {}", last, lowering_pass_names()));
  const std::size_t first = state.passes_run, end = static_cast<std::size_t>(stop) + 1;
  if (first >= end) return;
  bool per_calculation = false;
  for (std::size_t p = first; p < end; ++p) {
    if (passes[p].program) passes[p].program(state);
    per_calculation = per_calculation || passes[p].open || passes[p].equation || passes[p].close;
  }
  if (per_calculation) {
    const auto& decls = state.thorn->calculations;
    state.calculations.reserve(decls.size());
    // A calculation with an error is left there and the next one lowered: the errors of
    // every calculation are reported together (in file order, as the calculations are).
    // Within a calculation the first error ends it, since a later equation reads what an
    // earlier one assigned.
    support::DiagnosticList errors;
    for (std::size_t c = 0; c < decls.size(); ++c) {
      if (c == state.calculations.size()) {
        state.calculations.emplace_back();
        state.calculations.back().decl = &decls[c];
      }
      CalculationLowering& work = state.calculations[c];
      try {
        for (std::size_t p = first; p < end; ++p)
          if (passes[p].open) passes[p].open(state, work);
        for (std::size_t e = 0; e < work.decl->equations.size(); ++e)
          for (std::size_t p = first; p < end; ++p)
            if (passes[p].equation) passes[p].equation(state, work, e);
        for (std::size_t p = first; p < end; ++p)
          if (passes[p].close) passes[p].close(state, work);
      } catch (const support::InputError& e) {
        errors.add(e);
      }
    }
    errors.throw_if_any();
  }
  state.passes_run = end;
}

namespace {
void check_stencils_not_built(const LoweringState& state, const char* what) {
  if (state.passes_run > static_cast<std::size_t>(find_lowering_pass("indices")))
    throw std::logic_error(fmt::format("{} is set before the stencils are built", what));
}
} // namespace

void set_fd_order(LoweringState& state, int fd_order) {
  check_stencils_not_built(state, "the finite-difference order");
  check_fd_order(fd_order);
  state.options.fd_order = fd_order;
  state.program.fd_order = fd_order;
}

void set_mixed_derivatives(LoweringState& state, MixedDerivatives mixed) {
  check_stencils_not_built(state, "the lowering of mixed derivatives");
  state.options.mixed = mixed;
}

const char* to_string(MixedDerivatives m) {
  switch (m) {
  case MixedDerivatives::Auto: return "auto";
  case MixedDerivatives::Product: return "product";
  case MixedDerivatives::Nested: return "nested";
  }
  return "?";
}

MixedDerivatives mixed_derivatives_from(const std::string& name) {
  for (MixedDerivatives m :
       {MixedDerivatives::Auto, MixedDerivatives::Product, MixedDerivatives::Nested})
    if (name == to_string(m)) return m;
  throw std::invalid_argument(
      fmt::format("mixed derivatives '{}': expected auto, product or nested", name));
}

Program finish_lowering(LoweringState&& state) {
  run_lowering(state, lowering_passes().back().name);
  Program program = std::move(state.program);
  program.calculations.reserve(state.calculations.size());
  for (CalculationLowering& work : state.calculations)
    program.calculations.push_back(std::move(work.calc));
  for (const auto& v : program.variables)
    if (state.evolved_at.count(v)) program.evolved.push_back(v);
  // Every variable with a boundary right-hand side alone, in file order, in one report.
  std::vector<std::pair<edl::SourceLoc, std::string>> lone;
  for (const auto& [v, loc] : state.boundary_evolved_at)
    if (!state.evolved_at.count(v)) lone.emplace_back(loc, v);
  std::sort(lone.begin(), lone.end(), [](const auto& a, const auto& b) {
    return std::pair(a.first.line, a.first.column) < std::pair(b.first.line, b.first.column);
  });
  support::DiagnosticList errors;
  for (const auto& [loc, v] : lone)
    errors.add(edl::EdlError(loc, fmt::format("'{}' has a D_t equation on the boundary but none "
                                              "for the interior: a boundary right-hand side "
                                              "completes an evolution equation, it does not "
                                              "replace it",
                                              v)));
  errors.throw_if_any();
  return program;
}

Program lower(const edl::Thorn& thorn, const LowerOptions& options) {
  return finish_lowering(start_lowering(thorn, options));
}

} // namespace saguaro::calc
