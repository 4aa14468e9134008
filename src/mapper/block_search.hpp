// Block configuration search for one kernel: enumerate C_Block = (e, t_x, t_f, t_ee) within the
// device's limits, run the buffering assignment at each, keep the best predicted. A
// configuration whose model::lower_bound cannot beat the best found so far is skipped without
// running the assignment (configurations are visited in order of that bound, so the skips
// come early and many).
#pragma once

#include "mapper/assignment.hpp"

#include <array>
#include <vector>

namespace saguaro::mapper {

// The configurations the search visits for a region of `extent` points (x, y, z):
//   e in {z, y}; t_x a multiple of the warp size from 32 up to the region's x extent rounded
//   up to a warp; t_f and t_ee powers of two no larger than the region along f and e, t_ee
//   from 4 to 16; t_x t_f of 128 or 256 threads (fewer when the region is that small); and, where
//   the region allows, at least four blocks per SM. Outside that range the model was not
//   validated and measured badly (block_search.cpp says where).
std::vector<calc::BlockConfig> block_configurations(const model::Device& device,
                                                    const std::array<long, 3>& extent);

// One priced candidate kernel: a block configuration and its assignment.
struct KernelCandidate {
  calc::BlockConfig block;
  std::vector<calc::Buffering> strategies; // per KernelProfile::inputs
  model::Prediction prediction;
  double seconds = std::numeric_limits<double>::infinity();
};

struct BlockSearchOptions {
  std::array<long, 3> extent{256, 256, 256}; // the region the kernel computes
  AssignmentMethod method = AssignmentMethod::Efficiency;
  model::Combination combination = model::Combination::Hu;
  StrategySet strategies = kAllStrategies;
  bool prune = true;
  std::vector<calc::BlockConfig> only; // non-empty: visit these configurations only
  int keep = 8;                        // how many of the best candidates to return
};

struct BlockSearchResult {
  std::vector<KernelCandidate> best; // up to `keep`, fastest first; empty: nothing fits
  long model_calls = 0;
  int configurations = 0; // visited
  int pruned = 0;         // skipped by the lower bound
  int invalid = 0;        // no assignment fits
};

BlockSearchResult search_blocks(const model::KernelProfile& kernel, const model::Device& device,
                                const BlockSearchOptions& options);

// `kernel` with `candidate`'s block configuration and strategies.
model::KernelProfile apply(model::KernelProfile kernel, const KernelCandidate& candidate);

// `mapping`'s block configuration and buffering from `candidate`, priced for `profile` (the
// mapping's kernel): the strategy of every grid-function input that is not unbuffered.
void apply(calc::KernelMapping& mapping, const model::KernelProfile& profile,
           const KernelCandidate& candidate);

// The region a kernel of `profile` computes on an interior of `grid` points: the stage's
// extents added.
std::array<long, 3> kernel_extent(const model::KernelProfile& profile,
                                  const std::array<long, 3>& grid);

} // namespace saguaro::mapper
