// Pass `names`, name resolution: the grid functions and temporaries a thorn declares, with
// the components their indices make, enter the symbol table; every name is declared once.
// Runs first, so that a parameter's default naming a grid function is "not a constant".
#include "calc/lower_passes.hpp"

#include "edl/inherited.hpp"
#include "edl/parser.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include <fmt/format.h>

namespace saguaro::calc {

using edl::EdlError;
using edl::Index;
using edl::SourceLoc;

const std::vector<std::string>& builtin_names() {
  static const std::vector<std::string> names = {"x",  "y",  "z", "t",   "dx",  "dy",
                                                 "dz", "PI", "E", "Euc", "Eps", "delta"};
  return names;
}

bool is_builtin(const std::string& name) {
  const auto& names = builtin_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

void Lowerer::claim_name(const std::string& name, const SourceLoc& loc, const char* what) {
  if (is_builtin(name))
    throw EdlError(
        loc, fmt::format("'{}' is a built-in name and cannot be declared as a {}", name, what));
  bool is_operator = edl::is_builtin_operator(name);
  for (const auto& d : s.thorn->derivatives) is_operator = is_operator || d.name == name;
  if (is_operator)
    throw EdlError(loc, fmt::format("'{}' is a derivative operator and cannot be declared as a "
                                    "{}",
                                    name, what));
  calc::Function fn;
  if (function_from_name(name, fn))
    throw EdlError(loc,
                   fmt::format("'{}' is a function and cannot be declared as a {}", name, what));
  if (auto c = s.component_of.find(name); c != s.component_of.end())
    throw EdlError(
        loc, fmt::format("'{}' is already the name of a component of '{}'", name, c->second),
        {{s.tensors.at(c->second).loc, fmt::format("'{}' is declared here", c->second)}});
  auto [it, inserted] = s.declared_at.emplace(name, loc);
  if (!inserted) {
    // Report at the later of the two, whatever order the sections are processed in.
    bool earlier = it->second.line < loc.line ||
                   (it->second.line == loc.line && it->second.column < loc.column);
    const SourceLoc& first = earlier ? it->second : loc;
    const SourceLoc& second = earlier ? loc : it->second;
    throw EdlError(second, fmt::format("'{}' is declared twice", name),
                   {{first, "first declared here"}});
  }
}

std::vector<std::string> Lowerer::components(const std::string& name, int rank) {
  std::vector<std::string> out{name};
  for (int r = 0; r < rank; ++r) {
    std::vector<std::string> next;
    for (const auto& prefix : out)
      for (int c = 1; c <= 3; ++c) next.push_back(prefix + std::to_string(c));
    out = std::move(next);
  }
  return out;
}

// "did you mean": a declared name close in spelling (a grid function, one of its components, a
// temporary, a parameter) wins over a built-in one (`V` suggests the declared `V2`, not `x`).
EdlError Lowerer::undeclared(const std::string& name, const SourceLoc& loc, const char* what,
                             bool grid_functions_only) const {
  std::vector<std::string> declared;
  if (!grid_functions_only)
    for (const auto& [n, i] : s.parameter_index) declared.push_back(n);
  for (const auto& [n, info] : s.tensors) {
    if (grid_functions_only && info.kind != TensorSymbol::Kind::Variable) continue;
    declared.push_back(n);
    for (const std::string& c : components(n, info.rank))
      if (c != n) declared.push_back(c);
  }
  std::vector<edl::Note> notes = edl::did_you_mean(name, declared);
  if (notes.empty() && !grid_functions_only) notes = edl::did_you_mean(name, builtin_names());
  return EdlError(loc, fmt::format("undeclared name '{}': expected {}", name, what),
                  std::move(notes));
}

namespace {

// `inherit THORN`: the variables of a known Einstein Toolkit base thorn, or those the thorn's
// interface.ccl declares where one is found beside the script or on SAGUARO_THORN_PATH
// (ccl/interface_ccl.cpp), declared where the thorn is named (its param.ccl's visible
// parameters are kept for pass `parameters`); a thorn neither built in nor found
// is an error that lists the known ones and the places looked in.
template <typename Declare>
void declare_inherited(LoweringState& state, Declare& declare) {
  const edl::Thorn& thorn = *state.thorn;
  for (std::size_t k = 0; k < thorn.inherits.size(); ++k) {
    const SourceLoc loc = k < thorn.inherit_locs.size() ? thorn.inherit_locs[k] : thorn.loc;
    const std::string edl_file = loc.file != nullptr ? loc.file->name() : std::string();
    const edl::InheritedThorn* known = edl::find_inherited_thorn(thorn.inherits[k]);
    std::optional<edl::InheritedThorn> read;
    if (known == nullptr) {
      try {
        read = edl::find_ccl_thorn(edl_file, thorn.inherits[k]);
      } catch (const EdlError& e) { // the interface.ccl's error, and which `inherit` read it
        std::vector<support::Diagnostic> d = e.diagnostics();
        d.front().notes.push_back({loc, fmt::format("read for 'inherit {}'", thorn.inherits[k])});
        throw EdlError(std::move(d));
      }
      if (read) known = &*read;
      if (read)
        for (const edl::InheritedParameter& p : read->parameters)
          state.inherited_parameters.emplace_back(p, loc);
    }
    if (known == nullptr) {
      std::vector<std::string> names;
      for (const auto& t : edl::inherited_thorns()) names.push_back(t.name);
      std::vector<edl::Note> notes = edl::did_you_mean(thorn.inherits[k], names);
      std::string places;
      for (const std::string& p : edl::interface_ccl_places(edl_file, thorn.inherits[k]))
        places += (places.empty() ? "" : ", ") + p;
      notes.push_back({{},
                       fmt::format("no interface.ccl of '{}' was found; looked for {}",
                                   thorn.inherits[k], places)});
      notes.push_back({{},
                       "put the thorn's folder (with its interface.ccl) beside the script or "
                       "name its arrangement in SAGUARO_THORN_PATH (folders separated by ':'), "
                       "or declare the variables this thorn reads from it in 'begin variables' "
                       "instead of inheriting it"});
      throw EdlError(loc,
                     fmt::format("unknown inherited thorn '{}': Saguaro has the variables of {} "
                                 "built in, not those of '{}', and found no interface.ccl of it",
                                 thorn.inherits[k], edl::inherited_thorn_names(),
                                 thorn.inherits[k]),
                     std::move(notes));
    }
    for (const edl::InheritedVariable& v : known->variables) {
      edl::TensorRef ref{v.name, {}, loc};
      if (v.rank == 1) {
        edl::Index index;
        index.upper = true;
        index.symbol = "i";
        index.loc = loc;
        ref.indices.push_back(index);
      }
      if (auto it = state.declared_at.find(v.name); it != state.declared_at.end())
        throw EdlError(it->second,
                       fmt::format("'{}' is a variable of the inherited thorn {} (group {}) and "
                                   "cannot be declared again",
                                   v.name, known->name, v.group),
                       {{loc, fmt::format("{} is inherited here", known->name)}});
      declare(ref, TensorSymbol::Kind::Variable);
    }
  }
}

} // namespace

void resolve_names(LoweringState& state) {
  Lowerer lowerer(state);
  Program& program = state.program;
  auto declare = [&](const edl::TensorRef& ref, TensorSymbol::Kind kind) {
    lowerer.claim_name(ref.name, ref.loc,
                       kind == TensorSymbol::Kind::Variable ? "grid function" : "temporary");
    std::set<std::string> symbols;
    for (const Index& index : ref.indices)
      if (!symbols.insert(index.symbol).second)
        throw EdlError(index.loc, fmt::format("index '{}' repeats in the declaration of '{}'; "
                                              "each index of a tensor needs its own letter",
                                              index.symbol, ref.name));
    state.tensors[ref.name] = TensorSymbol{kind, static_cast<int>(ref.indices.size()), ref.loc};
    for (const std::string& component : Lowerer::components(ref.name, int(ref.indices.size()))) {
      if (component != ref.name) {
        if (auto other = state.declared_at.find(component); other != state.declared_at.end())
          throw EdlError(ref.loc,
                         fmt::format("component '{}' of '{}' has the name of another "
                                     "declaration",
                                     component, ref.name),
                         {{other->second, fmt::format("'{}' is declared here", component)}});
        auto [it, inserted] = state.component_of.emplace(component, ref.name);
        if (!inserted)
          throw EdlError(ref.loc,
                         fmt::format("component '{}' of '{}' is also a component of "
                                     "'{}'",
                                     component, ref.name, it->second),
                         {{state.tensors.at(it->second).loc, "declared here"}});
      }
      if (kind == TensorSymbol::Kind::Variable) program.variables.push_back(component);
    }
    if (kind == TensorSymbol::Kind::Variable && !ref.indices.empty())
      program.tensors[ref.name] = Lowerer::components(ref.name, int(ref.indices.size()));
  };
  declare_inherited(state, declare);
  for (const auto& ref : state.thorn->variables) declare(ref, TensorSymbol::Kind::Variable);
  for (const auto& ref : state.thorn->temporaries) declare(ref, TensorSymbol::Kind::Temporary);
  // A group's member not declared in `variables` is declared by the group (Kranc's groups
  // declare their variables); one that is is checked against its declaration (indices pass).
  for (const auto& group : state.thorn->groups)
    for (const auto& [ref, description] : group.members)
      if (!state.declared_at.count(ref.name) && !state.component_of.count(ref.name))
        declare(ref, TensorSymbol::Kind::Variable);
}

} // namespace saguaro::calc
