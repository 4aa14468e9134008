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

void Timers::add_device(const std::string& name, double seconds, bool in_sampled_step) {
  (in_sampled_step ? device_in_steps_ : device_)[name] += seconds;
}

void Timers::add_step(double seconds, bool sampled) {
  steps_seconds_ += seconds;
  ++steps_;
  if (!sampled) return;
  sampled_steps_seconds_ += seconds;
  ++sampled_steps_;
}

std::map<std::string, double> Timers::device_table() const {
  std::map<std::string, double> out = device_;
  const double scale = sampled_steps_seconds_ > 0 ? steps_seconds_ / sampled_steps_seconds_ : 1.0;
  for (const auto& [name, seconds] : device_in_steps_) out[name] += seconds * scale;
  return out;
}

std::string Timers::report() const {
  if (table_.empty()) return "no scheduled function has run\n";
  if (!device_.empty()) return report_with_device();
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

std::string Timers::report_with_device() const {
  std::vector<std::string> rows = order_;
  const std::map<std::string, double> device_seconds = device_table();
  auto device = [&](const std::string& name) {
    auto it = device_seconds.find(name);
    return it == device_seconds.end() ? 0.0 : it->second;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const std::string& a, const std::string& b) {
    return device(a) > device(b);
  });
  double host_all = 0, device_all = 0;
  long all_calls = 0;
  std::size_t width = 5;
  for (const auto& [name, entry] : table_) {
    host_all += entry.second;
    all_calls += entry.first;
    device_all += device(name);
    width = std::max(width, name.size());
  }
  auto percent = [](double x, double all) { return all > 0 ? 100.0 * x / all : 0.0; };
  std::string out = fmt::format("{:<{}}  {:>9}  {:>12}  {:>7}  {:>12}  {:>7}\n", "name", width,
                                "calls", "device [s]", "%", "host [s]", "%");
  std::string rule(width + 2 + 9 + 2 + 12 + 2 + 7 + 2 + 12 + 2 + 7, '-');
  out += rule + '\n';
  for (const std::string& name : rows) {
    const auto& [calls, total] = table_.at(name);
    out += fmt::format("{:<{}}  {:>9}  {:>12.6f}  {:>7.1f}  {:>12.6f}  {:>7.1f}\n", name, width,
                       calls, device(name), percent(device(name), device_all), total,
                       percent(total, host_all));
  }
  out += rule + '\n';
  out += fmt::format("{:<{}}  {:>9}  {:>12.6f}  {:>7.1f}  {:>12.6f}  {:>7.1f}\n", "total", width,
                     all_calls, device_all, 100.0, host_all, 100.0);
  out += "device: the GPU's compute queue from a function's start to its end, nested functions\n"
         "taken out; host: the wall clock, which for a GPU's asynchronous launches shows where\n"
         "the host waited, not where the GPU worked\n";
  if (sampled_steps_ > 0 && sampled_steps_ < steps_)
    out += fmt::format("device times inside the time steps measured on {} of {} steps "
                       "(Saguaro::device_timer_every) and scaled to all {}: {:.6f} s\n",
                       sampled_steps_, steps_, steps_, steps_seconds_);
  return out;
}

// ---- Executor ---------------------------------------------------------------------------------

void Executor::bind(const std::string& name, std::function<void()> fn) {
  if (!fn) throw std::invalid_argument(fmt::format("Executor::bind('{}'): empty function", name));
  functions_[support::lower(name)] = std::move(fn);
  runs_.clear();
}

namespace {

// How deep scheduled functions may nest before a runaway recursion is reported.
constexpr std::size_t max_nesting = 64;

std::string qualified(const ScheduleItem& item) {
  return item.thorn.empty() ? item.name : fmt::format("{}::{}", item.thorn, item.name);
}

} // namespace

void Executor::drop_stale_caches() {
  if (schedule_.items().size() == cached_items_) return;
  runs_.clear(); // the schedule has grown: its items may have moved
  names_.clear();
  cached_items_ = schedule_.items().size();
}

const std::vector<Executor::Step>& Executor::steps_of(const std::string& where) {
  drop_stale_caches();
  if (auto it = runs_.find(where); it != runs_.end()) return it->second;
  bool known = false;
  const std::string bin = detail::normalise_bin(where);
  for (const std::string& b : bins()) known = known || b == bin;
  for (const ScheduleItem& item : schedule_.items())
    known = known || support::iequals(item.name, where);
  if (!known)
    throw std::logic_error(
        fmt::format("Executor::run('{}'): neither a bin nor a scheduled group or function", where));
  std::vector<Step> steps;
  for (const ScheduleItem* item : schedule_.ordered(where)) {
    const bool function = !item->is_group && item->while_var.empty() && item->if_var.empty();
    steps.push_back({item, function ? find_bound(*item) : nullptr});
  }
  return runs_.emplace(where, std::move(steps)).first->second;
}

const std::string& Executor::name_of(const ScheduleItem& item) {
  drop_stale_caches();
  auto [it, fresh] = names_.try_emplace(&item);
  if (fresh) it->second = qualified(item);
  return it->second;
}

void Executor::run(const std::string& where) {
  if (nested_seconds_.size() >= max_nesting)
    throw std::logic_error(fmt::format(
        "Executor::run('{}'): scheduled functions nest more than {} deep", where, max_nesting));
  // A copy: a function may bind others (which drops the cache) while the list is walked.
  const std::vector<Step> steps = steps_of(where);
  for (const Step& s : steps) {
    const ScheduleItem* item = s.item;
    if (item->is_group) {
      run(item->name);
      continue;
    }
    if (!item->while_var.empty() || !item->if_var.empty())
      throw std::logic_error(fmt::format("'{}' is scheduled {} {}, which the executor does not "
                                         "evaluate",
                                         qualified(*item), item->while_var.empty() ? "IF" : "WHILE",
                                         item->while_var.empty() ? item->if_var : item->while_var));
    run_as(*item, s.fn != nullptr ? *s.fn : bound(*item)); // bound() throws for the unbound
  }
}

const std::function<void()>* Executor::find_bound(const ScheduleItem& item) const {
  auto fn = functions_.end();
  if (!item.alias.empty()) fn = functions_.find(support::lower(item.alias));
  if (fn == functions_.end()) fn = functions_.find(support::lower(item.name));
  return fn == functions_.end() ? nullptr : &fn->second;
}

const std::function<void()>& Executor::bound(const ScheduleItem& item) const {
  if (const std::function<void()>* fn = find_bound(item)) return *fn;
  throw std::logic_error(fmt::format("no function is bound to '{}', scheduled {} {}",
                                     qualified(item), item.at ? "at" : "in", item.where));
}

void Executor::run_as(const ScheduleItem& item, const std::function<void()>& fn, long calls) {
  nested_seconds_.push_back(0.0);
  const bool device = device_space_ != nullptr && device_timing_ != DeviceTiming::unsampled_step &&
                      device_space_->on_device();
  if (device) {
    DeviceSpan span{name_of(item), device_timing_ == DeviceTiming::sampled_step};
    span.parent = device_open_.empty() ? -1 : device_open_.back();
    span.before = device_space_->mark(runtime::ArraySpace::Queue::compute);
    device_open_.push_back(int(device_pending_.size()));
    device_pending_.push_back(std::move(span));
  }
  auto start = std::chrono::steady_clock::now();
  try {
    fn();
  } catch (...) {
    nested_seconds_.pop_back();
    if (device) device_open_.pop_back();
    throw;
  }
  if (device) {
    device_pending_[std::size_t(device_open_.back())].after =
        device_space_->mark(runtime::ArraySpace::Queue::compute);
    device_open_.pop_back();
  }
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double nested = nested_seconds_.back();
  nested_seconds_.pop_back();
  timers_.add(name_of(item), std::max(0.0, elapsed - nested), calls);
  if (!nested_seconds_.empty()) nested_seconds_.back() += elapsed;
}

void Executor::resolve_device_times(int before) {
  if (device_pending_.empty()) return;
  // A span is booked when it has finished before mark `before` and its caller is booked with it
  // or still open (a caller comes before its callees in device_pending_). Spans still open (the
  // caller of this) stay pending; their children are booked.
  const std::size_t n = device_pending_.size();
  std::vector<char> booked(n, 0), open_span(n, 0);
  for (int o : device_open_) open_span[std::size_t(o)] = 1;
  for (std::size_t i = 0; i < n; ++i) {
    const DeviceSpan& s = device_pending_[i];
    const bool caller_goes =
        s.parent < 0 || booked[std::size_t(s.parent)] || open_span[std::size_t(s.parent)];
    booked[i] = s.after >= 0 && s.after < before && caller_goes;
  }
  std::vector<double> self(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    if (!booked[i]) continue;
    const DeviceSpan& s = device_pending_[i];
    const double span = std::max(0.0, device_space_->seconds(s.before, s.after));
    self[i] += span;
    if (s.parent >= 0) self[std::size_t(s.parent)] -= span;
  }
  for (std::size_t i = 0; i < n; ++i)
    if (booked[i])
      timers_.add_device(device_pending_[i].name, std::max(0.0, self[i]),
                         device_pending_[i].in_sampled_step);
  // What stays: finished spans of later marks (with their callees) and the open ones, whose
  // booked children's time is already off the books: each starts its span anew from a fresh
  // mark, keeping its own nesting.
  std::vector<DeviceSpan> kept;
  std::vector<int> index(n, -1);
  for (std::size_t i = 0; i < n; ++i) {
    if (booked[i]) continue;
    DeviceSpan s = device_pending_[i];
    s.parent = s.parent >= 0 ? index[std::size_t(s.parent)] : -1;
    if (open_span[i]) s.before = device_space_->mark(runtime::ArraySpace::Queue::compute);
    index[i] = int(kept.size());
    kept.push_back(std::move(s));
  }
  for (int& o : device_open_) o = index[std::size_t(o)];
  device_pending_ = std::move(kept);
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
