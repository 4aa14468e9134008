// Checks what `saguaro calibrate --interconnect --base BASE --out CALIBRATED` wrote: it reads
// (model::load_device), describes the interconnect (both quantities positive, with sources
// saying they were calibrated by --interconnect), and everything else is BASE's: name, kind,
// arch, match, every other quantity (to the 6 digits written) and its source.
// Usage: check_interconnect BASE.yaml CALIBRATED.yaml; exit status 0 when all holds.
#include "model/device.hpp"
#include "model/model.hpp"

#include <cmath>
#include <cstdio>
#include <string>

using namespace saguaro;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s BASE.yaml CALIBRATED.yaml\n", argv[0]);
    return 2;
  }
  int failures = 0;
  auto expect = [&](bool ok, const std::string& what) {
    if (!ok) {
      std::fprintf(stderr, "check_interconnect: %s\n", what.c_str());
      ++failures;
    }
  };
  try {
    const model::Device base = model::load_device(argv[1]);
    const model::Device d = model::load_device(argv[2]);
    expect(d.interconnect_latency > 0, "interconnect_latency is not positive");
    expect(d.interconnect_bandwidth > 0, "interconnect_bandwidth is not positive");
    expect(model::describes_interconnect(d), "describes_interconnect is false");
    for (const char* name : {"interconnect_latency", "interconnect_bandwidth"}) {
      const auto s = d.sources.find(name);
      expect(s != d.sources.end() && s->second.rfind("calibrated ", 0) == 0 &&
                 s->second.find("saguaro calibrate --interconnect") != std::string::npos,
             std::string(name) + "'s source does not say it was calibrated by --interconnect");
    }
    expect(d.name == base.name, "name changed: " + d.name);
    expect(d.kind == base.kind, "kind changed: " + d.kind);
    expect(d.arch == base.arch, "arch changed: " + d.arch);
    expect(d.match == base.match, "match changed");
    for (const model::Quantity& q : model::quantities()) {
      const std::string name = q.name;
      if (name == "interconnect_latency" || name == "interconnect_bandwidth") continue;
      const double a = base.*(q.member), b = d.*(q.member);
      expect(std::abs(a - b) <= 1e-6 * std::abs(a),
             name + " changed: " + std::to_string(a) + " -> " + std::to_string(b));
      const auto sa = base.sources.find(name), sb = d.sources.find(name);
      expect((sa == base.sources.end()) == (sb == d.sources.end()) &&
                 (sa == base.sources.end() || sa->second == sb->second),
             name + "'s source changed");
    }
    std::printf("check_interconnect: interconnect_latency %g us, interconnect_bandwidth %g GB/s\n",
                d.interconnect_latency, d.interconnect_bandwidth);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "check_interconnect: %s\n", e.what());
    return 1;
  }
  return failures == 0 ? 0 : 1;
}
