#include "support/cursor.hpp"

#include <algorithm>

namespace saguaro::support {

Cursor::Cursor(std::shared_ptr<const SourceFile> file, Position start)
    : file_(std::move(file)), at_(start) {}

void Cursor::advance() {
  if (at_end()) return;
  if (text()[at_.offset] == '\n') {
    ++at_.line;
    at_.column = 1;
  } else {
    ++at_.column;
  }
  ++at_.offset;
}

void Cursor::advance(std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i) advance();
}

void Cursor::skip_to_end_of_line() {
  advance_while([](char c) { return c != '\n'; });
}

bool Cursor::skip_blanks() {
  const std::size_t start = at_.offset;
  advance_while(is_blank);
  return at_.offset != start;
}

std::string_view Cursor::since(const Position& from) const {
  return std::string_view(text()).substr(from.offset, at_.offset - from.offset);
}

SourceLoc Cursor::at(const Position& from, int length) const {
  return SourceLoc{file_, from.line, from.column, length};
}

SourceLoc Cursor::span(const Position& from) const {
  return at(from, std::max(1, static_cast<int>(at_.offset - from.offset)));
}

} // namespace saguaro::support
