// Cactus .par files, as the Cactus flesh reads them (its parameter-file grammar; values in
// param/par_value.hpp):
//
//   # comment                             (anywhere a blank may be, and on the second and later
//   !DESC "what this run is"               lines of a string)
//   ActiveThorns = "CoordBase MoL         # several lines
//                   Saguaro"
//   $n = 16                               # a variable, for later values
//   Cactus::cctk_itlast = 10 * $n         # arithmetic
//   CoordBase::dx = 1.0d-3
//   ADMBase::evolution_method = ML_BSSN   # an unquoted keyword
//   IO::out_dir = $parfile
//   Thorn::array[2] = yes
//   Thorn::array = [1, 2, 3]              # elements 0, 1, 2
//
// Every error of the file is collected (up to support::DiagnosticList::kMaxKept); after one,
// reading goes on at the next line.
#include "param/detail.hpp"
#include "param/par_value.hpp"

#include "support/cursor.hpp"
#include "support/text.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

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

// A value as an assignment holds it; `written` is the value's text as the file wrote it.
void set_value(Assignment& a, const detail::ParValue& v, const std::string& written) {
  using Type = detail::ParValue::Type;
  a.written = written;
  switch (v.type) {
  case Type::Int:
    a.kind = Assignment::Kind::Number;
    a.integer = true;
    a.integer_value = v.i;
    a.number = double(v.i);
    a.text = detail::is_number_literal(written) ? written : std::to_string(v.i);
    break;
  case Type::Real:
    a.kind = Assignment::Kind::Number;
    a.number = v.r;
    a.text = detail::is_number_literal(written) ? written : fmt::format("{}", v.r);
    break;
  case Type::Bool:
    a.kind = Assignment::Kind::Boolean;
    a.boolean = v.b;
    a.text = v.b ? "yes" : "no";
    break;
  case Type::String:
    bool bare = !written.empty() && written == v.s && is_name_start(written[0]);
    a.kind = bare ? Assignment::Kind::Word : Assignment::Kind::String;
    a.text = v.s;
    break;
  }
}

class ParParser {
public:
  // `expand_as`: the .par file whose name `$parfile` stands for ("": this file).
  explicit ParParser(std::shared_ptr<const SourceFile> file, std::string expand_as = "")
      : c_(file) {
    scope_.par_path = expand_as.empty() ? file->name() : std::move(expand_as);
    scope_.parameter = [this](const std::string& thorn, const std::string& name, int index) {
      auto it = set_.find(key(thorn, name, std::max(0, index)));
      return it == set_.end() ? nullptr : &it->second;
    };
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
        continue;
      }
      if (c == '#') {
        c_.skip_to_end_of_line();
        continue;
      }
      try {
        if (c == '!')
          desc_line();
        else if (c == '$')
          variable_definition();
        else if (is_name_start(c))
          statement();
        else
          throw InputError(c_.loc(), fmt::format("unexpected {}: {}", show_char(c), expected));
      } catch (const InputError& e) {
        problems_.add(e);
        c_.skip_to_end_of_line(); // go on with the next line
      }
    }
    par_.problems = problems_.take();
    return std::move(par_);
  }

private:
  static constexpr const char* expected =
      "expected 'Thorn::name = value', '$variable = value', 'ActiveThorns = \"...\"' or a '#' "
      "comment";

  static std::string key(const std::string& thorn, const std::string& name, int index) {
    return support::lower(thorn) + "::" + support::lower(name) + "[" + std::to_string(index) + "]";
  }
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

  void desc_line() {
    const support::Position bang = c_.position();
    c_.advance();
    std::string word = name();
    if (!support::iequals(word, "DESC"))
      throw InputError(
          c_.span(bang),
          fmt::format("unknown directive '!{}': expected '!DESC \"description\"'", word));
    c_.skip_blanks();
    SourceLoc loc;
    if (c_.peek() == '"')
      detail::read_quoted(c_, scope_, loc);
    else
      c_.skip_to_end_of_line(); // `!DESC text` without quotes: the rest of the line
    end_of_line("the !DESC line");
  }

  // `$name = value`: a variable for the values after it.
  void variable_definition() {
    const support::Position dollar = c_.position();
    c_.advance();
    if (!is_name_start(c_.peek()))
      throw InputError(c_.span(dollar), "expected a variable name after '$', as in '$n = 16'");
    std::string var = name();
    c_.skip_blanks();
    if (c_.peek() != '=')
      throw InputError(c_.loc(), fmt::format("unexpected {}: expected '=' and a value after "
                                             "'${}'",
                                             show_char(c_.peek()), var));
    c_.advance();
    c_.skip_blanks();
    if (c_.at_end() || c_.peek() == '\n' || c_.peek() == '#')
      throw InputError(c_.loc(), fmt::format("expected a value after '${} ='", var));
    std::string written;
    SourceLoc loc;
    std::vector<detail::ParValue> values = detail::read_value(c_, scope_, written, loc);
    if (values.size() != 1)
      throw InputError(loc, fmt::format("${} takes one value, not an array", var));
    if (var == "parfile" || var == "pi")
      throw InputError(c_.span(dollar), fmt::format("${} is predefined and cannot be set", var));
    end_of_line("the value");
    scope_.variables[var] = values.front();
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
    const bool array = c_.peek() == '[';
    std::string written;
    std::vector<detail::ParValue> values = detail::read_value(c_, scope_, written, a.value_loc);
    if (array && a.index)
      throw InputError(a.value_loc, fmt::format("{}::{}[{}] is one element: give it one value, "
                                                "or set the whole array without an index",
                                                a.thorn, a.name, *a.index));
    end_of_line("the value");
    for (std::size_t i = 0; i < values.size(); ++i) {
      Assignment element = a;
      if (array) element.index = int(i);
      set_value(element, values[i], array ? std::string() : written);
      if (array) element.written = element.text;
      set_[key(a.thorn, a.name, element.index.value_or(0))] = values[i];
      par_.assignments.push_back(std::move(element));
    }
  }

  // `ActiveThorns = "A B C"` (several lines, commas, comments on later lines) or a bare name.
  void active_thorns(const SourceLoc& keyword) {
    c_.advance(); // '='
    c_.skip_blanks();
    if (is_name_start(c_.peek())) {
      const support::Position start = c_.position();
      std::string thorn = name();
      par_.active_thorns.push_back(thorn);
      par_.active_thorn_locs.push_back(c_.at(start, int(thorn.size())));
      end_of_line("the ActiveThorns list");
      return;
    }
    if (c_.peek() != '"')
      throw InputError(c_.peek() == '\n' || c_.at_end() ? keyword : c_.loc(),
                       "ActiveThorns takes a list of thorn names in double quotes, as in "
                       "ActiveThorns = \"CoordBase MoL Saguaro\"");
    support::Cursor names = c_; // walks the contents again for each name's place
    const int first_line = c_.line();
    names.advance();
    SourceLoc loc;
    detail::read_quoted(c_, scope_, loc);
    const std::size_t end = c_.offset() - 1; // the closing quote
    auto separator = [](char c) { return is_space(c) || c == ','; };
    for (;;) {
      names.advance_while(separator);
      if (names.offset() >= end) break;
      if (names.peek() == '#' && names.line() != first_line) {
        names.advance_while([](char c) { return c != '\n' && c != '"'; });
        continue;
      }
      const support::Position start = names.position();
      names.advance_while([&](char c) { return !separator(c) && c != '"' && c != '#'; });
      // Always move on: a '#' on the string's first line (no comment there) or an escaped
      // quote is a one-character name, refused below, never an empty one read forever.
      if (names.offset() == start.offset) names.advance();
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
  detail::ParScope scope_;
  std::map<std::string, detail::ParValue> set_; // "thorn::name[index]" (lowercase) -> value
  ParFile par_;
  support::DiagnosticList problems_;
};

ParFile finish(ParFile par, bool keep_going) {
  if (!keep_going && !par.problems.empty()) throw InputError(std::move(par.problems));
  return par;
}

} // namespace

ParFile parse_par_text(std::string name, std::string text, bool keep_going) {
  return finish(
      ParParser(std::make_shared<const SourceFile>(std::move(name), std::move(text))).run(),
      keep_going);
}

ParFile parse_par_file(const std::string& path, bool keep_going) {
  return finish(ParParser(SourceFile::load(path)).run(), keep_going);
}

ParFile parse_override(const std::string& text, const std::string& par_path) {
  auto source = std::make_shared<const SourceFile>("--set", text);
  ParFile one = finish(ParParser(source, par_path).run(), false);
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
