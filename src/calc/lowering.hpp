// Lowering as named passes: the intermediate value the passes share, and the driver that runs
// them in the order of one list (lowering_passes(), defined in lower.cpp) and can stop after
// any of them.
//
// The passes, in order (docs/edl.md, "Lowering passes"):
//   names       name resolution: grid functions, temporaries and their components declared
//   parameters  parameter declaration: defaults and ranges evaluated as constant expressions
//   indices     index analysis and tensor expansion: operators' direction indices, groups'
//               members, and every equation's free and summed indices, expanded into
//               one equation per component
//   stencils    finite-difference stencils: each component's DAG, derivatives replaced by
//               their stencils; a derivative of an expression gets an intermediate
//   staging     stages: intermediates before their readers, each stage's extent; the
//               calculation's derived fields (inputs, flops, radius)
//   races       the race check: what a calculation writes it reads at the point only
//
// A pass may act once for the program, and per calculation before its equations, per
// equation, and after its equations. The driver interleaves them as the lowering always has
// (a calculation is finished before the next starts, an equation before the next), so the
// first error a file has is the same wherever the passes are split.
#pragma once

#include "calc/calculation.hpp"
#include "edl/ast.hpp"
#include "edl/inherited.hpp"

#include <cstddef>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace saguaro::calc {

// How the built-in mixed second derivative D_ij f (i != j) is lowered (docs/edl.md, "Mixed
// derivatives"):
// - Product: one stencil, the product of two first-derivative stencils (fd_order^2 points);
// - Nested: D_12 f and D_13 f as D_2 and D_3 of D_1 f, stored in an intermediate grid function
//   computed a stage earlier: 2 fd_order points each, a stage more; D_23 stays the product (a
//   second intermediate axis would double the ghost width, lower_stencils.cpp);
// - Auto: Nested from fd_order 8, Product below (measured: docs/edl.md).
// Both give the same numbers up to rounding.
enum class MixedDerivatives { Auto, Product, Nested };
const char* to_string(MixedDerivatives m);
// "auto", "product" or "nested" (throws std::invalid_argument otherwise).
MixedDerivatives mixed_derivatives_from(const std::string& name);

struct LowerOptions {
  int fd_order = 4; // accuracy order of the built-in D_i and D_ij: 2, 4, 6 or 8
  MixedDerivatives mixed = MixedDerivatives::Auto;
  // Whether D_ij (i != j) is lowered nested at this order.
  bool nested_mixed() const {
    return mixed == MixedDerivatives::Nested || (mixed == MixedDerivatives::Auto && fd_order >= 8);
  }
};

// A declared tensor as name resolution records it.
struct TensorSymbol {
  enum class Kind { Variable, Temporary } kind = Kind::Variable;
  int rank = 0;
  edl::SourceLoc loc;
};

// One use of an index letter.
struct IndexUse {
  std::string symbol;
  bool upper = false;
  edl::SourceLoc loc;
};

// The indices of a subexpression: those left free, and those summed at this node.
struct IndexInfo {
  std::vector<IndexUse> free;
  std::vector<std::string> dummies;
};

// An equation after index analysis: the component equations its free indices make.
struct ExpandedEquation {
  struct Component {
    std::string name;               // the left side's component: "v2"
    std::map<std::string, int> env; // the free letters' values: {"i": 2}
  };
  const edl::Equation* equation = nullptr;
  bool temporary = false;       // the left side is a temporary
  std::vector<IndexUse> free;   // the left side's free indices
  std::vector<IndexUse> summed; // pairs summed on the right side (their first use)
  std::vector<Component> components;
};

// One calculation as the passes build it.
struct CalculationLowering {
  const edl::CalculationDecl* decl = nullptr;
  Calculation calc; // grid functions and DAG (stencils); stages and derived fields (staging)
  std::vector<ExpandedEquation> equations; // indices: one per equation lowered so far
  // stencils:
  std::vector<std::pair<int, NodeId>> stores; // grid function, value; first-assignment order
  std::map<int, edl::SourceLoc> stored_at;    // where each stored grid function is written
  std::map<std::string, NodeId> current;      // values assigned so far, by component
  std::map<NodeId, int> intermediate_of;      // expression -> its intermediate grid function
  std::vector<int> intermediate_stage;        // per grid function; -1 unless an intermediate
  std::map<int, edl::SourceLoc> stencil_use;  // where each grid function is first read off-point
  bool has_time_derivative = false;
};

// What the passes share: the program being built, the symbol table, the calculations.
struct LoweringState {
  const edl::Thorn* thorn = nullptr;
  LowerOptions options;
  Program program; // header; variables, tensors (names); parameters; groups (indices)

  // Symbol table (names, parameters, indices).
  std::map<std::string, edl::SourceLoc> declared_at;
  std::map<std::string, TensorSymbol> tensors;
  std::map<std::string, std::string> component_of; // component -> its tensor
  std::map<std::string, int> parameter_index;
  // The parameters of thorns read from their CCL files (pass `names`), each with where its
  // thorn is inherited; pass `parameters` declares them before the thorn's own.
  std::vector<std::pair<edl::InheritedParameter, edl::SourceLoc>> inherited_parameters;
  // Derivative operators by name, one definition per index pattern, each in stencil form
  // (operator-form definitions as their expansion in synthesized_operators);
  // thorn_operators holds the definitions as written.
  std::map<std::string, std::vector<const edl::DerivativeDef*>> operators;
  std::map<std::string, std::vector<const edl::DerivativeDef*>> thorn_operators;
  std::deque<edl::DerivativeDef> synthesized_operators;
  std::map<std::string, edl::SourceLoc> boundary_evolved_at; // component -> its boundary D_t
  std::map<std::string, edl::SourceLoc> calculation_at;
  std::map<std::string, edl::SourceLoc> evolved_at; // component -> its D_t equation
  std::unordered_map<const edl::Expr*, IndexInfo> index_info;

  std::vector<CalculationLowering> calculations; // in the file's order, as far as lowered

  std::size_t passes_run = 0; // the first passes_run passes of lowering_passes() have run
};

struct LoweringPass {
  const char* name;
  const char* summary;
  void (*program)(LoweringState&) = nullptr;
  void (*open)(LoweringState&, CalculationLowering&) = nullptr;
  void (*equation)(LoweringState&, CalculationLowering&, std::size_t equation) = nullptr;
  void (*close)(LoweringState&, CalculationLowering&) = nullptr;
};

// The passes in the order they run.
const std::vector<LoweringPass>& lowering_passes();
// The position of the named pass in lowering_passes(), or -1.
int find_lowering_pass(std::string_view name);
// "names, parameters, ...": for help texts and errors.
std::string lowering_pass_names();

// Checks the options (throws edl::EdlError) and starts the state with the thorn's header.
// `thorn` must outlive the state.
LoweringState start_lowering(const edl::Thorn& thorn, const LowerOptions& options);

// Runs the passes not yet run, through the one named `last` (throws std::invalid_argument
// for an unknown name; a pass already run is not run again).
void run_lowering(LoweringState& state, std::string_view last);

// Changes the finite-difference order before the stencils pass (throws edl::EdlError for an
// unsupported order, std::logic_error once stencils have been built).
void set_fd_order(LoweringState& state, int fd_order);
// Changes how mixed derivatives are lowered, under the same rule (std::logic_error once
// stencils have been built).
void set_mixed_derivatives(LoweringState& state, MixedDerivatives mixed);

// Runs the remaining passes and returns the program.
Program finish_lowering(LoweringState&& state);

} // namespace saguaro::calc
