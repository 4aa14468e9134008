// The prediction log: per kernel of a run, what the performance model predicted next to what
// was measured, so every run checks the model (and the benchmarks can say which combination,
// Hu's eq. 1 or Chemora's, predicts today's hardware better).
//
// Files in the output directory, rewritten whole (a temporary file renamed over the old one,
// so a crash mid-write leaves the previous good file):
//   predictions.tsv    one row per kernel, the columns of prediction_columns(); a '#' line
//                      with the device and backend, then a '#' header line
//   predictions.jsonl  one JSON object per kernel and line: the same fields by the same names
//                      plus `samples` (measured seconds of every `sample_every`-th launch)
// Times are seconds per launch. A number the log does not have (no device description, a part
// the model does not have for that backend) is NaN: `nan` in the TSV, null in the JSON.
// `saguaro report` reads the JSON back and draws predictions.svg.
#pragma once

#include "calc/calculation.hpp"
#include "calc/mapping.hpp"
#include "model/device.hpp"
#include "model/time_tile.hpp"
#include "runtime/kernel.hpp"

#include <iosfwd>
#include <string>
#include <vector>

namespace saguaro::io {

struct PredictionRecord {
  // What ran.
  std::string calculation; // the EDL calculation's name
  int kernel = 0;          // index into that calculation's Mapping::kernels
  std::string name;        // the generated kernel's symbol (CPU backend: the calculation's)
  std::string mapping;     // the kernel's mapping in short form ("cpu" for the CPU backend)
  std::string backend;     // "cuda", "cpu"
  std::string device;      // the device description's name ("" when there is none)
  int ranks = 1;           // the run's MPI ranks (the log holds rank 0's kernels)
  int iteration = 0;       // the iteration the log was written at
  double points = 0;       // grid points of a launch (the last one)
  long launches = 0;

  // Predicted [seconds per launch]; NaN without a prediction.
  double predicted_hu = 0;      // Hu, Koppelman & Brandt eq. 1 (CPU: the roofline)
  double predicted_chemora = 0; // Chemora's combination (CPU: the roofline)
  // Its parts [seconds per launch]: T_launch, D_L2/W_L2, D_GM/W_GM, T_data = max of the two,
  // T_lat, Chemora's issue term s_i. CPU: DRAM (= data) is bytes / bandwidth, issue is flops /
  // FP64 peak, the others NaN.
  double launch = 0, l2 = 0, dram = 0, data = 0, latency = 0, issue = 0;
  std::string limiter;  // "DRAM", "L2", "latency", "issue", "FP64"; "" without a prediction
  int registers = -1;   // per thread, ptxas's (-1: unknown, the CPU backend)
  int spill_bytes = 0;  // spill stores + loads per thread
  double occupancy = 0; // resident warps / the SM's maximum (NaN: CPU, no prediction)
  std::string note;     // why a prediction is missing or invalid; "" otherwise

  // Measured [seconds per launch] over every launch timed.
  double measured_median = 0, measured_min = 0, measured_max = 0;
  std::vector<double> samples; // every sample_every-th launch's time (at most ~200 kept)
  int sample_every = 1;

  // (predicted - measured) / measured against the median; NaN without a prediction.
  double error_hu = 0, error_chemora = 0;
  // This kernel's share of the time measured in all the log's kernels (sum of every launch).
  double share = 0;

  bool operator==(const PredictionRecord&) const; // NaN equals NaN here (round trips)
};

// The TSV's columns in order (the JSON objects use the same names, plus `samples`).
const std::vector<std::string>& prediction_columns();

// What a record's prediction comes from; `device` null: measured times only, with `note`.
struct PredictionSource {
  std::string backend;
  bool host = false; // the backend runs on the host: its kernels are predicted with a roofline
  const model::Device* device = nullptr;
  std::string note;
  int ranks = 1;
  int iteration = 0;
};

// One record per timing of a kernel that ran (launches > 0): the measured side from the timing, the
// predicted side from the model (the GPU model for kernels of `mappings[timing.calculation]`, an
// empty mapping meaning calc::default_mapping; the roofline for the CPU backend). Shares are filled
// over all of them. A timing whose kernel is not that mapping's (Saguaro::mapper_verify timed
// other candidates) is predicted with the mapping of `alternatives[timing.calculation]` whose
// kernel has the timing's short form.
std::vector<PredictionRecord>
prediction_records(const calc::Program& program, const std::vector<calc::Mapping>& mappings,
                   const std::vector<runtime::KernelTiming>& timings,
                   const PredictionSource& source,
                   const std::vector<std::vector<calc::Mapping>>& alternatives = {});

// The row of the evolved variables' ghost exchange: the interconnect model's `predicted`
// seconds per exchange (NaN without an interconnect description: the note says so) against
// the `measured` exchanges; `transport` (the mapping column) says what travels and how.
PredictionRecord exchange_record(const std::vector<double>& measured, double predicted,
                                 const std::string& transport, const PredictionSource& source);

// Prices the record of a time-tiled step's kernel (a timing of kernel -1, which
// prediction_records leaves unpriced) with the time-tiling model's prediction: the same time
// under both combinations, its DRAM and L2 bounds, the compute part as issue or latency.
void price_time_tile(PredictionRecord& record, const model::TimeTilePrediction& predicted);

// Writes `<dir>/predictions.tsv` and `<dir>/predictions.jsonl` (the directory is created).
// Throws std::runtime_error when a file cannot be written; the previous file then stays.
void write_predictions(const std::string& dir, const std::vector<PredictionRecord>& records);

// Reads `<dir>/predictions.jsonl` (or the file itself when `path` names one). Throws
// std::runtime_error ("FILE:LINE: ...") when it is missing or not a prediction log.
std::vector<PredictionRecord> read_predictions(const std::string& path);

// The records sorted by share, largest first, as a text table (kernel, mapping, predicted,
// measured, errors, limiter, share) under a title naming the device and backend.
std::string prediction_table(const std::vector<PredictionRecord>& records);

// predictions.svg's text: predicted against measured per kernel on log-log axes with y = x
// and a +-10% band (left), the predicted parts per kernel as stacked bars with the measured
// time marked (right).
std::string prediction_svg(const std::vector<PredictionRecord>& records);

} // namespace saguaro::io
