#include "schedule/simulation.hpp"

#include "calc/lower.hpp"
#include "edl/parser.hpp"
#include "io/io.hpp"
#include "io/predictions.hpp"
#include "mapper/mapper.hpp"
#include "mapper/mapping_file.hpp"
#include "runtime/calibrate.hpp"
#include "runtime/cuda.hpp"
#include "runtime/disk_cache.hpp"
#include "runtime/statistics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <climits>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <set>
#include <sstream>

namespace saguaro::host {
namespace fs = std::filesystem;

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
std::string upper(std::string s) {
  for (char& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

[[noreturn]] void par_error(const Setup& setup, const std::string& thorn, const std::string& name,
                            const std::string& message, std::vector<edl::Note> notes = {}) {
  edl::SourceLoc loc = setup.registry.set_at(thorn, name);
  if (!loc.valid()) loc = edl::SourceLoc{setup.par.source, 1, 1, 1};
  throw edl::EdlError(loc, message, std::move(notes));
}

// The EDL thorn's `begin parameters` block as param.ccl declarations, so one registry
// checks them like every other thorn's.
std::vector<param::Declaration> edl_declarations(const calc::Program& program) {
  std::vector<param::Declaration> out;
  for (const calc::Parameter& p : program.parameters) {
    param::Declaration d;
    d.thorn = program.thorn;
    d.name = p.name;
    d.description = p.description;
    d.access = param::Access::Private;
    param::RangeItem range;
    range.lo = p.min;
    range.hi = p.max;
    range.text = fmt::format("{}:{}", p.min ? fmt::format("{}", *p.min) : "*",
                             p.max ? fmt::format("{}", *p.max) : "*");
    switch (p.type) {
    case edl::ParameterType::Real:
      d.type = param::Type::Real;
      d.default_value = p.default_value;
      d.ranges.push_back(range);
      break;
    case edl::ParameterType::Int:
      d.type = param::Type::Int;
      d.default_value = long(std::lround(p.default_value));
      d.ranges.push_back(range);
      break;
    case edl::ParameterType::Boolean:
      d.type = param::Type::Boolean;
      d.default_value = p.default_value != 0.0;
      break;
    case edl::ParameterType::Keyword:
      d.type = param::Type::Keyword;
      d.default_value = p.default_keyword;
      for (const std::string& word : p.keyword_values) {
        param::RangeItem item;
        item.text = word;
        d.ranges.push_back(item);
      }
      break;
    }
    out.push_back(std::move(d));
  }
  return out;
}

// Where an EDL calculation lands: a bin (`at initial`) or a group (`in MoL_CalcRHS`).
schedule::ScheduleItem schedule_item(const calc::Calculation& calc, const std::string& thorn) {
  schedule::ScheduleItem item;
  item.name = calc.name;
  item.thorn = thorn;
  item.lang = "EDL";
  item.description = fmt::format("EDL calculation {}{}", calc.name,
                                 calc.on_boundary ? " (on the outer boundary)" : "");
  item.loc = calc.loc;
  std::string bin = upper(calc.schedule_bin);
  if (bin.rfind("CCTK_", 0) == 0) bin = bin.substr(5);
  const auto& bins = schedule::bins();
  if (std::find(bins.begin(), bins.end(), bin) != bins.end()) {
    item.at = true;
    item.where = bin;
    if (bin == "ANALYSIS") item.before = {"IOScalar_OutputNorms"};
  } else {
    item.at = false;
    item.where = calc.schedule_bin;
    if (lower(item.where) == "mol_calcrhs") {
      item.where = "MoL_CalcRHS";
      item.before = {"Boundary_RHS"};
    } else if (lower(item.where) == "mol_poststep") {
      item.where = "MoL_PostStep";
      item.after = {"Boundary_ApplyOuter"};
    }
  }
  return item;
}

// The host's roofline for the CPU backend's predictions, measured once per process (quick: a
// fraction of a second) on the OpenMP threads the generated code runs on.
const model::Device& host_roofline(const std::string& command) {
  static const model::Device measured = [&] {
    runtime::CalibrationOptions options;
    options.quick = true;
    options.command = command;
    return runtime::calibrate_cpu(options);
  }();
  return measured;
}

// Whether every rank of `comm` can use a GPU; when not, `why` is the reason the first rank
// without one gives (the same text on every rank, so all of them decide alike).
bool cuda_available_everywhere(MPI_Comm comm, std::string& why) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string reason;
  const bool here = runtime::cuda::available(&reason);
  int first_without = here ? INT_MAX : rank, first = INT_MAX;
  MPI_Allreduce(&first_without, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == INT_MAX) return true;
  int length = int(reason.size());
  MPI_Bcast(&length, 1, MPI_INT, first, comm);
  reason.resize(std::size_t(length));
  MPI_Bcast(reason.data(), length, MPI_CHAR, first, comm);
  why = first > 0 ? fmt::format("rank {}: {}", first, reason) : reason;
  if (why.empty()) why = "no usable GPU";
  return false;
}

} // namespace

Setup load_setup(const std::string& par_path) {
  Setup setup;
  setup.par_path = par_path;
  setup.par = param::parse_par_file(par_path);
  setup.registry = param::Registry::with_builtin_components();

  const param::Assignment* eq = setup.par.find("Saguaro", "equations");
  if (eq == nullptr || eq->text.empty())
    throw edl::EdlError(edl::SourceLoc{setup.par.source, 1, 1, 1}, "Saguaro::equations is not set",
                        {{{},
                          "name the EDL file with the physics, e.g. "
                          "Saguaro::equations = \"wave.edl\" (relative to the .par file)"}});
  fs::path edl = eq->text;
  if (edl.is_relative()) edl = fs::path(par_path).parent_path() / edl;
  setup.edl_path = edl.lexically_normal().string();
  if (!fs::is_regular_file(edl))
    throw edl::EdlError(eq->value_loc, fmt::format("no EDL file '{}'", setup.edl_path),
                        {{{}, "Saguaro::equations is relative to the .par file's directory"}});

  // Lower once to learn the thorn's parameters, check the .par against every declaration,
  // then lower again if the finite-difference order differs from the default.
  edl::Thorn thorn = edl::parse_file(setup.edl_path);
  setup.program = calc::lower(thorn, calc::LowerOptions{4});
  setup.registry.declare_thorn(setup.program.thorn); // activatable without parameters too
  setup.registry.declare_all(edl_declarations(setup.program));
  setup.registry.apply(setup.par);
  int fd_order = int(setup.registry.get_int("Saguaro", "fd_order"));
  if (fd_order != 4) setup.program = calc::lower(thorn, calc::LowerOptions{fd_order});

  // A named device description is read here, so `saguaro check` finds a bad one.
  if (const std::string description = setup.registry.get_string("Saguaro", "device_description");
      description != "auto") {
    fs::path path = description;
    if (path.is_relative()) path = fs::path(par_path).parent_path() / path;
    setup.device_path = path.lexically_normal().string();
    if (!fs::is_regular_file(path))
      par_error(setup, "Saguaro", "device_description",
                fmt::format("no device description '{}'", setup.device_path),
                {{{},
                  "Saguaro::device_description is relative to the .par file's directory; "
                  "configs/devices/ holds one YAML file per GPU model, or use \"auto\""}});
    try {
      setup.device = model::load_device(setup.device_path);
    } catch (const std::exception& e) {
      // The description's own diagnostic (its file:line:col and caret) follows as a note.
      par_error(setup, "Saguaro", "device_description",
                fmt::format("the device description '{}' does not read", setup.device_path),
                {{{}, e.what()}});
    }
  }

  // A fixed mapping file is read here too, so `saguaro check` finds its errors.
  setup.fixed_mappings.assign(setup.program.calculations.size(), std::nullopt);
  if (setup.registry.get_keyword("Saguaro", "mapper") == "fixed") {
    const std::string file = setup.registry.get_string("Saguaro", "mapping_file");
    if (file.empty())
      par_error(setup, "Saguaro", "mapper",
                "Saguaro::mapper = \"fixed\" needs Saguaro::mapping_file",
                {{{}, "`saguaro map FILE.edl --device D.yaml --save F` writes one"}});
    fs::path path = file;
    if (path.is_relative()) path = fs::path(par_path).parent_path() / path;
    setup.mapping_path = path.lexically_normal().string();
    if (!fs::is_regular_file(path))
      par_error(setup, "Saguaro", "mapping_file",
                fmt::format("no mapping file '{}'", setup.mapping_path),
                {{{}, "Saguaro::mapping_file is relative to the .par file's directory"}});
    try {
      const mapper::MappingFile mf = mapper::load_mapping_file(setup.mapping_path, setup.program);
      for (const mapper::MappingFileEntry& e : mf.entries)
        for (std::size_t i = 0; i < setup.program.calculations.size(); ++i)
          if (setup.program.calculations[i].name == e.calculation)
            setup.fixed_mappings[i] = e.mapping;
    } catch (const mapper::MappingFileError& e) {
      par_error(setup, "Saguaro", "mapping_file",
                fmt::format("the mapping file '{}' does not read", setup.mapping_path),
                {{{}, e.what()}});
    }
  }

  setup.schedule = schedule::Schedule::with_builtin_components();
  for (const calc::Calculation& c : setup.program.calculations)
    setup.schedule.add(schedule_item(c, setup.program.thorn));
  setup.schedule.validate();

  // Settings that are each in range but do not make a run together (Cactus's PARAMCHECK).
  const param::Registry& reg = setup.registry;
  if (reg.get_keyword("Time", "timestep_method") == "given" &&
      reg.get_real("Time", "timestep") <= 0)
    par_error(setup, "Time", "timestep_method",
              "Time::timestep_method = \"given\" needs a positive Time::timestep");
  const std::string terminate = reg.get_keyword("Cactus", "terminate");
  if ((terminate == "time" || terminate == "all") && reg.get_real("Cactus", "cctk_final_time") < 0)
    par_error(
        setup, "Cactus", "terminate",
        fmt::format("Cactus::terminate = \"{}\" needs Cactus::cctk_final_time >= 0", terminate));
  if (terminate == "runtime" && reg.get_real("Cactus", "max_runtime") <= 0)
    par_error(setup, "Cactus", "terminate",
              fmt::format("Cactus::terminate = \"{}\" needs Cactus::max_runtime > 0 (minutes)",
                          terminate));
  // Saguaro::backend = "cuda" is checked where the backend is made (Simulation): checking
  // a .par file needs no GPU.
  return setup;
}

std::string output_directory(const Setup& setup) {
  return param::expand_parfile(setup.registry.get_string("IO", "out_dir"), setup.par_path);
}

// A compiled calculation, the GridFunctions index of each of its grid functions, and the
// regions it covers.
struct Simulation::CalcBinding {
  const calc::Calculation* calc = nullptr;
  const runtime::CompiledCalculation* kernel = nullptr;
  std::vector<int> field_index; // per calc.grid_functions
  bool pointwise = false;       // reads nothing at a nonzero offset: runs on every point
  bool rhs = false;             // in MoL_CalcRHS: its outputs need no ghost exchange
  std::vector<int> outputs;     // GridFunctions indices of the last stage's stores
  // A right-hand side split around the evolved variables' ghost exchange (decide_launches):
  // its interior overlaps the messages, its boundary shell follows them.
  bool split = false;
  calc::RegionSplit regions;
};

Simulation::Simulation(Setup setup, MPI_Comm comm, std::ostream& log)
    : setup_(std::move(setup)), comm_(comm), log_(log) {
  MPI_Comm_rank(comm_, &rank_);
  const param::Registry& reg = setup_.registry;
  const calc::Program& program = setup_.program;

  // Ghost width: the widest reach of any calculation, unless the user asks for more.
  int needed = 1;
  std::string widest;
  for (const calc::Calculation& c : program.calculations)
    if (int m = runtime::required_margin(c).max(); m > needed) {
      needed = m;
      widest = c.name;
    }
  ghost_ = needed;
  if (long g = reg.get_int("Driver", "ghost_size"); g >= 0) {
    if (g < needed)
      par_error(setup_, "Driver", "ghost_size",
                fmt::format("Driver::ghost_size = {} is less than the {} points calculation '{}' "
                            "reads beyond the points it computes",
                            g, needed, widest));
    ghost_ = int(g);
  }
  static const char* faces[3][2] = {
      {"x_lower", "x_upper"}, {"y_lower", "y_upper"}, {"z_lower", "z_upper"}};
  for (int a = 0; a < 3; ++a)
    for (int s = 0; s < 2; ++s) {
      std::string name = std::string("boundary_size_") + faces[a][s];
      long b = reg.get_int("CoordBase", name);
      if (b < 0) continue;
      if (b < needed)
        par_error(setup_, "CoordBase", name,
                  fmt::format("CoordBase::{} = {} is less than the stencil reach {} of '{}'", name,
                              b, needed, widest));
      ghost_ = std::max(ghost_, int(b));
    }

  // The grid.
  grid::GridSpec spec;
  spec.ghost = ghost_;
  const bool all_periodic = reg.get_bool("Periodic", "periodic");
  const char* axis_names[3] = {"x", "y", "z"};
  const bool by_cells = reg.get_keyword("CoordBase", "spacing") == "numcells";
  for (int a = 0; a < 3; ++a) {
    std::string ax = axis_names[a];
    spec.periodic[a] = all_periodic || reg.get_bool("Periodic", "periodic_" + ax);
    double lo = reg.get_real("CoordBase", ax + "min"), hi = reg.get_real("CoordBase", ax + "max");
    if (!(hi > lo))
      par_error(
          setup_, "CoordBase", ax + "max",
          fmt::format("CoordBase::{}max = {} must be larger than {}min = {}", ax, hi, ax, lo));
    long cells;
    if (by_cells) {
      cells = reg.get_int("CoordBase", "ncells_" + ax);
    } else {
      double d = reg.get_real("CoordBase", "d" + ax);
      double n = (hi - lo) / d;
      cells = std::lround(n);
      if (cells < 1 || std::abs(n - double(cells)) > 1e-8 * n)
        par_error(setup_, "CoordBase", "d" + ax,
                  fmt::format("CoordBase::d{} = {} does not divide {}max - {}min = {} into whole "
                              "cells ({:.6g} cells)",
                              ax, d, ax, ax, hi - lo, n),
                  {{{},
                    "choose d" + ax + " = (" + ax + "max - " + ax +
                        "min) / N, or set CoordBase::spacing = \"numcells\""}});
    }
    spec.origin[a] = lo;
    spec.spacing[a] = (hi - lo) / double(cells);
    spec.points[a] = int(spec.periodic[a] ? cells : cells + 1);
  }
  decomposition_ = std::make_unique<grid::Decomposition>(spec, comm_);

  // The backend, before any storage: its ArraySpace holds every grid function. "auto" is
  // CUDA when every rank has a GPU, else the generated C++.
  std::string backend = reg.get_keyword("Saguaro", "backend");
  if (backend == "auto" || backend == "cuda") {
    std::string why;
    const bool gpu = cuda_available_everywhere(comm_, why);
    if (backend == "cuda" && !gpu)
      par_error(setup_, "Saguaro", "backend",
                fmt::format("Saguaro::backend = \"cuda\", but no GPU can be used: {}", why),
                {{{},
                  "use \"auto\" (CUDA when a GPU is present, generated C++ otherwise) or "
                  "\"cpu\""}});
    if (backend == "auto") backend = gpu ? "cuda" : "cpu";
  }
  runtime::BackendOptions options;
  options.cache_dir = reg.get_string("Saguaro", "cache_dir");
  options.verbose = reg.get_bool("Saguaro", "verbose") && rank_ == 0;
  backend_ = runtime::make_backend(backend, options);
  runtime::ArraySpace& space = backend_->space();
  fields_ = std::make_unique<grid::GridFunctions>(decomposition_->patch(), space);

  // Storage: the thorn's variables, right-hand sides and intermediates.
  for (const std::string& v : program.variables) fields_->add(v);
  for (const calc::Calculation& c : program.calculations)
    for (const calc::GridFunctionRef& gf : c.grid_functions) fields_->add(gf.name);
  for (const std::string& v : program.evolved) {
    evolved_.push_back(fields_->find(v));
    std::string rhs;
    for (const calc::Calculation& c : program.calculations)
      for (const calc::GridFunctionRef& gf : c.grid_functions)
        if (gf.role == calc::GridFunctionRole::RightHandSide && gf.evolves == v) rhs = gf.name;
    rhs_.push_back(fields_->add(rhs.empty() ? v + "rhs" : rhs));
    evolved_u0_.push_back(reg.get_real("Saguaro", "radiative_value"));
  }

  // Boundary conditions per outer face.
  const std::string all_faces = reg.get_keyword("Saguaro", "boundary_condition");
  for (int a = 0; a < 3; ++a)
    for (int s = 0; s < 2; ++s) {
      std::string face = reg.get_keyword("Saguaro", std::string("boundary_") + faces[a][s]);
      boundary_[a][s] = grid::boundary_kind_from_string(face == "default" ? all_faces : face);
    }

  choose_device(backend);

  // Map and compile.
  mappings_ = choose_mappings(backend);
  kernels_ = backend_->compile(program, mappings_);

  for (std::size_t i = 0; i < program.calculations.size(); ++i) {
    const calc::Calculation& c = program.calculations[i];
    auto b = std::make_unique<CalcBinding>();
    b->calc = &c;
    b->kernel = kernels_[i].get();
    for (const calc::GridFunctionRef& gf : c.grid_functions)
      b->field_index.push_back(fields_->find(gf.name));
    runtime::Margin m = runtime::required_margin(c);
    b->pointwise = m.max() == 0;
    b->rhs = lower(c.schedule_bin) == "mol_calcrhs";
    for (int o : c.outputs) b->outputs.push_back(b->field_index[o]);
    bindings_.push_back(std::move(b));
  }
  decide_launches(backend);

  // Output.
  out_dir_ = output_directory(setup_);
  std::string cp = param::expand_parfile(reg.get_string("IO", "checkpoint_dir"), setup_.par_path);
  checkpoint_dir_ = cp.empty() ? (fs::path(out_dir_) / "checkpoints").string() : cp;
  norm_vars_ = resolve_output_vars("IOScalar", "out_vars");
  hdf5_vars_ = resolve_output_vars("IOHDF5", "out_vars");

  // Time integration.
  schedule::MethodOfLines::System system;
  for (std::size_t v = 0; v < evolved_.size(); ++v) {
    system.state.push_back(fields_->data(evolved_[v]));
    system.rhs.push_back(fields_->data(rhs_[v]));
  }
  system.points = decomposition_->patch().points();
  system.space = &space;
  system.calc_rhs = [this](double t) {
    time_ = t;
    executor_->run("MoL_CalcRHS");
  };
  system.post_step = [this](double t) {
    time_ = t;
    executor_->run("MoL_PostStep");
  };
  mol_ = std::make_unique<schedule::MethodOfLines>(
      schedule::ode_method_from_string(reg.get_keyword("MoL", "ODE_Method")), std::move(system));

  parameters_ = parameter_values(); // fixed for the run: nothing is steerable yet
  executor_ = std::make_unique<schedule::Executor>(setup_.schedule, timers_);
  bind_schedule();
  if (auto unbound = executor_->unbound(); !unbound.empty())
    throw std::logic_error("scheduled functions without an implementation: " + unbound.front());
}

Simulation::~Simulation() = default;

std::vector<std::string> Simulation::resolve_output_vars(const std::string& thorn,
                                                         const std::string& name) const {
  const calc::Program& program = setup_.program;
  std::string text = setup_.registry.get_string(thorn, name);
  std::vector<std::string> out;
  auto add = [&](const std::string& v) {
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  };
  std::istringstream words(text);
  std::string word;
  std::vector<std::string> known;
  for (const std::string& v : program.variables) known.push_back(program.thorn + "::" + v);
  for (const auto& [g, members] : program.groups) known.push_back(program.thorn + "::" + g);
  for (const auto& [t, members] : program.tensors) known.push_back(program.thorn + "::" + t);
  while (words >> word) {
    if (lower(word) == "all") {
      for (const std::string& v : program.variables) add(v);
      continue;
    }
    std::string var = word;
    if (auto p = word.find("::"); p != std::string::npos) {
      std::string t = word.substr(0, p);
      if (lower(t) != lower(program.thorn) && lower(t) != lower(program.implements))
        par_error(setup_, thorn, name,
                  fmt::format("{}::{} names '{}', which is not a variable of thorn {}", thorn, name,
                              word, program.thorn),
                  edl::did_you_mean(word, known));
      var = word.substr(p + 2);
    }
    bool found = false;
    for (const std::string& v : program.variables)
      if (lower(v) == lower(var)) {
        add(v);
        found = true;
      }
    // A group, or a tensor by its name (El for El1 El2 El3).
    for (const auto* sets : {&program.groups, &program.tensors})
      for (const auto& [g, members] : *sets)
        if (lower(g) == lower(var)) {
          for (const std::string& m : members) add(m);
          found = true;
        }
    if (!found)
      par_error(setup_, thorn, name,
                fmt::format("{}::{} names '{}', which is not a variable or group of thorn {}",
                            thorn, name, word, program.thorn),
                edl::did_you_mean(word, known));
  }
  return out;
}

// The CUDA backend's mappings from Saguaro::cuda_buffering and cuda_block (one per
// calculation); until the model-guided mapper chooses per kernel, every input gets the
// chosen strategy where it applies. Other backends ignore mappings.
std::vector<calc::Mapping> Simulation::cuda_mappings() const {
  const param::Registry& reg = setup_.registry;
  calc::BlockConfig block;
  try {
    block = calc::parse_block_config(reg.get_string("Saguaro", "cuda_block"));
  } catch (const calc::MappingError& e) {
    par_error(setup_, "Saguaro", "cuda_block", e.what());
  }
  const std::string buffering = reg.get_keyword("Saguaro", "cuda_buffering");
  std::vector<calc::Mapping> mappings;
  for (const calc::Calculation& c : setup_.program.calculations)
    mappings.push_back(calc::strategy_mapping(c, buffering, block));
  return mappings;
}

// The mappings the backend compiles, one per calculation (Saguaro::mapper):
//   default  Saguaro::cuda_block and cuda_buffering for every kernel (cuda_mappings());
//   fixed    the mapping file read by load_setup, the default for calculations it omits;
//   model, exhaustive  on the cuda backend, the mapper's choice for this GPU's description
//            and rank 0's patch (or the mapping cache's), the same on every rank: rank 0
//            maps and broadcasts its choice (and Saguaro::mapper_verify's candidates) as
//            mapping-file text. Other backends run the default partition: the model is a
//            GPU model.
std::vector<calc::Mapping> Simulation::choose_mappings(const std::string& backend) {
  const param::Registry& reg = setup_.registry;
  const calc::Program& program = setup_.program;
  const std::string word = reg.get_keyword("Saguaro", "mapper");
  std::vector<calc::Mapping> out = cuda_mappings();
  candidates_.assign(program.calculations.size(), {});
  if (word == "default") return out;
  if (word == "fixed") {
    int n = 0;
    for (std::size_t i = 0; i < out.size(); ++i)
      if (setup_.fixed_mappings[i]) {
        out[i] = *setup_.fixed_mappings[i];
        ++n;
      }
    mapper_log_.push_back(fmt::format("mapper: fixed, {} of {} calculation(s) from {}", n,
                                      out.size(), setup_.mapping_path));
    return out;
  }
  if (backend != "cuda") {
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = calc::default_mapping(program.calculations[i]);
    return out;
  }

  const int verify = int(reg.get_int("Saguaro", "mapper_verify"));
  constexpr const char* kSeparator = "\n#---saguaro-mapping-candidate---\n";
  std::string text, error;
  if (rank_ == 0) {
    try {
      std::optional<model::Device> device = device_;
      std::string origin = device_origin_;
      if (!device) {
        const std::string gpu = runtime::cuda::device_info().name;
        const std::string path = model::find_device_description(gpu);
        if (!path.empty()) {
          device = model::load_device(path);
          origin = "from " + path;
        } else {
          mapper_log_.push_back(fmt::format(
              "mapper: no device description in configs/devices/ is for {}: default mappings "
              "(`saguaro calibrate` measures one; Saguaro::device_description names it)",
              gpu));
        }
      }
      if (device) {
        mapper::MapperOptions options;
        options.method = word == "exhaustive" ? mapper::Method::Exhaustive : mapper::Method::Model;
        const grid::Index3 n = decomposition_->patch().size();
        options.grid = {n[0], n[1], n[2]};
        options.runners_up = std::max(5, verify);
        mapper::MappingCache cache(reg.get_string("Saguaro", "cache_dir"));
        const bool use_cache = reg.get_bool("Saguaro", "mapping_cache") && verify == 0;
        std::vector<mapper::MappingFile> files(std::size_t(std::max(1, verify)));
        for (std::size_t i = 0; i < program.calculations.size(); ++i) {
          const calc::Calculation& c = program.calculations[i];
          std::vector<calc::Mapping> chosen;
          std::string how;
          if (auto hit = use_cache ? cache.lookup(program, c, *device, options.grid, word)
                                   : std::nullopt) {
            chosen.push_back(*hit);
            how = "from the mapping cache";
          } else {
            const mapper::MapResult r = mapper::map_calculation(c, *device, options);
            chosen.push_back(r.best.mapping);
            for (const auto& m : r.runners_up) chosen.push_back(m.mapping);
            how = fmt::format("predicted {:.3f} ms; search {:.1f} ms, {} model calls",
                              r.best.seconds * 1e3, r.stats.seconds * 1e3, r.stats.model_calls);
            if (reg.get_bool("Saguaro", "mapping_cache")) try {
                cache.store(program, c, *device, options.grid, word, r.best.mapping,
                            r.best.seconds);
              } catch (const std::exception& e) { // a cache that cannot be written costs a search
                mapper_log_.push_back(fmt::format("mapper: not cached: {}", e.what()));
              }
          }
          mapper_log_.push_back(
              fmt::format("mapper: {}: {} ({})", c.name, calc::to_string(c, chosen.front()), how));
          for (std::size_t j = 0; j < files.size(); ++j)
            files[j].entries.push_back(
                {c.name, mapper::calculation_hash(c), 0, chosen[std::min(j, chosen.size() - 1)]});
        }
        mapper_log_.insert(mapper_log_.begin(),
                           fmt::format("mapper: {} on {} ({}), {}x{}x{} points per patch", word,
                                       device->name, origin, n[0], n[1], n[2]));
        for (std::size_t j = 0; j < files.size(); ++j)
          text += (j ? kSeparator : "") + mapper::format_mapping_file(program, files[j]);
      }
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  // Every rank takes rank 0's choice (or its error).
  auto broadcast = [this](std::string& s) {
    unsigned long size = s.size();
    MPI_Bcast(&size, 1, MPI_UNSIGNED_LONG, 0, comm_);
    s.resize(size);
    MPI_Bcast(s.data(), int(size), MPI_CHAR, 0, comm_);
  };
  broadcast(error);
  if (!error.empty()) throw calc::MappingError("the mapper failed: " + error);
  broadcast(text);
  if (text.empty()) return out;
  std::vector<std::string> parts;
  for (std::size_t at = 0;;) {
    const std::size_t next = text.find(kSeparator, at);
    parts.push_back(text.substr(at, next == std::string::npos ? std::string::npos : next - at));
    if (next == std::string::npos) break;
    at = next + std::string(kSeparator).size();
  }
  for (std::size_t j = 0; j < parts.size(); ++j) {
    const mapper::MappingFile mf = mapper::parse_mapping_file(parts[j], "<mapper>", program);
    for (const mapper::MappingFileEntry& e : mf.entries)
      for (std::size_t i = 0; i < program.calculations.size(); ++i)
        if (program.calculations[i].name == e.calculation) {
          if (j == 0) out[i] = e.mapping;
          auto& list = candidates_[i];
          if (verify > 0 && std::find(list.begin(), list.end(), e.mapping) == list.end())
            list.push_back(e.mapping);
        }
  }
  return out;
}

// Saguaro::mapper_verify: each candidate mapping of a calculation is compiled and timed over
// this rank's patch (a warm-up launch, then 5 timed, wall clock around a synchronised launch,
// the median; the slowest rank counts), the calculation's outputs saved before and restored
// after so that the state is untouched; the fastest candidate is kept. The CUDA backend's
// timings of every candidate stay in the prediction log.
void Simulation::verify_mappings() {
  ensure_ghosts();
  const calc::Program& program = setup_.program;
  runtime::ArraySpace& space = fields_->space();
  const std::size_t points = std::size_t(decomposition_->patch().alloc()[0]) *
                             std::size_t(decomposition_->patch().alloc()[1]) *
                             std::size_t(decomposition_->patch().alloc()[2]);
  bool changed = false;
  for (std::size_t i = 0; i < program.calculations.size(); ++i) {
    const std::vector<calc::Mapping>& list = candidates_[i];
    if (list.size() < 2) continue;
    const CalcBinding& b = *bindings_[i];
    std::vector<std::pair<double*, double*>> saved; // (field, copy)
    for (int f : b.outputs) {
      double* copy = space.allocate(points);
      space.copy(copy, fields_->data(f), points);
      saved.push_back({fields_->data(f), copy});
    }
    std::vector<double> seconds;
    for (const calc::Mapping& m : list) {
      std::vector<calc::Mapping> mappings = mappings_;
      mappings[i] = m;
      auto compiled = backend_->compile(program, mappings);
      CalcBinding trial = b;
      trial.kernel = compiled[i].get();
      trial.rhs = true; // no ghost exchange while timing
      trial.split = false;
      std::vector<double> runs;
      for (int r = 0; r < 6; ++r) {
        space.synchronize();
        const auto t0 = std::chrono::steady_clock::now();
        run_calculation(trial);
        space.synchronize();
        if (r > 0)
          runs.push_back(
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      double t = runtime::median(runs);
      MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm_);
      seconds.push_back(t);
    }
    for (const auto& [field, copy] : saved) {
      space.copy(field, copy, points);
      space.release(copy);
    }
    const std::size_t best =
        std::size_t(std::min_element(seconds.begin(), seconds.end()) - seconds.begin());
    const calc::Calculation& c = program.calculations[i];
    std::string line = fmt::format("mapper_verify: {}:", c.name);
    for (std::size_t j = 0; j < list.size(); ++j)
      line += fmt::format(" {}{:.3f} ms{}", j == 0 ? "[model's] " : "", seconds[j] * 1e3,
                          j == best ? " (kept)" : "");
    mapper_log_.push_back(line);
    if (rank_ == 0) log_ << "  " << line << "\n";
    if (best != 0) {
      mappings_[i] = list[best];
      changed = true;
    }
  }
  if (!changed) return;
  kernels_ = backend_->compile(program, mappings_);
  for (std::size_t i = 0; i < bindings_.size(); ++i) bindings_[i]->kernel = kernels_[i].get();
}

// The description the prediction log predicts with: the one Saguaro::device_description names
// (for the backend's kind of hardware), else for the cuda backend the configs/devices/ file
// whose name is the GPU's, for the cpu backend the host's roofline measured now. Only rank 0
// writes the log, so only rank 0 looks for one or measures.
void Simulation::choose_device(const std::string& backend) {
  prediction_log_ =
      setup_.registry.get_bool("Saguaro", "prediction_log") && backend != "interpreter";
  if (setup_.device && backend != "interpreter") {
    const model::Device& d = *setup_.device;
    const bool host = d.kind == "cpu";
    if (host != (backend == "cpu"))
      par_error(setup_, "Saguaro", "device_description",
                fmt::format("Saguaro::device_description '{}' describes a {} ({}), but the "
                            "backend is {}",
                            setup_.device_path, host ? "CPU" : "GPU", d.name, backend),
                {{{},
                  host ? "name a GPU's description from configs/devices/, or \"auto\""
                       : "name a description of this host's CPU (`saguaro calibrate` measures "
                         "one), or \"auto\" to measure it at start"}});
    device_ = d;
    device_origin_ = "from " + setup_.device_path;
    if (backend == "cuda")
      if (const std::string gpu = runtime::cuda::device_info().name; gpu != d.name)
        device_origin_ += fmt::format(" (not this run's {})", gpu);
    return;
  }
  if (!prediction_log_ || rank_ != 0) return;
  if (backend == "cpu") {
    device_ = host_roofline(fmt::format("saguaro run {}", setup_.par_path));
    device_origin_ = "measured at start";
    return;
  }
  const std::string gpu = runtime::cuda::device_info().name;
  const std::string path = model::find_device_description(gpu);
  if (path.empty()) {
    device_note_ = fmt::format("no device description in configs/devices/ is for {}: measured "
                               "times only (`saguaro calibrate` measures one)",
                               gpu);
    return;
  }
  try {
    device_ = model::load_device(path);
    device_origin_ = "from " + path;
  } catch (const std::exception& e) {
    device_note_ = fmt::format("the device description {} does not read ({}): measured times "
                               "only",
                               path, e.what());
  }
}

// Writes predictions.tsv and .jsonl with rank 0's kernels (nothing crosses ranks); at the end
// also prints the table. Between, it writes every IO::out_every iterations but at most every
// 10 s, so that copying the timings (and, on a GPU, waiting for them) stays a small cost of a
// long run. A log that cannot be written is reported, not fatal: the physics matters more.
// Returns whether it wrote.
bool Simulation::write_prediction_log(bool at_end) {
  if (!prediction_log_ || rank_ != 0) return false;
  const auto now = std::chrono::steady_clock::now();
  if (!at_end && last_prediction_log_ != std::chrono::steady_clock::time_point{} &&
      now - last_prediction_log_ < std::chrono::seconds(10))
    return false;
  last_prediction_log_ = now;
  const std::vector<runtime::KernelTiming> timings = backend_->kernel_timings();
  if (timings.empty()) return false;
  io::PredictionSource source;
  source.backend = backend_->name();
  source.device = device_ ? &*device_ : nullptr;
  source.note = device_note_;
  source.ranks = decomposition_->patch().ranks;
  source.iteration = iteration_;
  std::vector<io::PredictionRecord> records;
  try {
    records = io::prediction_records(setup_.program, mappings_, timings, source, candidates_);
    if (!exchange_samples_.empty())
      records.push_back(
          io::exchange_record(exchange_samples_, exchange_predicted_, exchange_words_, source));
    io::write_predictions(out_dir_, records);
  } catch (const std::exception& e) {
    log_ << "saguaro: the prediction log was not written: " << e.what() << "\n";
    return false;
  }
  if (at_end) log_ << "\n" << io::prediction_table(records);
  return true;
}

std::vector<double> Simulation::parameter_values() const {
  std::vector<double> values;
  const param::Registry& reg = setup_.registry;
  const std::string& thorn = setup_.program.thorn;
  for (const calc::Parameter& p : setup_.program.parameters) {
    switch (p.type) {
    case edl::ParameterType::Real: values.push_back(reg.get_real(thorn, p.name)); break;
    case edl::ParameterType::Int: values.push_back(double(reg.get_int(thorn, p.name))); break;
    case edl::ParameterType::Boolean: values.push_back(reg.get_bool(thorn, p.name)); break;
    case edl::ParameterType::Keyword: {
      std::string word = reg.get_keyword(thorn, p.name);
      auto it = std::find(p.keyword_values.begin(), p.keyword_values.end(), word);
      values.push_back(double(it - p.keyword_values.begin()));
      break;
    }
    }
  }
  return values;
}

runtime::KernelArgs Simulation::kernel_args(const CalcBinding& b) const {
  const grid::Patch& patch = decomposition_->patch();
  runtime::KernelArgs args;
  for (int f : b.field_index) args.fields.push_back(fields_->data(f));
  args.alloc = patch.alloc();
  args.origin = patch.spec.origin;
  for (int a = 0; a < 3; ++a) args.index_offset[a] = patch.owned.lo[a] - ghost_;
  args.spacing = patch.spec.spacing;
  args.time = time_;
  args.parameters = parameters_;
  return args;
}

void Simulation::run_region(const CalcBinding& b, const calc::Region& region,
                            const std::string& part) {
  if (region.empty()) return;
  runtime::KernelArgs args = kernel_args(b);
  args.lo = region.lo;
  args.hi = region.hi;
  args.region = part;
  b.kernel->run(args);
}

// Runs one calculation over its region: pointwise calculations on every allocated point (so
// initial data is defined on the outer boundary too), boundary calculations on the outer
// layers, the rest on the owned points. Outputs that later stencils or output read are
// exchanged. A calculation that reads ghosts while the evolved variables' are out of date
// exchanges them first (overlapping its interior when it is split).
void Simulation::run_calculation(const CalcBinding& b) {
  const grid::Patch& patch = decomposition_->patch();
  const int g = ghost_;
  if (!b.pointwise && ghosts_stale_) {
    if (b.split) {
      exchange_state(&b);
      return; // a right-hand side: nothing of its own to exchange
    }
    ensure_ghosts();
  }
  runtime::KernelArgs args = kernel_args(b);
  grid::Index3 n = patch.size();
  if (b.calc->on_boundary) {
    // One launch per outer face layer, over the whole allocated extent of the other axes.
    for (int a = 0; a < 3; ++a)
      for (int s = 0; s < 2; ++s) {
        if (!patch.outer[a][s]) continue;
        args.lo = {0, 0, 0};
        args.hi = args.alloc;
        args.lo[a] = s == 0 ? 0 : g + n[a];
        args.hi[a] = s == 0 ? g : 2 * g + n[a];
        b.kernel->run(args);
      }
  } else if (b.pointwise) {
    args.lo = {0, 0, 0};
    args.hi = args.alloc;
    b.kernel->run(args);
  } else {
    args.lo = {g, g, g};
    args.hi = {g + n[0], g + n[1], g + n[2]};
    const bool timed = timing_step_ && b.rhs;
    runtime::ArraySpace& space = fields_->space();
    const int before = timed ? space.mark(runtime::ArraySpace::Queue::compute) : -1;
    b.kernel->run(args);
    if (timed) step_whole_rhs_.push_back({before, space.mark(runtime::ArraySpace::Queue::compute)});
  }
  if (!b.rhs && !b.outputs.empty()) {
    std::vector<double*> out;
    for (int f : b.outputs) out.push_back(fields_->data(f));
    decomposition_->sync(out, fields_->space());
  }
}

void Simulation::exchange_state(const CalcBinding* overlap) {
  using Queue = runtime::ArraySpace::Queue;
  runtime::ArraySpace& space = fields_->space();
  std::vector<double*> state;
  for (int e : evolved_) state.push_back(fields_->data(e));
  ExchangeMarks m;
  const bool timed = timing_step_;
  if (timed) m.before = space.mark(Queue::compute);
  decomposition_->begin_sync(state, space, timed);
  if (overlap) run_region(*overlap, overlap->regions.interior, "interior");
  if (timed) m.interior_done = overlap ? space.mark(Queue::compute) : m.before;
  decomposition_->finish_sync();
  ghosts_stale_ = false;
  if (flat_pending_) {
    flat_pending_ = false;
    boundary_state();
  }
  if (timed) m.joined = space.mark(Queue::compute);
  if (overlap)
    for (const calc::Region& box : overlap->regions.shell)
      run_region(*overlap, box, "boundary shell");
  if (timed) {
    m.shell_done = overlap ? space.mark(Queue::compute) : m.joined;
    const grid::Decomposition::Marks x = decomposition_->last_marks();
    m.started = x.started;
    m.finished = x.finished;
    step_exchanges_.push_back(m);
  }
}

void Simulation::ensure_ghosts() {
  if (ghosts_stale_) exchange_state(nullptr);
}

// Which right-hand sides are split around the evolved variables' ghost exchange
// (Saguaro::exchange_overlap), and how messages travel (Saguaro::cuda_aware_mpi).
void Simulation::decide_launches(const std::string& backend) {
  const param::Registry& reg = setup_.registry;
  runtime::ArraySpace& space = fields_->space();
  const std::string aware = reg.get_keyword("Saguaro", "cuda_aware_mpi");
  const bool device_pointers =
      aware == "yes" || (aware == "auto" && grid::mpi_takes_device_pointers());
  decomposition_->use_device_messages(space.on_device() && device_pointers);
  decomposition_->use_peer_messages(reg.get_bool("Saguaro", "cuda_ipc"));
  if (!decomposition_->has_remote_faces()) return;

  const std::vector<double> bytes = decomposition_->message_bytes(int(evolved_.size()));
  std::string phases;
  for (double b : bytes) phases += fmt::format("{}{:.3g} MB", phases.empty() ? "" : ", ", b * 1e-6);
  exchange_words_ = fmt::format("{} evolved variables, {} phase{} of 2 messages ({}), {}",
                                evolved_.size(), bytes.size(), bytes.size() == 1 ? "" : "s", phases,
                                decomposition_->transport(space));
  const bool modelled = backend == "cuda" && device_ && device_->kind == "gpu" &&
                        model::describes_interconnect(*device_);
  if (modelled) {
    exchange_predicted_ = 0;
    for (double b : bytes) exchange_predicted_ += model::message_seconds(*device_, b);
  }
  mapper_log_.push_back(
      fmt::format("ghost exchange: {}{}", exchange_words_,
                  modelled ? fmt::format("; predicted {:.3g} ms", exchange_predicted_ * 1e3)
                           : std::string("; no interconnect description to predict it")));

  const std::string mode = reg.get_keyword("Saguaro", "exchange_overlap");
  const grid::Patch& patch = decomposition_->patch();
  // The shell lies along the faces whose ghosts arrive by message and along the outer faces
  // (their flat boundaries are applied once the messages are in).
  std::array<std::array<bool, 2>, 3> faces = decomposition_->remote_faces();
  for (int a = 0; a < 3; ++a)
    for (int s = 0; s < 2; ++s) faces[a][s] = faces[a][s] || patch.outer[a][s];
  const grid::Index3 n = patch.size();
  const calc::Region owned{{ghost_, ghost_, ghost_}, {ghost_ + n[0], ghost_ + n[1], ghost_ + n[2]}};
  for (std::size_t i = 0; i < bindings_.size(); ++i) {
    CalcBinding& b = *bindings_[i];
    if (!b.rhs || b.pointwise || b.calc->on_boundary || mode == "no") continue;
    b.regions = calc::split_region(owned, runtime::required_margin(*b.calc), faces);
    std::string why;
    if (b.regions.interior.empty()) {
      why = "whole: the patch is too thin for an interior";
    } else if (mode == "yes") {
      b.split = true;
      why = "split (Saguaro::exchange_overlap = yes)";
    } else if (modelled) {
      mapper::MapperOptions options;
      options.grid = {n[0], n[1], n[2]};
      mapper::ExchangeCost cost;
      cost.seconds = exchange_predicted_;
      cost.faces = faces;
      const calc::Mapping& mapping =
          mappings_[i].kernels.empty() ? calc::default_mapping(*b.calc) : mappings_[i];
      const mapper::LaunchChoice choice =
          mapper::choose_launches(*b.calc, mapping, *device_, options, cost);
      b.split = choice.split;
      why = choice.reason;
    } else {
      b.split = true;
      why = "split (no interconnect description to price the exchange)";
    }
    // Every rank launches as rank 0 decided (the banner's words): a rank's patch, and with it
    // the prices, may differ by a point, and a mapping from the mapping cache may differ. (A
    // rank without an interior that is told to split computes its shell, all of it, after the
    // exchange.)
    int split = b.split ? 1 : 0;
    MPI_Bcast(&split, 1, MPI_INT, 0, comm_);
    b.split = split != 0;
    mapper_log_.push_back(fmt::format("{}: {}", b.calc->name, why));
  }
  for (const auto& b : bindings_) exchange_overlap_ = exchange_overlap_ || b->split;
}

// The breakdown of a time step: the right-hand sides' interior (or whole) launches, their
// boundary shells, the evolved variables' ghost exchange (first pack to last unpack, or the
// self-copies when no message is sent) and the time the compute queue waited for it (idle);
// maxima over ranks go to step_breakdown.tsv.
void Simulation::begin_step_breakdown() {
  fields_->space().clear_marks();
  step_exchanges_.clear();
  step_whole_rhs_.clear();
  timing_step_ = true;
}

void Simulation::end_step_breakdown(double step_seconds) {
  timing_step_ = false;
  runtime::ArraySpace& space = fields_->space();
  std::array<double, 5> row{step_seconds, 0, 0, 0, 0};
  for (const ExchangeMarks& m : step_exchanges_) {
    row[1] += space.seconds(m.before, m.interior_done);
    row[2] += space.seconds(m.joined, m.shell_done);
    if (m.started >= 0 && m.finished >= 0) {
      const double x = space.seconds(m.started, m.finished);
      row[3] += x;
      exchange_samples_.push_back(x);
    } else {
      row[3] += space.seconds(m.before, m.joined);
    }
    row[4] += std::max(0.0, space.seconds(m.interior_done, m.joined));
  }
  for (const auto& [a, b] : step_whole_rhs_) row[1] += space.seconds(a, b);
  space.clear_marks();
  breakdown_.push_back(row);
}

void Simulation::write_step_breakdown() {
  std::vector<double> flat;
  for (const auto& row : breakdown_) flat.insert(flat.end(), row.begin(), row.end());
  std::vector<double> max(flat.size());
  MPI_Reduce(flat.data(), max.data(), int(flat.size()), MPI_DOUBLE, MPI_MAX, 0, comm_);
  if (rank_ != 0 || breakdown_.empty()) return;
  const grid::Patch& patch = decomposition_->patch();
  const grid::Index3 n = patch.size();
  std::string split;
  for (const auto& b : bindings_)
    if (b->split) split += (split.empty() ? "" : " ") + b->calc->name;
  std::ostringstream out;
  out << fmt::format(
      "# saguaro step breakdown: {}, {} rank{} as {} x {} x {}, patch {} x {} x {}, "
      "backend {}; ghost exchange: {}; split around it: {}\n",
      setup_.par_path, patch.ranks, patch.ranks == 1 ? "" : "s", decomposition_->dims()[0],
      decomposition_->dims()[1], decomposition_->dims()[2], n[0], n[1], n[2], backend_->name(),
      exchange_words_.empty() ? "no messages" : exchange_words_, split.empty() ? "none" : split);
  out << "# seconds per step, the maximum over ranks. interior: right-hand-side launches over "
         "the interior (the whole patch when not split); boundary: over the boundary shell; "
         "exchange: the evolved variables' ghost exchange, first pack to last unpack (the "
         "self-copies when no message is sent); idle: the compute queue waiting for it\n";
  out << "iteration\tstep_s\tinterior_s\tboundary_s\texchange_s\tidle_s\n";
  const int first = iteration_ - int(breakdown_.size()) + 1;
  for (std::size_t i = 0; i < breakdown_.size(); ++i) {
    out << first + int(i);
    for (int c = 0; c < 5; ++c) out << fmt::format("\t{:.6e}", max[5 * i + std::size_t(c)]);
    out << "\n";
  }
  try {
    fs::create_directories(out_dir_);
    runtime::write_atomically(fs::path(out_dir_) / "step_breakdown.tsv", out.str(), "saguaro");
  } catch (const std::exception& e) {
    log_ << "saguaro: step_breakdown.tsv was not written: " << e.what() << "\n";
    return;
  }
  std::array<std::vector<double>, 5> columns;
  for (std::size_t i = 0; i < breakdown_.size(); ++i)
    for (int c = 0; c < 5; ++c) columns[std::size_t(c)].push_back(max[5 * i + std::size_t(c)]);
  log_ << fmt::format("step breakdown, median of {} steps (max over ranks): step {:.4g} ms: "
                      "interior {:.4g}, boundary shell {:.4g}, exchange {:.4g}, idle {:.4g} ms\n",
                      breakdown_.size(), runtime::median(columns[0]) * 1e3,
                      runtime::median(columns[1]) * 1e3, runtime::median(columns[2]) * 1e3,
                      runtime::median(columns[3]) * 1e3, runtime::median(columns[4]) * 1e3);
}

// A copy of the patch whose outer faces are only those with boundary condition `kind`, so
// the grid's boundary routines act on exactly those faces.
static grid::Patch faces_with(const grid::Patch& patch,
                              const std::array<std::array<grid::BoundaryKind, 2>, 3>& kinds,
                              grid::BoundaryKind kind, bool& any) {
  grid::Patch p = patch;
  any = false;
  for (int a = 0; a < 3; ++a)
    for (int s = 0; s < 2; ++s) {
      p.outer[a][s] = patch.outer[a][s] && kinds[a][s] == kind;
      any = any || p.outer[a][s];
    }
  return p;
}

void Simulation::boundary_rhs() {
  ensure_ghosts(); // the radiative condition differences along the face
  const grid::Patch& patch = decomposition_->patch();
  bool any = false;
  grid::Patch radiative = faces_with(patch, boundary_, grid::BoundaryKind::Radiative, any);
  const double v0 = setup_.registry.get_real("Saguaro", "radiative_speed");
  runtime::ArraySpace& space = fields_->space();
  if (any)
    for (std::size_t v = 0; v < evolved_.size(); ++v)
      grid::apply_radiative_rhs(radiative, fields_->data(evolved_[v]), fields_->data(rhs_[v]),
                                evolved_u0_[v], v0, space);
  // Static faces keep their values; flat faces are overwritten after the update anyway.
  for (grid::BoundaryKind kind : {grid::BoundaryKind::Static, grid::BoundaryKind::Flat}) {
    grid::Patch p = faces_with(patch, boundary_, kind, any);
    if (any)
      for (int r : rhs_) grid::apply_static_rhs(p, fields_->data(r), space);
  }
}

void Simulation::boundary_state() {
  bool any = false;
  grid::Patch flat = faces_with(decomposition_->patch(), boundary_, grid::BoundaryKind::Flat, any);
  if (any)
    for (int e : evolved_) grid::apply_flat(flat, fields_->data(e), fields_->space());
}

bool Simulation::output_due(int every) const {
  return every > 0 && iteration_ % every == 0;
}

static int every_or_default(const param::Registry& reg, const std::string& thorn) {
  long every = reg.get_int(thorn, "out_every");
  return int(every < 0 ? reg.get_int("IO", "out_every") : every);
}

bool Simulation::analysis_due() const {
  const param::Registry& reg = setup_.registry;
  return (!norm_vars_.empty() && output_due(every_or_default(reg, "IOScalar"))) ||
         (!hdf5_vars_.empty() && output_due(every_or_default(reg, "IOHDF5")));
}

void Simulation::output_norms() {
  if (norm_vars_.empty() || !output_due(every_or_default(setup_.registry, "IOScalar"))) return;
  io::OutputStamp stamp{iteration_, time_, dt_};
  for (const std::string& v : norm_vars_)
    io::append_norms(out_dir_, *decomposition_, v, fields_->data(fields_->find(v)), stamp,
                     fields_->space());
}

void Simulation::output_hdf5() {
  if (hdf5_vars_.empty() || !output_due(every_or_default(setup_.registry, "IOHDF5"))) return;
  ensure_ghosts(); // the files hold the outer boundary points
  io::OutputStamp stamp{iteration_, time_, dt_};
  if (rank_ == 0) fs::create_directories(out_dir_);
  MPI_Barrier(comm_);
  const std::string params = setup_.registry.to_par_text();
  const std::string thorn = upper(setup_.program.implements);
  for (const std::string& v : hdf5_vars_)
    io::write_hdf5(out_dir_, decomposition_->patch(), thorn, v, fields_->host(fields_->find(v)),
                   stamp, params);
}

void Simulation::checkpoint(bool force) {
  long every = setup_.registry.get_int("IO", "checkpoint_every");
  bool due = every > 0 && iteration_ > 0 && iteration_ % every == 0;
  if (!(due || force) || iteration_ == last_checkpoint_) return;
  ensure_ghosts();
  std::vector<std::string> names;
  std::vector<const double*> data;
  for (int e : evolved_) {
    names.push_back(fields_->name(e));
    data.push_back(fields_->host(e));
  }
  io::write_checkpoint(checkpoint_dir_, *decomposition_, names, data,
                       io::CheckpointState{iteration_, time_, dt_}, setup_.registry.to_par_text(),
                       int(setup_.registry.get_int("IO", "checkpoint_keep")));
  last_checkpoint_ = iteration_;
  if (rank_ == 0)
    log_ << fmt::format("checkpoint at iteration {} in {}\n", iteration_, checkpoint_dir_);
}

// Continues from the newest checkpoint; output lines written after it by the interrupted
// run are dropped so the series reads as if the run had never stopped.
bool Simulation::recover() {
  const param::Registry& reg = setup_.registry;
  const std::string mode = reg.get_keyword("IO", "recover");
  if (mode == "no") return false;
  std::string dir = param::expand_parfile(reg.get_string("IO", "recover_dir"), setup_.par_path);
  if (dir.empty()) dir = checkpoint_dir_;
  int it = io::newest_checkpoint(dir);
  if (it < 0) {
    if (mode == "auto")
      par_error(setup_, "IO", "recover",
                fmt::format("IO::recover = \"auto\" but there is no checkpoint in '{}'", dir),
                {{{}, "use \"autoprobe\" to start from initial data when there is none"}});
    return false;
  }
  std::vector<std::string> names;
  std::vector<double*> data;
  for (int e : evolved_) {
    names.push_back(fields_->name(e));
    data.push_back(fields_->host_mirror(e));
  }
  io::CheckpointState state = io::read_checkpoint(dir, it, *decomposition_, names, data);
  for (int e : evolved_) fields_->upload(e);
  iteration_ = state.iteration;
  time_ = state.time;
  dt_ = state.dt;
  last_checkpoint_ = iteration_;
  if (rank_ == 0) {
    log_ << fmt::format("recovered from iteration {} (t = {}) in {}\n", iteration_, time_, dir);
    for (const std::string& v : norm_vars_) {
      fs::path file = fs::path(out_dir_) / (v + ".norms.tsv");
      if (!fs::exists(file)) continue;
      std::ifstream in(file);
      std::ostringstream kept;
      std::string line;
      while (std::getline(in, line)) {
        if (!line.empty() && line[0] != '#' && std::stol(line) > iteration_) continue;
        kept << line << "\n";
      }
      in.close();
      fs::path tmp = file;
      tmp += ".tmp";
      std::ofstream(tmp) << kept.str();
      fs::rename(tmp, file);
    }
  }
  return true;
}

bool Simulation::terminate() const {
  const param::Registry& reg = setup_.registry;
  const std::string how = reg.get_keyword("Cactus", "terminate");
  const int itlast = int(reg.get_int("Cactus", "cctk_itlast"));
  const double final_time = reg.get_real("Cactus", "cctk_final_time");
  bool by_iteration = iteration_ >= itlast;
  bool by_time = final_time >= 0 && time_ >= final_time - 1e-9 * dt_;
  if (how == "never") return false;
  if (how == "iteration") return by_iteration;
  if (how == "time") return by_time;
  if (how == "all") return by_iteration && by_time;
  return by_iteration || by_time; // any, either, runtime (max_runtime is checked by run())
}

void Simulation::bind_schedule() {
  schedule::Executor& ex = *executor_;
  const param::Registry& reg = setup_.registry;
  ex.bind("Driver_SetupGrid", [] {}); // done at construction: storage must exist to bind
  ex.bind("Time_Simple", [this, &reg] {
    const grid::Real3& h = decomposition_->patch().spec.spacing;
    dt_ = reg.get_keyword("Time", "timestep_method") == "given"
              ? reg.get_real("Time", "timestep")
              : reg.get_real("Time", "dtfac") * std::min({h[0], h[1], h[2]});
  });
  ex.bind("MoL_Evolution", [this] {
    double t0 = time_;
    mol_->step(t0, dt_);
    time_ = t0 + dt_;
  });
  ex.bind("MoL_PostStepInitial", [this] { executor_->run("MoL_PostStep"); });
  ex.bind("Driver_SyncEvolved", [this] {
    if (exchange_overlap_)
      ghosts_stale_ = true; // exchanged by the next calculation to read them
    else
      exchange_state(nullptr);
  });
  ex.bind("Boundary_ApplyOuter", [this] {
    if (ghosts_stale_)
      flat_pending_ = true; // after the exchange: edges read its ghosts
    else
      boundary_state();
  });
  ex.bind("Boundary_RHS", [this] { boundary_rhs(); });
  ex.bind("IOScalar_OutputNorms", [this] { output_norms(); });
  ex.bind("IOHDF5_Output", [this] { output_hdf5(); });
  ex.bind("IO_Checkpoint", [this] { checkpoint(false); });
  ex.bind("Timers_Report", [this] {
    if (rank_ == 0) log_ << "\nTimers (rank 0):\n" << timers_.report();
  });
  for (const auto& b : bindings_) {
    const CalcBinding* binding = b.get();
    const bool analysis = upper(binding->calc->schedule_bin) == "ANALYSIS";
    ex.bind(binding->calc->name, [this, binding, analysis] {
      // Analysis quantities are only computed when something will be written.
      if (analysis && !analysis_due()) return;
      run_calculation(*binding);
    });
  }
}

void Simulation::run() {
  const param::Registry& reg = setup_.registry;
  const grid::Patch& patch = decomposition_->patch();
  const calc::Program& program = setup_.program;
  schedule::Executor& ex = *executor_;
  const int itlast = int(reg.get_int("Cactus", "cctk_itlast"));
  const double final_time = reg.get_real("Cactus", "cctk_final_time");
  const std::string how = reg.get_keyword("Cactus", "terminate");
  time_ = reg.get_real("Cactus", "cctk_initial_time");

  if (rank_ == 0) {
    log_ << fmt::format("saguaro: {} from {}\n", program.thorn, setup_.edl_path);
    log_ << fmt::format("  grid {} x {} x {} points, spacing ({:g}, {:g}, {:g}), ghost width {}, "
                        "{} rank{} as {} x {} x {}\n",
                        patch.spec.points[0], patch.spec.points[1], patch.spec.points[2],
                        patch.spec.spacing[0], patch.spec.spacing[1], patch.spec.spacing[2], ghost_,
                        patch.ranks, patch.ranks == 1 ? "" : "s", decomposition_->dims()[0],
                        decomposition_->dims()[1], decomposition_->dims()[2]);
    std::string backend = backend_->name();
    if (backend == "cuda") {
      const runtime::cuda::DeviceInfo device = runtime::cuda::device_info();
      backend += fmt::format(" ({}, {})", device.name, device.arch());
    }
    log_ << fmt::format("  backend {}, fd order {}, {}\n", backend, program.fd_order,
                        reg.get_keyword("MoL", "ODE_Method"));
    if (const std::string summary = backend_->compile_summary(); !summary.empty())
      log_ << "  " << summary << "\n";
    for (const std::string& line : mapper_log_) log_ << "  " << line << "\n";
    if (prediction_log_ && device_ && device_->kind == "cpu")
      log_ << fmt::format("  prediction log: roofline of {}, {}: {:.1f} GB/s DRAM (triad), {:.1f} "
                          "GFLOP/s FP64, {:g} core{}\n",
                          device_->name, device_origin_, device_->dram_bandwidth,
                          device_->fp64_peak, device_->cores, device_->cores == 1 ? "" : "s");
    else if (prediction_log_ && device_)
      log_ << fmt::format("  prediction log: model of {}, {}\n", device_->name, device_origin_);
    else if (prediction_log_)
      log_ << "  prediction log: " << device_note_ << "\n";
    if (reg.get_bool("Cactus", "cctk_show_schedule")) log_ << setup_.schedule.tree();
  }

  for (const char* bin : {"STARTUP", "PARAMCHECK", "BASEGRID"}) ex.run(bin);
  if (!recover()) {
    ex.run("INITIAL");
    ex.run("POSTINITIAL");
    ex.run("ANALYSIS");
  } else {
    executor_->run("MoL_PostStep"); // ghosts and outer boundaries of the recovered state
  }
  // The empirical finish runs on the initial (or recovered) state, which it leaves as it was.
  verify_mappings();
  if (rank_ == 0)
    log_ << fmt::format("  dt = {:g}; running to {}\n", dt_,
                        how == "time" ? fmt::format("t = {:g}", final_time)
                                      : fmt::format("iteration {}", itlast));

  const long log_every = reg.get_int("IO", "out_every");
  schedule::Progress progress(how == "time" ? -1 : itlast, how == "iteration" ? -1 : final_time,
                              reg.get_real("Saguaro", "progress_every"));
  progress.update(iteration_, time_);
  const double max_runtime = reg.get_real("Cactus", "max_runtime") * 60.0;
  const auto start = std::chrono::steady_clock::now();
  while (!terminate()) {
    if ((how == "runtime" || how == "any" || how == "either") && max_runtime > 0) {
      double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      int stop = elapsed >= max_runtime;
      MPI_Bcast(&stop, 1, MPI_INT, 0, comm_);
      if (stop) break;
    }
    ++iteration_;
    const auto step_start = std::chrono::steady_clock::now();
    begin_step_breakdown();
    ex.run("PRESTEP");
    ex.run("EVOL");
    ex.run("POSTSTEP");
    ex.run("ANALYSIS");
    fields_->space().synchronize();
    step_seconds_.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start).count());
    end_step_breakdown(step_seconds_.back());
    if (log_every > 0 && iteration_ % log_every == 0) write_prediction_log(false);
    if (rank_ == 0 && reg.get_real("Saguaro", "progress_every") > 0)
      if (std::string line = progress.update(iteration_, time_); !line.empty())
        log_ << line << "\n" << std::flush;
  }
  ensure_ghosts(); // the final state whole, ghosts included
  if (reg.get_bool("IO", "checkpoint_on_terminate")) checkpoint(true);
  ex.run("TERMINATE");
  write_step_breakdown();
  if (rank_ == 0) {
    log_ << fmt::format("\nfinished at iteration {}, t = {:.6g}\n", iteration_, time_);
    const bool logged = write_prediction_log(true);
    if (!norm_vars_.empty() || !hdf5_vars_.empty() || logged)
      log_ << fmt::format("output in {}{}\n", fs::absolute(out_dir_).lexically_normal().string(),
                          logged ? " (`saguaro report` draws predictions.svg from the prediction "
                                   "log there)"
                                 : "");
  }
}

} // namespace saguaro::host
