// The schedule: Cactus's bins, schedule groups, and the functions scheduled in them, read
// from schedule.ccl files (the host's built-in components and thorn/schedule.ccl) and from
// an EDL thorn's calculations; ordered by BEFORE/AFTER; run by name.
#pragma once

#include "support/diagnostics.hpp"
#include "runtime/array_space.hpp"
#include "schedule/integrators.hpp"
#include "schedule/step_plan.hpp"

#include <chrono>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace saguaro::schedule {

// The bins, in the order the driver runs them.
const std::vector<std::string>& bins(); // STARTUP PARAMCHECK BASEGRID INITIAL POSTINITIAL
                                        // PRESTEP EVOL POSTSTEP ANALYSIS TERMINATE

struct ScheduleItem {
  std::string name;  // function or group name
  std::string thorn; // who scheduled it
  bool is_group = false;
  bool at = true;                // AT a bin (true) or IN a group (false)
  std::string where;             // the bin (upper case) or the group
  std::string alias;             // AS alias: the name BEFORE/AFTER refer to (empty: `name`)
  std::string while_var, if_var; // WHILE / IF conditions (recorded; the Executor refuses them)
  std::vector<std::string> before, after;
  std::vector<std::string> storage, sync, options;
  std::string lang; // C, Fortran, EDL, ...
  std::string description;
  support::SourceLoc loc;
};

// Parses schedule.ccl text: SCHEDULE [GROUP] name AT|IN where [BEFORE x] [AFTER y] [AS alias]
// { LANG: ...; STORAGE: ...; SYNC: ...; OPTIONS: ... } "description"; top-level STORAGE
// lines are accepted. Throws support::InputError.
std::vector<ScheduleItem>
parse_schedule_ccl(const std::shared_ptr<const support::SourceFile>& source,
                   const std::string& thorn);

class Schedule {
public:
  // The host's built-in components' schedule.ccl plus thorn/schedule.ccl, compiled in.
  static Schedule with_builtin_components();

  void add(ScheduleItem item); // throws support::InputError for a name scheduled twice in one place
  void add_all(const std::vector<ScheduleItem>& items);

  // Items in a bin or group, ordered: BEFORE/AFTER constraints (names of items in the same
  // place; unknown names are ignored, as Cactus does), ties in the order they were added.
  // Throws support::InputError naming the cycle if the constraints contradict.
  std::vector<const ScheduleItem*> ordered(const std::string& where) const;

  // The schedule tree (Cactus::cctk_show_schedule = yes), bins in order, groups expanded.
  std::string tree() const;

  // Checks every IN group exists and ordering has no cycle; throws support::InputError.
  void validate() const;

  // Every item, in the order added.
  const std::vector<ScheduleItem>& items() const { return items_; }

private:
  std::vector<ScheduleItem> items_;
};

// Per scheduled function: calls, total seconds. The Executor books self time: time spent in
// scheduled functions that a function runs itself (MoL_Evolution running MoL_CalcRHS) is
// booked to those, so the rows add up to the time spent in scheduled functions.
class Timers {
public:
  // `calls` 0: a further part of a call already counted (a split launch's shell).
  void add(const std::string& name, double seconds, long calls = 1);
  // Device time (the GPU's compute queue between a function's start and end, its nested
  // functions' taken out), booked apart from the host's; `in_sampled_step`: it ran inside a
  // time step whose device times are sampled (Executor::DeviceTiming::sampled_step).
  void add_device(const std::string& name, double seconds, bool in_sampled_step = false);
  // A time step's measured seconds (from its first mark to its last), `sampled` when its
  // functions were timed on the device.
  void add_step(double seconds, bool sampled);
  // Table: name, calls, total [s], mean [ms], % of total; with device times, the device's
  // total and % beside the host's (rows sorted by device time then).
  std::string report() const;
  const std::map<std::string, std::pair<long, double>>& table() const { return table_; }
  // Per function its device time over the run: outside the time steps as measured; inside
  // them, when only some steps were sampled, its time in the sampled steps scaled by the
  // measured time of all steps over that of the sampled ones (the events of a sampled step
  // slow it down, so scaling by its runs instead would overstate every function: par/wave.par
  // at 48^3 on the H100 by 2.3x). The steps' functions then add up to the steps' time.
  std::map<std::string, double> device_table() const;

private:
  std::map<std::string, std::pair<long, double>> table_;
  std::map<std::string, double> device_, device_in_steps_; // outside / inside sampled steps
  double steps_seconds_ = 0, sampled_steps_seconds_ = 0;
  long steps_ = 0, sampled_steps_ = 0;
  std::string report_with_device() const;
  std::vector<std::string> order_; // first-seen order for the report
};

// Runs a schedule: each function name is bound to a callable; a group runs its items.
class Executor {
public:
  Executor(const Schedule& schedule, Timers& timers) : schedule_(schedule), timers_(timers) {}
  void bind(const std::string& name, std::function<void()> fn);
  // Runs every item of the bin or group, in order, timing each function; an unbound
  // function is an error (std::logic_error): every scheduled function must be provided.
  // Groups scheduled IN a function are not run by the sweep: the function runs them with
  // run(group). Names ignore case; an item with an alias may be bound by its alias.
  void run(const std::string& where);
  // Names of scheduled functions that have no binding (checked at startup).
  std::vector<std::string> unbound() const;
  // A step plan's operations: runs `fn` as (part of) the scheduled function `item`, timed
  // and booked to it as run() books the function itself; `calls` as for Timers::add.
  void run_as(const ScheduleItem& item, const std::function<void()>& fn, long calls = 1);
  // The function bound to `item` (by its alias or name); std::logic_error when none.
  const std::function<void()>& bound(const ScheduleItem& item) const;
  // Times every function on `space`'s compute queue too (ArraySpace::mark) when the space is
  // a device's, whose launches return before they run: the host times alone show where the
  // host waited. resolve_device_times() books what is pending (waiting for its marks); call
  // it before the space's marks are cleared and before a report. With `before`, only the
  // finished functions whose marks were all made before mark `before` (an earlier time step's,
  // while the next one is in flight), waiting for those marks alone; the rest stay pending.
  void time_device(runtime::ArraySpace* space) { device_space_ = space; }
  void resolve_device_times(int before = std::numeric_limits<int>::max());
  // How the functions run from now on are timed on the device: every run (outside the time
  // steps, the default), or inside a time step that is sampled or not. Two marks per function
  // cost a GPU run about the host's launch work of a step (par/wave.par at 48^3 on the H100:
  // 0.181 ms per step with them on every step, 0.083 without), so a run samples some steps and
  // Timers scales the sampled steps' times to all steps (Timers::device_table).
  enum class DeviceTiming { always, sampled_step, unsampled_step };
  void device_timing(DeviceTiming timing) { device_timing_ = timing; }

private:
  struct DeviceSpan {
    std::string name;
    bool in_sampled_step = false;
    int before = -1, after = -1;
    int parent = -1; // the pending span of the calling function
  };
  runtime::ArraySpace* device_space_ = nullptr;
  DeviceTiming device_timing_ = DeviceTiming::always;
  std::vector<DeviceSpan> device_pending_;
  std::vector<int> device_open_; // pending spans of the running functions
  const Schedule& schedule_;
  Timers& timers_;
  std::map<std::string, std::function<void()>> functions_;
  std::vector<double> nested_seconds_; // per running function: time spent in nested ones
  // What run(where) works out once per bin or group (the order, each item's function and
  // name) rather than every time step: the host's work per step is on a small grid's critical
  // path on a GPU. Made again when a function is bound or the schedule has grown.
  struct Step {
    const ScheduleItem* item = nullptr;
    const std::function<void()>* fn = nullptr; // null for a group, or (for the error) unbound
  };
  std::map<std::string, std::vector<Step>> runs_;
  std::map<const ScheduleItem*, std::string> names_; // qualified names
  std::size_t cached_items_ = 0;                     // schedule_.items().size() they were made for
  const std::function<void()>* find_bound(const ScheduleItem& item) const; // null: unbound
  void drop_stale_caches();
  const std::vector<Step>& steps_of(const std::string& where);
  const std::string& name_of(const ScheduleItem& item);
};

// The method of lines. The state is a set of arrays y (evolved variables, every point) with
// right-hand sides f(y, t) computed by `calc_rhs` into `rhs` (arrays of the same length).
// `post_step` runs after every update of y (boundaries, ghost exchange). The arrays belong to
// `space` (the host's when null), which holds the scratch arrays and runs the updates. The
// integrators are the table of integrators.hpp; a step is the plan of step_plan.hpp with one
// right-hand-side function and one post-step function (the simulation's plan has the
// schedule's). An integrator by MoL::ODE_Method's keyword: find_integrator (integrators.hpp).

class MethodOfLines {
public:
  struct System {
    std::vector<double*> state;                 // evolved variables
    std::vector<double*> rhs;                   // their right-hand sides
    std::size_t points = 0;                     // length of every array
    std::function<void(double time)> calc_rhs;  // fills rhs from state at `time`
    std::function<void(double time)> post_step; // after each update of state
    runtime::ArraySpace* space = nullptr;       // where the arrays live; null: host_space()
  };
  MethodOfLines(const Integrator& integrator, System system);
  ~MethodOfLines();
  MethodOfLines(const MethodOfLines&) = delete;
  MethodOfLines& operator=(const MethodOfLines&) = delete;
  // One step from t to t + dt; scratch arrays are allocated once.
  void step(double t, double dt);
  const StepPlan& plan() const;

private:
  System sys_;
  std::unique_ptr<StepRunner> runner_;
};

// A progress line (iteration, time, steps/s, ETA) at most every `interval` seconds.
class Progress {
public:
  Progress(int itlast, double final_time, double interval_seconds = 5.0);
  // Returns the line to print, or "" when not due.
  std::string update(int iteration, double time);

private:
  int itlast_;
  double final_time_, interval_;
  std::chrono::steady_clock::time_point start_, last_;
  int start_iteration_ = -1;
  double start_time_ = 0;
};

} // namespace saguaro::schedule
