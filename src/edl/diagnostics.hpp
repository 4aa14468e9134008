// Source text and diagnostics for the EDL front end.
//
// Every error a user can cause names file:line:col, quotes the line with a caret under the
// culprit and says what was expected, in the style of LLVM's diagnostics.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace saguaro::edl {

// One loaded source file; keeps line starts so a location can quote its line.
class SourceFile {
public:
  SourceFile(std::string name, std::string text);
  static std::shared_ptr<const SourceFile> load(const std::string& path); // throws EdlError

  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }
  std::string_view line(int line_number) const; // 1-based, without the newline
  int line_count() const { return static_cast<int>(line_starts_.size()); }

private:
  std::string name_, text_;
  std::vector<std::size_t> line_starts_;
};

// A position in a source file: 1-based line and column; `length` is how many characters the
// caret underlines.
struct SourceLoc {
  std::shared_ptr<const SourceFile> file;
  int line = 0;
  int column = 0;
  int length = 1;

  bool valid() const { return file != nullptr && line > 0; }
};

struct Note {
  SourceLoc loc; // may be invalid: a note without a place
  std::string message;
};

// A user error in EDL input. `what()` is the fully rendered diagnostic.
class EdlError : public std::runtime_error {
public:
  EdlError(SourceLoc loc, std::string message, std::vector<Note> notes = {});

  const SourceLoc& loc() const { return loc_; }
  const std::string& message() const { return message_; }
  const std::vector<Note>& notes() const { return notes_; }

private:
  SourceLoc loc_;
  std::string message_;
  std::vector<Note> notes_;
};

// "file:line:col: error: message" + the line + a caret line.
std::string render_diagnostic(const SourceLoc& loc, std::string_view severity,
                              std::string_view message);

// A character as a message shows it: 'x' when printable, else "byte 0x1b".
std::string describe_character(char c);

// The candidate closest to `name` by edit distance, or "" when none is close enough to be a
// plausible typo.
std::string nearest_name(std::string_view name, const std::vector<std::string>& candidates);

// A "did you mean 'X'?" note for the nearest candidate, or none.
std::vector<Note> did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

} // namespace saguaro::edl
