// `saguaro report OUTDIR [--out FILE]`: the prediction log a run left in OUTDIR drawn as
// predictions.svg, and its table printed.
#pragma once

#include <iosfwd>
#include <string>

namespace saguaro::cli {

// Reads OUTDIR/predictions.jsonl, writes the SVG to `svg_path` ("" = OUTDIR/predictions.svg)
// and prints the table to `out`. Returns the exit status: 0; 2 (with a message on `err`)
// when there is no readable prediction log; 1 when the SVG cannot be written.
int report_main(const std::string& outdir, const std::string& svg_path, std::ostream& out,
                std::ostream& err);

} // namespace saguaro::cli
