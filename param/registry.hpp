// The parameter registry: declarations read from Cactus param.ccl files (the host's built-in
// components, thorn/param.ccl, and an EDL thorn's `begin parameters` block), values from a
// Cactus .par file, typed and range-checked. One registry serves the whole run.
//
// Every user error throws support::InputError (file:line:col, the line, a caret, what was
// expected, notes such as "did you mean"); the CLI turns it into exit status 2.
#pragma once

#include "support/diagnostics.hpp"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace saguaro::param {

enum class Type { Int, Real, Keyword, Boolean, String };
const char* to_string(Type type); // "INT", "REAL", "KEYWORD", "BOOLEAN", "STRING"

enum class Access { Global, Restricted, Private, Shares };

// A parameter's value. Int: long; Real: double; Boolean: bool; Keyword, String: string.
using Value = std::variant<long, double, bool, std::string>;

// One item of a declaration's range block, `"lo:hi:step" :: "description"` (INT, REAL),
// `"word" :: "..."` (KEYWORD) or `"regex" :: "..."` (STRING).
struct RangeItem {
  std::string text; // as written, for `saguaro params` and messages
  std::string description;
  // INT and REAL: bounds (nullopt = `*`, open), open/closed ends, step (INT; 0 = none).
  std::optional<double> lo, hi;
  bool lo_open = false, hi_open = false;
  long step = 0;
};

struct Declaration {
  std::string thorn; // as declared; lookups are case-insensitive on the thorn, as in Cactus
  std::string name;  // case-insensitive lookups too
  Type type = Type::Real;
  std::string description;
  std::vector<RangeItem> ranges; // a value must match at least one (none: anything goes)
  Value default_value;
  Access access = Access::Private;
  std::string steerable = "never"; // never|always|recover
  int array_size = 0;              // `INT v[3] ...`: 3; a scalar: 0
  support::SourceLoc loc;          // where it is declared
};

// One `Thorn::name[index] = value` line, its value evaluated (param/par_value.hpp: arithmetic,
// $variables, unquoted keywords).
struct Assignment {
  std::string thorn, name;
  std::optional<int> index;
  // Number: INT or REAL; String: quoted or computed text; Word: an unquoted name (a keyword);
  // Boolean: yes/no/true/false or a comparison.
  enum class Kind { Number, String, Word, Boolean } kind = Kind::Number;
  std::string text;       // Number: the literal as written ("1.0d-3") or the computed value;
                          // String, Word: the value ($parfile expanded); Boolean: "yes"/"no"
  double number = 0;      // Number
  bool integer = false;   // Number: an INT (integer literal or integer arithmetic)
  long integer_value = 0; // Number and integer
  bool boolean = false;   // Boolean
  std::string written;    // the value as the file wrote it (its first line)
  support::SourceLoc loc, value_loc;
  // Set when the name was translated from an established thorn's (et_compat.hpp): the
  // name as the file wrote it, e.g. "IOUtil::out_every".
  std::string alias_of;
};

// A .par file, parsed but not yet checked against any declaration.
struct ParFile {
  std::string path;
  std::vector<std::string> active_thorns; // from every ActiveThorns line, in order
  std::vector<support::SourceLoc> active_thorn_locs;
  std::vector<Assignment> assignments;
  std::shared_ptr<const support::SourceFile> source;
  // Syntax and evaluation errors, every one of the file (up to 50), when parsed with
  // keep_going; the registry reports them with its own.
  std::vector<support::Diagnostic> problems;

  // The last assignment of thorn::name (case-insensitive), or nullptr.
  const Assignment* find(const std::string& thorn, const std::string& name) const;
};

// Parses .par syntax. Every error of the file is found (up to 50); without `keep_going` they
// are thrown as one support::InputError, with it they are left in ParFile::problems. A file
// that cannot be read always throws.
ParFile parse_par_file(const std::string& path, bool keep_going = false);
ParFile parse_par_text(std::string name, std::string text, bool keep_going = false);

// `saguaro run FILE.par --set TEXT`: one `Thorn::name = value` in .par syntax (diagnostics name
// the file "--set"), `$parfile` standing for `par_path`'s name. Throws support::InputError
// when it is not exactly one assignment.
ParFile parse_override(const std::string& text, const std::string& par_path);
// Replaces `par`'s assignments of every parameter (element) the overrides set by theirs, in
// order: the file's value gives way, and a registry that applies `par` sees each set once.
void apply_overrides(ParFile& par, const std::vector<ParFile>& overrides);

// `text` with `$parfile` (and `${parfile}`) replaced by the base name of `par_path` without
// its `.par` extension: "wave" for "par/wave.par". String values read from a .par file are
// already expanded; use this for defaults such as IO::out_dir = "$parfile".
std::string expand_parfile(const std::string& text, const std::string& par_path);

// Parses param.ccl text for `thorn`; throws support::InputError on a syntax error.
std::vector<Declaration> parse_param_ccl(const std::shared_ptr<const support::SourceFile>& source,
                                         const std::string& thorn);

class Registry {
public:
  // The host's built-in components (Cactus, CoordBase, Periodic, Time, MoL, IO, IOHDF5,
  // Driver, ...) and thorn Saguaro (thorn/param.ccl), compiled into the executable.
  static Registry with_builtin_components();

  void declare(Declaration decl); // throws support::InputError when declared twice
  void declare_all(const std::vector<Declaration>& decls);
  // Makes `thorn` known (it may be activated) even if it declares no parameters.
  void declare_thorn(const std::string& thorn);

  // Checks and applies every assignment of `par`: the thorn must be known and active, the
  // parameter declared, the value of its type, in range, set once. Established Einstein
  // Toolkit thorns are first translated (et_compat.hpp). Throws support::InputError with
  // every problem, `par.problems` (syntax) first. Built-in components are always active;
  // other thorns must be named in ActiveThorns.
  void apply(const ParFile& par);

  // Typed access (thorn and name case-insensitive). Throws std::logic_error when the
  // parameter is undeclared or of another type: that is a bug in the caller, not user error.
  long get_int(const std::string& thorn, const std::string& name, int index = 0) const;
  double get_real(const std::string& thorn, const std::string& name, int index = 0) const;
  bool get_bool(const std::string& thorn, const std::string& name, int index = 0) const;
  std::string get_string(const std::string& thorn, const std::string& name, int index = 0) const;
  // Keyword and string alike.
  std::string get_keyword(const std::string& thorn, const std::string& name, int index = 0) const {
    return get_string(thorn, name, index);
  }
  bool is_set(const std::string& thorn, const std::string& name) const; // by the .par file
  // Where the .par file set it (invalid when not set); for errors raised after apply().
  support::SourceLoc set_at(const std::string& thorn, const std::string& name) const;

  std::vector<std::string> thorns() const; // declared thorns, sorted
  std::vector<const Declaration*> declarations(const std::string& thorn) const;
  const Declaration* find(const std::string& thorn, const std::string& name) const;
  const std::vector<std::string>& active_thorns() const { return active_; }
  // What apply() found worth a warning: settings of established thorns without effect, thorns
  // accepted without effect (et_compat.hpp). The CLI prints them.
  const std::vector<support::Diagnostic>& warnings() const { return warnings_; }

  // The whole parameter set, `Thorn::name = value` lines (for checkpoints and HDF5 output).
  std::string to_par_text() const;

private:
  std::vector<std::string> bare_thorns_; // declared by declare_thorn()
  struct Entry {
    Declaration decl;
    std::vector<Value> values; // size max(1, array_size)
    support::SourceLoc set_loc;
  };
  std::map<std::string, Entry> entries_; // key: lowercase "thorn::name"
  std::vector<std::string> order_;       // the keys in declaration order
  std::vector<std::string> builtin_;     // lowercase names of the always-active components
  std::vector<std::string> active_;
  std::vector<support::Diagnostic> warnings_;
};

// `saguaro params [THORN]`: every parameter with type, default, range and description.
std::string format_parameter_reference(const Registry& registry, const std::string& thorn = "");

} // namespace saguaro::param
