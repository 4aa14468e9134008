// A thorn's interface.ccl as another thorn sees it: the grid functions it declares, the
// CCTK_REAL groups of TYPE=gf that are public or protected (private, Cactus's default, is the
// thorn's own); functions, INHERITS/USES/INCLUDE lines and other types are read past. Also where
// a thorn's CCL files are looked for.
#include "ccl/interface_ccl.hpp"

#include "support/diagnostics.hpp"
#include "support/text.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

namespace saguaro::ccl {

namespace {

namespace fs = std::filesystem;
using support::SourceFile;

enum class Kind { Word, String, Punct, Newline, End };

struct Token {
  Kind kind = Kind::End;
  std::string text;
  int line = 0, column = 0;
};

bool word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.';
}

bool identifier(const std::string& word) { // a Word token: letters, digits, '_' and '.'
  return !word.empty() && std::isdigit(static_cast<unsigned char>(word[0])) == 0 &&
         word.find('.') == std::string::npos;
}

class Reader {
public:
  explicit Reader(std::shared_ptr<const SourceFile> file) : file_(std::move(file)) { lex(); }

  Interface read(std::string thorn) {
    Interface out{std::move(thorn), {}};
    static const std::set<std::string> statements = {
        "implements", "inherits", "friend",   "uses",       "requires",
        "provides",   "include",  "includes", "subroutine", "void"};
    std::string access = "private"; // Cactus's default
    while (peek().kind != Kind::End) {
      const Token t = next();
      if (t.kind == Kind::Newline) continue;
      if (t.kind != Kind::Word)
        fail(t, fmt::format("unexpected '{}' at the start of a line", t.text));
      const std::string w = support::lower(t.text);
      if ((w == "public" || w == "protected" || w == "private") && peek().text == ":") {
        next();
        access = w;
      } else if (w.rfind("cctk_", 0) == 0 || w == "real" || w == "int" || w == "complex" ||
                 w == "char" || w == "byte" || w == "string") {
        if (support::lower(peek().text) == "function")
          skip_statement();
        else
          group(t, w == "cctk_real" || w == "real", access != "private", out);
      } else if (statements.count(w) != 0) {
        skip_statement();
      } else {
        fail(t, fmt::format("expected a group ('CCTK_REAL name TYPE=gf'), an access keyword "
                            "('public:') or a statement (IMPLEMENTS, INHERITS, USES, ...), "
                            "not '{}'",
                            t.text));
      }
    }
    return out;
  }

private:
  // A group: TYPE name[N]? options... ["description"] [{ v1 v2, v3 } ["description"]]
  void group(const Token& type, bool real, bool visible, Interface& out) {
    const Token name = next();
    if (name.kind != Kind::Word || !identifier(name.text))
      fail(name.kind == Kind::Newline || name.kind == Kind::End ? type : name,
           fmt::format("expected a group name after '{}'", type.text));
    int rank = 0;
    if (peek().text == "[") {
      const Token open = next();
      const Token size = next();
      if (size.text != "3" || next().text != "]")
        fail(open, "a vector group must have 3 elements ('name[3]'), as a vector of the EDL");
      rank = 1;
    }
    std::string group_type = "scalar"; // Cactus's default
    while (peek().kind != Kind::Newline && peek().kind != Kind::End && peek().text != "{") {
      const Token t = next();
      if (t.kind == Kind::Word && support::lower(t.text) == "type" && peek().text == "=") {
        next();
        const Token value = next();
        group_type = support::lower(value.text);
        if (value.kind != Kind::Word ||
            (group_type != "gf" && group_type != "scalar" && group_type != "array"))
          fail(value, "expected GF, SCALAR or ARRAY after 'TYPE='");
      } else if (t.text == "}") {
        fail(t, "'}' without a '{'");
      }
    }
    std::vector<Token> variables;
    std::size_t ahead = 0;
    while (peek(ahead).kind == Kind::Newline) ++ahead;
    if (peek(ahead).text == "{") {
      for (std::size_t k = 0; k <= ahead; ++k) next();
      const Token& open = tokens_[at_ - 1];
      for (;;) {
        const Token t = next();
        if (t.kind == Kind::End) fail(open, "this '{' is not closed");
        if (t.text == "}") break;
        if (t.kind == Kind::Newline || t.text == ",") continue;
        if (t.kind != Kind::Word || !identifier(t.text))
          fail(t, fmt::format("expected a variable name or '}}', not '{}'", t.text));
        variables.push_back(t);
      }
      if (peek().kind == Kind::String) next();
      if (peek().kind != Kind::Newline && peek().kind != Kind::End)
        fail(peek(), "expected the end of the line after the group's '}' and description");
    } else {
      variables.push_back(name);
    }
    if (!real || group_type != "gf" || !visible) return;
    for (const Token& v : variables) {
      auto [it, fresh] = seen_.emplace(support::lower(v.text), v.line);
      if (!fresh)
        fail(v, fmt::format("'{}' is declared twice (first on line {})", v.text, it->second));
      out.variables.push_back({v.text, rank, name.text});
    }
  }

  // To the end of the line, or of a parenthesised argument list spanning lines.
  void skip_statement() {
    int depth = 0;
    while (peek().kind != Kind::End && (depth > 0 || peek().kind != Kind::Newline)) {
      const Token t = next();
      depth += t.text == "(" ? 1 : (t.text == ")" && depth > 0 ? -1 : 0);
    }
  }

  void lex() {
    const std::string& s = file_->text();
    int line = 1;
    std::size_t line_start = 0;
    for (std::size_t i = 0; i < s.size();) {
      const char c = s[i];
      const int column = static_cast<int>(i - line_start) + 1;
      if (c == '\n') {
        tokens_.push_back({Kind::Newline, "", line, column});
        ++line;
        line_start = ++i;
      } else if (c == '#') {
        while (i < s.size() && s[i] != '\n') ++i;
      } else if (std::isspace(static_cast<unsigned char>(c)) != 0) {
        ++i;
      } else if (c == '"' || c == '\'') {
        std::size_t j = i + 1;
        while (j < s.size() && s[j] != c && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
        if (j >= s.size() || s[j] != c)
          fail({Kind::String, std::string(1, c), line, column},
               "this string is not closed on its line");
        tokens_.push_back({Kind::String, s.substr(i, j + 1 - i), line, column});
        i = j + 1;
      } else if (word_char(c)) {
        std::size_t j = i;
        while (j < s.size() && word_char(s[j])) ++j;
        tokens_.push_back({Kind::Word, s.substr(i, j - i), line, column});
        i = j;
      } else {
        tokens_.push_back({Kind::Punct, std::string(1, c), line, column});
        ++i;
      }
    }
    tokens_.push_back({Kind::End, "", line, static_cast<int>(s.size() - line_start) + 1});
  }

  const Token& peek(std::size_t ahead = 0) const {
    return tokens_[std::min(at_ + ahead, tokens_.size() - 1)];
  }
  Token next() { return at_ < tokens_.size() - 1 ? tokens_[at_++] : tokens_.back(); }

  [[noreturn]] void fail(const Token& t, std::string message) const {
    const int length = std::max(1, static_cast<int>(t.text.size()));
    throw support::InputError(support::SourceLoc{file_, t.line, t.column, length}, message);
  }

  std::shared_ptr<const SourceFile> file_;
  std::vector<Token> tokens_;
  std::size_t at_ = 0;
  std::map<std::string, int> seen_;
};

// The base folders, in search order.
std::vector<fs::path> bases(const std::string& beside) {
  const fs::path dir = fs::path(beside).parent_path(); // empty: the current folder
  std::vector<fs::path> out = {dir, (dir / "..").lexically_normal()};
  if (const char* env = std::getenv("SAGUARO_THORN_PATH"); env != nullptr) {
    std::string_view rest = env;
    while (!rest.empty()) {
      const std::size_t colon = std::min(rest.find(':'), rest.size());
      if (colon > 0) out.emplace_back(std::string(rest.substr(0, colon)));
      rest.remove_prefix(std::min(colon + 1, rest.size()));
    }
  }
  return out;
}

} // namespace

Interface read_interface_ccl(const std::shared_ptr<const support::SourceFile>& file,
                             std::string thorn) {
  return Reader(file).read(std::move(thorn));
}

std::vector<std::string> thorn_file_places(const std::string& beside, std::string_view thorn,
                                           std::string_view file_name) {
  std::vector<std::string> out;
  for (const fs::path& base : bases(beside))
    out.push_back((base / std::string(thorn) / std::string(file_name)).string());
  return out;
}

std::optional<std::string> find_thorn_folder(const std::string& beside, std::string_view thorn) {
  const std::string want = support::lower(thorn);
  for (const fs::path& base : bases(beside)) {
    std::error_code ec;
    if (fs::is_regular_file(base / std::string(thorn) / "interface.ccl", ec))
      return (base / std::string(thorn)).string();
    for (fs::directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec))
      if (support::lower(it->path().filename().string()) == want &&
          fs::is_regular_file(it->path() / "interface.ccl", ec))
        return it->path().string();
  }
  return std::nullopt;
}

} // namespace saguaro::ccl
