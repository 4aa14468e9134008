#include "edl/inherited.hpp"

#include "ccl/literals.hpp"
#include "ccl/param_ccl.hpp"
#include "support/text.hpp"

#include <filesystem>

#include <fmt/format.h>

namespace saguaro::edl {

const std::vector<InheritedThorn>& inherited_thorns() {
  // The names and groups of the thorns' interface.ccl files (Einstein Toolkit, EinsteinBase).
  static const std::vector<InheritedThorn> thorns = {
      {"ADMBase", {{"alp", 0, "lapse"},       {"betax", 0, "shift"},    {"betay", 0, "shift"},
                   {"betaz", 0, "shift"},     {"gxx", 0, "metric"},     {"gxy", 0, "metric"},
                   {"gxz", 0, "metric"},      {"gyy", 0, "metric"},     {"gyz", 0, "metric"},
                   {"gzz", 0, "metric"},      {"kxx", 0, "curv"},       {"kxy", 0, "curv"},
                   {"kxz", 0, "curv"},        {"kyy", 0, "curv"},       {"kyz", 0, "curv"},
                   {"kzz", 0, "curv"},        {"dtalp", 0, "dtlapse"},  {"dtbetax", 0, "dtshift"},
                   {"dtbetay", 0, "dtshift"}, {"dtbetaz", 0, "dtshift"}}},
      {"Grid", {}}, // the coordinates x, y, z: built in
      {"HydroBase",
       {{"rho", 0, "rho"},
        {"press", 0, "press"},
        {"eps", 0, "eps"},
        {"vel", 1, "vel"},
        {"w_lorentz", 0, "w_lorentz"},
        {"Y_e", 0, "Y_e"},
        {"Abar", 0, "Abar"},
        {"temperature", 0, "temperature"},
        {"entropy", 0, "entropy"},
        {"Bvec", 1, "Bvec"},
        {"Avec", 1, "Avec"},
        {"Aphi", 0, "Aphi"}}},
      {"StaticConformal",
       {{"psi", 0, "confac"},
        {"psix", 0, "confac_1derivs"},
        {"psiy", 0, "confac_1derivs"},
        {"psiz", 0, "confac_1derivs"},
        {"psixx", 0, "confac_2derivs"},
        {"psixy", 0, "confac_2derivs"},
        {"psixz", 0, "confac_2derivs"},
        {"psiyy", 0, "confac_2derivs"},
        {"psiyz", 0, "confac_2derivs"},
        {"psizz", 0, "confac_2derivs"}}},
      {"TmunuBase",
       {{"eTtt", 0, "stress_energy_scalar"},
        {"eTtx", 0, "stress_energy_vector"},
        {"eTty", 0, "stress_energy_vector"},
        {"eTtz", 0, "stress_energy_vector"},
        {"eTxx", 0, "stress_energy_tensor"},
        {"eTxy", 0, "stress_energy_tensor"},
        {"eTxz", 0, "stress_energy_tensor"},
        {"eTyy", 0, "stress_energy_tensor"},
        {"eTyz", 0, "stress_energy_tensor"},
        {"eTzz", 0, "stress_energy_tensor"}}},
  };
  return thorns;
}

const InheritedThorn* find_inherited_thorn(std::string_view name) {
  for (const InheritedThorn& thorn : inherited_thorns())
    if (support::lower(thorn.name) == support::lower(name)) return &thorn;
  return nullptr;
}

std::string inherited_thorn_names() {
  std::string out;
  for (const InheritedThorn& thorn : inherited_thorns())
    out += (out.empty() ? "" : ", ") + thorn.name;
  return out;
}

} // namespace saguaro::edl

namespace saguaro::edl {

namespace {

[[noreturn]] void bad_default(const ccl::ParamDecl& p, const char* what) {
  throw support::InputError(p.default_loc,
                            fmt::format("the default '{}' of {} {} is not {}", p.default_text,
                                        ccl::to_string(p.type), p.name, what));
}

// A parameter the inheriting script sees (nullopt: one it does not).
std::optional<InheritedParameter> visible_parameter(const ccl::ParamDecl& p) {
  if (p.access != ccl::ParamAccess::Global && p.access != ccl::ParamAccess::Restricted)
    return std::nullopt;
  if (p.array_size != 0 || p.type == ccl::ParamType::String) return std::nullopt;
  InheritedParameter out;
  out.name = p.name;
  out.description = p.description;
  out.loc = p.loc;
  switch (p.type) {
  case ccl::ParamType::Real: {
    out.type = ParameterType::Real;
    const std::optional<double> v = ccl::parse_real(ccl::trim(p.default_text));
    if (!v) bad_default(p, "a number");
    out.default_value = *v;
    break;
  }
  case ccl::ParamType::Int: {
    out.type = ParameterType::Int;
    const std::optional<long> v = ccl::parse_int(ccl::trim(p.default_text));
    if (!v) bad_default(p, "an integer");
    out.default_value = double(*v);
    break;
  }
  case ccl::ParamType::Boolean: {
    out.type = ParameterType::Boolean;
    const std::optional<bool> v = ccl::parse_bool(p.default_text);
    if (!v) bad_default(p, "a boolean: expected yes, no, true, false, 1 or 0");
    out.default_value = *v ? 1.0 : 0.0;
    break;
  }
  case ccl::ParamType::Keyword:
    out.type = ParameterType::Keyword;
    out.default_keyword = p.default_text;
    for (const ccl::ParamRange& r : p.ranges) {
      out.keyword_values.push_back(r.text);
      if (support::iequals(r.text, p.default_text)) out.default_keyword = r.text;
    }
    break;
  case ccl::ParamType::String: return std::nullopt;
  }
  return out;
}

} // namespace

std::vector<std::string> interface_ccl_places(const std::string& edl_file, std::string_view thorn) {
  return ccl::thorn_file_places(edl_file, thorn, "interface.ccl");
}

std::optional<InheritedThorn> find_ccl_thorn(const std::string& edl_file, std::string_view thorn) {
  const std::optional<std::string> folder = ccl::find_thorn_folder(edl_file, thorn);
  if (!folder) return std::nullopt;
  namespace fs = std::filesystem;
  const fs::path dir(*folder);
  InheritedThorn out;
  out.name = std::string(thorn);
  out.variables =
      ccl::read_interface_ccl(SourceFile::load((dir / "interface.ccl").string()), out.name)
          .variables;
  std::error_code ec;
  if (fs::is_regular_file(dir / "param.ccl", ec))
    for (const ccl::ParamDecl& p :
         ccl::read_param_ccl(SourceFile::load((dir / "param.ccl").string())))
      if (std::optional<InheritedParameter> visible = visible_parameter(p)) {
        visible->thorn = out.name;
        out.parameters.push_back(std::move(*visible));
      }
  return out;
}

} // namespace saguaro::edl
