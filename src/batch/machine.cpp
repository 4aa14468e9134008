// Machine descriptions: reading the YAML, finding a machine by name, walltimes and paths.
#include "batch/machine.hpp"

#include "support/diagnostics.hpp"
#include "support/source.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

namespace saguaro::batch {
namespace fs = std::filesystem;

namespace {

using File = std::shared_ptr<const support::SourceFile>;

[[noreturn]] void fail(const File& file, const YAML::Mark& mark, const std::string& message,
                       std::vector<support::Note> notes = {}) {
  throw support::InputError(
      support::loc_from_zero_based(file, mark.is_null() ? -1 : mark.line, mark.column), message,
      std::move(notes));
}

// The keys of a description, in the order docs/batch.md lists them.
const std::vector<std::string>& keys() {
  static const std::vector<std::string> k = {
      "name",      "description",    "scheduler",       "partition",
      "account",   "gpus_per_node",  "cores_per_node",  "ranks_per_node",
      "max_nodes", "max_walltime",   "walltime_margin", "gpu_request",
      "cpu_bind",  "launcher",       "modules",         "environment",
      "prologue",  "sbatch_options", "simulations"};
  return k;
}

std::string scalar(const File& file, const YAML::Node& node, const std::string& key) {
  if (!node.IsScalar()) fail(file, node.Mark(), fmt::format("{} must be a single value", key));
  return node.Scalar();
}

// A line of a batch script must stay one line.
std::string one_line(const File& file, const YAML::Node& node, const std::string& key) {
  std::string s = scalar(file, node, key);
  if (s.find('\n') != std::string::npos || s.find('\r') != std::string::npos)
    fail(file, node.Mark(), fmt::format("{} must be one line", key));
  return s;
}

int integer(const File& file, const YAML::Node& node, const std::string& key, int lo) {
  const std::string text = scalar(file, node, key);
  long v = 0;
  std::size_t used = 0;
  try {
    v = std::stol(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || v < lo || v > 1'000'000)
    fail(file, node.Mark(), fmt::format("{} is a whole number from {}, not '{}'", key, lo, text));
  return int(v);
}

long walltime(const File& file, const YAML::Node& node, const std::string& key) {
  const std::string text = scalar(file, node, key);
  const std::optional<long> seconds = parse_walltime(text);
  if (!seconds || *seconds <= 0)
    fail(file, node.Mark(),
         fmt::format("{} is a time as HH:MM:SS (or D-HH:MM:SS), not '{}'", key, text));
  return *seconds;
}

std::vector<std::string> lines(const File& file, const YAML::Node& node, const std::string& key) {
  if (!node.IsSequence()) fail(file, node.Mark(), fmt::format("{} is a list", key));
  std::vector<std::string> out;
  for (const YAML::Node& item : node) out.push_back(one_line(file, item, key + " entry"));
  return out;
}

std::string keyword(const File& file, const YAML::Node& node, const std::string& key,
                    const std::vector<std::string>& words) {
  const std::string v = scalar(file, node, key);
  if (std::find(words.begin(), words.end(), v) != words.end()) return v;
  std::string list;
  for (const std::string& w : words) list += (list.empty() ? "" : ", ") + ("\"" + w + "\"");
  fail(file, node.Mark(), fmt::format("{} is one of {}, not \"{}\"", key, list, v));
}

bool variable_name(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

void read_launcher(const File& file, const YAML::Node& node, Launcher& launcher) {
  const std::vector<std::string> commands = {"srun", "mpirun"};
  if (node.IsScalar()) {
    launcher.command = keyword(file, node, "launcher", commands);
    return;
  }
  if (!node.IsMap()) fail(file, node.Mark(), "launcher is srun, mpirun or {command, options}");
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    if (key == "command")
      launcher.command = keyword(file, entry.second, "launcher command", commands);
    else if (key == "options")
      launcher.options = lines(file, entry.second, "launcher options");
    else
      fail(file, entry.first.Mark(),
           fmt::format("unknown key '{}' of the launcher: expected command or options", key));
  }
}

void read_environment(const File& file, const YAML::Node& node, Machine& m) {
  if (!node.IsMap()) fail(file, node.Mark(), "environment is a map of NAME: value");
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    if (!variable_name(key))
      fail(file, entry.first.Mark(),
           fmt::format("'{}' is not an environment variable's name: letters, digits and '_'", key));
    m.environment.emplace_back(key, one_line(file, entry.second, key));
  }
}

// One key's value into the machine.
void read_key(const File& file, const std::string& key, const YAML::Node& v, Machine& m) {
  if (key == "name")
    m.name = scalar(file, v, key);
  else if (key == "description")
    m.description = scalar(file, v, key);
  else if (key == "scheduler")
    m.scheduler = keyword(file, v, key, {"slurm"});
  else if (key == "partition")
    m.partition = one_line(file, v, key);
  else if (key == "account")
    m.account = one_line(file, v, key);
  else if (key == "gpus_per_node")
    m.gpus_per_node = integer(file, v, key, 0);
  else if (key == "cores_per_node")
    m.cores_per_node = integer(file, v, key, 1);
  else if (key == "ranks_per_node")
    m.ranks_per_node = integer(file, v, key, 1);
  else if (key == "max_nodes")
    m.max_nodes = integer(file, v, key, 1);
  else if (key == "max_walltime")
    m.max_walltime = walltime(file, v, key);
  else if (key == "walltime_margin")
    m.walltime_margin = walltime(file, v, key);
  else if (key == "gpu_request")
    m.gpu_request = keyword(file, v, key, {"gpus-per-node", "gres"});
  else if (key == "cpu_bind")
    m.cpu_bind = keyword(file, v, key, {"cores", "none"});
  else if (key == "launcher")
    read_launcher(file, v, m.launcher);
  else if (key == "modules")
    m.modules = lines(file, v, key);
  else if (key == "environment")
    read_environment(file, v, m);
  else if (key == "prologue")
    m.prologue = lines(file, v, key);
  else if (key == "sbatch_options")
    m.sbatch_options = lines(file, v, key);
  else if (key == "simulations")
    m.simulations = one_line(file, v, key);
}

} // namespace

Machine parse_machine(const std::string& yaml_text, const std::string& file_name) {
  auto file = std::make_shared<const support::SourceFile>(file_name, yaml_text);
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::ParserException& e) {
    fail(file, e.mark, "not valid YAML: " + e.msg);
  }
  if (!root.IsMap())
    fail(file, root.Mark(),
         "a machine description is a map: name, scheduler, cores_per_node, max_walltime, "
         "simulations, ...",
         {{{}, "docs/batch.md describes the format; configs/machines/ holds examples"}});

  Machine m;
  m.file = file_name;
  std::set<std::string> seen;
  bool ranks_given = false;
  YAML::Mark ranks_mark;
  for (const auto& entry : root) {
    const std::string key = entry.first.Scalar();
    if (std::find(keys().begin(), keys().end(), key) == keys().end())
      fail(file, entry.first.Mark(), fmt::format("unknown key '{}'", key),
           support::did_you_mean(key, keys()));
    if (!seen.insert(key).second)
      fail(file, entry.first.Mark(), fmt::format("'{}' is given twice", key));
    if (key == "ranks_per_node") {
      ranks_given = true;
      ranks_mark = entry.first.Mark();
    }
    read_key(file, key, entry.second, m);
  }
  std::vector<std::string> missing;
  for (const char* key : {"name", "cores_per_node", "max_walltime", "simulations"})
    if (!seen.count(key)) missing.push_back(key);
  if (!missing.empty()) {
    std::string list;
    for (const std::string& k : missing) list += (list.empty() ? "" : ", ") + k;
    fail(file, root.Mark(), "the machine description needs " + list);
  }
  if (m.name.empty()) fail(file, root["name"].Mark(), "name must not be empty");
  if (ranks_given && m.gpu())
    fail(file, ranks_mark,
         "ranks_per_node is for CPU machines: a GPU machine runs one MPI rank per GPU");
  if (m.gpu() && m.cores_per_node < m.gpus_per_node)
    fail(file, root["cores_per_node"].Mark(),
         fmt::format("cores_per_node ({}) is fewer than gpus_per_node ({}): every rank needs "
                     "a core",
                     m.cores_per_node, m.gpus_per_node));
  if (m.walltime_margin >= m.max_walltime)
    fail(file, root[seen.count("walltime_margin") ? "walltime_margin" : "max_walltime"].Mark(),
         fmt::format("walltime_margin ({}) must be shorter than max_walltime ({})",
                     format_walltime(m.walltime_margin), format_walltime(m.max_walltime)));
  return m;
}

Machine load_machine(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw support::InputError(
        support::SourceLoc{std::make_shared<support::SourceFile>(path, ""), 0, 0, 1},
        "cannot read the machine description");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_machine(text.str(), path);
}

namespace {

std::vector<fs::path> machine_dirs() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("SAGUARO_MACHINES"); env != nullptr && *env)
    dirs.push_back(env);
#ifdef SAGUARO_MACHINES_DIR
  dirs.push_back(SAGUARO_MACHINES_DIR);
#endif
  return dirs;
}

} // namespace

std::vector<std::string> known_machines() {
  std::set<std::string> names;
  for (const fs::path& dir : machine_dirs()) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".yaml") names.insert(e.path().stem().string());
  }
  return {names.begin(), names.end()};
}

std::string find_machine(const std::string& name_or_path) {
  if (name_or_path.empty()) throw BatchError("no machine named: give --machine NAME");
  const bool is_path =
      name_or_path.find('/') != std::string::npos || fs::path(name_or_path).extension() == ".yaml";
  if (is_path) {
    std::error_code ec;
    if (!fs::is_regular_file(name_or_path, ec))
      throw BatchError(fmt::format("no machine description '{}'", name_or_path));
    return name_or_path;
  }
  std::string searched;
  for (const fs::path& dir : machine_dirs()) {
    const fs::path candidate = dir / (name_or_path + ".yaml");
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec)) return candidate.string();
    searched += (searched.empty() ? "" : ", ") + dir.string();
  }
  const std::vector<std::string> known = known_machines();
  std::string list;
  for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
  std::string message = fmt::format("no machine '{}' in {}", name_or_path,
                                    searched.empty() ? std::string("no directory") : searched);
  const std::string near = support::nearest_name(name_or_path, known);
  if (!near.empty()) message += fmt::format("; did you mean '{}'?", near);
  message += fmt::format(" (known: {}; $SAGUARO_MACHINES adds a directory, and --machine "
                         "also takes a path to a .yaml file)",
                         list.empty() ? std::string("none") : list);
  throw BatchError(message);
}

std::optional<long> parse_walltime(std::string_view text) {
  long days = 0;
  if (const std::size_t dash = text.find('-'); dash != std::string_view::npos) {
    const std::string_view d = text.substr(0, dash);
    if (d.empty() || d.size() > 4 ||
        !std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::nullopt;
    days = std::stol(std::string(d));
    text = text.substr(dash + 1);
  }
  std::vector<long> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t colon = text.find(':', start);
    const std::string_view part = text.substr(
        start, colon == std::string_view::npos ? std::string_view::npos : colon - start);
    if (part.empty() || part.size() > 6 ||
        !std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::nullopt;
    parts.push_back(std::stol(std::string(part)));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  if (parts.size() > 3) return std::nullopt;
  if (days > 0 && parts.size() != 3) return std::nullopt; // D-HH:MM:SS only
  long seconds = 0;
  if (parts.size() == 3) {
    if (parts[1] >= 60 || parts[2] >= 60) return std::nullopt;
    seconds = parts[0] * 3600 + parts[1] * 60 + parts[2];
  } else if (parts.size() == 2) {
    if (parts[1] >= 60) return std::nullopt;
    seconds = parts[0] * 60 + parts[1];
  } else {
    seconds = parts[0] * 60;
  }
  return days * 86400 + seconds;
}

std::string format_walltime(long seconds) {
  const long days = seconds / 86400, rest = seconds % 86400;
  const std::string hms =
      fmt::format("{:02}:{:02}:{:02}", rest / 3600, rest % 3600 / 60, rest % 60);
  return days > 0 ? fmt::format("{}-{}", days, hms) : hms;
}

std::string expand_path(std::string_view text,
                        const std::function<std::optional<std::string>(const std::string&)>& env) {
  auto lookup = [&](const std::string& name) {
    std::optional<std::string> v = env(name);
    if (!v) throw BatchError(fmt::format("the path '{}' names ${}, which is not set", text, name));
    return *v;
  };
  std::string out;
  std::size_t i = 0;
  if (text == "~" || text.substr(0, 2) == "~/") {
    out = lookup("HOME");
    i = 1;
  }
  while (i < text.size()) {
    if (text[i] != '$') {
      out += text[i++];
      continue;
    }
    std::string name;
    if (i + 1 < text.size() && text[i + 1] == '{') {
      const std::size_t close = text.find('}', i + 2);
      if (close == std::string_view::npos)
        throw BatchError(fmt::format("the path '{}' has a '${{' without its '}}'", text));
      name = std::string(text.substr(i + 2, close - i - 2));
      i = close + 1;
    } else {
      std::size_t j = i + 1;
      while (j < text.size() &&
             (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_'))
        ++j;
      name = std::string(text.substr(i + 1, j - i - 1));
      i = j;
    }
    if (!variable_name(name))
      throw BatchError(fmt::format("the path '{}' has a '$' that names no variable", text));
    out += lookup(name);
  }
  return out;
}

} // namespace saguaro::batch
