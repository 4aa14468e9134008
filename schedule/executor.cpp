// Running a schedule: the Executor calls the functions bound to scheduled names, in order,
// and times each into Timers.
//
// Times are self times: while a scheduled function runs nested scheduled functions (as
// MoL_Evolution runs MoL_CalcRHS once per substep), their time is booked to them and not
// again to the caller, so the report's rows add up to the time spent in scheduled functions.
#include "schedule/names.hpp"
#include "schedule/schedule.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace saguaro::schedule {

// ---- Timers -----------------------------------------------------------------------------------

void Timers::add(const std::string& name, double seconds, long calls) {
  auto [it, inserted] = table_.try_emplace(name, 0L, 0.0);
  if (inserted) order_.push_back(name);
  it->second.first += calls;
  it->second.second += seconds;
}

std::string Timers::report() const {
  if (table_.empty()) return "no scheduled function has run\n";
  std::vector<std::string> rows = order_;
  std::stable_sort(rows.begin(), rows.end(), [&](const std::string& a, const std::string& b) {
    return table_.at(a).second > table_.at(b).second;
  });
  double all = 0;
  long all_calls = 0;
  std::size_t width = 5; // "total"
  for (const auto& [name, entry] : table_) {
    all += entry.second;
    all_calls += entry.first;
    width = std::max(width, name.size());
  }
  std::string out = fmt::format("{:<{}}  {:>9}  {:>12}  {:>12}  {:>8}\n", "name", width, "calls",
                                "total [s]", "mean [ms]", "% of all");
  std::string rule(width + 2 + 9 + 2 + 12 + 2 + 12 + 2 + 8, '-');
  out += rule + '\n';
  for (const std::string& name : rows) {
    const auto& [calls, total] = table_.at(name);
    double mean_ms = calls > 0 ? 1e3 * total / double(calls) : 0.0;
    double percent = all > 0 ? 100.0 * total / all : 0.0;
    out += fmt::format("{:<{}}  {:>9}  {:>12.6f}  {:>12.4f}  {:>8.1f}\n", name, width, calls, total,
                       mean_ms, percent);
  }
  out += rule + '\n';
  out += fmt::format("{:<{}}  {:>9}  {:>12.6f}  {:>12}  {:>8.1f}\n", "total", width, all_calls, all,
                     "", all > 0 ? 100.0 : 0.0);
  return out;
}

// ---- Executor ---------------------------------------------------------------------------------

void Executor::bind(const std::string& name, std::function<void()> fn) {
  if (!fn) throw std::invalid_argument(fmt::format("Executor::bind('{}'): empty function", name));
  functions_[support::lower(name)] = std::move(fn);
}

namespace {

// How deep scheduled functions may nest before a runaway recursion is reported.
constexpr std::size_t max_nesting = 64;

std::string qualified(const ScheduleItem& item) {
  return item.thorn.empty() ? item.name : fmt::format("{}::{}", item.thorn, item.name);
}

} // namespace

void Executor::run(const std::string& where) {
  bool known = false;
  const std::string bin = detail::normalise_bin(where);
  for (const std::string& b : bins()) known = known || b == bin;
  for (const ScheduleItem& item : schedule_.items())
    known = known || support::iequals(item.name, where);
  if (!known)
    throw std::logic_error(
        fmt::format("Executor::run('{}'): neither a bin nor a scheduled group or function", where));
  if (nested_seconds_.size() >= max_nesting)
    throw std::logic_error(fmt::format(
        "Executor::run('{}'): scheduled functions nest more than {} deep", where, max_nesting));

  for (const ScheduleItem* item : schedule_.ordered(where)) {
    if (item->is_group) {
      run(item->name);
      continue;
    }
    if (!item->while_var.empty() || !item->if_var.empty())
      throw std::logic_error(fmt::format("'{}' is scheduled {} {}, which the executor does not "
                                         "evaluate",
                                         qualified(*item), item->while_var.empty() ? "IF" : "WHILE",
                                         item->while_var.empty() ? item->if_var : item->while_var));
    run_as(*item, bound(*item));
  }
}

const std::function<void()>& Executor::bound(const ScheduleItem& item) const {
  auto fn = functions_.end();
  if (!item.alias.empty()) fn = functions_.find(support::lower(item.alias));
  if (fn == functions_.end()) fn = functions_.find(support::lower(item.name));
  if (fn == functions_.end())
    throw std::logic_error(fmt::format("no function is bound to '{}', scheduled {} {}",
                                       qualified(item), item.at ? "at" : "in", item.where));
  return fn->second;
}

void Executor::run_as(const ScheduleItem& item, const std::function<void()>& fn, long calls) {
  nested_seconds_.push_back(0.0);
  auto start = std::chrono::steady_clock::now();
  try {
    fn();
  } catch (...) {
    nested_seconds_.pop_back();
    throw;
  }
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double nested = nested_seconds_.back();
  nested_seconds_.pop_back();
  timers_.add(qualified(item), std::max(0.0, elapsed - nested), calls);
  if (!nested_seconds_.empty()) nested_seconds_.back() += elapsed;
}

std::vector<std::string> Executor::unbound() const {
  std::vector<std::string> out;
  for (const ScheduleItem& item : schedule_.items()) {
    if (item.is_group) continue;
    bool bound = functions_.count(support::lower(item.name)) > 0 ||
                 (!item.alias.empty() && functions_.count(support::lower(item.alias)) > 0);
    if (bound) continue;
    if (std::none_of(out.begin(), out.end(),
                     [&](const std::string& n) { return support::iequals(n, item.name); }))
      out.push_back(item.name);
  }
  return out;
}

} // namespace saguaro::schedule
