// Cactus .par files:
//
//   # comment
//   !DESC "what this run is"
//   ActiveThorns = "CoordBase MoL Saguaro"
//   Cactus::cctk_itlast = 100
//   CoordBase::dx = 1.0d-3
//   Saguaro::equations = "wave.edl"
//   Thorn::array[2] = yes
//
// Values are numbers, booleans (bare or quoted) and double-quoted strings, which may span
// several lines; `$parfile` in a string is the file's base name without `.par`.
#include "param/detail.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include <fmt/format.h>

namespace saguaro::param {

using edl::EdlError;
using edl::SourceFile;
using edl::SourceLoc;

std::string expand_parfile(const std::string& text, const std::string& par_path) {
  std::filesystem::path path(par_path);
  std::string base = path.filename().string();
  if (path.extension() == ".par") base = path.stem().string();
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (text.compare(i, 10, "${parfile}") == 0) {
      out += base;
      i += 10;
    } else if (text.compare(i, 8, "$parfile") == 0) {
      out += base;
      i += 8;
    } else {
      out += text[i++];
    }
  }
  return out;
}

const Assignment* ParFile::find(const std::string& thorn, const std::string& name) const {
  const Assignment* found = nullptr;
  for (const Assignment& a : assignments)
    if (detail::iequals(a.thorn, thorn) && detail::iequals(a.name, name)) found = &a;
  return found;
}

namespace {

bool is_name_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

class ParParser {
public:
  explicit ParParser(std::shared_ptr<const SourceFile> file) : file_(std::move(file)) {
    par_.path = file_->name();
    par_.source = file_;
  }

  ParFile run() {
    while (!at_end()) {
      skip_blanks();
      if (at_end()) break;
      char c = cur();
      if (c == '\n') {
        advance();
      } else if (c == '#') {
        skip_comment();
      } else if (c == '!') {
        desc_line();
      } else if (is_name_start(c)) {
        statement();
      } else {
        throw EdlError(here(1), fmt::format("unexpected {}: {}", show_char(c), expected));
      }
    }
    return std::move(par_);
  }

private:
  static constexpr const char* expected =
      "expected 'Thorn::name = value', 'ActiveThorns = \"...\"' or a '#' comment";

  bool at_end() const { return pos_ >= s().size(); }
  char cur() const { return at_end() ? '\0' : s()[pos_]; }
  char peek(std::size_t ahead) const {
    return pos_ + ahead < s().size() ? s()[pos_ + ahead] : '\0';
  }
  const std::string& s() const { return file_->text(); }
  void advance() {
    if (s()[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }
  SourceLoc here(int length) const { return SourceLoc{file_, line_, column_, length}; }
  static std::string show_char(char c) {
    if (c == '\n' || c == '\0') return "end of line";
    return edl::describe_character(c);
  }
  void skip_blanks() {
    while (!at_end() && cur() != '\n' && std::isspace(static_cast<unsigned char>(cur()))) advance();
  }
  void skip_comment() {
    while (!at_end() && cur() != '\n') advance();
  }
  // After a statement: blanks, an optional comment, then the end of the line.
  void end_of_line(const char* after) {
    skip_blanks();
    if (cur() == '#') skip_comment();
    if (at_end()) return;
    if (cur() == '\n') {
      advance();
      return;
    }
    std::size_t end = pos_;
    while (end < s().size() && !std::isspace(static_cast<unsigned char>(s()[end])) &&
           s()[end] != '#')
      ++end;
    throw EdlError(here(int(end - pos_)),
                   fmt::format("unexpected '{}' after {}: expected the end of the line (one "
                               "setting per line)",
                               s().substr(pos_, end - pos_), after));
  }
  std::string name() {
    std::size_t start = pos_;
    while (!at_end() && is_name_char(cur())) advance();
    return s().substr(start, pos_ - start);
  }

  struct Quoted {
    std::string text;
    SourceLoc loc; // the opening quote to the closing one (on the first line when it spans)
    int line = 0, column = 0; // of the first character inside the quotes
  };

  // A double-quoted string starting at the current '"'; it may span lines.
  Quoted quoted() {
    Quoted q;
    SourceLoc start = here(1);
    std::size_t begin = pos_;
    advance();
    q.line = line_;
    q.column = column_;
    while (!at_end() && cur() != '"') {
      q.text += cur();
      advance();
    }
    std::size_t first_eol = s().find('\n', begin);
    if (at_end()) {
      std::size_t end = first_eol == std::string::npos ? s().size() : first_eol;
      start.length = std::max(1, int(end - begin));
      throw EdlError(start, "unterminated string: expected a closing '\"'",
                     {{{}, "a string may span several lines; it ends at the next '\"'"}});
    }
    advance();
    if (first_eol == std::string::npos || first_eol > pos_)
      start.length = int(pos_ - begin);
    else
      start.length = int(first_eol - begin);
    q.loc = start;
    return q;
  }

  void desc_line() {
    SourceLoc at = here(1);
    std::size_t start = pos_;
    advance();
    std::string word = name();
    if (!detail::iequals(word, "DESC"))
      throw EdlError(
          SourceLoc{file_, at.line, at.column, int(pos_ - start)},
          fmt::format("unknown directive '!{}': expected '!DESC \"description\"'", word));
    skip_blanks();
    if (cur() == '"')
      quoted();
    else
      skip_comment(); // `!DESC text` without quotes: the rest of the line
    end_of_line("the !DESC line");
  }

  void statement() {
    int line = line_, column = column_;
    std::size_t start = pos_;
    std::string first = name();
    SourceLoc first_loc{file_, line, column, int(first.size())};
    skip_blanks();
    if (detail::iequals(first, "ActiveThorns") && cur() == '=') {
      active_thorns(first_loc);
      return;
    }
    if (!(cur() == ':' && peek(1) == ':')) {
      if (cur() == '=')
        throw EdlError(first_loc, fmt::format("'{}' has no thorn: write 'Thorn::{}' (for example "
                                              "'Cactus::cctk_itlast')",
                                              first, first));
      throw EdlError(here(1), fmt::format("unexpected {} after '{}': expected '::' between the "
                                          "thorn and the parameter name",
                                          show_char(cur()), first));
    }
    advance();
    advance();
    skip_blanks();
    if (!is_name_start(cur()))
      throw EdlError(here(1), fmt::format("unexpected {}: expected a parameter name after '{}::'",
                                          show_char(cur()), first));
    Assignment a;
    a.thorn = first;
    a.name = name();
    std::size_t end = pos_;
    skip_blanks();
    if (cur() == '[') {
      SourceLoc open = here(1);
      std::size_t open_pos = pos_;
      advance();
      skip_blanks();
      std::size_t digits = pos_;
      while (!at_end() && std::isdigit(static_cast<unsigned char>(cur()))) advance();
      std::string index = s().substr(digits, pos_ - digits);
      skip_blanks();
      if (index.empty() || cur() != ']') {
        std::size_t end = s().find_first_of("]\n", open_pos);
        if (end == std::string::npos)
          end = s().size();
        else if (s()[end] == ']')
          ++end;
        open.length = std::max(1, int(end - open_pos));
        throw EdlError(open, "invalid array index: expected a non-negative integer in "
                             "brackets, as in '[2]'");
      }
      advance();
      end = pos_;
      if (index.size() > 9)
        throw EdlError(SourceLoc{file_, open.line, open.column, int(index.size()) + 2},
                       "array index too large");
      a.index = std::stoi(index);
    }
    a.loc = SourceLoc{file_, line, column, int(end - start)};
    skip_blanks();
    if (cur() != '=')
      throw EdlError(here(1), fmt::format("unexpected {}: expected '=' and a value after "
                                          "'{}::{}'",
                                          show_char(cur()), a.thorn, a.name));
    advance();
    skip_blanks();
    if (at_end() || cur() == '\n' || cur() == '#')
      throw EdlError(here(1), fmt::format("expected a value after '{}::{} ='", a.thorn, a.name));
    if (cur() == '"') {
      Quoted q = quoted();
      a.kind = Assignment::Kind::String;
      a.text = expand_parfile(q.text, par_.path);
      a.value_loc = q.loc;
    } else {
      SourceLoc at = here(1);
      std::size_t begin = pos_;
      while (!at_end() && !std::isspace(static_cast<unsigned char>(cur())) && cur() != '#')
        advance();
      std::string word = s().substr(begin, pos_ - begin);
      at.length = int(word.size());
      a.text = word;
      a.value_loc = at;
      if (detail::is_number_literal(word)) {
        a.kind = Assignment::Kind::Number;
      } else if (is_name_start(word[0]) &&
                 std::all_of(word.begin(), word.end(), [](char c) { return is_name_char(c); })) {
        a.kind = Assignment::Kind::Word;
      } else {
        throw EdlError(at, fmt::format("'{}' is not a value: expected a number, yes/no, or a "
                                       "string in double quotes",
                                       word));
      }
    }
    end_of_line("the value");
    par_.assignments.push_back(std::move(a));
  }

  void active_thorns(const SourceLoc& keyword) {
    advance(); // '='
    skip_blanks();
    if (cur() != '"')
      throw EdlError(cur() == '\n' || at_end() ? keyword : here(1),
                     "ActiveThorns takes a list of thorn names in double quotes, as in "
                     "ActiveThorns = \"CoordBase MoL Saguaro\"");
    std::size_t begin = pos_ + 1;
    int line = line_, column = column_ + 1;
    Quoted q = quoted();
    // Walk the contents again for each name's place (the list may span lines).
    const std::string& text = s();
    std::size_t i = begin;
    std::size_t end = begin + q.text.size();
    while (i < end) {
      char c = text[i];
      if (std::isspace(static_cast<unsigned char>(c)) || c == ',') {
        if (c == '\n') {
          ++line;
          column = 1;
        } else {
          ++column;
        }
        ++i;
        continue;
      }
      std::size_t start = i;
      int start_column = column;
      while (i < end && !std::isspace(static_cast<unsigned char>(text[i])) && text[i] != ',') {
        ++i;
        ++column;
      }
      std::string thorn = text.substr(start, i - start);
      SourceLoc at{file_, line, start_column, int(thorn.size())};
      if (!std::all_of(thorn.begin(), thorn.end(), [](char ch) { return is_name_char(ch); }))
        throw EdlError(at, fmt::format("'{}' is not a thorn name: expected letters, digits and "
                                       "'_'",
                                       thorn));
      par_.active_thorns.push_back(thorn);
      par_.active_thorn_locs.push_back(at);
    }
    end_of_line("the ActiveThorns list");
  }

  std::shared_ptr<const SourceFile> file_;
  std::size_t pos_ = 0;
  int line_ = 1, column_ = 1;
  ParFile par_;
};

} // namespace

ParFile parse_par_text(std::string name, std::string text) {
  return ParParser(std::make_shared<const SourceFile>(std::move(name), std::move(text))).run();
}

ParFile parse_par_file(const std::string& path) {
  return ParParser(SourceFile::load(path)).run();
}

} // namespace saguaro::param
