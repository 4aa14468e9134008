// The lowering passes' entry points and the machinery they share (internal to calc/).
//
// Each pass lives in a file of its own: lower_names.cpp, lower_parameters.cpp,
// lower_indices.cpp, lower_stencils.cpp, lower_staging.cpp, lower_races.cpp; lower.cpp lists
// them and drives them. Lowerer is a short-lived view of the state for one step of a pass,
// with what that step needs besides the state (the calculation being lowered, the derivative
// definition being applied); its member functions are defined with the pass they belong to.
#pragma once

#include "calc/fd_coefficients.hpp"
#include "calc/lowering.hpp"

#include <functional>
#include <string>
#include <vector>

namespace saguaro::calc {

// names: the grid functions, temporaries and their components.
void resolve_names(LoweringState& state);
// parameters: each parameter claimed, its default and range evaluated.
void declare_parameters(LoweringState& state);
// indices: derivative operators' direction indices and groups' members (once); the
// calculation's header (opening it); each equation's indices and components.
void analyse_declarations(LoweringState& state);
// The derivatives block's operators (lower_operators.cpp): checked, operator forms expanded.
void define_operators(LoweringState& state);
// The definition of `name` for a use along `axes` (the most specific index pattern that fits),
// or nullptr; the one-direction definition, or nullptr.
const edl::DerivativeDef* select_operator(const LoweringState& state, const std::string& name,
                                          const std::vector<int>& axes);
const edl::DerivativeDef* one_direction_operator(const LoweringState& state,
                                                 const std::string& name);
void open_calculation(LoweringState& state, CalculationLowering& work);
void expand_equation(LoweringState& state, CalculationLowering& work, std::size_t equation);
edl::TensorRef resolve_component(const LoweringState& state, const edl::TensorRef& ref);
// stencils: each component equation's value in the calculation's DAG.
void build_equation(LoweringState& state, CalculationLowering& work, std::size_t equation);
// staging: stages and their extents; the calculation's derived fields.
void build_stages(LoweringState& state, CalculationLowering& work);
// races: no grid function written by a calculation is read by it off the point.
void check_races(LoweringState& state, CalculationLowering& work);

// Names that cannot be declared: coordinates, spacings, time, constants, built-in tensors.
bool is_builtin(const std::string& name);
const std::vector<std::string>& builtin_names();

class Lowerer {
public:
  using Env = std::map<std::string, int>; // index letter -> value 1..3

  // Where a user derivative operator is being applied: its definition, the axis each of its
  // direction letters stands for, and the operand's value.
  struct DefinitionContext {
    const edl::DerivativeDef* def = nullptr;
    std::map<std::string, int> axis_of;
    NodeId operand = 0;
  };

  explicit Lowerer(LoweringState& state, CalculationLowering* work = nullptr)
      : s(state), work(work), dag(work != nullptr ? &work->calc.dag : nullptr) {}

  // ---- names (lower_names.cpp) -------------------------------------------------------------
  void claim_name(const std::string& name, const edl::SourceLoc& loc, const char* what);
  static std::vector<std::string> components(const std::string& name, int rank);
  edl::EdlError undeclared(const std::string& name, const edl::SourceLoc& loc, const char* what,
                           bool grid_functions_only = false) const;

  // ---- parameters (lower_parameters.cpp) ---------------------------------------------------
  double constant_value(const edl::Expr& e, const char* what);

  // ---- indices (lower_indices.cpp) ---------------------------------------------------------
  const IndexInfo& analyse_indices(const edl::Expr& e);
  void check_call(const edl::Expr& e) const;
  void check_definition(const edl::DerivativeDef& def, const edl::Expr& e) const;
  // The operands of a left-leaning chain of + and - (or of *), with their signs.
  static std::vector<std::pair<const edl::Expr*, double>> chain(const edl::Expr& e);

  // ---- stencils (lower_stencils.cpp) -------------------------------------------------------
  NodeId lower(const edl::Expr& e, const Env& env);
  int grid_function(const std::string& name, GridFunctionRole role, const std::string& evolves);

  LoweringState& s;
  CalculationLowering* work;    // the calculation being lowered, if any
  Dag* dag;                     // where values are built: the calculation's, or a scratch one
  std::vector<IndexUse> summed; // summed pairs met while analysing one right side
  const DefinitionContext* def = nullptr;
  bool constant_mode = false; // analysing a parameter's default or range end

private:
  IndexInfo contract(std::vector<IndexUse> uses);
  static std::vector<IndexUse> symbol_uses(const std::vector<edl::Index>& indices);
  static std::vector<IndexUse> disjoint(const std::vector<IndexUse>& uses,
                                        const std::string& where);
  static bool same_indices(const std::vector<IndexUse>& a, const std::vector<IndexUse>& b);
  int tensor_rank(const edl::Expr& e) const;
  void operator_slots(const edl::Expr& e) const;

  NodeId lower_node(const edl::Expr& e, const Env& env);
  NodeId lower_tensor(const edl::Expr& e, const Env& env);
  NodeId lower_derivative(const edl::Expr& e, const Env& env);
  NodeId sum_over(const std::vector<std::string>& dummies, const Env& env,
                  const std::function<NodeId(const Env&)>& body);
  NodeId apply_weights(NodeId operand, const std::vector<StencilWeight>& wa, int axis_a,
                       int power = 1, const std::vector<StencilWeight>* wb = nullptr,
                       int axis_b = -1);
  NodeId apply_user_operator(const edl::DerivativeDef& def, const edl::Expr& use,
                             const std::vector<int>& axes, NodeId operand);
  int intermediate(NodeId value);
  static int index_value(const edl::Index& index, const Env& env, const edl::SourceLoc& where);
};

} // namespace saguaro::calc
