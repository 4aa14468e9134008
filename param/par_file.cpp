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

#include "support/cursor.hpp"
#include "support/text.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include <fmt/format.h>

namespace saguaro::param {

using support::InputError;
using support::SourceFile;
using support::SourceLoc;

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
    if (support::iequals(a.thorn, thorn) && support::iequals(a.name, name)) found = &a;
  return found;
}

namespace {

bool is_name_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

bool is_space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

class ParParser {
public:
  // `expand_as`: the .par file whose name `$parfile` stands for ("": this file).
  explicit ParParser(std::shared_ptr<const SourceFile> file, std::string expand_as = "")
      : c_(file), expand_as_(expand_as.empty() ? file->name() : std::move(expand_as)) {
    par_.path = file->name();
    par_.source = std::move(file);
  }

  ParFile run() {
    while (!c_.at_end()) {
      c_.skip_blanks();
      if (c_.at_end()) break;
      char c = c_.peek();
      if (c == '\n') {
        c_.advance();
      } else if (c == '#') {
        c_.skip_to_end_of_line();
      } else if (c == '!') {
        desc_line();
      } else if (is_name_start(c)) {
        statement();
      } else {
        throw InputError(c_.loc(), fmt::format("unexpected {}: {}", show_char(c), expected));
      }
    }
    return std::move(par_);
  }

private:
  static constexpr const char* expected =
      "expected 'Thorn::name = value', 'ActiveThorns = \"...\"' or a '#' comment";

  static std::string show_char(char c) {
    if (c == '\n' || c == '\0') return "end of line";
    return support::describe_character(c);
  }
  // After a statement: blanks, an optional comment, then the end of the line.
  void end_of_line(const char* after) {
    c_.skip_blanks();
    if (c_.peek() == '#') c_.skip_to_end_of_line();
    if (c_.at_end()) return;
    if (c_.peek() == '\n') {
      c_.advance();
      return;
    }
    support::Cursor word = c_;
    word.advance_while([](char c) { return !is_space(c) && c != '#'; });
    throw InputError(word.span(c_.position()),
                     fmt::format("unexpected '{}' after {}: expected the end of the line (one "
                                 "setting per line)",
                                 word.since(c_.position()), after));
  }
  std::string name() {
    const support::Position start = c_.position();
    c_.advance_while(is_name_char);
    return std::string(c_.since(start));
  }

  struct Quoted {
    std::string text;
    SourceLoc loc; // the opening quote to the closing one (on the first line when it spans)
  };

  // A double-quoted string starting at the current '"'; it may span lines.
  Quoted quoted() {
    const support::Position open = c_.position();
    c_.advance();
    const support::Position inside = c_.position();
    c_.advance_while([](char c) { return c != '"'; });
    Quoted q{std::string(c_.since(inside)), {}};
    // The caret runs to the closing quote, or to the end of the opening quote's line.
    std::size_t first_eol = c_.text().find('\n', open.offset);
    if (c_.at_end()) {
      std::size_t end = first_eol == std::string::npos ? c_.text().size() : first_eol;
      throw InputError(c_.at(open, std::max(1, int(end - open.offset))),
                       "unterminated string: expected a closing '\"'",
                       {{{}, "a string may span several lines; it ends at the next '\"'"}});
    }
    c_.advance();
    std::size_t end = std::min(c_.offset(), first_eol);
    q.loc = c_.at(open, int(end - open.offset));
    return q;
  }

  void desc_line() {
    const support::Position bang = c_.position();
    c_.advance();
    std::string word = name();
    if (!support::iequals(word, "DESC"))
      throw InputError(
          c_.span(bang),
          fmt::format("unknown directive '!{}': expected '!DESC \"description\"'", word));
    c_.skip_blanks();
    if (c_.peek() == '"')
      quoted();
    else
      c_.skip_to_end_of_line(); // `!DESC text` without quotes: the rest of the line
    end_of_line("the !DESC line");
  }

  // `[2]` after a parameter's name: the index, or an error under the brackets.
  int array_index() {
    const support::Position open = c_.position();
    c_.advance();
    c_.skip_blanks();
    const support::Position digits = c_.position();
    c_.advance_while([](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
    std::string index(c_.since(digits));
    c_.skip_blanks();
    if (index.empty() || c_.peek() != ']') {
      std::size_t end = c_.text().find_first_of("]\n", open.offset);
      if (end == std::string::npos)
        end = c_.text().size();
      else if (c_.text()[end] == ']')
        ++end;
      throw InputError(c_.at(open, std::max(1, int(end - open.offset))),
                       "invalid array index: expected a non-negative integer in brackets, as "
                       "in '[2]'");
    }
    c_.advance();
    if (index.size() > 9)
      throw InputError(c_.at(open, int(index.size()) + 2), "array index too large");
    return std::stoi(index);
  }

  void statement() {
    const support::Position start = c_.position();
    std::string first = name();
    SourceLoc first_loc = c_.at(start, int(first.size()));
    c_.skip_blanks();
    if (support::iequals(first, "ActiveThorns") && c_.peek() == '=') {
      active_thorns(first_loc);
      return;
    }
    if (!(c_.peek() == ':' && c_.peek(1) == ':')) {
      if (c_.peek() == '=')
        throw InputError(first_loc, fmt::format("'{}' has no thorn: write 'Thorn::{}' (for "
                                                "example 'Cactus::cctk_itlast')",
                                                first, first));
      throw InputError(c_.loc(), fmt::format("unexpected {} after '{}': expected '::' between "
                                             "the thorn and the parameter name",
                                             show_char(c_.peek()), first));
    }
    c_.advance(2);
    c_.skip_blanks();
    if (!is_name_start(c_.peek()))
      throw InputError(c_.loc(), fmt::format("unexpected {}: expected a parameter name after "
                                             "'{}::'",
                                             show_char(c_.peek()), first));
    Assignment a;
    a.thorn = first;
    a.name = name();
    std::size_t end = c_.offset();
    c_.skip_blanks();
    if (c_.peek() == '[') {
      a.index = array_index();
      end = c_.offset();
    }
    a.loc = c_.at(start, int(end - start.offset));
    c_.skip_blanks();
    if (c_.peek() != '=')
      throw InputError(c_.loc(), fmt::format("unexpected {}: expected '=' and a value after "
                                             "'{}::{}'",
                                             show_char(c_.peek()), a.thorn, a.name));
    c_.advance();
    c_.skip_blanks();
    if (c_.at_end() || c_.peek() == '\n' || c_.peek() == '#')
      throw InputError(c_.loc(), fmt::format("expected a value after '{}::{} ='", a.thorn, a.name));
    if (c_.peek() == '"') {
      Quoted q = quoted();
      a.kind = Assignment::Kind::String;
      a.text = expand_parfile(q.text, expand_as_);
      a.value_loc = q.loc;
    } else {
      value_word(a);
    }
    end_of_line("the value");
    par_.assignments.push_back(std::move(a));
  }

  // An unquoted value: a number or a word (yes, no, a keyword).
  void value_word(Assignment& a) {
    const support::Position begin = c_.position();
    c_.advance_while([](char c) { return !is_space(c) && c != '#'; });
    std::string word(c_.since(begin));
    a.text = word;
    a.value_loc = c_.at(begin, int(word.size()));
    if (detail::is_number_literal(word)) {
      a.kind = Assignment::Kind::Number;
    } else if (is_name_start(word[0]) && std::all_of(word.begin(), word.end(), is_name_char)) {
      a.kind = Assignment::Kind::Word;
    } else {
      throw InputError(a.value_loc, fmt::format("'{}' is not a value: expected a number, yes/no, "
                                                "or a string in double quotes",
                                                word));
    }
  }

  void active_thorns(const SourceLoc& keyword) {
    c_.advance(); // '='
    c_.skip_blanks();
    if (c_.peek() != '"')
      throw InputError(c_.peek() == '\n' || c_.at_end() ? keyword : c_.loc(),
                       "ActiveThorns takes a list of thorn names in double quotes, as in "
                       "ActiveThorns = \"CoordBase MoL Saguaro\"");
    support::Cursor names = c_; // walks the contents again for each name's place
    names.advance();
    Quoted q = quoted();
    const std::size_t end = names.offset() + q.text.size();
    auto separator = [](char c) { return is_space(c) || c == ','; };
    for (;;) {
      names.advance_while(separator);
      if (names.offset() >= end) break;
      const support::Position start = names.position();
      names.advance_while([&](char c) { return !separator(c) && c != '"'; });
      std::string thorn(names.since(start));
      SourceLoc at = names.at(start, int(thorn.size()));
      if (!std::all_of(thorn.begin(), thorn.end(), is_name_char))
        throw InputError(at, fmt::format("'{}' is not a thorn name: expected letters, digits "
                                         "and '_'",
                                         thorn));
      par_.active_thorns.push_back(thorn);
      par_.active_thorn_locs.push_back(at);
    }
    end_of_line("the ActiveThorns list");
  }

  support::Cursor c_;
  std::string expand_as_;
  ParFile par_;
};

} // namespace

ParFile parse_par_text(std::string name, std::string text) {
  return ParParser(std::make_shared<const SourceFile>(std::move(name), std::move(text))).run();
}

ParFile parse_par_file(const std::string& path) {
  return ParParser(SourceFile::load(path)).run();
}

ParFile parse_override(const std::string& text, const std::string& par_path) {
  auto source = std::make_shared<const SourceFile>("--set", text);
  ParFile one = ParParser(source, par_path).run();
  const SourceLoc whole{source, 1, 1, std::max(1, int(text.size()))};
  if (!one.active_thorns.empty())
    throw InputError(one.active_thorn_locs.front(),
                     "--set takes one parameter, not ActiveThorns: thorns are activated in "
                     "the .par file");
  if (one.assignments.size() != 1)
    throw InputError(
        whole,
        fmt::format("--set takes one 'Thorn::name = value', not {}",
                    one.assignments.empty() ? std::string("nothing")
                                            : std::to_string(one.assignments.size())),
        {{{}, "e.g. --set 'Cactus::cctk_itlast = 100' or --set 'IO::out_dir = \"run2\"'"}});
  return one;
}

void apply_overrides(ParFile& par, const std::vector<ParFile>& overrides) {
  for (const ParFile& o : overrides)
    for (const Assignment& a : o.assignments) {
      std::erase_if(par.assignments, [&](const Assignment& b) {
        return support::iequals(a.thorn, b.thorn) && support::iequals(a.name, b.name) &&
               a.index.value_or(0) == b.index.value_or(0);
      });
      par.assignments.push_back(a);
    }
}

} // namespace saguaro::param
