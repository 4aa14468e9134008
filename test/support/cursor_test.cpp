// The lexers' cursor: positions across lines, tabs, CR LF, a NUL byte, the end of the file.
#include "support/cursor.hpp"
#include "support/diagnostics.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace saguaro::support {
namespace {

std::shared_ptr<const SourceFile> file(std::string text) {
  return std::make_shared<const SourceFile>("t.txt", std::move(text));
}

// Moves the cursor to the first `needle` at or after it.
void go_to(Cursor& c, char needle) {
  c.advance_while([&](char x) { return x != needle; });
  ASSERT_FALSE(c.at_end()) << needle;
}

TEST(Cursor, CountsLinesAndColumnsInBytes) {
  Cursor c(file("ab\ncde\n\nf"));
  EXPECT_EQ(c.line(), 1);
  EXPECT_EQ(c.column(), 1);
  EXPECT_EQ(c.peek(), 'a');
  EXPECT_EQ(c.peek(1), 'b');
  c.advance(2);
  EXPECT_EQ(c.peek(), '\n');
  EXPECT_EQ(c.column(), 3); // the newline is the line's last column
  c.advance();
  EXPECT_EQ(c.line(), 2);
  EXPECT_EQ(c.column(), 1);
  EXPECT_EQ(c.line_text(), "cde");
  go_to(c, 'f');
  EXPECT_EQ(c.line(), 4);
  EXPECT_EQ(c.column(), 1);
  EXPECT_EQ(c.offset(), 8u);
  c.advance();
  EXPECT_TRUE(c.at_end());
  EXPECT_EQ(c.peek(), '\0');
  c.advance(); // nothing past the end
  EXPECT_EQ(c.offset(), 9u);
  EXPECT_EQ(c.column(), 2);
}

TEST(Cursor, TabIsOneColumnAndTheCaretKeepsIt) {
  Cursor c(file("\tx = 1\n"));
  go_to(c, 'x');
  EXPECT_EQ(c.column(), 2);
  EXPECT_EQ(render_diagnostic(c.loc(), "error", "here"),
            "t.txt:1:2: error: here\n  \tx = 1\n  \t^\n");
}

TEST(Cursor, CrLfEndsALineAndIsNotQuoted) {
  Cursor c(file("a\r\nbc\r\n"));
  c.advance();
  EXPECT_EQ(c.peek(), '\r');
  EXPECT_EQ(c.column(), 2);
  c.advance(2);
  EXPECT_EQ(c.line(), 2);
  EXPECT_EQ(c.column(), 1);
  EXPECT_EQ(c.line_text(), "bc"); // without the CR
  c.advance();
  EXPECT_EQ(render_diagnostic(c.loc(), "error", "e"), "t.txt:2:2: error: e\n  bc\n   ^\n");
}

TEST(Cursor, NulByteIsACharacterNotTheEnd) {
  const std::string text("a\0b\n", 4);
  Cursor c(file(text));
  c.advance();
  EXPECT_EQ(c.peek(), '\0');
  EXPECT_FALSE(c.at_end());
  c.advance();
  EXPECT_EQ(c.peek(), 'b');
  EXPECT_EQ(c.column(), 3);
  EXPECT_EQ(c.line_text(), std::string_view(text).substr(0, 3));
  // The quoted line shows the NUL escaped; the caret line puts its width of spaces under it.
  EXPECT_EQ(render_diagnostic(c.loc(), "error", "e"), "t.txt:1:3: error: e\n  a\\x00b\n       ^\n");
}

TEST(Cursor, SinceSpanAndAStartInTheMiddle) {
  Cursor c(file("name = value\nnext"));
  const Position start = c.position();
  c.advance_while([](char x) { return x != ' '; });
  EXPECT_EQ(c.since(start), "name");
  const SourceLoc name = c.span(start);
  EXPECT_EQ(name.line, 1);
  EXPECT_EQ(name.column, 1);
  EXPECT_EQ(name.length, 4);
  EXPECT_EQ(c.span(c.position()).length, 1); // never less than one character
  c.skip_to_end_of_line();
  EXPECT_EQ(c.peek(), '\n');
  EXPECT_EQ(c.column(), 13);
  // A second cursor from a saved position walks on independently.
  Cursor again(c.file(), start);
  again.advance(7);
  EXPECT_EQ(again.peek(), 'v');
  EXPECT_EQ(again.column(), 8);
  EXPECT_EQ(c.column(), 13);
  const SourceLoc at = again.at(start, 4);
  EXPECT_EQ(at.column, 1);
  EXPECT_EQ(at.length, 4);
}

TEST(Cursor, SkipBlanksStopsAtTheNewline) {
  Cursor c(file(" \t\r\f\vx  \n  y"));
  EXPECT_TRUE(c.skip_blanks());
  EXPECT_EQ(c.peek(), 'x');
  EXPECT_EQ(c.column(), 6);
  EXPECT_FALSE(c.skip_blanks()); // none here
  c.advance();
  EXPECT_TRUE(c.skip_blanks());
  EXPECT_EQ(c.peek(), '\n');
  EXPECT_EQ(c.line(), 1);
}

TEST(Cursor, EmptyFile) {
  Cursor c(file(""));
  EXPECT_TRUE(c.at_end());
  EXPECT_EQ(c.peek(), '\0');
  EXPECT_EQ(c.line_text(), "");
  EXPECT_EQ(c.loc().line, 1);
}

} // namespace
} // namespace saguaro::support
