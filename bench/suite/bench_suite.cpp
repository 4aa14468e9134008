// The benchmark suite's C++ half: where Saguaro's right-hand sides and whole time steps stand
// against the GPU's memory bandwidth, against its own default mapping, and against a naive
// hand-written CUDA kernel. (bench/suite/peers.py times JAX, CuPy and torch.compile on the same
// data; bench/suite/report.py puts both together; bench/suite/run.sh runs it all.)
//
// Per benchmark (B1-B5 of bench/common/benchmarks.hpp) on an n^3 interior, double precision:
//  1. the CPU reference: the CPU backend (generated C++, checked against the interpreter by the
//     test suite) runs the right-hand side once on the benchmark's patch (bench/common/patch.hpp,
//     with the benchmark's fill and parameters); its outputs over the interior go to
//     <data>/<benchmark>-<output>.npy, the calculation as straight-line code (what `saguaro
//     inspect --expressions` prints) to <data>/<benchmark>-expressions.txt, and manifest.json
//     describes them (fill, parameters, flops per point), so the peers can rebuild the inputs,
//     translate the formula where they have no hand-written one, and check themselves;
//  2. on the GPU, each system — Saguaro with the model's mapping (mapper::Method::Model for the
//     GPU's description in configs/devices), Saguaro with the default mapping, the naive kernel
//     of naive.cu (n/a where it has none: B5) — runs once on fresh data and is checked against
//     the reference: every output's max |x - ref| / max |ref| must be <= 1e-10, else the system
//     is "wrong", is not timed, and the run exits with status 1 (after writing everything);
//  3. timing, the same for every system here and in peers.py: after --warmup evaluations,
//     --repeats samples, each the wall time of --batch back-to-back evaluations between two
//     synchronisations, divided by the batch. Saguaro's kernels are also timed with CUDA events
//     (a run: the sum of its kernels'), which is what the model predicts;
//  4. derived: points per second, ns per point, effective bandwidth = compulsory bytes (each
//     input read once, each output written once, over the interior) / time, % of roofline = that
//     bandwidth / the triad bandwidth measured in this run (naive.cu's triad, best launch shape,
//     median of 20, measured before and after the benchmarks), GFLOP/s (the Calculation's flop
//     count per point) and % of the FP64 peak of the GPU's description (fp64_peak_flops).
// The whole steps (B1 and B5): one RK4 step of a periodic n^3 box of the benchmark's equations
// (par text written to <data>) as the `saguaro` driver runs it (host::Simulation, MoL updates,
// ghost exchange, boundaries): the CPU backend gives the reference step (state0 and state1 of
// every evolved variable in <data>), then the CUDA backend with each mapping is checked against
// it after one step and timed over --step-iterations steps (median of Simulation::step_seconds).
// The naive whole step of B1 is naive.cu's periodic kernel with RK4 stage kernels.
//
//   bench_suite [--n 256] [--data DIR] [--json FILE] [--repeats 30] [--batch 10] [--warmup 5]
//               [--benchmarks wave2,...,bssn] [--device auto|FILE.yaml] [--cache DIR]
//               [--step-iterations 25] [--no-step]
//   bench_suite --reference-only --n 32 --data DIR   (no GPU: the references and manifest only)
//
// This file runs the suite: the references, the manifest, the JSON and the table on stdout;
// suite_rows.cpp holds the right-hand side's rows and the checking and timing they share,
// whole_step.cpp the whole step's, suite_rows.hpp what they share.
#include "suite_rows.hpp"

#include "calc/mapping.hpp"
#include "calc/print.hpp"
#include "mapper/mapper.hpp"
#include "model/device.hpp"
#include "runtime/backends.hpp"
#include "runtime/cuda.hpp"
#include "runtime/kernel.hpp"
#include "runtime/statistics.hpp"
#include "support/files.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <mpi.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace saguaro::bench::suite {

// ---- files ---------------------------------------------------------------------------------

void write_text(const fs::path& path, const std::string& text) {
  support::write_atomically(path, text, "bench_suite");
}

namespace {

// A float64 array as NumPy's .npy (format 1.0).
void write_npy(const fs::path& path, const std::vector<double>& data, std::array<long, 3> shape) {
  std::string header =
      fmt::format("{{'descr': '<f8', 'fortran_order': False, 'shape': ({}, {}, {}), }}", shape[0],
                  shape[1], shape[2]);
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  const unsigned short len = static_cast<unsigned short>(header.size());
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes += char(len & 0xff);
  bytes += char(len >> 8);
  bytes += header;
  bytes.append(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(double));
  support::write_atomically(path, bytes, "bench_suite");
}

void print_row(const std::string& bench, const json& row) {
  const std::string status = row.value("status", "?");
  if (status != "ok") {
    std::printf("%-11s %-16s %-5s %-7s %s\n", bench.c_str(),
                row["system"].get<std::string>().c_str(), row["kind"].get<std::string>().c_str(),
                status.c_str(), row.value("error", "").c_str());
    if (status == "wrong")
      std::fprintf(stderr, "WRONG: %s %s: relative error %.3g > %g\n",
                   row["system"].get<std::string>().c_str(), bench.c_str(),
                   row.value("max_rel_error", -1.0), kTolerance);
    return;
  }
  std::printf("%-11s %-16s %-5s %-7s %9.3g %10.1f", bench.c_str(),
              row["system"].get<std::string>().c_str(), row["kind"].get<std::string>().c_str(),
              status.c_str(), double(row["max_rel_error"]), double(row["median_s"]) * 1e6);
  if (row.contains("percent_of_roofline"))
    std::printf(" %8.1f %6.1f%%", double(row["bandwidth_GBs"]), double(row["percent_of_roofline"]));
  else if (row.contains("ns_per_point"))
    std::printf(" %8s %7s", "", "");
  if (row.contains("ns_per_point")) std::printf(" %7.3f", double(row["ns_per_point"]));
  if (row.contains("percent_of_fp64_peak"))
    std::printf(" %5.1f%%", double(row["percent_of_fp64_peak"]));
  if (row.contains("predicted_s")) std::printf("  model %.1f us", double(row["predicted_s"]) * 1e6);
  if (row.contains("mapping")) std::printf("  %s", row["mapping"].get<std::string>().c_str());
  std::printf("\n");
  std::fflush(stdout);
}

int run(Context& ctx) {
  const Options& opt = ctx.opt;
  fs::create_directories(opt.data);
  const bool gpu = !opt.reference_only;
  json out{{"command", opt.command}, {"n", opt.n},           {"repeats", opt.repeats},
           {"batch", opt.batch},     {"warmup", opt.warmup}, {"tolerance", kTolerance}};
  {
    const std::time_t now = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    out["date"] = buf;
  }
  std::unique_ptr<runtime::cuda::KernelModule> naive;
  if (gpu) {
    std::string why;
    if (!runtime::cuda::available(&why)) {
      std::fprintf(stderr, "bench_suite: no GPU: %s (use --reference-only)\n", why.c_str());
      return 1;
    }
    const runtime::cuda::DeviceInfo dev = runtime::cuda::device_info();
    out["gpu"] = dev.name;
    out["arch"] = dev.arch();
    out["cuda_driver_api"] = dev.driver_version;
    out["nvrtc"] = runtime::cuda::nvrtc_version();
    ctx.device_path =
        opt.device_path == "auto" ? model::find_device_description(dev.name) : opt.device_path;
    if (!ctx.device_path.empty()) ctx.device = model::load_device(ctx.device_path);
    out["device_description"] = ctx.device_path;
    if (ctx.device) {
      ctx.fp64_peak = fp64_peak_flops(*ctx.device);
      out["fp64_peak_GFLOPs"] = ctx.fp64_peak / 1e9;
      out["fp64_peak_source"] =
          ctx.device_path + ": 2 x fp64_rate x sm_count x clock_ghz (an fma = 2 flops)";
    }
    runtime::cuda::CompileOptions co;
    co.cache_dir = opt.cache;
    naive = std::make_unique<runtime::cuda::KernelModule>(naive_source(), co);
    out["triad_before"] = triad_bandwidth(*naive, runtime::cuda::device_space(), 20);
    ctx.triad_Bps = double(out["triad_before"]["bandwidth_GBs"]) * 1e9;
    std::printf("GPU %s (%s), NVRTC %s; %d^3 interior; model %s\ntriad %.1f GB/s (the roofline); "
                "FP64 peak %.0f "
                "GFLOP/s (the description's)\n\n",
                dev.name.c_str(), dev.arch().c_str(), out["nvrtc"].get<std::string>().c_str(),
                opt.n, ctx.device_path.empty() ? "(none)" : ctx.device_path.c_str(),
                ctx.triad_Bps / 1e9, ctx.fp64_peak / 1e9);
    std::printf("%-11s %-16s %-5s %-7s %9s %10s %8s %7s %7s %6s\n", "benchmark", "system", "kind",
                "status", "rel.err", "time[us]", "GB/s", "%roof", "ns/pt", "%fp64");
  }

  json manifest{
      {"n", opt.n},
      {"init",
       "base + amplitude*sin(0.001*i + gf): i the linear index over the allocated box (x fastest), "
       "gf the index in grid_functions; per benchmark its fill (amplitude 1, base 0 unless given)"},
      {"tolerance", kTolerance},
      {"benchmarks", json::array()}};
  json benchmarks = json::array();
  json steps = json::array();
  for (const bench::Benchmark& b : bench::suite_benchmarks()) {
    if (!opt.benchmarks.empty() &&
        std::find(opt.benchmarks.begin(), opt.benchmarks.end(), b.name) == opt.benchmarks.end())
      continue;
    const bench::LoadedBenchmark lb = bench::load_benchmark(b);
    const calc::Calculation& calc = lb.calculation();
    const int n = opt.n, g = runtime::required_margin(calc).max();
    const double bytes =
        double(calc.inputs.size() + calc.outputs.size()) * double(n) * n * n * sizeof(double);
    const std::vector<double> parameters = bench::patch_parameters(lb.program, b.fill);

    // 1. The CPU reference.
    Reference ref;
    json entry{
        {"name", b.name},
        {"title", b.title},
        {"edl", b.file},
        {"fd_order", b.fd_order},
        {"calculation", calc.name},
        {"ghost", g},
        {"compulsory_bytes", bytes},
        {"bytes_per_point", double(calc.inputs.size() + calc.outputs.size()) * sizeof(double)}};
    {
      json base = json::object(), params = json::object(), evolves = json::object();
      for (const auto& [name, value] : b.fill.base) base[name] = value;
      entry["fill"] = {{"formula", "base + amplitude*sin(0.001*i + gf)"},
                       {"amplitude", b.fill.amplitude},
                       {"base", base}};
      for (std::size_t p = 0; p < lb.program.parameters.size(); ++p)
        params[lb.program.parameters[p].name] = parameters[p];
      entry["parameters"] = params;
      const calc::FlopCounts& f = calc.flops;
      entry["flops_per_point"] = f.total();
      entry["flops"] = {{"add", f.add},
                        {"mul", f.mul},
                        {"div", f.div},
                        {"sqrt", f.sqrt},
                        {"transcendental", f.transcendental},
                        {"other", f.other},
                        {"fma_pairs", f.fma}};
      for (int o : calc.outputs)
        if (!calc.grid_functions[std::size_t(o)].evolves.empty())
          evolves[calc.grid_functions[std::size_t(o)].name] =
              calc.grid_functions[std::size_t(o)].evolves;
      entry["evolves"] = evolves;
      entry["stages"] = calc.stages.size();
      // The calculation as straight-line code, as `saguaro inspect --expressions` prints it: the
      // peers' formula for benchmarks without a hand-written one (peers.py translates it).
      const std::string expressions = b.name + "-expressions.txt";
      write_text(fs::path(opt.data) / expressions,
                 calc::print_calculation(calc, lb.program.parameters));
      entry["expressions"] = expressions;
    }
    {
      runtime::BackendOptions bo;
      bo.cache_dir = opt.cache.empty() ? "" : opt.cache + "/cpu";
      auto cpu = runtime::make_backend("cpu", bo);
      auto compiled = cpu->compile(lb.program);
      Patch patch(lb.program, calc, n, cpu->space(), b.fill);
      compiled[lb.rhs]->run(patch.args);
      const std::size_t points = patch.args.array_points();
      json names = json::array(), inputs = json::array(), outputs = json::array(),
           files = json::object();
      for (const calc::GridFunctionRef& f : calc.grid_functions) names.push_back(f.name);
      for (const calc::InputStencil& in : calc.inputs)
        inputs.push_back(calc.grid_functions[std::size_t(in.grid_function)].name);
      for (int f : calc.outputs) {
        const std::string name = calc.grid_functions[std::size_t(f)].name;
        outputs.push_back(name);
        ref.outputs.push_back(name);
        ref.output_gf.push_back(f);
        ref.values.push_back(interior(
            download(cpu->space(), patch.args.fields[std::size_t(f)], points), patch.args, g, n));
        const std::string file = b.name + "-" + name + ".npy";
        write_npy(fs::path(opt.data) / file, ref.values.back(), {n, n, n});
        files[name] = file;
      }
      entry["alloc"] = patch.args.alloc;
      entry["spacing"] = patch.args.spacing;
      entry["grid_functions"] = names;
      entry["inputs"] = inputs;
      entry["outputs"] = outputs;
      entry["reference"] = files;
    }
    manifest["benchmarks"].push_back(entry);
    write_text(fs::path(opt.data) / "manifest.json", manifest.dump(1) + "\n");

    // 2-4. Each system: check, then time.
    if (gpu) {
      json result = entry;
      result["systems"] = json::array();
      // One row per system; a system that throws is a "failed" row, and the suite fails.
      auto add_row = [&](const std::string& system, const std::function<json()>& run) {
        json row;
        try {
          row = run();
        } catch (const std::exception& e) {
          row =
              json{{"system", system}, {"kind", "rhs"}, {"status", "failed"}, {"error", e.what()}};
          ctx.failed = true;
        }
        print_row(b.name, row);
        result["systems"].push_back(row);
      };
      add_row("saguaro-run",
              [&] { return run_saguaro(ctx, b, lb, mapper::Method::Model, true, ref, bytes); });
      for (mapper::Method m : {mapper::Method::Model, mapper::Method::Default})
        add_row(m == mapper::Method::Model ? "saguaro-model" : "saguaro-default",
                [&] { return run_saguaro(ctx, b, lb, m, false, ref, bytes); });
      add_row("naive-cuda", [&] {
        if (!b.no_naive.empty())
          return json{
              {"system", "naive-cuda"}, {"kind", "rhs"}, {"status", "n/a"}, {"error", b.no_naive}};
        return run_naive(ctx, *naive, b, lb, ref, bytes);
      });
      add_row("saguaro-kokkos", [&] { return run_kokkos(ctx, b, lb, ref, bytes); });
      benchmarks.push_back(result);
    }

    // The whole step, where the benchmark has one.
    const std::optional<WholeStep> ws = whole_step_of(b);
    if (!opt.step || !ws) continue;
    const std::string& thorn = lb.program.thorn;
    // The CPU reference's compiled code is shared with the right-hand side's (the same source).
    const std::string cpu_cache = opt.cache.empty() ? "" : opt.cache + "/cpu";
    const StepRun s0 = run_steps(opt, b, thorn, *ws, "cpu", "default", 0, cpu_cache);
    const StepRun s1 = run_steps(opt, b, thorn, *ws, "cpu", "default", 1, cpu_cache);
    json state0 = json::object(), state1 = json::object(), settings = json::object(),
         step_params = json::object();
    const std::array<long, 3> shape{s1.points[2], s1.points[1], s1.points[0]};
    for (std::size_t v = 0; v < s1.variables.size(); ++v) {
      const std::string& var = s1.variables[v];
      const std::string f0 = fmt::format("step-{}-{}-0.npy", b.name, var);
      const std::string f1 = fmt::format("step-{}-{}-1.npy", b.name, var);
      write_npy(fs::path(opt.data) / f0, s0.state[v], shape);
      write_npy(fs::path(opt.data) / f1, s1.state[v], shape);
      state0[var] = f0;
      state1[var] = f1;
    }
    for (const auto& [name, value] : ws->settings) settings[name] = value;
    {
      bench::PatchFill run_parameters;
      run_parameters.parameters = ws->settings;
      const std::vector<double> values = bench::patch_parameters(lb.program, run_parameters);
      for (std::size_t p = 0; p < lb.program.parameters.size(); ++p)
        step_params[lb.program.parameters[p].name] = values[p];
    }
    json step{{"benchmark", b.name},
              {"method", "RK4"},
              {"dt", s1.dt},
              {"spacing", s1.spacing},
              {"points", s1.points},
              {"periodic", true},
              {"fd_order", b.fd_order},
              {"variables", s1.variables},
              {"settings", settings},
              {"parameters", step_params},
              {"initial_data", ws->initial_data},
              {"expressions", entry["expressions"]},
              {"evolves", entry["evolves"]},
              {"flops_per_point", entry["flops_per_point"]},
              {"state0", state0},
              {"reference", state1}};
    manifest["whole_steps"].push_back(step);
    write_text(fs::path(opt.data) / "manifest.json", manifest.dump(1) + "\n");
    if (!gpu) continue;
    json rows = json::array();
    const double points = double(s1.points[0]) * s1.points[1] * s1.points[2];
    for (const char* mapper : {"model", "default"}) {
      json row{
          {"system", std::string("saguaro-") + mapper}, {"kind", "step"}, {"benchmark", b.name}};
      try {
        const StepRun one = run_steps(opt, b, thorn, *ws, "cuda", mapper, 1, opt.cache);
        const double worst = step_error(one, s1);
        row["max_rel_error"] = worst;
        row["status"] = worst <= kTolerance ? "ok" : "wrong";
        if (worst > kTolerance)
          ctx.failed = true;
        else {
          const StepRun timed = run_steps(opt, b, thorn, *ws, "cuda", mapper,
                                          opt.warmup + opt.step_iterations, opt.cache);
          std::vector<double> t(timed.step_seconds.begin() +
                                    std::min<long>(opt.warmup, long(timed.step_seconds.size())),
                                timed.step_seconds.end());
          row["wall"] = statistics(t);
          row["median_s"] = runtime::median(t);
          row["points_per_s"] = points / runtime::median(t);
          row["ns_per_point"] = runtime::median(t) / points * 1e9;
          // The compulsory traffic of any step: the state read once, the new state written once.
          const double compulsory = 2.0 * double(timed.variables.size()) * 8 * points;
          row["compulsory_bytes"] = compulsory;
          row["effective_GBps"] = compulsory / runtime::median(t) / 1e9;
          row["step_variant"] = timed.variant;
          row["log"] = timed.log;
        }
      } catch (const std::exception& e) {
        row["status"] = "failed";
        row["error"] = e.what();
        ctx.failed = true;
      }
      print_row(b.name, row);
      rows.push_back(row);
    }
    json row;
    if (b.name != "wave2") {
      row = json{{"system", "naive-cuda"},
                 {"kind", "step"},
                 {"benchmark", b.name},
                 {"status", "n/a"},
                 {"error", b.no_naive.empty() ? "no naive whole step" : b.no_naive}};
    } else {
      try {
        row = naive_step(ctx, *naive, s0, s1);
      } catch (const std::exception& e) {
        row = json{{"system", "naive-cuda"},
                   {"kind", "step"},
                   {"benchmark", b.name},
                   {"status", "failed"},
                   {"error", e.what()}};
        ctx.failed = true;
      }
    }
    print_row(b.name, row);
    rows.push_back(row);
    step["systems"] = rows;
    steps.push_back(step);
  }
  if (gpu) {
    out["triad_after"] = triad_bandwidth(*naive, runtime::cuda::device_space(), 20);
    out["roofline_GBs"] = ctx.triad_Bps / 1e9;
    out["benchmarks"] = benchmarks;
    out["whole_steps"] = steps;
    if (!opt.json_path.empty()) write_text(opt.json_path, out.dump(1) + "\n");
    std::printf("\ntriad after: %.1f GB/s\n", double(out["triad_after"]["bandwidth_GBs"]));
  }
  std::printf("data for the peers: %s/manifest.json\n", opt.data.c_str());
  return ctx.failed ? 1 : 0;
}

} // namespace

} // namespace saguaro::bench::suite

using namespace saguaro::bench::suite;

int main(int argc, char** argv) {
  Context ctx;
  Options& opt = ctx.opt;
  CLI::App app{
      "Saguaro's benchmark suite (C++ half): references, Saguaro and naive CUDA, the roofline"};
  app.add_option("--n", opt.n, "interior points per axis")->check(CLI::Range(8, 2048));
  app.add_option("--data", opt.data,
                 "directory for the references and manifest.json (peers.py reads it)");
  app.add_option("--json", opt.json_path, "write every result here");
  app.add_option("--repeats", opt.repeats, "timed samples per system")->check(CLI::Range(1, 10000));
  app.add_option("--batch", opt.batch, "evaluations per sample")->check(CLI::Range(1, 10000));
  app.add_option("--warmup", opt.warmup, "evaluations before timing")->check(CLI::Range(0, 10000));
  app.add_option("--step-iterations", opt.step_iterations, "timed whole steps")
      ->check(CLI::Range(1, 10000));
  app.add_option("--benchmarks", opt.benchmarks, "benchmarks to run (default: all)")
      ->delimiter(',');
  app.add_option("--device", opt.device_path,
                 "the model's description: auto (configs/devices) or a file");
  app.add_option("--cache", opt.cache, "cache directory for compiled code");
  app.add_flag("--reference-only", opt.reference_only,
               "no GPU: write the references and manifest only");
  bool no_step = false;
  app.add_flag("--no-step", no_step, "leave out the whole step");
  CLI11_PARSE(app, argc, argv);
  opt.step = !no_step;
  for (int i = 0; i < argc; ++i) opt.command += (i ? " " : "") + std::string(argv[i]);
  MPI_Init(&argc, &argv);
  int rc = 0;
  try {
    rc = run(ctx);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_suite: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
