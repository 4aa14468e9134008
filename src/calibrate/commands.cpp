// The `saguaro calibrate` commands: the device (GPU or host) and the interconnect between two
// MPI ranks. The CLI parses the arguments and calls these.
#include "calibrate/calibrate.hpp"

#include "grid/grid.hpp"
#include "model/device.hpp"
#include "runtime/cuda.hpp"
#include "runtime/disk_cache.hpp"
#include "runtime/statistics.hpp"

#include <mpi.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <vector>

namespace saguaro::calibrate {

namespace {

// The description as YAML to `out` (atomically) or, when it is "", to standard output; the
// exit status.
int write_description(const model::Device& device, const std::string& out) {
  if (out.empty()) {
    std::cout << model::format_device(device) << std::flush;
    return 0;
  }
  try {
    runtime::write_atomically(out, model::format_device(device), "saguaro calibrate");
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n"; // "saguaro calibrate: cannot write ..."
    return 1;
  }
  std::cerr << "saguaro calibrate: wrote " << out << "\n";
  return 0;
}

} // namespace

int device_command(const std::string& out, bool cpu, const std::string& base, bool quick) {
  CalibrationOptions options;
  // Recorded in every measured value's source: what was run, as far as it changes the values.
  options.command =
      std::string("saguaro calibrate") + (cpu ? " --cpu" : "") + (quick ? " --quick" : "");
  options.quick = quick;
  options.progress = [](const std::string& line) { std::cerr << line << "\n" << std::flush; };

  std::optional<model::Device> base_device;
  if (!base.empty()) {
    try {
      base_device = model::load_device(base);
    } catch (const model::DeviceError& e) {
      const std::string message = e.what(); // "FILE:LINE:COL: error: ..." with the line shown
      std::cerr << message << (message.empty() || message.back() != '\n' ? "\n" : "");
      return 2;
    }
  }

  model::Device device;
  try {
    if (cpu) {
      std::cerr << "saguaro calibrate: measuring this host's CPU\n";
      device = calibrate_cpu(options);
    } else {
      std::string why;
      if (!runtime::cuda::available(&why)) {
        std::cerr << "saguaro calibrate: no GPU can be used: " << why
                  << "\n(`saguaro calibrate --cpu` measures this host's CPU instead)\n";
        return 1;
      }
      const runtime::cuda::DeviceInfo info = runtime::cuda::device_info();
      std::cerr << fmt::format("saguaro calibrate: measuring {} ({}, {} SMs){}\n", info.name,
                               info.arch(), info.multiprocessors, quick ? ", quick" : "");
      device = calibrate_gpu(base_device ? &*base_device : nullptr, options);
    }
  } catch (const std::exception& e) {
    std::cerr << "saguaro calibrate: error: " << e.what() << "\n";
    return 1;
  }

  return write_description(device, out);
}

// ---------------------------------------------------------------------------------------------
// saguaro calibrate --interconnect

namespace {

constexpr int kExchangeGhost = 3; // the ghost width of fourth-order upwinded advection (BSSN)

// One message size of the series: `fields` arrays of a grid of nx x ny x nz points split in two
// along z, so that the one phase of the exchange moves fields g (nx + 2g)(ny + 2g) doubles each
// way.
struct MessageShape {
  int nx = 0, ny = 0, nz = 0, fields = 1;
  double bytes(int g) const { return 8.0 * fields * g * (nx + 2.0 * g) * (ny + 2.0 * g); }
};

// The shape whose message is nearest `target` bytes: one field up to 1 MiB, then more fields (up
// to 32: a BSSN-sized system syncs about 25, and the CUDA pack kernel takes 32 a launch) rather
// than a larger face. z must be the longest axis for the split to fall on it, so a rank holds about
// nz / (2g) times its message per field: 64 MiB as one field would take 19 GB a rank, as 32
// fields 3.4 GB.
MessageShape shape_for(double target, int g) {
  MessageShape s;
  while (s.fields < 32 && target / s.fields > 1024.0 * 1024.0) s.fields *= 2;
  const double side = std::sqrt(target / (8.0 * s.fields * g)); // nx + 2g
  s.nx = s.ny = std::max(1, int(std::lround(side)) - 2 * g);
  s.nz = std::max(s.nx + 1, 2 * g);
  return s;
}

std::string bytes_text(double bytes) {
  return bytes < 1000 * 1024.0 ? fmt::format("{:.3g} KiB", bytes / 1024.0)
                               : fmt::format("{:.3g} MiB", bytes / (1024.0 * 1024.0));
}

// The lowest rank of MPI_COMM_WORLD for which `failed` holds, -1 when none: a check that may
// fail on some ranks only ends the command on all alike, and one of them says why.
int first_failing(bool failed) {
  int rank = 0, ranks = 1, first = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int mine = failed ? rank : ranks;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return first < ranks ? first : -1;
}

// The median over `repeats` of the slower rank's time of one blocking exchange of `shape`
// between the two ranks of `pair`, everything included: pack, staging copies, MPI, unpack.
double time_exchange(const MessageShape& shape, MPI_Comm pair, runtime::ArraySpace& space,
                     int warmups, int repeats) {
  grid::GridSpec spec;
  spec.points = {shape.nx, shape.ny, shape.nz};
  spec.ghost = kExchangeGhost; // not periodic: the one exchange is between the two ranks
  grid::Decomposition decomposition(spec, pair);
  if (decomposition.dims() != grid::Index3{1, 1, 2})
    throw std::runtime_error(fmt::format(
        "the grid of {} x {} x {} points was split {} x {} x {} over the 2 ranks, not along z "
        "only: the measured message would not be the one intended",
        shape.nx, shape.ny, shape.nz, decomposition.dims()[0], decomposition.dims()[1],
        decomposition.dims()[2]));
  decomposition.use_device_messages(space.on_device() && grid::mpi_takes_device_pointers());
  grid::GridFunctions functions(decomposition.patch(), space);
  std::vector<double*> fields;
  for (int f = 0; f < shape.fields; ++f)
    fields.push_back(functions.data(functions.add(fmt::format("u{}", f))));

  for (int w = 0; w < warmups; ++w) {
    decomposition.sync(fields, space);
    space.synchronize();
  }
  std::vector<double> seconds;
  for (int r = 0; r < repeats; ++r) {
    MPI_Barrier(pair);
    const double start = MPI_Wtime();
    decomposition.sync(fields, space);
    space.synchronize(); // a GPU's unpack kernels are still queued when sync() returns
    seconds.push_back(MPI_Wtime() - start);
  }
  MPI_Allreduce(MPI_IN_PLACE, seconds.data(), repeats, MPI_DOUBLE, MPI_MAX, pair);
  return runtime::median(seconds);
}

int calibrate_interconnect(const std::string& out, bool cpu, const std::string& base, bool quick) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::string command = fmt::format("mpirun -n {} saguaro calibrate --interconnect{}{}",
                                          ranks, cpu ? " --cpu" : "", quick ? " --quick" : "");
  auto say = [&](const std::string& line) {
    if (rank == 0) std::cerr << line << "\n" << std::flush;
  };

  if (ranks < 2) {
    say("saguaro calibrate --interconnect: the exchange is between 2 ranks and this is 1: run it "
        "as mpirun -n 2 saguaro calibrate --interconnect");
    return 1;
  }
  if (cpu && base.empty()) {
    say("saguaro calibrate --interconnect --cpu: name the description to add the interconnect "
        "to with --base (a GPU's from configs/devices/, or one `saguaro calibrate --cpu` wrote)");
    return 2;
  }

  // Where the arrays live, on the two ranks that exchange.
  runtime::ArraySpace* space = nullptr;
  std::string why;
  if (rank < 2) {
    if (cpu) {
      space = &runtime::host_space();
    } else if (runtime::cuda::available(&why)) {
      try {
        space = &runtime::cuda::device_space();
      } catch (const std::exception& e) {
        why = e.what();
      }
    }
  }
  if (const int failing = first_failing(rank < 2 && space == nullptr); failing >= 0) {
    if (rank == failing)
      std::cerr << fmt::format("saguaro calibrate --interconnect: no GPU can be used on rank {}: "
                               "{}\n(`--cpu` measures an exchange of host arrays instead)\n",
                               rank, why)
                << std::flush;
    return 1;
  }

  // The description to complete, on rank 0 (which writes it).
  model::Device device;
  std::string device_name;
  int status = 0;
  if (rank == 0) {
    try {
      if (!cpu) device_name = runtime::cuda::device_info().name;
      std::string file = base;
      if (file.empty()) {
        file = model::find_device_description(device_name);
        if (file.empty())
          throw std::runtime_error("configs/devices/ (or $SAGUARO_DEVICES) has no description "
                                   "of " +
                                   device_name + ": name one with --base");
      }
      device = model::load_device(file);
      if (cpu) device_name = device.name;
      std::cerr << fmt::format("saguaro calibrate --interconnect: completing {} ({})\n", file,
                               device.name);
    } catch (const model::DeviceError& e) {
      const std::string message = e.what(); // "FILE:LINE:COL: error: ..." with the line shown
      std::cerr << message << (message.empty() || message.back() != '\n' ? "\n" : "");
      status = 2;
    } catch (const std::exception& e) {
      std::cerr << "saguaro calibrate --interconnect: error: " << e.what() << "\n";
      status = 1;
    }
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (status != 0) return status;

  // Ranks 0 and 1 exchange; any others wait in MPI_Finalize.
  MPI_Comm pair = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
  if (pair == MPI_COMM_NULL) return 0;

  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(pair, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int on_node = 1;
  MPI_Comm_size(node, &on_node);
  // Messages travel as they will in a run (Saguaro::cuda_aware_mpi = auto, cuda_ipc = yes).
  const std::string transport = grid::exchange_transport(
      *space, space->on_device() && grid::mpi_takes_device_pointers(),
      space->peer_messages() && on_node == 2, space->peer_signals() && space->peer_arrays());
  MPI_Comm_free(&node);
  const std::string hosts = on_node == 2 ? "one host" : "two hosts";

  const double top = (quick ? 1.0 : 64.0) * 1024 * 1024;
  const int warmups = quick ? 2 : 3, repeats = quick ? 9 : 20;
  say(fmt::format("saguaro calibrate --interconnect: sync() between 2 ranks on {}, {}, ghost {}, "
                  "messages 8 KiB..{}, median of {}{}",
                  hosts, transport, kExchangeGhost, bytes_text(top), repeats,
                  quick ? ", quick" : ""));
  std::vector<MessageShape> shapes;
  std::vector<double> bytes, seconds;
  for (double target = 8 * 1024.0; target <= top * 1.0001; target *= 2) {
    shapes.push_back(shape_for(target, kExchangeGhost));
    bytes.push_back(shapes.back().bytes(kExchangeGhost));
    seconds.push_back(time_exchange(shapes.back(), pair, *space, warmups, repeats));
  }
  MPI_Comm_free(&pair);
  if (rank != 0) return 0;

  const LinearFit fit = fit_latency_bandwidth(bytes, seconds);
  std::cerr << fmt::format("{:>12} {:>6} {:>16} {:>12} {:>12} {:>10}\n", "bytes", "fields", "grid",
                           "median [us]", "fit [us]", "GB/s");
  int fewest = shapes.front().fields, most = fewest;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const MessageShape& m = shapes[i];
    fewest = std::min(fewest, m.fields);
    most = std::max(most, m.fields);
    std::cerr << fmt::format("{:>12.0f} {:>6} {:>16} {:>12.2f} {:>12.2f} {:>10.2f}\n", bytes[i],
                             m.fields, fmt::format("{}x{}x{}", m.nx, m.ny, m.nz), seconds[i] * 1e6,
                             (fit.latency_s + fit.seconds_per_byte * bytes[i]) * 1e6,
                             bytes[i] / seconds[i] * 1e-9);
  }
  if (!(fit.latency_s > 0)) {
    std::cerr << "saguaro calibrate --interconnect: error: the fit found no latency (the small "
                 "messages took less than the line through the large ones): the timings are "
                 "too noisy; run it again on an idle machine\n";
    return 1;
  }
  device.interconnect_latency = fit.latency_s * 1e6;
  device.interconnect_bandwidth = 1e-9 / fit.seconds_per_byte;
  const std::string fields = fewest == most
                                 ? fmt::format("{} field{}", fewest, fewest == 1 ? "" : "s")
                                 : fmt::format("{}..{} fields", fewest, most);
  const std::string source =
      fmt::format("calibrated {} {} {}: sync() of {}, ghost {}, between 2 ranks on {}, {}, message "
                  "{}..{}, max over ranks, median of {}; least-squares fit of relative residuals",
                  today(), device_name, command, fields, kExchangeGhost, hosts, transport,
                  bytes_text(bytes.front()), bytes_text(bytes.back()), repeats);
  device.sources["interconnect_latency"] = source;
  device.sources["interconnect_bandwidth"] = source;
  std::cerr << fmt::format("interconnect_latency   {:>10.3g} us\ninterconnect_bandwidth {:>10.3g} "
                           "GB/s\n",
                           device.interconnect_latency, device.interconnect_bandwidth);

  return write_description(device, out);
}

} // namespace

int interconnect_command(const std::string& out, bool cpu, const std::string& base, bool quick) {
  MPI_Init(nullptr, nullptr);
  int status = 0;
  try {
    status = calibrate_interconnect(out, cpu, base, quick);
  } catch (const std::exception& e) {
    // Possibly on one rank only: the other may be waiting in a collective.
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::cerr << fmt::format("saguaro calibrate --interconnect (rank {}): error: {}\n", rank,
                             e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}

} // namespace saguaro::calibrate
