#include "edl/inherited.hpp"

#include "support/text.hpp"

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
