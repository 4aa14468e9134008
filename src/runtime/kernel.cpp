#include "runtime/kernel.hpp"

#include "runtime/check.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <unistd.h>

namespace saguaro::runtime {

namespace detail {

CallShape call_shape(const calc::Calculation& calc) {
  CallShape shape;
  shape.name = calc.name;
  shape.grid_functions = calc.grid_functions.size();
  std::set<int> used;
  std::vector<calc::NodeId> roots;
  for (const calc::Stage& stage : calc.stages)
    for (const calc::Store& st : stage.stores) {
      used.insert(st.grid_function);
      roots.push_back(st.value);
    }
  for (calc::NodeId id : calc.dag.reachable(roots)) {
    const calc::Node& n = calc.dag.node(id);
    if (n.op == calc::Op::Load) used.insert(n.index);
    if (n.op == calc::Op::Parameter) shape.parameters = std::max(shape.parameters, n.index + 1);
  }
  shape.used_fields.assign(used.begin(), used.end());
  shape.margin = required_margin(calc);
  return shape;
}

bool check_args(const CallShape& shape, const KernelArgs& args) {
  const std::string what = "calculation '" + shape.name + "': ";
  if (args.fields.size() < shape.grid_functions)
    throw std::invalid_argument(what + std::to_string(args.fields.size()) + " fields given, " +
                                std::to_string(shape.grid_functions) + " needed");
  for (int g : shape.used_fields)
    if (args.fields[g] == nullptr)
      throw std::invalid_argument(what + "field " + std::to_string(g) + " is null");
  if (int(args.parameters.size()) < shape.parameters)
    throw std::invalid_argument(what + std::to_string(args.parameters.size()) +
                                " parameters given, " + std::to_string(shape.parameters) +
                                " needed");
  for (int a = 0; a < 3; ++a)
    if (args.alloc[a] < 0) throw std::invalid_argument(what + "negative allocation size");
  if (args.pitch != 0 && args.pitch < args.alloc[0])
    throw std::invalid_argument(what + "row pitch " + std::to_string(args.pitch) + " below the " +
                                std::to_string(args.alloc[0]) + " allocated points along x");
  bool empty = false;
  for (int a = 0; a < 3; ++a) empty = empty || args.hi[a] <= args.lo[a];
  if (empty) return false;
  for (int a = 0; a < 3; ++a)
    if (args.lo[a] - shape.margin.lo[a] < 0 || args.hi[a] + shape.margin.hi[a] > args.alloc[a])
      throw std::invalid_argument(what + "the region [" + std::to_string(args.lo[a]) + ", " +
                                  std::to_string(args.hi[a]) + ") along axis " + std::to_string(a) +
                                  " with the margin (" + std::to_string(shape.margin.lo[a]) + ", " +
                                  std::to_string(shape.margin.hi[a]) +
                                  ") the calculation reads does not fit the " +
                                  std::to_string(args.alloc[a]) + " allocated points");
  return true;
}

} // namespace detail

void CompiledCalculation::run_boxes(const KernelArgs& args,
                                    const std::vector<calc::Region>& boxes) const {
  KernelArgs box_args = args;
  for (const calc::Region& box : boxes) {
    if (box.empty()) continue;
    box_args.lo = box.lo;
    box_args.hi = box.hi;
    run(box_args);
  }
}

bool streams_stores(StreamingStores policy, double array_bytes, double cache_bytes) {
  switch (policy) {
  case StreamingStores::always: return true;
  case StreamingStores::never: return false;
  default: return array_bytes > cache_bytes;
  }
}

namespace {

// A sysfs cache size ("32768K", "1M") in bytes; 0 where unreadable.
double cache_size_bytes(const std::string& path) {
  std::ifstream in(path);
  double size = 0;
  std::string unit;
  if (!(in >> size)) return 0;
  in >> unit;
  return size * (unit == "K" ? 1024.0 : unit == "M" ? 1024.0 * 1024 : 1.0);
}

} // namespace

double host_last_level_cache_bytes() {
  // sysfs lists every CPU's caches with the CPUs that share each: the host's last-level caches
  // are the distinct instances of the highest level (chiplets' L3s, sockets, or a virtual
  // machine's share), which sysconf does not tell apart (it may give the whole socket's).
  namespace fs = std::filesystem;
  int level = 0;
  std::map<std::string, double> instances; // shared_cpu_list -> size, at `level`
  std::error_code ec;
  for (const fs::directory_entry& cpu : fs::directory_iterator("/sys/devices/system/cpu", ec)) {
    const std::string name = cpu.path().filename().string();
    if (name.size() < 4 || name.compare(0, 3, "cpu") != 0 ||
        name.find_first_not_of("0123456789", 3) != std::string::npos)
      continue;
    for (int index = 0; index < 8; ++index) {
      const fs::path dir = cpu.path() / "cache" / ("index" + std::to_string(index));
      std::ifstream level_file(dir / "level"), shared_file(dir / "shared_cpu_list");
      int l = 0;
      std::string shared;
      const double size = cache_size_bytes((dir / "size").string());
      if (!(level_file >> l) || !(shared_file >> shared) || size <= 0 || l < level) continue;
      if (l > level) instances.clear();
      level = l;
      instances[shared] = size;
    }
  }
  double total = 0;
  for (const auto& [shared, size] : instances) total += size;
  if (total > 0) return total;
  for (int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
    const long bytes = sysconf(name);
    if (bytes > 0) return double(bytes);
  }
  return 32.0 * 1024 * 1024;
}

} // namespace saguaro::runtime
