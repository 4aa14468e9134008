#include "cli/report.hpp"

#include "io/predictions.hpp"
#include "support/files.hpp"

#include <filesystem>
#include <ostream>
#include <stdexcept>

namespace saguaro::cli {

int report_main(const std::string& outdir, const std::string& svg_path, std::ostream& out,
                std::ostream& err) {
  namespace fs = std::filesystem;
  constexpr int kBadInput = 2; // as for any input the user named that does not read
  const fs::path log = fs::path(outdir) / "predictions.jsonl";
  std::vector<io::PredictionRecord> records;
  try {
    if (!fs::exists(log))
      throw std::runtime_error(log.string() + ": no prediction log here (a run with "
                                              "Saguaro::prediction_log = yes writes it into "
                                              "IO::out_dir)");
    records = io::read_predictions(log.string());
    if (records.empty()) throw std::runtime_error(log.string() + ": no kernels in the log");
  } catch (const std::exception& e) {
    err << "saguaro report: " << e.what() << "\n";
    return kBadInput;
  }
  const fs::path svg = svg_path.empty() ? fs::path(outdir) / "predictions.svg" : fs::path(svg_path);
  try {
    support::write_atomically(svg, io::prediction_svg(records), "saguaro report");
  } catch (const std::exception& e) {
    err << "saguaro report: " << e.what() << "\n";
    return 1;
  }
  out << io::prediction_table(records) << "wrote " << svg.string() << "\n";
  return 0;
}

} // namespace saguaro::cli
