// The prediction log for people: the end-of-run table and `saguaro report`'s SVG, both drawn
// from PredictionRecords (so the report reads back exactly what the run printed).
#include "io/predictions.hpp"
#include "runtime/backend_registry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

namespace saguaro::io {
namespace {

bool has(double v) {
  return std::isfinite(v);
}

bool host_backend(const std::vector<PredictionRecord>& records) {
  if (records.empty()) return false;
  const runtime::BackendEntry* entry = runtime::find_backend(records.front().backend);
  return entry != nullptr && entry->hardware == runtime::Hardware::host;
}

// Largest share first; kernels without timings last, then in launch order.
std::vector<const PredictionRecord*> by_share(const std::vector<PredictionRecord>& records) {
  std::vector<const PredictionRecord*> out;
  for (const PredictionRecord& r : records) out.push_back(&r);
  std::stable_sort(
      out.begin(), out.end(), [](const PredictionRecord* a, const PredictionRecord* b) {
        const double x = has(a->share) ? a->share : -1, y = has(b->share) ? b->share : -1;
        return x > y;
      });
  return out;
}

// A time with a unit people read at a glance: "1.23 ms". `micro` is "us" in plain text and
// "µs" in the SVG.
std::string format_time(double seconds, const char* micro = "us") {
  if (!has(seconds)) return "-";
  const double a = std::abs(seconds);
  if (a == 0) return "0 s";
  if (a < 1e-6) return fmt::format("{:.3g} ns", seconds * 1e9);
  if (a < 1e-3) return fmt::format("{:.3g} {}", seconds * 1e6, micro);
  if (a < 1) return fmt::format("{:.3g} ms", seconds * 1e3);
  return fmt::format("{:.3g} s", seconds);
}

std::string format_percent(double fraction, bool sign) {
  if (!has(fraction)) return "-";
  return sign ? fmt::format("{:+.1f}%", 100 * fraction) : fmt::format("{:.1f}%", 100 * fraction);
}

std::string clip(const std::string& s, std::size_t width) {
  return s.size() <= width ? s : s.substr(0, width - 3) + "...";
}

std::string title_of(const std::vector<PredictionRecord>& records) {
  const PredictionRecord& r = records.front();
  std::string title = fmt::format("{} ({} backend)",
                                  r.device.empty() ? "no device description" : r.device, r.backend);
  if (r.ranks > 1) title += fmt::format(", rank 0's kernels of {} ranks", r.ranks);
  title += fmt::format(", iteration {}", r.iteration);
  return title;
}

// Every distinct note once, in record order.
std::vector<std::string> notes_of(const std::vector<PredictionRecord>& records) {
  std::vector<std::string> notes;
  for (const PredictionRecord& r : records)
    if (!r.note.empty() && std::find(notes.begin(), notes.end(), r.note) == notes.end())
      notes.push_back(r.note);
  return notes;
}

// --- SVG ------------------------------------------------------------------------------------

std::string xml(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&apos;"; break;
    default: out += c;
    }
  }
  return out;
}

// Colours (Tableau 10) of the predicted parts, and of a limiter by the part it names.
constexpr const char* kLaunchColour = "#9d9da1";
constexpr const char* kDataColour = "#4e79a7";
constexpr const char* kLatencyColour = "#f28e2b";
constexpr const char* kIssueColour = "#59a14f";
constexpr const char* kL2Colour = "#76b7b2";

const char* limiter_colour(const std::string& limiter) {
  if (limiter == "DRAM") return kDataColour;
  if (limiter == "L2") return kL2Colour;
  if (limiter == "latency") return kLatencyColour;
  if (limiter == "issue" || limiter == "FP64") return kIssueColour;
  return "#bab0ac";
}

// A 1-2-5 step giving about `ticks` intervals up to `max`.
double nice_step(double max, int ticks) {
  const double raw = max / ticks;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * decade >= raw) return m * decade;
  return 10 * decade;
}

// The unit an axis up to `max` seconds is labelled in.
struct TimeUnit {
  double scale;
  const char* name;
};
TimeUnit unit_for(double max) {
  if (max < 1e-6) return {1e9, "ns"};
  if (max < 1e-3) return {1e6, "µs"};
  if (max < 1) return {1e3, "ms"};
  return {1, "s"};
}

class Svg {
public:
  void raw(const std::string& s) { text_ += s; }
  void text(double x, double y, const std::string& s, const std::string& attributes = "") {
    text_ += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\"{}{}>{}</text>\n", x, y,
                         attributes.empty() ? "" : " ", attributes, xml(s));
  }
  void line(double x1, double y1, double x2, double y2, const std::string& style) {
    text_ += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" {}/>\n", x1,
                         y1, x2, y2, style);
  }
  void rect(double x, double y, double w, double h, const std::string& style,
            const std::string& title = "") {
    text_ += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" {}", x,
                         y, std::max(0.0, w), std::max(0.0, h), style);
    text_ += title.empty() ? "/>\n" : fmt::format("><title>{}</title></rect>\n", xml(title));
  }
  const std::string& str() const { return text_; }

private:
  std::string text_;
};

constexpr double kWidth = 1200;
constexpr double kTop = 84;         // below the titles
constexpr double kScatterLeft = 86; // the scatter's plot area
constexpr double kScatterSize = 400;
constexpr double kLabelLeft = 590; // the bars' kernel names
constexpr double kBarLeft = 780;   // the bars' plot area
constexpr double kBarWidth = 380;
constexpr double kRow = 24;

std::string kernel_label(const PredictionRecord& r, std::size_t index) {
  return fmt::format("{}. {}", index + 1, r.name);
}

// Left: measured (x) against predicted (y), log-log over whole decades.
void scatter(Svg& svg, const std::vector<const PredictionRecord*>& rows, bool host,
             double& bottom) {
  const double x0 = kScatterLeft, y0 = kTop, size = kScatterSize;
  svg.text(x0 + size / 2, y0 - 14, "Predicted against measured time per launch",
           "text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\"");
  double lo = INFINITY, hi = -INFINITY;
  for (const PredictionRecord* r : rows)
    for (double v : {r->measured_median, r->predicted_hu, host ? NAN : r->predicted_chemora})
      if (has(v) && v > 0 && has(r->measured_median) && r->measured_median > 0 &&
          has(r->predicted_hu) && r->predicted_hu > 0) {
        lo = std::min(lo, std::log10(v));
        hi = std::max(hi, std::log10(v));
      }
  svg.rect(x0, y0, size, size, "fill=\"#ffffff\" stroke=\"#444\"");
  bottom = y0 + size + 56;
  if (!(lo <= hi)) {
    svg.text(x0 + size / 2, y0 + size / 2, "no kernel has both a prediction and a measurement",
             "text-anchor=\"middle\" font-size=\"13\" fill=\"#666\"");
    return;
  }
  const int d_lo = int(std::floor(lo)), d_hi = std::max(int(std::ceil(hi)), d_lo + 1);
  const double span = d_hi - d_lo;
  auto px = [&](double log_v) { return x0 + (log_v - d_lo) / span * size; };
  auto py = [&](double log_v) { return y0 + size - (log_v - d_lo) / span * size; };

  svg.raw(fmt::format("<clipPath id=\"scatter-area\"><rect x=\"{:.1f}\" y=\"{:.1f}\" "
                      "width=\"{:.1f}\" height=\"{:.1f}\"/></clipPath>\n",
                      x0, y0, size, size));
  // The +-10% band around y = x: in log space a strip of constant width.
  const double down = std::log10(0.9), up = std::log10(1.1);
  svg.raw(fmt::format("<polygon clip-path=\"url(#scatter-area)\" fill=\"#4e79a7\" "
                      "fill-opacity=\"0.15\" points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f} "
                      "{:.1f},{:.1f}\"><title>within 10% of the measurement</title></polygon>\n",
                      px(d_lo), py(d_lo + down), px(d_hi), py(d_hi + down), px(d_hi), py(d_hi + up),
                      px(d_lo), py(d_lo + up)));
  // Decade grid, minor ticks at 2..9, labels with units.
  for (int d = d_lo; d <= d_hi; ++d) {
    const double v = std::pow(10.0, d);
    svg.line(px(d), y0, px(d), y0 + size, "stroke=\"#ddd\"");
    svg.line(x0, py(d), x0 + size, py(d), "stroke=\"#ddd\"");
    svg.text(px(d), y0 + size + 16, format_time(v, "µs"),
             "text-anchor=\"middle\" font-size=\"11\"");
    svg.text(x0 - 6, py(d) + 4, format_time(v, "µs"), "text-anchor=\"end\" font-size=\"11\"");
    if (d == d_hi) break;
    for (int m = 2; m <= 9; ++m) {
      const double l = d + std::log10(double(m));
      svg.line(px(l), y0 + size, px(l), y0 + size - 4, "stroke=\"#444\"");
      svg.line(x0, py(l), x0 + 4, py(l), "stroke=\"#444\"");
    }
  }
  svg.line(px(d_lo), py(d_lo), px(d_hi), py(d_hi),
           "stroke=\"#333\" stroke-dasharray=\"5,4\" clip-path=\"url(#scatter-area)\"");
  svg.text(px(d_hi) - 6, py(d_hi) + 16, "y = x, ±10% shaded",
           "text-anchor=\"end\" font-size=\"11\" fill=\"#333\"");
  svg.text(x0 + size / 2, y0 + size + 36, "measured (median) per launch",
           "text-anchor=\"middle\" font-size=\"12\"");
  svg.text(x0 - 62, y0 + size / 2,
           host ? "predicted (roofline) per launch" : "predicted (Hu et al. eq. 1) per launch",
           fmt::format("text-anchor=\"middle\" font-size=\"12\" transform=\"rotate(-90 {:.1f} "
                       "{:.1f})\"",
                       x0 - 62, y0 + size / 2));

  // Names fit beside the points of a few kernels; beyond that the numbers of the bars'
  // rows, the names in the hover titles.
  const bool names = rows.size() <= 8;
  std::set<std::string> limiters;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const PredictionRecord& r = *rows[i];
    if (!(has(r.measured_median) && r.measured_median > 0 && has(r.predicted_hu) &&
          r.predicted_hu > 0))
      continue;
    const double x = px(std::log10(r.measured_median));
    const std::string title =
        fmt::format("{} ({})\npredicted {} ({}), measured {}, error {}{}", r.name, r.mapping,
                    format_time(r.predicted_hu, "µs"), host ? "roofline" : "eq. 1",
                    format_time(r.measured_median, "µs"), format_percent(r.error_hu, true),
                    r.limiter.empty() ? "" : ", limited by " + r.limiter);
    if (!host && has(r.predicted_chemora) && r.predicted_chemora > 0) {
      const double yc = py(std::log10(r.predicted_chemora));
      svg.raw(fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"7\" height=\"7\" fill=\"none\" "
                          "stroke=\"{}\" stroke-width=\"1.5\"><title>{}</title></rect>\n",
                          x - 3.5, yc - 3.5, limiter_colour(r.limiter),
                          xml(fmt::format("{}: Chemora's combination predicts {}, error {}", r.name,
                                          format_time(r.predicted_chemora, "µs"),
                                          format_percent(r.error_chemora, true)))));
    }
    const double y = py(std::log10(r.predicted_hu));
    svg.raw(fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"{}\" stroke=\"#fff\" "
                        "stroke-width=\"1\"><title>{}</title></circle>\n",
                        x, y, limiter_colour(r.limiter), xml(title)));
    // Labels of points in the right third go to their left, inside the plot.
    const bool left = x > x0 + 0.65 * size;
    svg.text(left ? x - 7 : x + 7, y - 6, names ? r.name : std::to_string(i + 1),
             left ? "font-size=\"10\" fill=\"#222\" text-anchor=\"end\""
                  : "font-size=\"10\" fill=\"#222\"");
    limiters.insert(r.limiter);
  }
  // Legend: the limiters' colours (and the two combinations' markers on a GPU).
  double lx = x0 + 8, ly = y0 + 16;
  svg.text(lx, ly, "limited by:", "font-size=\"11\" fill=\"#333\"");
  ly += 15;
  for (const std::string& l : limiters) {
    svg.raw(fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4.5\" fill=\"{}\"/>\n", lx + 5,
                        ly - 4, limiter_colour(l)));
    svg.text(lx + 14, ly, l.empty() ? "(none)" : l, "font-size=\"11\"");
    ly += 15;
  }
  if (!host) {
    svg.raw(fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4.5\" fill=\"#555\"/>\n", lx + 5,
                        ly - 4));
    svg.text(lx + 14, ly, "Hu et al. eq. 1", "font-size=\"11\"");
    ly += 15;
    svg.raw(fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"7\" height=\"7\" fill=\"none\" "
                        "stroke=\"#555\" stroke-width=\"1.5\"/>\n",
                        lx + 1.5, ly - 7.5));
    svg.text(lx + 14, ly, "Chemora", "font-size=\"11\"");
  }
}

// Right: per kernel the predicted parts stacked, the measured median and the prediction marked.
void bars(Svg& svg, const std::vector<const PredictionRecord*>& rows, bool host, double& bottom) {
  struct Part {
    const char* name;
    double PredictionRecord::*member;
    const char* colour;
  };
  const std::vector<Part> parts =
      host ? std::vector<Part>{{"data (DRAM)", &PredictionRecord::data, kDataColour},
                               {"FP64 compute", &PredictionRecord::issue, kIssueColour}}
           : std::vector<Part>{{"launch", &PredictionRecord::launch, kLaunchColour},
                               {"data (max of L2, DRAM)", &PredictionRecord::data, kDataColour},
                               {"latency", &PredictionRecord::latency, kLatencyColour},
                               {"issue", &PredictionRecord::issue, kIssueColour}};
  svg.text((kLabelLeft + kBarLeft + kBarWidth) / 2, kTop - 14,
           "Predicted parts per launch (stacked)",
           "text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\"");

  // Legend, two rows.
  double lx = kLabelLeft, ly = kTop + 4;
  for (const Part& p : parts) {
    svg.rect(lx, ly - 9, 10, 10, fmt::format("fill=\"{}\"", p.colour));
    svg.text(lx + 14, ly, p.name, "font-size=\"11\"");
    lx += 14 + 7.0 * double(std::string(p.name).size()) + 16;
  }
  lx = kLabelLeft;
  ly += 17;
  svg.line(lx + 5, ly - 10, lx + 5, ly + 2, "stroke=\"#000\" stroke-width=\"2.5\"");
  svg.text(lx + 14, ly, "measured (median)", "font-size=\"11\"");
  lx += 150;
  svg.line(lx + 5, ly - 10, lx + 5, ly + 2,
           "stroke=\"#c0392b\" stroke-width=\"1.5\" "
           "stroke-dasharray=\"3,2\"");
  svg.text(lx + 14, ly, host ? "predicted (max of the two)" : "predicted (eq. 1)",
           "font-size=\"11\"");

  double max = 0;
  for (const PredictionRecord* r : rows) {
    double stacked = 0;
    for (const Part& p : parts)
      if (has(r->*p.member)) stacked += r->*p.member;
    for (double v : {stacked, r->measured_median, r->predicted_hu})
      if (has(v)) max = std::max(max, v);
  }
  const double top = ly + 16;
  const double height = double(rows.size()) * kRow;
  bottom = top + height + 44;
  svg.rect(kBarLeft, top, kBarWidth, height, "fill=\"none\" stroke=\"#444\"");
  if (!(max > 0)) return;
  const TimeUnit unit = unit_for(max);
  const double step = nice_step(max, 5);
  const double axis_max = std::ceil(max / step - 1e-9) * step;
  auto px = [&](double seconds) { return kBarLeft + seconds / axis_max * kBarWidth; };
  for (double t = 0; t <= axis_max * (1 + 1e-9); t += step) {
    svg.line(px(t), top, px(t), top + height, "stroke=\"#e4e4e4\"");
    svg.text(px(t), top + height + 15, fmt::format("{:g}", t * unit.scale),
             "text-anchor=\"middle\" font-size=\"11\"");
  }
  svg.text(kBarLeft + kBarWidth / 2, top + height + 34,
           fmt::format("time per launch [{}]", unit.name),
           "text-anchor=\"middle\" font-size=\"12\"");

  for (std::size_t i = 0; i < rows.size(); ++i) {
    const PredictionRecord& r = *rows[i];
    const double y = top + double(i) * kRow;
    svg.raw(fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\"><title>{}</title>{}"
                        "</text>\n",
                        kLabelLeft, y + kRow / 2 + 4,
                        xml(fmt::format("{} ({}), {} of the measured time", r.name, r.mapping,
                                        format_percent(r.share, false))),
                        xml(clip(kernel_label(r, i), 30))));
    double x = 0;
    for (const Part& p : parts) {
      const double v = r.*p.member;
      if (!has(v) || v <= 0) continue;
      svg.rect(px(x), y + 5, px(x + v) - px(x), kRow - 10, fmt::format("fill=\"{}\"", p.colour),
               fmt::format("{}: {} {}", r.name, p.name, format_time(v, "µs")));
      x += v;
    }
    if (has(r.predicted_hu))
      svg.line(px(r.predicted_hu), y + 2, px(r.predicted_hu), y + kRow - 2,
               "stroke=\"#c0392b\" stroke-width=\"1.5\" stroke-dasharray=\"3,2\"");
    if (has(r.measured_median))
      svg.raw(fmt::format(
          "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" "
          "stroke=\"#000\" stroke-width=\"2.5\"><title>{3}</title></line>\n",
          px(r.measured_median), y + 2, y + kRow - 2,
          xml(fmt::format("{}: measured {} (median of {} launches, {} to {})", r.name,
                          format_time(r.measured_median, "µs"), r.launches,
                          format_time(r.measured_min, "µs"), format_time(r.measured_max, "µs")))));
  }
}

} // namespace

std::string prediction_table(const std::vector<PredictionRecord>& records) {
  if (records.empty()) return "prediction log: no kernels were timed\n";
  const bool host = host_backend(records);
  const std::vector<const PredictionRecord*> rows = by_share(records);
  std::size_t name_width = 6, mapping_width = 7;
  for (const PredictionRecord* r : rows) {
    name_width = std::max(name_width, std::min<std::size_t>(r->name.size(), 40));
    mapping_width = std::max(mapping_width, std::min<std::size_t>(r->mapping.size(), 32));
  }
  std::string out = "Prediction log: " + title_of(records) + "\n";
  out += host ? "  predicted: roofline max(bytes / DRAM bandwidth, flops / FP64 peak)"
              : "  predicted: Hu et al. eq. 1 (error also for Chemora's combination)";
  out += "; measured: median per launch; share: of the time in these kernels\n";
  out += fmt::format("  {:<{}}  {:<{}}  {:>10}  {:>10}  {:>8}", "kernel", name_width, "mapping",
                     mapping_width, "predicted", "measured", "error");
  if (!host) out += fmt::format("  {:>8}", "Chemora");
  out += fmt::format("  {:<8}  {:>6}\n", "limiter", "share");
  for (const PredictionRecord* r : rows) {
    out += fmt::format("  {:<{}}  {:<{}}  {:>10}  {:>10}  {:>8}", clip(r->name, name_width),
                       name_width, clip(r->mapping, mapping_width), mapping_width,
                       format_time(r->predicted_hu), format_time(r->measured_median),
                       format_percent(r->error_hu, true));
    if (!host) out += fmt::format("  {:>8}", format_percent(r->error_chemora, true));
    out += fmt::format("  {:<8}  {:>6}\n", r->limiter.empty() ? "-" : r->limiter,
                       format_percent(r->share, false));
  }
  for (const std::string& note : notes_of(records)) out += "  note: " + note + "\n";
  return out;
}

std::string prediction_svg(const std::vector<PredictionRecord>& records) {
  const bool host = host_backend(records);
  const std::vector<const PredictionRecord*> rows = by_share(records);
  Svg body;
  double scatter_bottom = 0, bars_bottom = 0;
  if (!records.empty()) {
    scatter(body, rows, host, scatter_bottom);
    bars(body, rows, host, bars_bottom);
  }
  double height = std::max({scatter_bottom, bars_bottom, kTop + 40});
  std::vector<std::string> notes = notes_of(records);
  Svg foot;
  for (const std::string& note : notes) {
    foot.text(20, height, "note: " + note, "font-size=\"11\" fill=\"#8a4b08\"");
    height += 16;
  }
  height += 10;

  std::string out =
      fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
                  "viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"Helvetica, Arial, sans-serif\">\n"
                  "<rect width=\"100%\" height=\"100%\" fill=\"#fafafa\"/>\n",
                  kWidth, height);
  const std::string title = records.empty() ? "Saguaro prediction log: no kernels were timed"
                                            : "Saguaro prediction log: " + title_of(records);
  out += fmt::format("<title>{}</title>\n", xml(title));
  out += fmt::format("<text x=\"20\" y=\"28\" font-size=\"18\" font-weight=\"bold\">{}</text>\n",
                     xml(title));
  if (!records.empty())
    out += fmt::format(
        "<text x=\"20\" y=\"48\" font-size=\"12\" fill=\"#555\">{}</text>\n",
        xml(host ? "predicted: the roofline max(compulsory bytes / DRAM bandwidth, flops / FP64 "
                   "peak); measured: median of every launch timed"
                 : "predicted: Hu, Koppelman & Brandt eq. 1 (filled) and Chemora's combination "
                   "(hollow); measured: median of every launch timed (CUDA events)"));
  out += body.str() + foot.str() + "</svg>\n";
  return out;
}

} // namespace saguaro::io
