// The time-tiled step (Saguaro::time_tile): what about this run rules it out, the plain step's
// price the model compares it with, the mapper's decision (mapper/time_tile.hpp) carried out as
// the step plan's variant (schedule/step_plan.hpp), and its launch.

#include "schedule/simulation.hpp"
#include "schedule/simulation_internal.hpp"

#include "mapper/mapper.hpp"
#include "model/device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

namespace saguaro::host {

// Why this run cannot take a time-tiled step ("" when it can), with `tiled` the index of the
// right-hand side in the step plan's functions that would carry it.
std::string Simulation::time_tile_obstacle(int& tiled) const {
  tiled = -1;
  const runtime::BackendDescription backend = backend_->description();
  const grid::Patch& patch = decomposition_->patch();
  if (!backend.time_tiles)
    return fmt::format("the {} backend makes no time-tiled steps (the cuda backend does)",
                       backend.name);
  if (patch.ranks > 1)
    return fmt::format("{} ranks: a time-tiled step covers the whole periodic box on one",
                       patch.ranks);
  for (int a = 0; a < 3; ++a)
    if (!patch.spec.periodic[a]) return fmt::format("the grid is not periodic along {}", "xyz"[a]);
  std::string why;
  const schedule::Integrator& integrator = step_->plan().integrator;
  const std::optional<schedule::ButcherTableau> tableau =
      schedule::butcher_tableau(integrator, &why);
  if (!tableau) return why;
  if (!tableau->sub_diagonal())
    return fmt::format("the integrator {} has a tableau with more than a sub-diagonal",
                       integrator.name);
  for (std::size_t f = 0; f < step_functions_[0].size(); ++f) {
    const StepTarget& target = step_targets_[f];
    const std::string& name = step_functions_[0][f].name;
    if (target.binding == nullptr) {
      // Boundary_RHS acts on outer faces, which a periodic grid has none of.
      if (support::lower(name) == "boundary_rhs") continue;
      return fmt::format("MoL_CalcRHS runs {}, which a time-tiled step cannot take in", name);
    }
    if (tiled >= 0)
      return fmt::format("MoL_CalcRHS runs two calculations ({} and {})",
                         step_functions_[0][std::size_t(tiled)].name, name);
    tiled = int(f);
  }
  if (tiled < 0) return "MoL_CalcRHS runs no calculation";
  for (const schedule::StepFunction& f : step_functions_[1])
    if (f.role == schedule::StepFunction::Role::call)
      return fmt::format("MoL_PostStep runs {}, which needs every stage's state", f.name);
  for (const std::vector<std::string>* out : {&norm_vars_, &hdf5_vars_})
    for (const std::string& v : *out)
      for (int r : rhs_)
        if (support::iequals(v, fields_->name(r)))
          return fmt::format("{} is output, and a time-tiled step computes no right-hand side "
                             "into memory",
                             v);
  return "";
}

// The model's time of one plain step: every launch of the step plan priced under its mapping,
// each combination the right-hand sides do not fold as a pass over memory, and each exchange's
// ghost fill (a time-tiled step has those of the readers between steps,
// TimeTileRequest::exchange_seconds). The boundaries are left out (periodic: none).
double Simulation::plain_step_seconds(const model::Device& device) const {
  const calc::Program& program = setup_.program;
  const grid::Patch& patch = decomposition_->patch();
  const mapper::MapperOptions options = patch_mapper_options();
  std::map<std::size_t, double> price;
  auto seconds_of = [&](const CalcBinding* b) {
    const std::size_t c = calculation_of(b);
    if (!price.count(c))
      price[c] = mapper::price_mapping(program.calculations[c], plan_.calculations[c].mapping,
                                       device, options)
                     .seconds;
    return price[c];
  };
  double total = 0;
  const double arrays = double(patch.points()) * 8 / (device.dram_bandwidth * 1e9);
  const double fill = exchange_fill_seconds(device);
  for (const schedule::StepOp& op : step_->plan().ops) {
    using Kind = schedule::StepOp::Kind;
    if (op.kind == Kind::exchange_begin) {
      total += fill;
      continue;
    }
    if (op.kind == Kind::combine) {
      const double variables = double(evolved_.size() - op.folded_variables.size());
      total += variables * double(op.combination.terms.size() + 1) * arrays;
      continue;
    }
    if (op.kind != Kind::call && op.kind != Kind::interior) continue; // a shell: with its interior
    const StepTarget& target = step_targets_.at(std::size_t(op.function));
    const CalcBinding* b = op.folded ? target.folded.at(std::size_t(op.stage)) : target.binding;
    if (b != nullptr) total += seconds_of(b);
  }
  return total;
}

// The fill of one exchange of the evolved variables on this rank's device: every ghost point of
// the patch read and written (the messages between ranks are not counted here).
double Simulation::exchange_fill_seconds(const model::Device& device) const {
  const grid::Patch& patch = decomposition_->patch();
  const double ghosts = double(patch.allocated().volume() - patch.owned.volume());
  return model::ghost_fill_seconds(device, double(evolved_.size()) * ghosts * 2 * 8);
}

// The mapper's options for pricing a mapping over this rank's patch (its owned points).
mapper::MapperOptions Simulation::patch_mapper_options() const {
  const grid::Patch& patch = decomposition_->patch();
  mapper::MapperOptions options;
  for (int a = 0; a < 3; ++a) options.grid[std::size_t(a)] = patch.owned.hi[a] - patch.owned.lo[a];
  return options;
}

// The GPU description the host prices with: the run's (Saguaro::device_description, or the
// prediction log's), else configs/devices/ by the GPU's name; none where there is none.
std::optional<model::Device> Simulation::pricing_device() const {
  if (device_ && device_->kind == "gpu") return device_;
  if (setup_.device && setup_.device->kind == "gpu") return setup_.device;
  if (const std::string path = model::find_device_description(backend_->description().device);
      !path.empty())
    return model::load_device(path);
  return std::nullopt;
}

void Simulation::plan_time_tile() {
  const param::Registry& reg = setup_.registry;
  const calc::Program& program = setup_.program;
  mapper::TimeTileRequest request;
  request.mode = reg.get_keyword("Saguaro", "time_tile");
  int tiled = -1;
  if (request.mode != "no") request.obstacle = time_tile_obstacle(tiled);
  const CalcBinding* binding = tiled >= 0 ? step_targets_[std::size_t(tiled)].binding : nullptr;
  if (binding == nullptr) {
    if (request.mode == "yes")
      par_error(setup_, "Saguaro", "time_tile",
                "Saguaro::time_tile = \"yes\", but " + request.obstacle,
                {{{}, "use \"auto\" to take a time-tiled step only where one is possible"}});
    if (request.mode == "auto")
      time_tile_choice_.reason = "time-tiled step: not for this run (" + request.obstacle + ")";
    return;
  }
  const std::size_t calc = calculation_of(binding);
  request.state = program.evolved;
  for (int r : rhs_) request.rhs.push_back(fields_->name(r));
  request.stages = int(step_->plan().integrator.stages.size());
  // Parts need a register to carry the accumulator (schedule::time_tile_accumulator).
  request.max_parts = schedule::time_tile_accumulator(step_->plan().integrator) >= 0 ? 2 : 1;
  const grid::Patch& patch = decomposition_->patch();
  for (int a = 0; a < 3; ++a) request.grid[std::size_t(a)] = patch.spec.points[a];
  request.device = pricing_device();
  if (request.device) {
    request.plain_seconds = plain_step_seconds(*request.device);
    // The tiled step leaves its exchange to the code between steps that reads the ghosts.
    const int period = ghost_reader_period();
    request.exchange_seconds = period > 0 ? exchange_fill_seconds(*request.device) / period : 0;
  }
  // The tiles the mapper re-prices are compiled here; those it chooses are kept for the run.
  using Key = std::tuple<int, int, int, int, int>; // first stage, stages, tile
  auto key = [](const calc::TimeTilePlan& p) {
    return Key{p.first, p.stages, p.tile.tx, p.tile.ty, p.tile.nz};
  };
  std::map<Key, std::unique_ptr<runtime::CompiledTimeTile>> compiled;
  request.prefetch = [&](const std::vector<calc::TimeTilePlan>& plans) {
    backend_->precompile_time_tiles(program, int(calc), plans);
  };
  request.resources = [&](const calc::TimeTilePlan& plan) {
    std::unique_ptr<runtime::CompiledTimeTile>& k = compiled[key(plan)];
    if (!k) k = backend_->compile_time_tile(program, int(calc), plan);
    return runtime::compiled_resources(k->resources());
  };
  time_tile_choice_ = mapper::choose_time_tile(*binding->calc, request);
  if (!time_tile_choice_.use) {
    if (request.mode == "yes")
      par_error(setup_, "Saguaro", "time_tile",
                "Saguaro::time_tile = \"yes\", but " + time_tile_choice_.reason, {});
    return;
  }
  std::vector<int> parts;
  for (const calc::TimeTilePlan& plan : time_tile_choice_.parts) {
    std::unique_ptr<runtime::CompiledTimeTile>& k = compiled[key(plan)];
    // not re-priced (no description: "yes" took the first tiles)
    if (!k) k = backend_->compile_time_tile(program, int(calc), plan);
    time_tiles_.push_back(std::move(k));
    parts.push_back(plan.stages);
  }
  start_step(schedule::build_time_tiled_step_plan(step_->plan().integrator, step_functions_[0],
                                                  step_functions_[1], tiled, parts));
}

// plan_time_tile priced the plain step under the mappings before the empirical finish; a second
// run, the verdicts cached, prices it under the verdicts'. So that both take the same step (and
// the same results bit for bit), the decision is taken again under the verdicts: the plain step
// planned anew, then the tiles priced against it (from the compile cache: the same tiles).
void Simulation::decide_time_tile_again() {
  // "yes" and "no" do not price; where nothing was priced there is nothing to decide again.
  if (setup_.registry.get_keyword("Saguaro", "time_tile") != "auto" ||
      (!time_tile_choice_.use && std::isnan(time_tile_choice_.plain_seconds)))
    return;
  const std::string before = time_tile_choice_.step();
  time_tiles_.clear();
  time_tile_choice_ = {};
  plan_step();
  plan_time_tile();
  const std::string after = time_tile_choice_.step();
  if (rank_ == 0 && after != before)
    log_ << "  with the empirical finish's verdicts: " << time_tile_choice_.reason << "\n";
}

// One time-tiled kernel: the whole step, the state's owned points to the new state's register
// (its ghosts are the post-step's exchange), or a part of it (schedule::StepOp::first_stage):
// its registers carry the next stage's state and the accumulator between the parts.
void Simulation::run_time_tile(const schedule::StepOp& op) {
  const StepTarget& target = step_targets_.at(std::size_t(op.function));
  const grid::Patch& patch = decomposition_->patch();
  runtime::KernelArgs args = kernel_args(*target.binding);
  for (int a = 0; a < 3; ++a) {
    args.lo[std::size_t(a)] = ghost_;
    args.hi[std::size_t(a)] = ghost_ + patch.size()[a];
  }
  std::size_t part = 0;
  while (part < time_tile_choice_.parts.size() &&
         time_tile_choice_.parts[part].first != op.first_stage)
    ++part;
  if (part == time_tile_choice_.parts.size())
    throw std::logic_error("the step plan's time-tiled stages are not the mapper's parts");
  const bool ends = time_tile_choice_.parts[part].ends_step();
  auto array = [&](int reg, std::size_t v) {
    return fields_->data(step_registers_.at(std::size_t(reg))[v]);
  };
  runtime::TimeTileCall call;
  for (std::size_t v = 0; v < evolved_.size(); ++v) {
    call.state.push_back(fields_->data(evolved_[v]));
    call.next.push_back(array(op.registers[0], v));
    if (!ends) call.next_accumulator.push_back(array(op.registers[1], v));
    if (op.reads[0] >= 0) {
      call.stage_input.push_back(array(op.reads[0], v));
      call.accumulator.push_back(array(op.reads[1], v));
    }
  }
  schedule::time_tile_coefficients(*step_->plan().tableau, dt_, call.a, call.b);
  runtime::ArraySpace& space = fields_->space();
  const int before = timing_step_ ? space.mark(runtime::ArraySpace::Queue::compute) : -1;
  time_tiles_.at(part)->run(args, call);
  if (timing_step_)
    step_whole_rhs_.push_back({before, space.mark(runtime::ArraySpace::Queue::compute)});
}

} // namespace saguaro::host
