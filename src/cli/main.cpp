// The `saguaro` command line.
#include "calc/lower.hpp"
#include "calibrate/calibrate.hpp"
#include "calc/mapping.hpp"
#include "calc/strategy.hpp"
#include "cli/batch.hpp"
#include "cli/compat.hpp"
#include "cli/inspect.hpp"
#include "cli/map.hpp"
#include "cli/plan.hpp"
#include "cli/report.hpp"
#include "codegen/cpp.hpp"
#include "codegen/cuda.hpp"
#include "edl/parser.hpp"
#include "mapper/mapping_file.hpp"
#include "param/registry.hpp"
#include "runtime/cuda.hpp"
#include "schedule/simulation.hpp"
#include "schedule/startup_checks.hpp"

#include <mpi.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <iostream>

#ifndef SAGUARO_VERSION
#define SAGUARO_VERSION "unknown"
#endif

namespace {

// Exit status 2 is for bad input (EDL or usage), as the diagnostics promise.
constexpr int kBadInput = 2;

struct EmitOptions {
  std::string language;           // "", "cuda" or "cpp"
  std::string buffering = "u";    // CUDA: a strategy's letter (u r b p c q) or mixed
  std::string block = "z 32x8x8"; // CUDA: the block configuration
  bool ptxas = false;             // CUDA: compile with NVRTC and print ptxas's report
  bool plan = false;              // print the kernel plans instead
  std::string mapping_file;       // a mapping file: its calculations take its mappings
  std::string array_layout;       // CUDA: "PITCHxROWS", strides as constants ("" = any)
};

// --array-layout's value: "PITCHxROWS", both positive; nullopt for "".
std::optional<saguaro::calc::ArrayLayout> parse_array_layout(const std::string& text) {
  const std::size_t x = text.find('x');
  if (x == std::string::npos) return std::nullopt;
  saguaro::calc::ArrayLayout layout;
  try {
    std::size_t used = 0;
    layout.pitch = std::stoi(text.substr(0, x), &used);
    if (used != x) return std::nullopt;
    layout.rows = std::stoi(text.substr(x + 1), &used);
    if (used != text.size() - x - 1) return std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (layout.pitch <= 0 || layout.rows <= 0) return std::nullopt;
  return layout;
}

// The mappings --buffering and --block ask for, one per calculation; those a --mapping file
// names take its mapping.
std::vector<saguaro::calc::Mapping> option_mappings(const saguaro::calc::Program& program,
                                                    const EmitOptions& options) {
  const saguaro::calc::BlockConfig block = saguaro::calc::parse_block_config(options.block);
  std::vector<saguaro::calc::Mapping> mappings;
  for (const saguaro::calc::Calculation& c : program.calculations)
    mappings.push_back(saguaro::calc::strategy_mapping(c, options.buffering, block));
  if (options.mapping_file.empty()) return mappings;
  const saguaro::mapper::MappingFile file =
      saguaro::mapper::load_mapping_file(options.mapping_file, program);
  for (const std::string& w : file.warnings) std::cerr << w;
  for (const saguaro::mapper::MappingFileEntry& e : file.entries)
    for (std::size_t c = 0; c < program.calculations.size(); ++c)
      if (program.calculations[c].name == e.calculation) mappings[c] = e.mapping;
  return mappings;
}

// --buffering's words: every strategy's letter, then "mixed".
std::vector<std::string> buffering_words() {
  std::vector<std::string> words = saguaro::calc::strategy_letters();
  words.push_back("mixed");
  return words;
}

// --buffering's help: the strategies, one per line, from the list (calc/strategies/list.cpp).
std::string buffering_help() {
  std::string text = "with --emit cuda or --plan: every input's buffering strategy where it "
                     "applies, or mixed (each kernel's inputs take every strategy in turn):";
  for (const saguaro::calc::Strategy* s : saguaro::calc::strategies())
    text += fmt::format("\n  {}  {}", s->letter, s->summary);
  return text;
}

// `saguaro inspect FILE.edl --emit cuda`: the generated source of every calculation.
int emit(const saguaro::calc::Program& program, const EmitOptions& options) {
  using namespace saguaro;
  if (options.language == "cpp") {
    std::cout << codegen::generate_cpp(program);
    return 0;
  }
  const std::vector<calc::Mapping> mappings = option_mappings(program, options);
  const std::optional<calc::ArrayLayout> layout = parse_array_layout(options.array_layout);
  if (!options.ptxas) {
    std::cout << codegen::generate_cuda(program, mappings, {}, -1, layout).source;
    return 0;
  }
  // As the CUDA backend compiles it: the whole register file for kernels expected at one block
  // per SM, and for spilling kernels where it spills less.
  const auto both = runtime::cuda::compile_generated(program, mappings, "sm_90", {}, -1, layout);
  std::cout << both.generated.source;
  std::cout << fmt::format("\n// ptxas (NVRTC {}, sm_90):\n", runtime::cuda::nvrtc_version());
  for (const codegen::CudaKernel& k : both.generated.kernels) {
    const runtime::cuda::PtxasReport& r = both.compiled.kernels.at(k.name);
    std::cout << fmt::format("//   {}: {} registers, {} bytes spill stores, {} bytes spill "
                             "loads, {} bytes stack, {} bytes shared (+{} dynamic){}\n",
                             k.name, r.registers, r.spill_stores, r.spill_loads, r.stack_bytes,
                             r.shared_bytes, k.shared_bytes,
                             k.whole_register_file ? ", whole register file" : "");
  }
  return 0;
}

int inspect(const std::string& file, const saguaro::calc::LowerOptions& options,
            const std::string& format, bool expressions, const EmitOptions& emit_options,
            const std::string& after) {
  using namespace saguaro;
  edl::Thorn thorn = edl::parse_file(file);
  if (!after.empty()) {
    // The lowering's state after one of its passes.
    calc::LoweringState state = calc::start_lowering(thorn, options);
    calc::run_lowering(state, after);
    if (format == "json")
      std::cout << cli::lowering_to_json(state).dump(2) << "\n";
    else
      std::cout << cli::lowering_to_text(state, expressions);
    return 0;
  }
  calc::Program program = calc::lower(thorn, options);
  if (emit_options.plan) {
    const std::vector<calc::Mapping> mappings = option_mappings(program, emit_options);
    if (format == "json")
      std::cout << cli::plans_to_json(program, mappings).dump(2) << "\n";
    else
      std::cout << cli::plans_to_text(program, mappings);
    return 0;
  }
  if (!emit_options.language.empty()) return emit(program, emit_options);
  if (format == "json")
    std::cout << cli::program_to_json(program).dump(2) << "\n";
  else
    std::cout << cli::program_to_text(program, expressions);
  return 0;
}

// `saguaro check FILE.par`: the parameter file and its EDL, checked without running.
int check(const std::string& par_file, const std::vector<std::string>& overrides, bool compat) {
  using namespace saguaro;
  if (compat) return cli::compat_main(par_file, overrides, std::cout, std::cerr);
  host::Setup setup = host::load_setup(par_file, overrides);
  for (const support::Diagnostic& w : setup.registry.warnings()) std::cerr << support::render(w);
  host::check_startup(setup); // what the run validates before it evolves, all at once
  std::cout << fmt::format("{}: OK ({} from {}: {} calculations, {} parameters set)\n", par_file,
                           setup.program.thorn, setup.edl_path, setup.program.calculations.size(),
                           setup.par.assignments.size());
  return 0;
}

// `saguaro params [THORN|FILE.par]`: the parameter reference. With a .par file, the EDL
// thorn it names is included.
int params(const std::string& what) {
  using namespace saguaro;
  if (what.size() > 4 && what.substr(what.size() - 4) == ".par") {
    host::Setup setup = host::load_setup(what);
    std::cout << param::format_parameter_reference(setup.registry);
    return 0;
  }
  param::Registry registry = param::Registry::with_builtin_components();
  try {
    std::cout << param::format_parameter_reference(registry, what);
  } catch (const std::invalid_argument& e) {
    std::cerr << "saguaro params: " << e.what() << "\n";
    return kBadInput;
  }
  return 0;
}

// A run under MPI (a single process without mpirun is one rank). Every rank reads the same
// input, so a user error is found by all of them; rank 0 reports it.
int run(const std::string& par_file, const std::vector<std::string>& overrides) {
  using namespace saguaro;
  MPI_Init(nullptr, nullptr);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int status = 0;
  try {
    host::Setup setup = host::load_setup(par_file, overrides);
    if (rank == 0)
      for (const support::Diagnostic& w : setup.registry.warnings())
        std::cerr << support::render(w);
    host::Simulation simulation(std::move(setup), MPI_COMM_WORLD, std::cout);
    simulation.run();
  } catch (const support::InputError& e) { // .par, EDL, CCL, mapping files
    if (rank == 0) std::cerr << e.what();
    status = kBadInput;
  } catch (const std::exception& e) {
    // Possibly on one rank only: the others may be waiting in a collective.
    std::cerr << fmt::format("saguaro (rank {}): error: {}\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"Saguaro: PDE systems written as equations (EDL) mapped to GPU kernels by an "
               "analytic performance model",
               "saguaro"};
  app.set_version_flag("--version", std::string("saguaro ") + SAGUARO_VERSION);
  app.require_subcommand(0, 1);

  std::string par_file;
  app.add_option("parfile", par_file, "a Cactus parameter file to run (as `saguaro run FILE.par`)");

  CLI::App* run_cmd = app.add_subcommand("run", "run the simulation a Cactus parameter file "
                                                "describes (under mpirun: on every rank)");
  run_cmd->add_option("parfile", par_file, "the .par file")->required();
  std::vector<std::string> overrides;
  const std::string set_help =
      "set a parameter as the .par file would, over the file's value: 'Thorn::name = value' "
      "(repeatable; e.g. --set Cactus::cctk_itlast=100)";
  run_cmd->add_option("--set", overrides, set_help)->allow_extra_args(false);
  app.add_option("--set", overrides, set_help + "; with a .par file to run")
      ->allow_extra_args(false);

  CLI::App* check_cmd = app.add_subcommand(
      "check", "check a parameter file and the EDL file it names without running");
  check_cmd->add_option("parfile", par_file, "the .par file")->required();
  check_cmd->add_option("--set", overrides, set_help)->allow_extra_args(false);
  bool compat = false;
  check_cmd->add_flag("--compat", compat,
                      "for an Einstein Toolkit parameter file: list which thorns run (and as "
                      "which built-in component), which are accepted without effect, which are "
                      "missing, and every setting's fate; then every problem");

  std::string params_of;
  CLI::App* params_cmd = app.add_subcommand(
      "params", "list every parameter with its type, default, range and description");
  params_cmd->add_option("thorn", params_of,
                         "only this thorn's (e.g. CoordBase), or a .par file to include the "
                         "parameters of the EDL thorn it names");

  std::string edl_file, format = "text", mixed = "auto";
  int fd_order = 4;
  CLI::App* inspect_cmd =
      app.add_subcommand("inspect", "parse and lower an EDL file; print every calculation's "
                                    "schedule, inputs with stencils, outputs, flops and DAG size");
  inspect_cmd->add_option("file", edl_file, "the EDL file")->required();
  inspect_cmd->add_option("--fd-order", fd_order, "accuracy order of the built-in D_i, D_ij")
      ->check(CLI::IsMember({2, 4, 6, 8}))
      ->capture_default_str();
  const char* mixed_help = "how D_ij (i != j) is computed: product (one stencil), nested (D_12 "
                           "and D_13 from a stored D_1; D_23 stays one stencil) or auto (nested "
                           "from fd order 8)";
  const std::vector<std::string> mixed_names{"auto", "product", "nested"};
  inspect_cmd->add_option("--mixed-derivatives", mixed, mixed_help)
      ->check(CLI::IsMember(mixed_names))
      ->capture_default_str();
  inspect_cmd->add_option("--format", format, "output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();

  bool expressions = false;
  inspect_cmd->add_flag("--expressions", expressions,
                        "also print each calculation as straight-line code (text format)");
  std::string after;
  CLI::Option* after_option =
      inspect_cmd
          ->add_option("--after", after,
                       "stop the lowering after this pass and print its state; the passes, in "
                       "order: " +
                           saguaro::calc::lowering_pass_names())
          ->check(CLI::Validator(
              [](std::string& name) {
                return saguaro::calc::find_lowering_pass(name) >= 0
                           ? std::string()
                           : fmt::format("unknown lowering pass '{}': expected one of {}", name,
                                         saguaro::calc::lowering_pass_names());
              },
              "PASS"));
  EmitOptions emit_options;
  inspect_cmd
      ->add_option("--emit", emit_options.language,
                   "print the generated source instead: CUDA kernels or the C++ of the "
                   "CPU backend")
      ->check(CLI::IsMember({"cuda", "cpp"}))
      ->excludes(after_option);
  inspect_cmd
      ->add_flag("--plan", emit_options.plan,
                 "print every kernel's plan (iteration space, buffers, each load's "
                 "buffer, shared memory, arguments) under --buffering and --block "
                 "(text or json)")
      ->excludes(after_option);
  inspect_cmd->add_option("--buffering", emit_options.buffering, buffering_help())
      ->check(CLI::IsMember(buffering_words()))
      ->capture_default_str();
  inspect_cmd
      ->add_option("--block", emit_options.block,
                   "with --emit cuda or --plan: the block configuration, iteration axis then "
                   "t_x x t_f x t_ee")
      ->capture_default_str();
  inspect_cmd
      ->add_option("--mapping", emit_options.mapping_file,
                   "with --emit cuda or --plan: a mapping file (as `saguaro map --save` "
                   "writes); the calculations it names take its mappings, the others "
                   "--buffering and --block")
      ->check(CLI::ExistingFile);
  inspect_cmd
      ->add_option("--array-layout", emit_options.array_layout,
                   "with --emit cuda: print the kernels for arrays of this row pitch and rows "
                   "per plane, PITCHxROWS, as a run prints them for its patch (strides as "
                   "constants; 256^3 at fd order 4: 264x262)")
      ->check(CLI::Validator(
          [](std::string& v) {
            return parse_array_layout(v) ? std::string() : "expected PITCHxROWS, e.g. 264x262";
          },
          "PITCHxROWS"));
  inspect_cmd->add_flag("--ptxas", emit_options.ptxas,
                        "with --emit cuda: compile with NVRTC for sm_90 and print ptxas's "
                        "registers, spills and shared memory per kernel");

  std::string report_dir, report_svg;
  CLI::App* report_cmd = app.add_subcommand(
      "report", "draw a run's prediction log (predicted against measured time per kernel) as "
                "an SVG and print it as a table");
  report_cmd->add_option("outdir", report_dir, "the run's output directory (IO::out_dir)")
      ->required();
  report_cmd->add_option("--out", report_svg, "the SVG file (default OUTDIR/predictions.svg)");

  std::string calibrate_out, calibrate_base;
  bool calibrate_cpu = false, calibrate_quick = false, calibrate_interconnect = false;
  CLI::App* calibrate_cmd = app.add_subcommand(
      "calibrate", "measure this GPU with microbenchmarks (or, with --cpu, this host) and write "
                   "its device description for the performance model (YAML); with "
                   "--interconnect, the ghost exchange between two MPI ranks instead");
  calibrate_cmd->add_option("--out", calibrate_out,
                            "the YAML file to write (default: standard output)");
  calibrate_cmd->add_flag("--cpu", calibrate_cpu,
                          "measure this host's CPU, not the GPU (with --interconnect: an "
                          "exchange of host arrays)");
  calibrate_cmd
      ->add_option("--base", calibrate_base,
                   "a device description to take the quantities that are not measured "
                   "from (software parameters, line sizes; with their sources); with "
                   "--interconnect, the description to complete (default: this GPU's "
                   "in configs/devices/; required with --cpu)")
      ->check(CLI::ExistingFile);
  calibrate_cmd->add_flag("--quick", calibrate_quick,
                          "fewer repeats and smaller buffers: seconds, less precise");
  calibrate_cmd->add_flag(
      "--interconnect", calibrate_interconnect,
      "run as `mpirun -n 2 saguaro calibrate --interconnect`: time the ghost exchange between "
      "ranks 0 and 1 for messages of 8 KiB to 64 MiB (--quick: to 1 MiB) and write the base "
      "description with interconnect_latency and interconnect_bandwidth fitted to it");

  saguaro::cli::MapCommand map_command;
  CLI::App* map_cmd = app.add_subcommand(
      "map", "choose every calculation's mapping with the performance model (kernels, block "
             "configurations, buffering strategies) and show the search: predicted times and "
             "parts, runners-up, the assignment step by step");
  map_cmd->add_option("file", map_command.edl_file, "the EDL file")->required();
  map_cmd
      ->add_option("--device", map_command.device_file,
                   "the device description (configs/devices/*.yaml)")
      ->required();
  map_cmd->add_option("--grid", map_command.grid, "points per patch: N (a cube) or NXxNYxNZ")
      ->capture_default_str();
  map_cmd->add_option("--format", map_command.format, "output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  map_cmd
      ->add_option("--method", map_command.method,
                   "model (the search), exhaustive (every assignment; small kernels) or "
                   "default (no model)")
      ->check(CLI::IsMember({"model", "exhaustive", "default"}))
      ->capture_default_str();
  map_cmd->add_flag("--plan", map_command.plan,
                    "also print the chosen mappings' kernel plans (buffers, each load's buffer, "
                    "shared memory, arguments)");
  map_cmd->add_option("--save", map_command.save,
                      "write the chosen mappings to this file (read by Saguaro::mapper = "
                      "\"fixed\" with Saguaro::mapping_file)");
  map_cmd
      ->add_option("--fd-order", map_command.fd_order, "accuracy order of the built-in D_i, D_ij")
      ->check(CLI::IsMember({2, 4, 6, 8}))
      ->capture_default_str();
  map_cmd->add_option("--mixed-derivatives", map_command.mixed_derivatives, mixed_help)
      ->check(CLI::IsMember(mixed_names))
      ->capture_default_str();

  saguaro::cli::BatchCommand batch_command;
  const saguaro::cli::BatchCommands batch_commands =
      saguaro::cli::add_batch_commands(app, batch_command);
  for (int i = 0; i < argc; ++i)
    batch_command.command_line += (i ? " " : "") + std::string(argv[i]);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int status = app.exit(e);
    return status == 0 ? 0 : kBadInput;
  }

  try {
    if (*inspect_cmd)
      return inspect(edl_file, {fd_order, saguaro::calc::mixed_derivatives_from(mixed)}, format,
                     expressions, emit_options, after);
    if (*check_cmd) return check(par_file, overrides, compat);
    if (*calibrate_cmd) {
      if (calibrate_interconnect)
        return saguaro::calibrate::interconnect_command(calibrate_out, calibrate_cpu,
                                                        calibrate_base, calibrate_quick);
      // A host's description has nothing of a GPU's to take from a base.
      if (calibrate_cpu && !calibrate_base.empty()) {
        std::cerr << "saguaro calibrate: --base applies to a GPU's calibration (or with "
                     "--interconnect), not to --cpu\n";
        return kBadInput;
      }
      return saguaro::calibrate::device_command(calibrate_out, calibrate_cpu, calibrate_base,
                                                calibrate_quick);
    }
    if (*params_cmd) return params(params_of);
    if (*map_cmd) return saguaro::cli::map_main(map_command, std::cout, std::cerr);
    if (*report_cmd) return saguaro::cli::report_main(report_dir, report_svg, std::cout, std::cerr);
    if (*batch_commands.submit)
      return saguaro::cli::submit_main(batch_command, std::cout, std::cerr);
    if (*batch_commands.jobs) return saguaro::cli::jobs_main(batch_command, std::cout, std::cerr);
    if (*batch_commands.cancel)
      return saguaro::cli::cancel_main(batch_command, std::cout, std::cerr);
    if (!par_file.empty()) return run(par_file, overrides);
    std::cout << app.help();
    return 0;
  } catch (const saguaro::support::InputError& e) {
    std::cerr << e.what();
    return kBadInput;
  } catch (const saguaro::calc::MappingError& e) {
    std::cerr << "saguaro: " << e.what() << "\n";
    return kBadInput;
  } catch (const std::exception& e) {
    std::cerr << "saguaro: internal error: " << e.what() << "\n";
    return 1;
  }
}
