// The integrators' table and the reader of its notation (see integrators.hpp).
#include "schedule/integrators.hpp"

#include "support/diagnostics.hpp"
#include "runtime/array_space.hpp"
#include "schedule/names.hpp"
#include "calc/rational.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

namespace saguaro::schedule {

namespace {

// The table. Each stage: {time of the right-hand side, combinations, time of the new state},
// times in units of dt from the step's start.
const std::vector<IntegratorText>& table() {
  static const std::vector<IntegratorText> entries = {
      // Cactus MoL's iterative Crank-Nicolson: 3 iterations, ICN_avg_theta = 1/2.
      {"ICN",
       2,
       "iterative Crank-Nicolson (3 iterations), second order",
       "",
       {{"0", "y1 = y + 1/2 dt k; swap y0 y; swap y y1", "1/2"},
        {"1/2", "y1 = y0 + 1/2 dt k; swap y y1", "1/2"},
        {"1/2", "y1 = y0 + dt k; swap y y1", "1"}}},
      // Heun's method.
      {"RK2",
       2,
       "second-order Runge-Kutta",
       "",
       {{"0", "y1 = y + dt k; swap y0 y; swap y y1", "1"},
        {"1", "y1 = 1/2 y0 + 1/2 y + 1/2 dt k; swap y y1", "1"}}},
      // Shu & Osher's (1988) strong-stability-preserving method in its convex-combination form.
      {"RK3",
       3,
       "third-order strong-stability-preserving (SSP) Runge-Kutta",
       "",
       {{"0", "y1 = y + dt k; swap y0 y; swap y y1", "1"},
        {"1", "y1 = 3/4 y0 + 1/4 y + 1/4 dt k; swap y y1", "1/2"},
        {"1/2", "y1 = 1/3 y0 + 2/3 y + 2/3 dt k; swap y y1", "1"}}},
      // Kutta's third-order method (ODESolvers' "RK3"): k1 and k2 kept for the last stage.
      {"RK3-Kutta",
       3,
       "Kutta's third-order Runge-Kutta (Einstein Toolkit ODESolvers' RK3)",
       "",
       {{"0", "k1 = k; y1 = y + 1/2 dt k; swap y0 y; swap y y1", "1/2"},
        {"1/2", "k2 = k; y1 = y0 - dt k1 + 2 dt k; swap y y1", "1"},
        {"1", "y1 = y0 + 1/6 dt k1 + 2/3 dt k2 + 1/6 dt k; swap y y1", "1"}}},
      // The explicit midpoint rule (ODESolvers' "RK2").
      {"RK2-midpoint",
       2,
       "explicit midpoint rule, second order (Einstein Toolkit ODESolvers' RK2)",
       "",
       {{"0", "y1 = y + 1/2 dt k; swap y0 y; swap y y1", "1/2"},
        {"1/2", "y1 = y0 + dt k; swap y y1", "1"}}},
      // Forward Euler.
      {"Euler", 1, "forward Euler, first order", "", {{"0", "y1 = y + dt k; swap y y1", "1"}}},
      // The classical method, its stages combined so that a right-hand side computing them
      // (step_fold.hpp) moves the fewest arrays: 4 beyond its own per variable and step, where
      // accumulating y + dt/6 (k1 + 2 k2 + 2 k3) as the stages go moves 8. Each stage's state
      // y_s = y_n + c dt k_s is read at the point anyway, so stage 1 writes only y1, stage 2
      // keeps acc = y_n + dt/6 k1 + dt/3 k2 - 1/3 y_n (with dt/2 k1 = y_1 - y_n: 1/3 y0 +
      // 1/3 y + 1/3 dt k), stage 3 does not touch it, and stage 4 adds y_3 / 3 = (y_n + dt
      // k3) / 3 back. Each stage's state is written apart from the one its right-hand side
      // reads.
      {"RK4",
       4,
       "classical fourth-order Runge-Kutta",
       "",
       {{"0", "y1 = y + 1/2 dt k; swap y0 y; swap y y1", "1/2"},
        {"1/2", "acc = 1/3 y0 + 1/3 y + 1/3 dt k; y1 = y0 + 1/2 dt k; swap y y1", "1/2"},
        {"1/2", "y1 = y0 + dt k; swap y y1", "1"},
        {"1", "y1 = acc + 1/3 y + 1/6 dt k; swap y y1", "1"}}},
  };
  return entries;
}

// A cursor over one piece of an entry, for the errors' words.
struct Reader {
  const std::string& integrator;
  std::string text;
  std::size_t at = 0;

  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument(
        fmt::format("integrator {}: {} in \"{}\" at column {}", integrator, what, text, at + 1));
  }
  void skip_space() {
    while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
  }
  bool done() {
    skip_space();
    return at >= text.size();
  }
  bool accept(char c) {
    skip_space();
    if (at < text.size() && text[at] == c) {
      ++at;
      return true;
    }
    return false;
  }
  bool peek_digit() {
    skip_space();
    return at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]));
  }
  std::int64_t integer() {
    if (!peek_digit()) fail("expected a number");
    std::int64_t v = 0;
    while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) {
      if (v > (INT64_MAX - 9) / 10) fail("number too large");
      v = 10 * v + (text[at++] - '0');
    }
    return v;
  }
  std::string word() {
    skip_space();
    const std::size_t from = at;
    while (at < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[at])) || text[at] == '_'))
      ++at;
    if (at == from || std::isdigit(static_cast<unsigned char>(text[from])))
      fail("expected a register name");
    return text.substr(from, at - from);
  }
  Rational rational() {
    Rational r{integer(), 1};
    if (accept('/')) r.den = integer();
    if (r.den == 0) fail("division by zero");
    return r;
  }
};

// Builds the registers while reading, and checks that every register is written before it
// is read (the state and, inside a stage, the right-hand side are given).
struct Builder {
  Integrator out;
  std::vector<bool> written{true, false}; // y, k

  int register_of(Reader& in, const std::string& name, bool target) {
    if (name == "dt") in.fail("'dt' is not a register");
    if (name == "y") return kStateRegister;
    if (name == "k") {
      if (target) in.fail("the right-hand side k is computed, not combined");
      return kRhsRegister;
    }
    auto it = std::find(out.scratch.begin(), out.scratch.end(), name);
    if (it != out.scratch.end()) return kFirstScratchRegister + int(it - out.scratch.begin());
    out.scratch.push_back(name);
    written.push_back(false);
    return kFirstScratchRegister + int(out.scratch.size()) - 1;
  }

  Combination::Term term(Reader& in, bool negative) {
    Combination::Term t;
    if (in.peek_digit()) t.a.r = in.rational();
    if (negative) t.a.r.num = -t.a.r.num;
    std::string name = in.word();
    if (name == "dt") {
      t.a.dt = true;
      name = in.word();
    }
    t.x = register_of(in, name, false);
    if (!written[std::size_t(t.x)]) in.fail(fmt::format("{} is read before it is written", name));
    return t;
  }

  // Combinations, then (only where `swaps` is given) register exchanges "swap a b".
  std::vector<Combination> combinations(const std::string& text,
                                        std::vector<std::array<int, 2>>* swaps = nullptr) {
    std::vector<Combination> list;
    std::size_t from = 0;
    while (from <= text.size()) {
      std::size_t end = text.find(';', from);
      if (end == std::string::npos) end = text.size();
      Reader in{out.name, text.substr(from, end - from)};
      from = end + 1;
      if (in.done()) continue;
      const std::string first = in.word();
      if (first == "swap") {
        if (swaps == nullptr) in.fail("a swap belongs to a stage");
        const int a = register_of(in, in.word(), true);
        const int b = register_of(in, in.word(), true);
        if (a == b || !in.done()) in.fail("expected 'swap' and two different registers");
        swaps->push_back({a, b});
        std::vector<bool>::swap(written[std::size_t(a)], written[std::size_t(b)]);
        continue;
      }
      if (swaps != nullptr && !swaps->empty()) in.fail("a combination after a swap");
      const int target = register_of(in, first, true);
      if (!in.accept('=')) in.fail("expected '='");
      Combination c;
      c.target = target;
      bool negative = in.accept('-');
      for (;;) {
        c.terms.push_back(term(in, negative));
        if (in.done()) break;
        if (in.accept('+'))
          negative = false;
        else if (in.accept('-'))
          negative = true;
        else
          in.fail("expected '+' or '-'");
      }
      if (c.terms.size() > runtime::ArraySpace::max_terms)
        in.fail(
            fmt::format("{} terms (at most {})", c.terms.size(), runtime::ArraySpace::max_terms));
      written[std::size_t(target)] = true;
      list.push_back(std::move(c));
    }
    return list;
  }

  Rational time(const char* text) {
    Reader in{out.name, text};
    Rational r = in.rational();
    if (!in.done()) in.fail("expected a time p/q");
    return r;
  }
};

std::string keyword_list() {
  std::vector<std::string> names;
  for (const Integrator& i : integrators()) names.push_back(i.name);
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

} // namespace

std::string Rational::text() const {
  return den == 1 ? fmt::format("{}", num) : fmt::format("{}/{}", num, den);
}

double Coefficient::value(double step) const {
  return dt ? (step * double(r.num)) / double(r.den) : double(r.num) / double(r.den);
}

std::string Coefficient::text() const {
  if (!dt) return r.text();
  if (r == Rational{1, 1}) return "dt";
  if (r == Rational{-1, 1}) return "-dt";
  return r.text() + " dt";
}

std::string Integrator::register_name(int r) const {
  if (r == kStateRegister) return "y";
  if (r == kRhsRegister) return "k";
  return scratch.at(std::size_t(r - kFirstScratchRegister));
}

std::string Integrator::text(const std::array<int, 2>& swap) const {
  return "swap " + register_name(swap[0]) + " " + register_name(swap[1]);
}

bool Stage::writes_state() const {
  for (const Combination& c : updates)
    if (c.target == kStateRegister) return true;
  return false;
}

std::string Integrator::text(const Combination& c) const {
  std::string out = register_name(c.target) + " =";
  for (std::size_t i = 0; i < c.terms.size(); ++i) {
    Coefficient a = c.terms[i].a;
    const bool negative = a.r.num < 0;
    if (i > 0)
      out += negative ? " -" : " +";
    else if (negative)
      out += " -";
    a.r.num = negative ? -a.r.num : a.r.num;
    const std::string coefficient = a == Coefficient{} ? "" : a.text() + " ";
    out += " " + coefficient + register_name(c.terms[i].x);
  }
  if (c.terms.empty()) out += " 0";
  return out;
}

Integrator parse_integrator(const IntegratorText& text) {
  Builder b;
  b.out.name = text.name;
  b.out.order = text.order;
  b.out.description = text.description;
  b.out.start = b.combinations(text.start);
  for (const IntegratorText::StageText& s : text.stages) {
    Stage stage;
    stage.rhs_time = b.time(s.rhs_time);
    b.written[kRhsRegister] = true;
    stage.updates = b.combinations(s.updates, &stage.swaps);
    stage.state_time = b.time(s.state_time);
    b.out.stages.push_back(std::move(stage));
  }
  if (b.out.stages.empty())
    throw std::invalid_argument(fmt::format("integrator {}: no stages", text.name));
  return std::move(b.out);
}

const std::vector<Integrator>& integrators() {
  static const std::vector<Integrator> list = [] {
    std::vector<Integrator> out;
    for (const IntegratorText& t : table()) out.push_back(parse_integrator(t));
    return out;
  }();
  return list;
}

const Integrator& find_integrator(const std::string& name) {
  std::vector<std::string> names;
  for (const Integrator& i : integrators()) {
    if (support::iequals(i.name, name)) return i;
    names.push_back(i.name);
  }
  throw support::InputError(
      {}, fmt::format("unknown MoL::ODE_Method '{}': expected {}", name, keyword_list()),
      support::did_you_mean(name, names));
}

namespace {

// A register's value in the symbolic run: y_n and the stages' k, each at a power of dt (0 or
// 1; the table never multiplies dt twice, which would show up as power 2 and be refused).
struct Symbolic {
  // terms[{basis, dt power}]: basis 0 is y_n, s + 1 is stage s's k.
  std::map<std::pair<int, int>, calc::Rational> terms;
  bool defined = false;
};

Symbolic combine_symbolic(const std::vector<Symbolic>& registers, const Combination& c,
                          bool& undefined) {
  Symbolic out;
  out.defined = true;
  for (const Combination::Term& t : c.terms) {
    const Symbolic& x = registers.at(std::size_t(t.x));
    if (!x.defined) undefined = true;
    const calc::Rational a(t.a.r.num, t.a.r.den);
    for (const auto& [key, value] : x.terms) {
      const std::pair<int, int> at{key.first, key.second + (t.a.dt ? 1 : 0)};
      calc::Rational& slot = out.terms[at];
      slot = slot + a * value;
      if (slot.is_zero()) out.terms.erase(at);
    }
  }
  return out;
}

Rational plain(const calc::Rational& r) {
  return Rational{r.num, r.den};
}

// Reads x as y_n + dt sum_j coefficient_j k_j (j < stages); false when it is not of that form.
bool as_step(const Symbolic& x, int stages, std::vector<Rational>& coefficients) {
  coefficients.assign(std::size_t(stages), Rational{});
  bool state = false;
  for (const auto& [key, value] : x.terms) {
    if (key.first == 0 && key.second == 0 && value == calc::Rational(1)) {
      state = true;
      continue;
    }
    if (key.first == 0 || key.second != 1 || key.first > stages) return false;
    coefficients[std::size_t(key.first - 1)] = plain(value);
  }
  return state;
}

} // namespace

bool ButcherTableau::sub_diagonal() const {
  for (std::size_t s = 0; s < a.size(); ++s)
    for (std::size_t j = 0; j < a[s].size(); ++j)
      if (j + 1 != s && !a[s][j].zero()) return false;
  return true;
}

Rational ButcherTableau::sub(int stage) const {
  return a.at(std::size_t(stage)).at(std::size_t(stage - 1));
}

std::optional<ButcherTableau> butcher_tableau(const Integrator& integrator, std::string* why) {
  auto refuse = [&](const std::string& reason) -> std::optional<ButcherTableau> {
    if (why) *why = fmt::format("{}: {}", integrator.name, reason);
    return std::nullopt;
  };
  const std::size_t registers = std::size_t(kFirstScratchRegister) + integrator.scratch.size();
  std::vector<Symbolic> r(registers);
  r[kStateRegister].terms[{0, 0}] = calc::Rational(1);
  r[kStateRegister].defined = true;
  bool undefined = false;
  auto run = [&](const Combination& c) {
    r[std::size_t(c.target)] = combine_symbolic(r, c, undefined);
  };
  for (const Combination& c : integrator.start) run(c);
  ButcherTableau t;
  const int stages = int(integrator.stages.size());
  for (int s = 0; s < stages; ++s) {
    const Stage& stage = integrator.stages[std::size_t(s)];
    std::vector<Rational> a;
    if (!as_step(r[kStateRegister], s, a))
      return refuse(fmt::format("stage {} reads a state that is not y_n plus dt k terms", s + 1));
    t.a.push_back(std::vector<Rational>(a.begin(), a.begin() + s));
    t.c.push_back(stage.rhs_time);
    r[kRhsRegister] = Symbolic{};
    r[kRhsRegister].terms[{s + 1, 0}] = calc::Rational(1);
    r[kRhsRegister].defined = true;
    for (const Combination& c : stage.updates) run(c);
    for (const std::array<int, 2>& w : stage.swaps)
      std::swap(r[std::size_t(w[0])], r[std::size_t(w[1])]);
  }
  if (undefined) return refuse("a register is read before the step writes it");
  if (!as_step(r[kStateRegister], stages, t.b))
    return refuse("the new state is not y_n plus dt k terms");
  return t;
}

} // namespace saguaro::schedule
