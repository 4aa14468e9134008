// Mapping files (YAML, names only) and the on-disk mapping cache.
#include "mapper/mapping_file.hpp"

#include "calc/strategy.hpp"
#include "support/files.hpp"
#include "support/hash.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

namespace saguaro::mapper {

namespace fs = std::filesystem;

namespace {

// Bumped whenever the cache's file layout or key changes, so old files are simply not found.
constexpr int kCacheFormat = 1;
constexpr const char* kCacheWho = "saguaro mapping cache";

// --- diagnostics --------------------------------------------------------------------------

using File = std::shared_ptr<const support::SourceFile>;

// How many characters the caret underlines: the whole scalar when the source shows it there.
int span(const File& file, const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  if (!node.IsScalar() || m.is_null() || m.line < 0) return 1;
  const std::string_view line = file->line(m.line + 1);
  const std::string& s = node.Scalar();
  // yaml-cpp's columns need not be our line's (it counts lines its own way: control bytes,
  // CR): a mark past the line's end underlines one character.
  if (s.empty() || m.column < 0 || static_cast<std::size_t>(m.column) > line.size() ||
      line.substr(static_cast<std::size_t>(m.column), s.size()) != s)
    return 1;
  return static_cast<int>(s.size());
}

support::SourceLoc loc_of(const File& file, const YAML::Mark& mark, int length = 1) {
  return support::loc_from_zero_based(file, mark.is_null() ? -1 : mark.line, mark.column, length);
}

[[noreturn]] void fail(const File& file, const YAML::Node& node, const std::string& message,
                       const std::vector<support::Note>& notes = {}) {
  throw MappingFileError(loc_of(file, node.Mark(), span(file, node)), message, notes);
}

std::string suggestion(const std::string& name, const std::vector<std::string>& known) {
  const std::string near = support::nearest_name(name, known);
  return near.empty() ? "" : "; did you mean '" + near + "'?";
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

[[noreturn]] void unknown_key(const File& file, const YAML::Node& key, const std::string& where,
                              const std::vector<std::string>& known) {
  fail(file, key,
       "unknown key '" + key.Scalar() + "' " + where + suggestion(key.Scalar(), known) +
           " (expected " + join(known) + ")");
}

std::string scalar(const File& file, const YAML::Node& node, const std::string& what) {
  if (!node.IsScalar()) fail(file, node, what + " must be a single value");
  return node.Scalar();
}

long integer(const File& file, const YAML::Node& node, const std::string& what) {
  const std::string text = scalar(file, node, what);
  try {
    std::size_t used = 0;
    const long v = std::stol(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  fail(file, node, what + " must be an integer, not '" + text + "'");
}

double number(const File& file, const YAML::Node& node, const std::string& what) {
  const std::string text = scalar(file, node, what);
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  fail(file, node, what + " must be a number, not '" + text + "'");
}

// A list, or one value standing for a list of one (`stores: phirhs`).
std::vector<YAML::Node> items(const File& file, const YAML::Node& node, const std::string& what) {
  std::vector<YAML::Node> out;
  if (node.IsScalar())
    out.push_back(node);
  else if (node.IsSequence())
    for (const YAML::Node& n : node) out.push_back(n);
  else if (!node.IsNull())
    fail(file, node, what + " is a list, e.g. [a, b]");
  return out;
}

std::vector<std::string> grid_function_names(const calc::Calculation& c) {
  std::vector<std::string> names;
  for (const calc::GridFunctionRef& g : c.grid_functions) names.push_back(g.name);
  return names;
}

// --- parsing one calculation --------------------------------------------------------------

struct Where {
  int kernel = 0;
  YAML::Mark mark;
};

calc::KernelMapping parse_kernel(const File& file, const calc::Calculation& c, const YAML::Node& k,
                                 int index, std::map<std::pair<int, int>, Where>& made) {
  if (!k.IsMap()) fail(file, k, "a kernel is a map: stage, stores, temporaries, block, buffering");
  static const std::vector<std::string> keys = {"stage", "stores", "temporaries", "block",
                                                "buffering"};
  std::map<std::string, YAML::Node> given;
  for (const auto& kv : k) {
    const std::string key = kv.first.Scalar();
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      unknown_key(file, kv.first, "in a kernel", keys);
    if (given.count(key)) fail(file, kv.first, "'" + key + "' given twice in one kernel");
    given[key] = kv.second;
  }
  calc::KernelMapping km;
  const int stages = static_cast<int>(c.stages.size());
  // The stage first: the stores are looked up in it.
  if (given.count("stage")) {
    const long s = integer(file, given["stage"], "stage");
    if (s < 0 || s >= stages)
      fail(file, given["stage"],
           fmt::format("stage {} does not exist: calculation '{}' has {} stage{} (0{})", s, c.name,
                       stages, stages == 1 ? "" : "s",
                       stages > 1 ? fmt::format("..{}", stages - 1) : std::string()));
    km.stage = static_cast<int>(s);
  }
  const calc::Stage& stage = c.stages[static_cast<std::size_t>(km.stage)];
  const std::vector<std::string> names = grid_function_names(c);
  auto stored_names = [&](int s) {
    std::vector<std::string> out;
    for (const calc::Store& st : c.stages[static_cast<std::size_t>(s)].stores)
      out.push_back(c.grid_functions[static_cast<std::size_t>(st.grid_function)].name);
    return out;
  };

  if (!given.count("stores"))
    fail(file, k,
         "a kernel needs 'stores': the grid functions it stores, e.g. stores: [" +
             join(stored_names(km.stage)) + "]");
  for (const YAML::Node& n : items(file, given["stores"], "stores")) {
    const std::string name = scalar(file, n, "a store");
    const int g = c.find_grid_function(name);
    if (g < 0)
      fail(file, n,
           "unknown grid function '" + name + "' in calculation '" + c.name + "'" +
               suggestion(name, names) + " (it stores " + join(stored_names(km.stage)) + ")");
    int store = -1;
    for (std::size_t i = 0; i < stage.stores.size(); ++i)
      if (stage.stores[i].grid_function == g) store = static_cast<int>(i);
    if (store < 0) {
      std::string elsewhere;
      for (int s = 0; s < stages; ++s)
        for (const calc::Store& st : c.stages[static_cast<std::size_t>(s)].stores)
          if (st.grid_function == g && elsewhere.empty())
            elsewhere = fmt::format("; stage {} does", s);
      fail(file, n,
           fmt::format("stage {} of calculation '{}' does not store '{}'{} (stage {} stores {})",
                       km.stage, c.name, name, elsewhere, km.stage, join(stored_names(km.stage))));
    }
    auto [it, fresh] = made.try_emplace({km.stage, store}, Where{index, n.Mark()});
    if (!fresh)
      fail(
          file, n,
          fmt::format("'{}' is stored twice: kernel {} already stores it", name, it->second.kernel),
          {support::Note{loc_of(file, it->second.mark, static_cast<int>(name.size())),
                         "first stored here"}});
    km.stores.push_back(store);
  }

  if (given.count("temporaries"))
    for (const YAML::Node& n : items(file, given["temporaries"], "temporaries")) {
      const long t = integer(file, n, "a temporary (a DAG node id)");
      if (t < 0 || static_cast<std::size_t>(t) >= c.dag.size())
        fail(file, n,
             fmt::format("temporary node {} does not exist: calculation '{}' has nodes 0..{}", t,
                         c.name, c.dag.size() - 1));
      km.temporaries.push_back(static_cast<calc::NodeId>(t));
    }

  if (given.count("block")) {
    const YAML::Node& b = given["block"];
    try {
      km.block = calc::parse_block_config(scalar(file, b, "block"));
    } catch (const calc::MappingError& e) {
      fail(file, b, e.what());
    }
  }

  if (given.count("buffering")) {
    const YAML::Node& buffering = given["buffering"];
    if (!buffering.IsMap() && !buffering.IsNull())
      fail(file, buffering, "buffering is a map of grid function to strategy, e.g. {phi: c}");
    if (buffering.IsMap())
      for (const auto& kv : buffering) {
        const std::string name = scalar(file, kv.first, "a grid function");
        const int g = c.find_grid_function(name);
        if (g < 0)
          fail(file, kv.first,
               "unknown grid function '" + name + "' in calculation '" + c.name + "'" +
                   suggestion(name, names));
        const std::string word = scalar(file, kv.second, "a buffering strategy");
        calc::Buffering b{};
        if (word.size() != 1 || !calc::buffering_from_letter(word[0], b)) {
          std::string expected;
          for (const calc::Strategy* x : calc::strategies())
            expected += fmt::format("{}{} ({})", expected.empty() ? "" : ", ", x->letter, x->name);
          fail(file, kv.second,
               "unknown buffering strategy '" + word + "' for " + name + ": expected " + expected);
        }
        if (!km.buffering.emplace(g, b).second)
          fail(file, kv.first, "buffering of '" + name + "' given twice");
      }
  }
  return km;
}

// "mapping of calculation 'x', kernel 3: ..." -> 3; -1 when the message names no kernel.
int kernel_named(const std::string& message) {
  const std::size_t at = message.find("', kernel ");
  if (at == std::string::npos) return -1;
  std::size_t i = at + 10;
  int k = 0;
  bool digits = false;
  while (i < message.size() && std::isdigit(static_cast<unsigned char>(message[i]))) {
    k = k * 10 + (message[i++] - '0');
    digits = true;
  }
  return digits ? k : -1;
}

MappingFileEntry parse_calculation(const File& file, const calc::Calculation& c,
                                   const YAML::Node& key, const YAML::Node& body,
                                   std::vector<std::string>& warnings) {
  static const std::vector<std::string> keys = {"hash", "predicted_seconds", "kernels"};
  if (!body.IsMap())
    fail(file, body.IsNull() ? key : body,
         "calculation '" + c.name + "' needs a map: hash, predicted_seconds, kernels");
  MappingFileEntry entry;
  entry.calculation = c.name;
  YAML::Node kernels, hash;
  for (const auto& kv : body) {
    const std::string k = kv.first.Scalar();
    if (k == "hash") {
      hash = kv.second;
      entry.hash = scalar(file, kv.second, "hash");
    } else if (k == "predicted_seconds")
      entry.predicted_seconds = number(file, kv.second, "predicted_seconds");
    else if (k == "kernels")
      kernels = kv.second;
    else
      unknown_key(file, kv.first, "in calculation '" + c.name + "'", keys);
  }
  if (!kernels) fail(file, key, "calculation '" + c.name + "' needs 'kernels': a list of kernels");
  if (!kernels.IsSequence())
    fail(file, kernels, "kernels is a list, each item a map: - stores: [...]");
  std::vector<YAML::Mark> marks;
  std::map<std::pair<int, int>, Where> made;
  for (const YAML::Node& k : kernels) {
    entry.mapping.kernels.push_back(parse_kernel(file, c, k, static_cast<int>(marks.size()), made));
    marks.push_back(k.Mark());
  }
  try {
    calc::plan_kernels(c, entry.mapping);
  } catch (const calc::MappingError& e) {
    std::vector<support::Note> notes;
    const int k = kernel_named(e.what());
    if (k >= 0 && k < static_cast<int>(marks.size()))
      notes.push_back(
          {loc_of(file, marks[static_cast<std::size_t>(k)]), fmt::format("kernel {} is here", k)});
    fail(file, key, e.what(), notes);
  }
  if (!entry.hash.empty()) {
    const std::string now = calculation_hash(c);
    if (entry.hash != now)
      warnings.push_back(support::render_diagnostic(
          loc_of(file, hash.Mark(), span(file, hash)), "warning",
          fmt::format("calculation '{}' has changed since this mapping was written (hash {}, now "
                      "{}); the mapping still fits it",
                      c.name, entry.hash, now)));
  }
  return entry;
}

// A double-quoted YAML scalar.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

std::string cache_dir_default() {
  return (fs::path(support::default_cache_dir()) / "mappings").string();
}

} // namespace

// --- hashes -------------------------------------------------------------------------------

std::string calculation_hash(const calc::Calculation& c) {
  // Text, then FNV: integers in decimal, doubles as their IEEE bits, so the bytes are the same
  // on every machine and build.
  std::string t = "saguaro calculation v1\n";
  auto bits = [](double v) { return std::bit_cast<std::uint64_t>(v); };
  for (const calc::GridFunctionRef& g : c.grid_functions)
    t += fmt::format("g {} {} {}\n", g.name, calc::to_string(g.role), g.evolves);
  for (std::size_t id = 0; id < c.dag.size(); ++id) {
    const calc::Node& n = c.dag.node(static_cast<calc::NodeId>(id));
    t += fmt::format("n {} {} {} {} {} {} {} {:x}", static_cast<int>(n.op), static_cast<int>(n.fn),
                     n.uniform ? 1 : 0, n.index, n.offset[0], n.offset[1], n.offset[2],
                     bits(n.value));
    for (calc::NodeId k : n.kids) t += fmt::format(" k{}", k);
    for (double w : n.weights) t += fmt::format(" w{:x}", bits(w));
    t += '\n';
  }
  for (const calc::Stage& s : c.stages) {
    t += fmt::format("s {} {} {} {} {} {}", s.extent_lo[0], s.extent_lo[1], s.extent_lo[2],
                     s.extent_hi[0], s.extent_hi[1], s.extent_hi[2]);
    for (const calc::Store& st : s.stores) t += fmt::format(" {}={}", st.grid_function, st.value);
    t += '\n';
  }
  return support::hex_key(support::fnv1a64(t));
}

std::string device_hash(const model::Device& device) {
  return support::hex_key(support::fnv1a64(model::format_device(device)));
}

// --- mapping files ------------------------------------------------------------------------

std::string format_mapping_file(const calc::Program& program, const MappingFile& file,
                                const std::string& comment) {
  std::string out;
  if (!comment.empty()) {
    std::istringstream lines(comment);
    for (std::string line; std::getline(lines, line);) out += "# " + line + "\n";
  }
  if (!file.device.empty()) out += "device: " + quoted(file.device) + "\n";
  if (file.grid != std::array<long, 3>{0, 0, 0})
    out += fmt::format("grid: [{}, {}, {}]\n", file.grid[0], file.grid[1], file.grid[2]);
  out += "calculations:";
  if (file.entries.empty()) out += " {}";
  out += "\n";
  for (const MappingFileEntry& e : file.entries) {
    const calc::Calculation* c = nullptr;
    for (const calc::Calculation& x : program.calculations)
      if (x.name == e.calculation) c = &x;
    if (c == nullptr)
      throw calc::MappingError("mapping file: program '" + program.thorn +
                               "' has no calculation '" + e.calculation + "'");
    // A file that does not read back must never be written.
    calc::plan_kernels(*c, e.mapping);
    out += fmt::format("  {}:\n    hash: {}\n", c->name,
                       e.hash.empty() ? calculation_hash(*c) : e.hash);
    if (e.predicted_seconds > 0)
      out += fmt::format("    predicted_seconds: {:.6g}\n", e.predicted_seconds);
    out += "    kernels:\n";
    for (const calc::KernelMapping& k : e.mapping.kernels) {
      const calc::Stage& stage = c->stages[static_cast<std::size_t>(k.stage)];
      std::vector<std::string> stores;
      for (int s : k.stores)
        stores.push_back(
            c->grid_functions[static_cast<std::size_t>(
                                  stage.stores[static_cast<std::size_t>(s)].grid_function)]
                .name);
      out += fmt::format("      - stage: {}\n        stores: [{}]\n", k.stage, join(stores));
      if (!k.temporaries.empty()) {
        std::vector<std::string> ids;
        for (calc::NodeId t : k.temporaries) ids.push_back(std::to_string(t));
        out += fmt::format("        temporaries: [{}]\n", join(ids));
      }
      out += "        block: " + calc::to_string(k.block) + "\n";
      if (!k.buffering.empty()) {
        std::vector<std::string> pairs;
        for (const auto& [g, b] : k.buffering)
          pairs.push_back(fmt::format("{}: {}", c->grid_functions[static_cast<std::size_t>(g)].name,
                                      calc::letter(b)));
        out += fmt::format("        buffering: {{{}}}\n", join(pairs));
      }
    }
  }
  return out;
}

MappingFile parse_mapping_file(const std::string& text, const std::string& filename,
                               const calc::Program& program) {
  const File file = std::make_shared<const support::SourceFile>(filename, text);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw MappingFileError(loc_of(file, e.mark), "not valid YAML: " + e.msg);
  }
  MappingFile result;
  if (root.IsNull()) return result; // an empty file maps nothing
  if (!root.IsMap()) fail(file, root, "a mapping file is a map: device, grid, calculations");
  static const std::vector<std::string> keys = {"device", "grid", "calculations"};
  std::vector<std::string> calculation_names;
  for (const calc::Calculation& c : program.calculations) calculation_names.push_back(c.name);
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    const YAML::Node& value = kv.second;
    if (key == "device")
      result.device = scalar(file, value, "device");
    else if (key == "grid") {
      const std::vector<YAML::Node> axes = items(file, value, "grid");
      if (axes.size() != 3) fail(file, value, "grid is three sizes, e.g. [256, 256, 256]");
      for (std::size_t a = 0; a < 3; ++a) result.grid[a] = integer(file, axes[a], "a grid size");
    } else if (key == "calculations") {
      if (value.IsNull()) continue;
      if (!value.IsMap())
        fail(file, value, "calculations is a map of calculation name to its kernels");
      std::map<std::string, YAML::Mark> seen;
      for (const auto& c : value) {
        const std::string name = scalar(file, c.first, "a calculation name");
        const calc::Calculation* found = nullptr;
        for (const calc::Calculation& x : program.calculations)
          if (x.name == name) found = &x;
        if (found == nullptr)
          fail(file, c.first,
               "unknown calculation '" + name + "'" + suggestion(name, calculation_names) +
                   " (program '" + program.thorn + "' has " + join(calculation_names) + ")");
        if (auto [it, fresh] = seen.emplace(name, c.first.Mark()); !fresh)
          fail(file, c.first, "calculation '" + name + "' given twice",
               {support::Note{loc_of(file, it->second, static_cast<int>(name.size())),
                              "first given here"}});
        result.entries.push_back(
            parse_calculation(file, *found, c.first, c.second, result.warnings));
      }
    } else
      unknown_key(file, kv.first, "at the top level", keys);
  }
  return result;
}

MappingFile load_mapping_file(const std::string& path, const calc::Program& program) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw MappingFileError(
        support::SourceLoc{std::make_shared<const support::SourceFile>(path, ""), 0, 0, 1},
        "cannot read the mapping file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_mapping_file(text.str(), path, program);
}

// --- the cache ----------------------------------------------------------------------------

std::array<long, 3> grid_class(const std::array<long, 3>& grid) {
  std::array<long, 3> out{};
  for (std::size_t a = 0; a < 3; ++a) {
    long p = 1;
    while (p < grid[a]) p *= 2;
    out[a] = p;
  }
  return out;
}

MappingCache::MappingCache(std::string dir)
    : dir_(dir.empty() ? cache_dir_default() : std::move(dir)) {}

std::string MappingCache::path_for(const calc::Calculation& calc, const model::Device& device,
                                   const std::array<long, 3>& grid,
                                   const std::string& method) const {
  const std::array<long, 3> g = grid_class(grid);
  const std::string key =
      fmt::format("saguaro mapping cache v{}\n{}\n{}\n{}x{}x{}\n{}\n", kCacheFormat,
                  calculation_hash(calc), device_hash(device), g[0], g[1], g[2], method);
  return (fs::path(dir_) / (calc.name + "-" + support::hex_key(support::fnv1a64(key)) + ".yaml"))
      .string();
}

std::optional<calc::Mapping> MappingCache::lookup(const calc::Program& program,
                                                  const calc::Calculation& calc,
                                                  const model::Device& device,
                                                  const std::array<long, 3>& grid,
                                                  const std::string& method) const {
  // Anything wrong with the file is a miss: the caller searches again and stores afresh.
  try {
    const std::string path = path_for(calc, device, grid, method);
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) return std::nullopt;
    const MappingFile file = parse_mapping_file(text.str(), path, program);
    // The key is a hash; check what the file says it was written for.
    if (file.entries.size() != 1 || file.device != device.name || file.grid != grid_class(grid))
      return std::nullopt;
    const MappingFileEntry& e = file.entries[0];
    if (e.calculation != calc.name || e.hash != calculation_hash(calc)) return std::nullopt;
    calc::plan_kernels(calc, e.mapping); // `calc` itself, should it not be program's own
    return e.mapping;
  } catch (...) {
    return std::nullopt;
  }
}

void MappingCache::store(const calc::Program& program, const calc::Calculation& calc,
                         const model::Device& device, const std::array<long, 3>& grid,
                         const std::string& method, const calc::Mapping& mapping,
                         double predicted_seconds) {
  calc::plan_kernels(calc, mapping);
  MappingFile file;
  file.device = device.name;
  file.grid = grid_class(grid);
  file.entries.push_back({calc.name, calculation_hash(calc), predicted_seconds, mapping});
  const std::string text = format_mapping_file(
      program, file,
      fmt::format("{} v{}: calculation {} on {} (device hash {}), grid class {}x{}x{}, method {}",
                  kCacheWho, kCacheFormat, calc.name, device.name, device_hash(device),
                  file.grid[0], file.grid[1], file.grid[2], method));
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec && !fs::is_directory(dir_))
    throw std::runtime_error(std::string(kCacheWho) + ": cannot create " + dir_ + ": " +
                             ec.message());
  support::write_atomically(path_for(calc, device, grid, method), text, kCacheWho);
}

} // namespace saguaro::mapper
