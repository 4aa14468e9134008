// The lexers' cursor: one walk over a source file's bytes that keeps the line and column of
// where it stands, so that every token and every error knows its place. Used by the EDL lexer,
// the .par parser and the param.ccl and schedule.ccl lexers.
//
// Columns count bytes, 1-based: a tab is one column (the caret line keeps the tab, so the caret
// still lines up), the CR of a CR LF is the last column of its line, a NUL byte is an ordinary
// character (peek() returns '\0' for it and past the end alike; at_end() tells them apart).
#pragma once

#include "support/source.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace saguaro::support {

// Where a cursor stands: byte offset, 1-based line and column.
struct Position {
  std::size_t offset = 0;
  int line = 1;
  int column = 1;
};

class Cursor {
public:
  explicit Cursor(std::shared_ptr<const SourceFile> file, Position start = {});

  const std::shared_ptr<const SourceFile>& file() const { return file_; }
  const std::string& text() const { return file_->text(); }

  bool at_end() const { return at_.offset >= text().size(); }
  // The byte `ahead` bytes on, '\0' past the end.
  char peek(std::size_t ahead = 0) const {
    const std::size_t i = at_.offset + ahead;
    return i < text().size() ? text()[i] : '\0';
  }
  // Moves one byte on (nothing at the end); over a '\n' to column 1 of the next line.
  void advance();
  void advance(std::size_t bytes);
  // Moves on while `keep(peek())`, never past the end.
  template <class Predicate>
  void advance_while(Predicate keep) {
    while (!at_end() && keep(peek())) advance();
  }
  // Moves up to the next '\n' (a comment's end), not over it.
  void skip_to_end_of_line();
  // Moves over blanks (white space other than '\n': ' ', '\t', '\r', '\f', '\v'); whether
  // there were any (tokens that must be glued together care).
  bool skip_blanks();
  static bool is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
  }

  Position position() const { return at_; }
  std::size_t offset() const { return at_.offset; }
  int line() const { return at_.line; }
  int column() const { return at_.column; }

  // The text from `from` up to here.
  std::string_view since(const Position& from) const;
  // Here, `length` characters underlined.
  SourceLoc loc(int length = 1) const { return at(at_, length); }
  // At `from`, `length` characters underlined.
  SourceLoc at(const Position& from, int length = 1) const;
  // From `from` up to here (at least one character), on `from`'s line.
  SourceLoc span(const Position& from) const;
  // The text of the line the cursor stands on (without its newline), for a caret under it.
  std::string_view line_text() const { return file_->line(at_.line); }

private:
  std::shared_ptr<const SourceFile> file_;
  Position at_;
};

} // namespace saguaro::support
