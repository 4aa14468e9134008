// Helpers shared by the unit tests: where the source tree and the `saguaro` executable are,
// reading the example thorns, running the CLI, lowering EDL, looking things up in a lowered
// Calculation and evaluating it at a point. Everything is `inline`, so a test file that does not
// use a helper pays nothing.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <system_error>
#include <vector>

#include "calc/interpreter.hpp"
#include "calc/lower.hpp"
#include "edl/parser.hpp"

namespace saguaro::test {

// ---- where things are ---------------------------------------------------------------------------

// The source tree: $SAGUARO_SOURCE_DIR when set and not empty, else the one the tests were built
// from.
inline std::string source_dir() {
  if (const char* env = std::getenv("SAGUARO_SOURCE_DIR"); env != nullptr && *env != '\0')
    return env;
  return SAGUARO_SOURCE_DIR;
}

// The `saguaro` executable: $SAGUARO_EXE when set and not empty, else the one built with the tests.
inline std::string saguaro_exe() {
  if (const char* env = std::getenv("SAGUARO_EXE"); env != nullptr && *env != '\0') return env;
  return SAGUARO_EXE;
}

// The whole file, byte for byte; "" when it cannot be read.
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The example thorns, par/*.edl (and, when `recursive`, par/*/.../*.edl), sorted.
inline std::vector<std::filesystem::path> example_files(bool recursive = true) {
  namespace fs = std::filesystem;
  const fs::path par = fs::path(source_dir()) / "par";
  std::vector<fs::path> files;
  auto take = [&files](const fs::directory_entry& entry) {
    if (entry.is_regular_file() && entry.path().extension() == ".edl")
      files.push_back(entry.path());
  };
  if (recursive)
    for (const auto& entry : fs::recursive_directory_iterator(par)) take(entry);
  else
    for (const auto& entry : fs::directory_iterator(par)) take(entry);
  std::sort(files.begin(), files.end());
  return files;
}

// ---- running the CLI ----------------------------------------------------------------------------

// A fresh directory under the system's temporary one, removed with everything in it at the end
// of the scope; `path` is empty when it could not be made.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "saguaro_test_XXXXXX").string();
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (mkdtemp(buffer.data()) != nullptr) path = buffer.data();
  }
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

struct CliRun {
  int status = -1; // the exit status; -1 when it did not exit normally
  std::string out, err;
};

// Runs `saguaro ARGS` (ARGS as the shell reads them) with no input, capturing stdout and stderr.
inline CliRun run_saguaro(const std::string& args) {
  CliRun run;
  TempDir dir;
  if (dir.path.empty()) {
    run.err = "cannot make a temporary directory";
    return run;
  }
  std::filesystem::path out = dir.path / "stdout.txt", err = dir.path / "stderr.txt";
  std::string command = "\"" + saguaro_exe() + "\" " + args + " >\"" + out.string() + "\" 2>\"" +
                        err.string() + "\" </dev/null";
  int raw = std::system(command.c_str());
  if (raw != -1 && WIFEXITED(raw)) run.status = WEXITSTATUS(raw);
  run.out = read_file(out);
  run.err = read_file(err);
  return run;
}

// ---- lowering -----------------------------------------------------------------------------------

inline calc::Program lower_text(const std::string& text, int fd_order = 4) {
  return calc::lower(edl::parse_string(text), calc::LowerOptions{fd_order});
}

// The parameters' default values, in Program::parameters order.
inline std::vector<double> default_parameters(const calc::Program& p) {
  std::vector<double> values;
  for (const auto& par : p.parameters) values.push_back(par.default_value);
  return values;
}

// `relative` is a path below the source tree, such as "par/wave.edl".
inline calc::Program lower_file(const std::string& relative, int fd_order = 4) {
  return calc::lower(edl::parse_file(source_dir() + "/" + relative), calc::LowerOptions{fd_order});
}

// `body` inside `begin thorn T` ... `end thorn`.
inline std::string thorn(const std::string& body) {
  return "begin thorn T\n" + body + "\nend thorn\n";
}

// A thorn with one calculation `c` of the given equations over the given variables.
inline std::string simple(const std::string& variables, const std::string& equations,
                          const std::string& extra = "") {
  return thorn(extra + "\nbegin variables\n" + variables + "\nend variables\n" +
               "begin calculation c\n" + equations + "\nend calculation\n");
}

// User-defined difference operators (and the parameter one of them reads), as `extra` of simple.
inline constexpr const char* kOperators = R"(
  begin parameters
    eps : real "dissipation", default: 0.5
  end parameters
  begin derivatives
    Dplus u_i  = (u_(i+1) - u_(i)) / h
    Dcen  u_i  = (u_(i+1) - u_(i-1)) / (2*h)
    Dxx   u_ii = (u_(i+1) - 2 u_(i) + u_(i-1)) / h**2
    Dxy   u_ij = (u_(i+1,j+1) - u_(i+1,j-1) - u_(i-1,j+1) + u_(i-1,j-1)) / (4 h_i h_j)
    Dskew u_ij = (u_(i+1,j-1) - u_(i)) / h_i
    Ddiss u_i  = eps * (u_(i+1) - 2 u_(i) + u_(i-1)) / h
    Dsp   u_i  = u_(i+1)
    Dsm   u_i  = u_(i-1)
  end derivatives
)";

// ---- looking into a lowered calculation ---------------------------------------------------------

inline const calc::Calculation& calc_named(const calc::Program& p, const std::string& name) {
  for (const auto& c : p.calculations)
    if (c.name == name) return c;
  throw std::runtime_error("no calculation " + name);
}

// The stencil at which `c` reads the grid function `gf`; null when it does not read it.
inline const calc::InputStencil* input_of(const calc::Calculation& c, const std::string& gf) {
  int index = c.find_grid_function(gf);
  for (const auto& in : c.inputs)
    if (in.grid_function == index) return &in;
  return nullptr;
}

// The offsets at which `c` reads `gf`; empty when it does not read it.
inline std::set<calc::Offset> offsets_of(const calc::Calculation& c, const std::string& gf) {
  const calc::InputStencil* in = input_of(c, gf);
  if (in == nullptr) return {};
  return {in->offsets.begin(), in->offsets.end()};
}

// The names of the grid functions `c` writes, in the order of Calculation::outputs.
inline std::vector<std::string> output_names(const calc::Calculation& c) {
  std::vector<std::string> out;
  for (int gf : c.outputs) out.push_back(c.grid_functions[gf].name);
  return out;
}

// The value stored to `gf` (the first store of it, in stage order).
inline calc::NodeId store_of(const calc::Calculation& c, const std::string& gf) {
  int index = c.find_grid_function(gf);
  for (const auto& stage : c.stages)
    for (const auto& s : stage.stores)
      if (s.grid_function == index) return s.value;
  throw std::runtime_error("no store of " + gf + " in " + c.name);
}

// Grid-function names (and offsets) loaded by the DAG below `root`.
inline std::map<std::string, std::set<calc::Offset>> loads_below(const calc::Calculation& c,
                                                                 calc::NodeId root) {
  std::map<std::string, std::set<calc::Offset>> out;
  for (calc::NodeId id : c.dag.reachable({root})) {
    const calc::Node& n = c.dag.node(id);
    if (n.op == calc::Op::Load) out[c.grid_functions[n.index].name].insert(n.offset);
  }
  return out;
}

// ---- evaluating a lowered calculation at a point -----------------------------------------------

using Field = std::function<double(double, double, double)>;

// One point of evaluation: fields by grid-function name, evaluated at the shifted coordinates.
struct Point {
  std::map<std::string, Field> fields;
  std::array<double, 3> x{0.3, -0.7, 1.1};
  std::array<double, 3> h{0.1, 0.1, 0.1};
  double t = 0.0;
  std::vector<double> parameters; // empty: the program's defaults
};

inline double eval_node(const calc::Program& prog, const calc::Calculation& c, calc::NodeId id,
                        const Point& pt) {
  calc::Interpreter interp(c);
  calc::PointInputs in;
  in.coordinate = pt.x;
  in.spacing = pt.h;
  in.time = pt.t;
  in.parameters = pt.parameters.empty() ? default_parameters(prog) : pt.parameters;
  in.load = [&](int gf, const calc::Offset& o) {
    const std::string& name = c.grid_functions.at(gf).name;
    auto it = pt.fields.find(name);
    if (it == pt.fields.end()) throw std::runtime_error("no field for " + name);
    return it->second(pt.x[0] + o[0] * pt.h[0], pt.x[1] + o[1] * pt.h[1], pt.x[2] + o[2] * pt.h[2]);
  };
  return interp.evaluate_node(id, in);
}

inline double eval(const calc::Program& prog, const calc::Calculation& c, const std::string& gf,
                   const Point& pt) {
  return eval_node(prog, c, store_of(c, gf), pt);
}

inline Field constant_field(double v) {
  return [v](double, double, double) { return v; };
}

inline double rel_err(double a, double b) {
  return std::fabs(a - b) / std::max(1.0, std::fabs(b));
}

} // namespace saguaro::test
