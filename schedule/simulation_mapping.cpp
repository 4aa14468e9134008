// The run's decisions: the device description, the mappings the backend compiles, their
// empirical verification, and the launches split around the ghost exchange.

#include "schedule/simulation.hpp"
#include "schedule/simulation_internal.hpp"

#include "mapper/mapper.hpp"
#include "mapper/mapping_file.hpp"
#include "runtime/calibrate.hpp"
#include "runtime/cuda.hpp"
#include "runtime/statistics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ostream>

namespace saguaro::host {

namespace {

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

} // namespace

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

} // namespace saguaro::host
