// Diagnostics of user input, in the style of LLVM's: every error a user can cause names
// file:line:col, quotes the line with a caret under the culprit, says what was expected and
// may add notes ("did you mean ...?", "first declared here"). One type for every input the
// program reads: EDL, .par, param.ccl, schedule.ccl, mapping files.
#pragma once

#include "support/source.hpp"

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace saguaro::support {

struct Note {
  SourceLoc loc; // may be invalid: a note without a place
  std::string message;
};

// One message about one place: "error", "warning" or "note".
struct Diagnostic {
  std::string severity = "error";
  SourceLoc loc;
  std::string message;
  std::vector<Note> notes;
};

// "file:line:col: severity: message" + the line + a caret line.
std::string render_diagnostic(const SourceLoc& loc, std::string_view severity,
                              std::string_view message);
// The diagnostic and its notes, each rendered as above.
std::string render(const Diagnostic& diagnostic);

// A user error in an input file, carrying every diagnostic found in it (at least one; the
// first is an error). `what()` is all of them rendered; loc(), message() and notes() are the
// first's. The CLI prints what() and exits with status 2.
class InputError : public std::runtime_error {
public:
  InputError(SourceLoc loc, std::string message, std::vector<Note> notes = {});
  explicit InputError(std::vector<Diagnostic> diagnostics);

  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  const SourceLoc& loc() const { return diagnostics_.front().loc; }
  const std::string& message() const { return diagnostics_.front().message; }
  const std::vector<Note>& notes() const { return diagnostics_.front().notes; }

private:
  std::vector<Diagnostic> diagnostics_;
};

// The diagnostics of one input, collected as they are found, so that a reader can report every
// error of a file at once: the first kMaxKept are kept, the rest only counted. The .par reader
// and the EDL front end (parser and lowering) collect through it.
class DiagnosticList {
public:
  static constexpr std::size_t kMaxKept = 50;

  void add(Diagnostic diagnostic);
  void add(const InputError& error); // each of its diagnostics
  bool empty() const { return kept_.empty() && more_ == 0; }
  std::size_t size() const { return kept_.size() + more_; }
  // The kept diagnostics, then a note "N more problems not shown" when some were left out.
  std::vector<Diagnostic> take();
  // Throws InputError(take()) when anything was added.
  void throw_if_any();

private:
  std::vector<Diagnostic> kept_;
  std::size_t more_ = 0;
};

// A character as a message shows it: 'x' when printable, else "byte 0x1b".
std::string describe_character(char c);
// `text` with every control byte but the tab written as \xNN (diagnostics quote user input).
std::string printable(std::string_view text);

// The candidate closest to `name` by edit distance (case-insensitive), or "" when none is
// close enough to be a plausible typo.
std::string nearest_name(std::string_view name, const std::vector<std::string>& candidates);

// A "did you mean 'X'?" note for the nearest candidate, or none.
std::vector<Note> did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

} // namespace saguaro::support
