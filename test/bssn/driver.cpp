// Evaluates one calculation of an EDL file at one point with the reference interpreter, loads
// from a table "NAME i j k value" of values at integer offsets. Part of test/bssn (check.sh).
// usage: driver FILE.edl FDORDER CALC DATA h "p1=v1,p2=v2"
#include "calc/interpreter.hpp"
#include "calc/lower.hpp"
#include "edl/parser.hpp"
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
using namespace saguaro;
int main(int argc, char** argv) {
  auto thorn = edl::parse_file(argv[1]);
  calc::LowerOptions opt;
  opt.fd_order = std::atoi(argv[2]);
  // One stage evaluated at a point: the product stencils (a nested mixed derivative's
  // intermediate would be needed at the neighbours; LowerIntermediates tests it equal).
  opt.mixed = calc::MixedDerivatives::Product;
  auto prog = calc::lower(thorn, opt);
  std::string cname = argv[3];
  std::map<std::string, std::map<std::array<int, 3>, double>> data;
  std::ifstream in(argv[4]);
  std::string name;
  int i, j, k;
  double v;
  while (in >> name >> i >> j >> k >> v) data[name][{i, j, k}] = v;
  double h = std::atof(argv[5]);
  std::map<std::string, double> pset;
  std::stringstream ss(argc > 6 ? argv[6] : "");
  std::string kv;
  while (std::getline(ss, kv, ','))
    if (!kv.empty()) {
      auto p = kv.find('=');
      pset[kv.substr(0, p)] = std::atof(kv.substr(p + 1).c_str());
    }
  for (auto& c : prog.calculations) {
    if (c.name != cname) continue;
    calc::Interpreter interp(c);
    calc::PointInputs pi;
    pi.spacing = {h, h, h};
    for (auto& p : prog.parameters)
      pi.parameters.push_back(pset.count(p.name) ? pset[p.name] : p.default_value);
    pi.load = [&](int gf, const calc::Offset& o) {
      const std::string& n = c.grid_functions[gf].name;
      auto it = data.find(n);
      if (it == data.end()) {
        std::cerr << "missing " << n << "\n";
        std::exit(3);
      }
      auto jt = it->second.find(o);
      if (jt == it->second.end()) {
        std::cerr << "missing offset " << n << "\n";
        std::exit(3);
      }
      return jt->second;
    };
    auto vals = interp.evaluate(int(c.stages.size()) - 1, pi);
    auto& st = c.stages.back().stores;
    for (std::size_t s = 0; s < st.size(); ++s)
      std::printf("%s %.17g\n", c.grid_functions[st[s].grid_function].name.c_str(), vals[s]);
  }
}
