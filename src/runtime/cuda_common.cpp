// The parts of the CUDA backend's public face that need no CUDA, compiled in every build: the
// ptxas log parser and DeviceInfo::arch().
#include "runtime/cuda.hpp"

#include "model/model.hpp"

#include <cctype>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <sstream>

namespace saguaro::runtime::cuda {
namespace {

// Leading integer of `s` after position `pos` (skipping blanks); -1 when there is none.
long number_at(const std::string& s, std::size_t pos) {
  while (pos < s.size() && std::isspace(static_cast<unsigned char>(s[pos]))) ++pos;
  if (pos >= s.size() || !std::isdigit(static_cast<unsigned char>(s[pos]))) return -1;
  return std::strtol(s.c_str() + pos, nullptr, 10);
}

// The integer right before `word` in `piece` ("2048 bytes smem" -> 2048 for "bytes smem").
long number_before(const std::string& piece, const std::string& word) {
  std::size_t at = piece.find(word);
  if (at == std::string::npos) return -1;
  std::size_t end = at;
  while (end > 0 && std::isspace(static_cast<unsigned char>(piece[end - 1]))) --end;
  std::size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(piece[begin - 1]))) --begin;
  if (begin == end) return -1;
  return std::strtol(piece.c_str() + begin, nullptr, 10);
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

} // namespace

codegen::CudaGeometry geometry_of(const KernelArgs& args) {
  codegen::CudaGeometry g{};
  for (int a = 0; a < 3; ++a) {
    g.alloc[a] = args.alloc[a];
    g.lo[a] = args.lo[a];
    g.hi[a] = args.hi[a];
    g.index_offset[a] = args.index_offset[a];
    g.origin[a] = args.origin[a];
    g.spacing[a] = args.spacing[a];
  }
  g.pitch = args.row_pitch();
  g.time = args.time;
  return g;
}

std::string DeviceInfo::arch() const {
  return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
}

std::map<std::string, PtxasReport> parse_ptxas_log(const std::string& log) {
  std::map<std::string, PtxasReport> reports;
  PtxasReport* current = nullptr;
  std::istringstream in(log);
  std::string line;
  const std::string entry = "Compiling entry function '", properties = "Function properties for ";
  while (std::getline(in, line)) {
    if (std::size_t at = line.find(entry); at != std::string::npos) {
      std::size_t begin = at + entry.size(), end = line.find('\'', begin);
      if (end == std::string::npos) continue;
      current = &reports[line.substr(begin, end - begin)];
      continue;
    }
    if (std::size_t at = line.find(properties); at != std::string::npos) {
      std::string name = trim(line.substr(at + properties.size()));
      current = name.empty() ? nullptr : &reports[name];
      continue;
    }
    if (current == nullptr) continue;
    if (line.find("bytes stack frame") != std::string::npos) {
      for (const std::string& piece : split_commas(line)) {
        if (long v = number_before(piece, "bytes stack frame"); v >= 0)
          current->stack_bytes = int(v);
        if (long v = number_before(piece, "bytes spill stores"); v >= 0)
          current->spill_stores = int(v);
        if (long v = number_before(piece, "bytes spill loads"); v >= 0)
          current->spill_loads = int(v);
      }
      continue;
    }
    if (std::size_t at = line.find("Used ");
        at != std::string::npos && line.find("registers", at) != std::string::npos) {
      long regs = number_at(line, at + 5);
      if (regs >= 0) current->registers = int(regs);
      current->constant_bytes = 0;
      for (const std::string& piece : split_commas(line.substr(at))) {
        if (long v = number_before(piece, "barriers"); v >= 0) current->barriers = int(v);
        if (long v = number_before(piece, "bytes smem"); v >= 0) current->shared_bytes = int(v);
        if (long v = number_before(piece, "bytes cmem"); v >= 0) current->constant_bytes += int(v);
      }
    }
  }
  return reports;
}

namespace {

// The kernels of `module` (not those whose mapping sets blocks per SM) for which `chosen`
// holds, given the register estimate (model::estimated_registers).
std::set<std::string>
by_register_estimate(const calc::Program& program, const std::vector<calc::Mapping>& mappings,
                     const codegen::CudaModule& module,
                     const std::function<bool(const codegen::CudaKernel&, double)>& chosen) {
  std::set<std::string> out;
  std::map<int, std::vector<model::KernelProfile>> profiles; // per calculation, on demand
  for (const codegen::CudaKernel& k : module.kernels) {
    if (k.block.min_blocks > 0) continue; // its mapping asks for a cap of its own
    const calc::Calculation& calc = program.calculations[std::size_t(k.calculation)];
    auto [at, fresh] = profiles.try_emplace(k.calculation);
    if (fresh)
      at->second =
          model::profile_mapping(calc, mappings.empty() ? calc::default_mapping(calc)
                                                        : mappings[std::size_t(k.calculation)]);
    if (chosen(k, model::estimated_registers(at->second[std::size_t(k.kernel)])))
      out.insert(k.name);
  }
  return out;
}

} // namespace

std::set<std::string> one_block_per_sm(const calc::Program& program,
                                       const std::vector<calc::Mapping>& mappings,
                                       const codegen::CudaModule& module) {
  // 64K 32-bit registers per SM on every part from sm_70 to sm_90.
  constexpr double kRegistersPerSm = 65536;
  return by_register_estimate(
      program, mappings, module, [](const codegen::CudaKernel& k, double registers) {
        return registers * k.block.threads() > kOneBlockPerSmMargin * kRegistersPerSm / 2;
      });
}

std::set<std::string> grouped_tiles(const calc::Program& program,
                                    const std::vector<calc::Mapping>& mappings,
                                    const codegen::CudaModule& module) {
  return by_register_estimate(program, mappings, module,
                              [](const codegen::CudaKernel&, double registers) {
                                return registers > kMaxRegistersPerThread;
                              });
}

CompiledProgram compile_generated(const calc::Program& program,
                                  const std::vector<calc::Mapping>& mappings,
                                  const std::string& arch, const CompileOptions& options, int only,
                                  const std::optional<calc::ArrayLayout>& layout) {
  CompiledProgram out{codegen::generate_cuda(program, mappings, {}, only, layout), {}};
  if (out.generated.kernels.empty()) return out;
  const std::set<std::string> at_first = one_block_per_sm(program, mappings, out.generated);
  const std::set<std::string> grouped = grouped_tiles(program, mappings, out.generated);
  if (!at_first.empty() || !grouped.empty())
    out.generated = codegen::generate_cuda(program, mappings, {at_first, grouped}, only, layout);
  out.compiled = compile(out.generated.source, arch, options);
  const std::map<std::string, PtxasReport> first = out.compiled.kernels;
  // The kernels that spilled are compiled again in the other form (the whole register file, or
  // ptxas's choice for those that started with it), except those whose mapping asks for blocks
  // per SM: their cap is the candidate (calc::BlockConfig::min_blocks), timed by the finish
  // beside the uncapped one.
  std::set<std::string> capped;
  for (const codegen::CudaKernel& k : out.generated.kernels)
    if (k.block.min_blocks > 0) capped.insert(k.name);
  std::set<std::string> whole = at_first, tried;
  auto flip = [](std::set<std::string>& set, const std::string& name) {
    if (!set.erase(name)) set.insert(name);
  };
  for (const auto& [name, report] : first)
    if (report.spill_stores > 0 && !capped.count(name)) {
      tried.insert(name);
      flip(whole, name);
    }
  if (tried.empty()) return out;
  double seconds = out.compiled.compile_seconds;
  auto recompile = [&](const std::set<std::string>& whole_register_file) {
    out.generated =
        codegen::generate_cuda(program, mappings, {whole_register_file, grouped}, only, layout);
    out.compiled = compile(out.generated.source, arch, options);
    seconds += out.compiled.compile_seconds;
  };
  recompile(whole);
  // ptxas's heuristics are not monotone: a kernel that spills more in the other form (BSSN's
  // constraints in one kernel: 1316 bytes with the whole register file against 1116) goes back
  // to the first.
  std::set<std::string> best = at_first;
  for (const std::string& name : tried)
    if (out.compiled.kernels.at(name).spill_stores < first.at(name).spill_stores) flip(best, name);
  if (best != whole) recompile(best);
  out.compiled.compile_seconds = seconds;
  return out;
}

} // namespace saguaro::runtime::cuda
