// `saguaro calibrate`: measure this GPU (or, with --cpu, this host) with microbenchmarks and
// write its device description (model/device.hpp) as YAML; with --interconnect, the ghost
// exchange between two MPI ranks of this machine instead.
#pragma once

#include <string>

namespace saguaro::cli {

// `out`: the YAML file to write ("" = standard output); `cpu`: calibrate the host instead of
// the GPU; `base`: a description to take the quantities that are not measured from ("" =
// defaults); `quick`: fewer repeats and smaller buffers. Progress goes to standard error.
// Returns the exit status: 0, 1 when there is nothing to calibrate (no GPU) or a measurement
// fails, 2 when the base description does not read.
int calibrate_main(const std::string& out, bool cpu, const std::string& base, bool quick);

// `mpirun -n 2 saguaro calibrate --interconnect`: times the ghost exchange (grid::
// Decomposition::sync) between ranks 0 and 1 for messages of 8 KiB to 64 MiB (`quick`: to
// 1 MiB), fits latency + bytes / bandwidth, and writes the description `base` (default: the
// one configs/devices/ has for this GPU; required with `cpu`) with interconnect_latency and
// interconnect_bandwidth set. `cpu`: host arrays instead of the GPU's. Initialises and
// finalises MPI itself; rank 0 reports and writes. Returns the exit status: 0; 1 on 1 rank,
// without a GPU (and no `cpu`), with no description of this GPU, or when a measurement fails;
// 2 when the base description does not read or `cpu` comes without `base`.
int calibrate_interconnect_main(const std::string& out, bool cpu, const std::string& base,
                                bool quick);

} // namespace saguaro::cli
