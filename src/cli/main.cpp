// The `saguaro` command line.
#include "calc/lower.hpp"
#include "cli/inspect.hpp"
#include "edl/parser.hpp"

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

int inspect(const std::string& file, int fd_order, const std::string& format, bool expressions) {
  using namespace saguaro;
  edl::Thorn thorn = edl::parse_file(file);
  calc::Program program = calc::lower(thorn, calc::LowerOptions{fd_order});
  if (format == "json")
    std::cout << cli::program_to_json(program).dump(2) << "\n";
  else
    std::cout << cli::program_to_text(program, expressions);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"Saguaro: PDE systems written as equations (EDL) mapped to GPU kernels by an "
               "analytic performance model",
               "saguaro"};
  app.set_version_flag("--version", std::string("saguaro ") + SAGUARO_VERSION);
  app.require_subcommand(0, 1);

  std::string par_file;
  app.add_option(
      "parfile", par_file,
      "a Cactus parameter file to run (not available yet: the host framework comes next)");

  std::string edl_file, format = "text";
  int fd_order = 4;
  CLI::App* inspect_cmd =
      app.add_subcommand("inspect", "parse and lower an EDL file; print every calculation's "
                                    "schedule, inputs with stencils, outputs, flops and DAG size");
  inspect_cmd->add_option("file", edl_file, "the EDL file")->required();
  inspect_cmd->add_option("--fd-order", fd_order, "accuracy order of the built-in D_i, D_ij")
      ->check(CLI::IsMember({2, 4, 6, 8}))
      ->capture_default_str();
  inspect_cmd->add_option("--format", format, "output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();

  bool expressions = false;
  inspect_cmd->add_flag("--expressions", expressions,
                        "also print each calculation as straight-line code (text format)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int status = app.exit(e);
    return status == 0 ? 0 : kBadInput;
  }

  try {
    if (*inspect_cmd) return inspect(edl_file, fd_order, format, expressions);
    if (!par_file.empty()) {
      std::cerr << "saguaro: running parameter files arrives with the host framework, which is "
                   "not built yet.\n  'saguaro inspect FILE.edl' lowers the physics of an EDL "
                   "file.\n";
      return kBadInput;
    }
    std::cout << app.help();
    return 0;
  } catch (const saguaro::edl::EdlError& e) {
    std::cerr << e.what();
    return kBadInput;
  } catch (const std::exception& e) {
    std::cerr << "saguaro: internal error: " << e.what() << "\n";
    return 1;
  }
}
