// The run's decisions as one value: per calculation the mapping the backend compiles, the
// candidates Saguaro::mapper_verify times and its verdict, and whether a right-hand side is
// split around the evolved variables' ghost exchange; with the banner's lines on what the
// mapper did. The host (schedule/simulation*.cpp) builds it in three steps, because each needs
// what the one before made possible:
//
//   plan_mappings     before compiling: Saguaro::mapper's choice (rank 0 maps, a thread per
//                     calculation; every rank takes its choice through `broadcast`)
//   plan_launches     once compiled, with the grid's exchange: interior/shell splits
//   verify_candidates on the initial data: the candidates timed by the host's `time`, the
//                     fastest kept (the empirical finish, on by default), and the verdict
//                     cached on disk so that the next run of the same calculation, grid,
//                     device and code times nothing
//
// MPI and the runtime stay out: the broadcast and the timing are functions the host passes
// (tests pass fakes). A plan prints (to_string) and compares like any value.
#pragma once

#include "calc/calculation.hpp"
#include "calc/mapping.hpp"
#include "mapper/mapper.hpp"
#include "model/device.hpp"

#include <array>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace saguaro::mapper {

// Makes rank 0's bytes every rank's (the host: MPI_Bcast of the size, then the bytes).
using Broadcast = std::function<void(std::string& bytes)>;
// The seconds of each candidate of calculation `calculation` (index into the program's
// calculations) over this run's patch, the same on every rank (the host: compiled, launched,
// the median of 5 after a warm-up, the slowest rank's; the state restored afterwards).
using TimeCandidates = std::function<std::vector<double>(
    std::size_t calculation, const std::vector<calc::Mapping>& candidates)>;

// The model's seconds of each candidate of calculation `calculation` with what the compiler made
// of its kernels (ptxas's registers, spills and shared memory in place of the estimate), NaN
// where it knows nothing (the host: the compiled candidates' resources, the mapper's model).
using PriceCandidates = std::function<std::vector<double>(
    std::size_t calculation, const std::vector<calc::Mapping>& candidates)>;

struct CalculationPlan {
  std::string name;
  calc::Mapping mapping; // what the backend compiles (the kept candidate once verified)
  // Saguaro::mapper_verify: the mappings to time, the mapper's choice first (fewer than two:
  // nothing to verify); after verify_candidates their seconds and the one kept.
  std::vector<calc::Mapping> candidates;
  std::vector<double> candidate_seconds;
  std::size_t kept = 0;
  // The candidates re-priced with the compiler's resources before they are timed (empty: not
  // priced), and the one the model so picks: the model's pick with ptxas's registers.
  std::vector<double> candidate_priced;
  std::size_t priced_pick = 0;
  // A right-hand side split around the ghost exchange: its interior overlaps the messages, its
  // boundary shell follows them. `regions` is set for every splittable calculation.
  bool split = false;
  calc::RegionSplit regions;
  std::string launch_reason; // "" when not considered
};

// Where the root keeps the empirical finish's verdicts (set by plan_mappings on rank 0 when
// Saguaro::mapping_cache is on): the mapping cache, under a method word naming the mapper, the
// number of candidates, the exact patch, the GPU and mapper::code_version().
struct VerdictCache {
  std::string dir;
  model::Device device;
  std::array<long, 3> grid{0, 0, 0};
  std::string method;
};

struct RunPlan {
  std::vector<CalculationPlan> calculations;
  std::optional<VerdictCache> verdicts; // rank 0 only
  std::vector<std::string> log;         // the banner's lines on what the mapper did
  // The evolved variables' ghost exchange (plan_launches): phases and bytes for the prediction
  // log, the model's time of one exchange (NaN: not described).
  std::string exchange_words;
  double exchange_predicted = std::numeric_limits<double>::quiet_NaN();

  std::vector<calc::Mapping> mappings() const;                // one per calculation
  std::vector<std::vector<calc::Mapping>> candidates() const; // one list per calculation
  bool any_split() const;
};

// A readable account: one block per calculation (mapping, candidates with their timings and the
// one kept, launches), then the log.
std::string to_string(const calc::Program& program, const RunPlan& plan);

// Saguaro::mapper and what it needs.
struct MappingRequest {
  std::string method = "default"; // default, fixed, model, exhaustive
  // Saguaro::cuda_block and cuda_buffering per calculation: "default", and what the others
  // start from.
  std::vector<calc::Mapping> defaults;
  // "fixed": Saguaro::mapping_file's mapping per calculation it names, and its path.
  std::vector<std::optional<calc::Mapping>> fixed;
  std::string fixed_path;
  // model, exhaustive: whether the backend's mappings are the model's to choose
  // (runtime::BackendDescription::mapped_by_model); others run the default partition.
  bool mapped_by_model = false;
  bool root = true; // rank 0: the one that maps (the others take its choice)
  // The description to map for and where it came from; when none, the configs/devices/
  // description whose name is `device_name` (the GPU's).
  std::optional<model::Device> device;
  std::string device_origin;
  std::string device_name;
  std::array<long, 3> grid{0, 0, 0}; // rank 0's patch, owned points
  int verify = 0;                    // Saguaro::mapper_verify (candidates per calculation)
  std::string cache_dir;             // Saguaro::cache_dir ("" default)
  bool mapping_cache = false;        // Saguaro::mapping_cache
};

// The mappings and candidates for `program`. On a non-root rank nothing is searched: it takes
// the root's choice through `broadcast` (which every rank calls alike). Throws
// calc::MappingError when the mapper failed on the root (on every rank).
RunPlan plan_mappings(const calc::Program& program, const MappingRequest& request,
                      const Broadcast& broadcast);

// The ghost exchange of the evolved variables as the grid describes it, for plan_launches.
struct ExchangeRequest {
  std::string overlap = "auto";    // Saguaro::exchange_overlap: auto, yes, no
  int evolved = 0;                 // evolved variables exchanged together
  std::vector<double> phase_bytes; // per phase, the bytes of one message
  std::string transport;           // how the messages travel (grid::Decomposition::transport)
  // [axis][lower/upper]: faces whose ghosts arrive by message or that are outer faces (their
  // flat boundaries follow the messages): the shell lies along them.
  std::array<std::array<bool, 2>, 3> shell_faces{};
  calc::Region owned;                // the owned points, local indices
  std::array<long, 3> grid{0, 0, 0}; // the patch's owned points per axis
  // Per calculation: a right-hand side that reads ghosts and is not a boundary calculation.
  std::vector<bool> splittable;
  // The description the exchange and the launches are priced with, when it describes the
  // interconnect and the backend runs on a GPU; else none (split by default).
  std::optional<model::Device> device;
};

// Decides which right-hand sides are split (the root's decision through `broadcast`: a rank's
// patch, and with it the prices, may differ by a point) and adds the banner's lines.
void plan_launches(const calc::Program& program, const ExchangeRequest& request,
                   const Broadcast& broadcast, RunPlan& plan);

// The empirical finish's candidates for one calculation, `verify` (>= 1) of the search's: the
// model's pick; the fastest predicted mapping of another structure (another kernel partition,
// else other block shapes) among the runners-up; further runners-up until there are `verify`;
// then, always, the run's default mapping and calc::one_thread_per_point (the naive kernel's
// shape), and the register fits where the search made them (MapResult::register_fits: the
// fissions at two blocks, the register-capped one thread per point, the register queues and
// the sums by input).
// Duplicates are left out; the model's pick stays first.
std::vector<calc::Mapping> finish_candidates(const calc::Calculation& calc, const MapResult& result,
                                             const calc::Mapping& default_mapping, int verify);

// The candidates of calculation `plain` when they are timed in its folded form `folded`
// (Simulation::timed_form), less those the folding changes: whose sums by input the folded
// stores do not allow (calc::fold_mapping drops them: Maxwell's), which would be timed as other
// kernels than their label says, and those that fold to the same kernels as an earlier one. Where
// that drops the first, the mapper's choice, the next candidate is the choice (CalculationPlan::
// mapping) and the folded forms follow it; where it would drop them all, the first stays.
void drop_candidates_changed_by_folding(const calc::Program& program, std::size_t plain,
                                        std::size_t folded, RunPlan& plan);

// The index of the lowest price below +inf (NaN: not priced), prices.size() where there is none:
// the candidate the model picks once the compiler has spoken (CalculationPlan::priced_pick).
std::size_t cheapest_price(const std::vector<double>& prices);

// The empirical finish's finalists that are close in a right-hand side's timed form are timed in
// every folded form a step launches (the forms move different arrays: the 8th-order wave's two
// fastest candidates at 256^3 on an H200 were within 1% in stage 1's form and 3-12% apart in the
// other three). `timed`: every candidate's time in the timed form; `close`: the candidates so
// timed, `step[c]` the sum of close[c]'s times over the step's `launches` launches. Returns each
// candidate's time per launch over the step: a close one's step / launches, any other's timed
// time scaled by the ratio of step / launches to timed time of the close candidate fastest in the
// timed form. Without two close candidates, `timed` unchanged.
std::vector<double> step_weighted_times(const std::vector<double>& timed,
                                        const std::vector<std::size_t>& close,
                                        const std::vector<double>& step, int launches);

// Times the candidates of every calculation that has two or more, keeps the fastest (ties: the
// first) and logs a line each; with plan.verdicts, stores each verdict in the mapping cache
// (a verdict that cannot be written is a log line, not an error). Returns the new log lines; the
// plan's mappings change where a candidate other than the mapper's choice was kept. `timed_as`
// names the form a calculation's candidates were timed in where it is another (a right-hand
// side timed in a folded form, Simulation::timed_form), "" where it is the calculation itself;
// the line says so, since its times are not the plain form's. `price`, where given, re-prices
// every candidate with the compiler's resources before the timing (the registers and spills
// the estimate misses: BSSN's kernels of 7 KB of spills); the line names the candidate the model
// then picks and how its measured time compares with the fastest.
std::vector<std::string>
verify_candidates(const calc::Program& program, const TimeCandidates& time, RunPlan& plan,
                  const std::function<std::string(std::size_t)>& timed_as = {},
                  const PriceCandidates& price = {});

} // namespace saguaro::mapper
