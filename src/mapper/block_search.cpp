#include "mapper/block_search.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace saguaro::mapper {

namespace {
// The part of the configuration space the model is trusted in: blocks of 128 to 256 threads
// with t_ee of 1 to 16, at least four blocks per SM where the region allows. Larger blocks and
// longer columns (512-1024 threads, t_ee = 64) ran 1.5-2.7x slower than predicted on an H200
// (bench/results/2026-11-21-mapper-NVIDIA-H200.md): latency hiding with few, long blocks is
// what Table IVc models worst. Short columns (t_ee 1-2) were left out too until the generated
// loop stopped keeping every load address live (bench/results/2026-11-21-mapper-NVIDIA-H100-
// 80GB-HBM3.md, after that fix): the micro-benchmark's best mapping is t_ee = 1 (ten inputs
// over a column of eight planes overflow L2; one plane per block does not), predicted within
// 8% and measured 1.87x faster than the default.
constexpr int kMinThreads = 128, kMaxThreads = 256, kMinPointsPerThread = 1,
              kMaxPointsPerThread = 16;
constexpr double kMinBlocksPerSm = 4;
} // namespace

std::vector<calc::BlockConfig> block_configurations(const model::Device& device,
                                                    const std::array<long, 3>& extent) {
  const int warp = device.warp_size > 0 ? int(device.warp_size) : 32;
  const int max_threads = std::min(
      kMaxThreads, device.max_threads_per_block > 0 ? int(device.max_threads_per_block) : 1024);
  const long x_cap = std::min<long>(512, (std::max(extent[0], 1L) + warp - 1) / warp * warp);
  std::vector<calc::BlockConfig> all, busy;
  for (int e : {2, 1}) {
    const int f = 3 - e;
    for (int tx = warp; tx <= x_cap; tx *= 2)
      for (int tf = 1; tf <= 32 && (tf == 1 || tf <= extent[std::size_t(f)]); tf *= 2) {
        const int threads = tx * tf;
        if (threads > max_threads) break;
        const bool small_region = x_cap * std::max(extent[std::size_t(f)], 1L) < kMinThreads;
        if (threads < kMinThreads && !small_region) continue;
        const int tee_min =
            int(std::min<long>(kMinPointsPerThread, std::max(extent[std::size_t(e)], 1L)));
        for (int tee = tee_min;
             tee <= kMaxPointsPerThread && (tee == tee_min || tee <= extent[std::size_t(e)]);
             tee *= 2) {
          const calc::BlockConfig b{e, tx, tf, tee};
          all.push_back(b);
          if (model::launch_geometry(b, extent, device).blocks >=
              long(kMinBlocksPerSm * std::max(1.0, device.sm_count)))
            busy.push_back(b);
        }
      }
  }
  return busy.empty() ? all : busy;
}

model::KernelProfile apply(model::KernelProfile kernel, const KernelCandidate& candidate) {
  kernel.block = candidate.block;
  for (std::size_t i = 0; i < kernel.inputs.size() && i < candidate.strategies.size(); ++i)
    kernel.inputs[i].strategy = candidate.strategies[i];
  return kernel;
}

void apply(calc::KernelMapping& mapping, const model::KernelProfile& profile,
           const KernelCandidate& candidate) {
  mapping.block = candidate.block;
  mapping.buffering.clear();
  for (std::size_t i = 0; i < profile.inputs.size() && i < candidate.strategies.size(); ++i)
    if (profile.inputs[i].grid_function >= 0 &&
        candidate.strategies[i] != calc::Buffering::Unbuffered)
      mapping.buffering[profile.inputs[i].grid_function] = candidate.strategies[i];
}

std::array<long, 3> kernel_extent(const model::KernelProfile& profile,
                                  const std::array<long, 3>& grid) {
  std::array<long, 3> e{};
  for (std::size_t a = 0; a < 3; ++a) e[a] = grid[a] + profile.extent_lo[a] + profile.extent_hi[a];
  return e;
}

BlockSearchResult search_blocks(const model::KernelProfile& kernel, const model::Device& device,
                                const BlockSearchOptions& options) {
  BlockSearchResult result;
  const std::vector<calc::BlockConfig> configs =
      options.only.empty() ? block_configurations(device, options.extent) : options.only;

  // Each configuration's lower bound in seconds (one model call each, for all-unbuffered).
  struct Visit {
    calc::BlockConfig block;
    model::LaunchGeometry geometry;
    double bound = 0;
  };
  std::vector<Visit> visits;
  for (const calc::BlockConfig& b : configs) {
    model::KernelProfile k = kernel;
    k.block = b;
    Visit v{b, model::launch_geometry(b, options.extent, device), 0};
    if (options.prune) {
      const double T = model::lower_bound(k, device);
      ++result.model_calls;
      v.bound = std::isfinite(T) ? model::launch_seconds(device, v.geometry, T)
                                 : std::numeric_limits<double>::infinity();
    }
    visits.push_back(v);
  }
  if (options.prune)
    std::stable_sort(visits.begin(), visits.end(),
                     [](const Visit& a, const Visit& b) { return a.bound < b.bound; });

  auto worst_kept = [&] {
    return int(result.best.size()) < std::max(1, options.keep)
               ? std::numeric_limits<double>::infinity()
               : result.best.back().seconds;
  };
  for (const Visit& v : visits) {
    if (options.prune && v.bound >= worst_kept()) {
      ++result.pruned;
      continue;
    }
    ++result.configurations;
    model::KernelProfile k = kernel;
    k.block = v.block;
    PricingContext context{&device, v.geometry, options.combination, options.strategies};
    Assignment a = assign_buffering(k, context, options.method);
    result.model_calls += a.model_calls;
    if (!a.valid()) {
      ++result.invalid;
      continue;
    }
    KernelCandidate c{v.block, std::move(a.strategies), std::move(a.prediction), a.seconds};
    auto at = std::upper_bound(result.best.begin(), result.best.end(), c.seconds,
                               [](double s, const KernelCandidate& x) { return s < x.seconds; });
    result.best.insert(at, std::move(c));
    if (int(result.best.size()) > std::max(1, options.keep)) result.best.pop_back();
  }
  return result;
}

} // namespace saguaro::mapper
