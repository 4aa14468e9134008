// The schedule.ccl reader: Cactus's schedule syntax, case-insensitive keywords, `#` comments.
//
//   SCHEDULE [GROUP] name AT|IN where [AS alias] [BEFORE x | BEFORE (x y)] [AFTER ...]
//            [WHILE var] [IF var]
//   {
//     LANG: C
//     STORAGE: g1 g2[3]
//     SYNC: g
//     OPTIONS: global loop-local
//     TRIGGERS: ...; READS: ...; WRITES: ...; TAGS: ...
//   } "description"
//
// Clauses end at a newline or ';'. Top-level `STORAGE: ...` lines are accepted (every grid
// function has storage here). Conditional blocks `if (...) { ... }` are rejected.
//
// The lexer is pulled by the parser, so text the parser rejects before reaching it (the
// condition of an `if`, say) is never tokenized and cannot produce a misleading error.
#include "schedule/names.hpp"
#include "schedule/schedule.hpp"
#include "support/cursor.hpp"

#include <cctype>
#include <deque>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace saguaro::schedule {

using support::InputError;
using support::Note;
using support::SourceFile;
using support::SourceLoc;

namespace {

enum class Tok {
  Word,
  String,
  LBrace,
  RBrace,
  LParen,
  RParen,
  Colon,
  Semicolon,
  Comma,
  Newline,
  End
};

struct Token {
  Tok kind;
  std::string text; // a word as written; a string's value without its quotes
  int line = 0, column = 0, length = 1;
  bool space_before = false;
};

bool word_start(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool word_char(char c) {
  return word_start(c) || c == '-' || c == '.' || c == '[' || c == ']' || c == '+' || c == '=';
}

class Lexer {
public:
  explicit Lexer(const std::shared_ptr<const SourceFile>& file) : c_(file) {}

  Token next() {
    bool space = false;
    while (!c_.at_end()) {
      char c = c_.peek();
      if (c_.skip_blanks()) {
        space = true;
      } else if (c == '\\' && (c_.peek(1) == '\n' || (c_.peek(1) == '\r' && c_.peek(2) == '\n'))) {
        c_.skip_to_end_of_line(); // a line continuation
        c_.advance();
        space = true;
      } else if (c == '#') {
        c_.skip_to_end_of_line();
      } else {
        break;
      }
    }
    const support::Position start = c_.position();
    if (c_.at_end()) return token(Tok::End, "", start, 1, space);
    char c = c_.peek();
    if (c == '\n') {
      c_.advance();
      return token(Tok::Newline, "\n", start, 1, space);
    }
    if (word_start(c)) {
      while (!c_.at_end()) {
        if (word_char(c_.peek())) {
          c_.advance();
        } else if (c_.peek() == ':' && c_.peek(1) == ':' && word_start(c_.peek(2))) {
          c_.advance(2); // Thorn::name
        } else {
          break;
        }
      }
      return token(Tok::Word, std::string(c_.since(start)), start, int(c_.offset() - start.offset),
                   space);
    }
    if (c == '"') return lex_string(start, space);
    Tok kind;
    switch (c) {
    case '{': kind = Tok::LBrace; break;
    case '}': kind = Tok::RBrace; break;
    case '(': kind = Tok::LParen; break;
    case ')': kind = Tok::RParen; break;
    case ':': kind = Tok::Colon; break;
    case ';': kind = Tok::Semicolon; break;
    case ',': kind = Tok::Comma; break;
    default: {
      std::string shown = support::describe_character(c);
      throw InputError(c_.loc(), fmt::format("unexpected character {} in schedule.ccl", shown));
    }
    }
    c_.advance();
    return token(kind, std::string(1, c), start, 1, space);
  }

private:
  static Token token(Tok kind, std::string text, const support::Position& at, int length,
                     bool space) {
    return Token{kind, std::move(text), at.line, at.column, length, space};
  }

  Token lex_string(const support::Position& start, bool space) {
    c_.advance();
    std::string value;
    while (!c_.at_end() && c_.peek() != '"' && c_.peek() != '\n') {
      if (c_.peek() == '\\' && (c_.peek(1) == '"' || c_.peek(1) == '\\')) c_.advance();
      value += c_.peek();
      c_.advance();
    }
    if (c_.peek() != '"') // the end of the line or of the file
      throw InputError(c_.at(start, int(c_.offset() - start.offset)),
                       "unterminated string: expected a closing '\"' on the same line");
    c_.advance();
    return token(Tok::String, value, start, int(c_.offset() - start.offset), space);
  }

  support::Cursor c_;
};

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

// A name in BEFORE/AFTER: `name` or `Thorn::name`.
bool is_reference(const std::string& s) {
  std::size_t colons = s.find("::");
  if (colons == std::string::npos) return is_identifier(s);
  return is_identifier(s.substr(0, colons)) && is_identifier(s.substr(colons + 2));
}

// The clauses an item's body may hold.
const std::vector<std::string>& clause_names() {
  static const std::vector<std::string> names = {"LANG",   "STORAGE",  "SYNC",       "OPTIONS",
                                                 "OPTION", "TRIGGERS", "TRIGGER",    "READS",
                                                 "WRITES", "TAGS",     "INVALIDATES"};
  return names;
}

class Parser {
public:
  Parser(std::shared_ptr<const SourceFile> file, std::string thorn)
      : file_(std::move(file)), thorn_(std::move(thorn)), lexer_(file_) {}

  std::vector<ScheduleItem> parse() {
    std::vector<ScheduleItem> items;
    while (true) {
      const Token& t = peek();
      if (t.kind == Tok::Newline || t.kind == Tok::Semicolon) {
        next();
        continue;
      }
      if (t.kind == Tok::End) return items;
      std::string word = t.kind == Tok::Word ? support::upper(t.text) : "";
      if (word == "SCHEDULE") {
        items.push_back(parse_item());
      } else if (word == "STORAGE") {
        parse_top_level_storage();
      } else if (word == "IF") {
        throw InputError(loc(t), "conditional schedule blocks are not supported",
                         {Note{{},
                               "schedule the item unconditionally and test the condition "
                               "inside the scheduled function"}});
      } else if (t.kind == Tok::Word) {
        throw InputError(loc(t),
                         fmt::format("unexpected {}: expected SCHEDULE or STORAGE", show(t)),
                         support::did_you_mean(t.text, {"SCHEDULE", "STORAGE"}));
      } else {
        throw error(t, fmt::format("unexpected {}: expected SCHEDULE or STORAGE", show(t)));
      }
    }
  }

private:
  // ---- tokens -------------------------------------------------------------------------------
  const Token& peek(std::size_t ahead = 0) {
    while (buffer_.size() <= ahead) {
      if (!buffer_.empty() && buffer_.back().kind == Tok::End) return buffer_.back();
      buffer_.push_back(lexer_.next());
    }
    return buffer_[ahead];
  }
  Token next() {
    Token t = peek();
    if (t.kind != Tok::End) buffer_.pop_front();
    return t;
  }
  void skip_newlines() {
    while (peek().kind == Tok::Newline) next();
  }
  SourceLoc loc(const Token& t) const { return SourceLoc{file_, t.line, t.column, t.length}; }
  static std::string show(const Token& t) {
    switch (t.kind) {
    case Tok::Word: return fmt::format("'{}'", t.text);
    case Tok::String: return fmt::format("string \"{}\"", t.text);
    case Tok::LBrace: return "'{'";
    case Tok::RBrace: return "'}'";
    case Tok::LParen: return "'('";
    case Tok::RParen: return "')'";
    case Tok::Colon: return "':'";
    case Tok::Semicolon: return "';'";
    case Tok::Comma: return "','";
    case Tok::Newline: return "end of line";
    case Tok::End: return "end of file";
    }
    return "?";
  }
  InputError error(const Token& t, const std::string& message, std::vector<Note> notes = {}) const {
    return InputError(loc(t), message, std::move(notes));
  }
  bool is_word(const Token& t, const char* keyword) const {
    return t.kind == Tok::Word && support::iequals(t.text, keyword);
  }

  Token expect_identifier(const std::string& what, bool qualified = false) {
    const Token& t = peek();
    if (t.kind != Tok::Word || !(qualified ? is_reference(t.text) : is_identifier(t.text)))
      throw error(t, fmt::format("expected {}, found {}", what, show(t)));
    return next();
  }

  // ---- items --------------------------------------------------------------------------------
  ScheduleItem parse_item() {
    next(); // SCHEDULE
    skip_newlines();
    ScheduleItem item;
    item.thorn = thorn_;
    // GROUP is a keyword unless it is itself the name (`SCHEDULE group AT ...`).
    if (is_word(peek(), "GROUP") && peek(1).kind == Tok::Word && !is_word(peek(1), "AT") &&
        !is_word(peek(1), "IN")) {
      next();
      item.is_group = true;
      skip_newlines();
    }
    Token name = expect_identifier(item.is_group ? "the name of the scheduled group"
                                                 : "the name of the scheduled function");
    item.name = name.text;
    item.loc = loc(name);
    skip_newlines();
    const Token& at_in = peek();
    if (is_word(at_in, "AT")) {
      item.at = true;
    } else if (is_word(at_in, "IN")) {
      item.at = false;
    } else {
      throw error(at_in, fmt::format("expected AT (a bin) or IN (a group) after '{}', found {}",
                                     item.name, show(at_in)));
    }
    next();
    skip_newlines();
    Token where = expect_identifier(item.at ? "a schedule bin after AT" : "a group name after IN");
    if (item.at) {
      item.where = detail::normalise_bin(where.text);
      bool known = false;
      for (const std::string& bin : bins()) known = known || bin == item.where;
      if (!known)
        throw error(where,
                    fmt::format("unknown schedule bin '{}'; the bins are {}", where.text,
                                fmt::join(bins(), ", ")),
                    support::did_you_mean(item.where, bins()));
    } else {
      item.where = where.text;
    }
    parse_header_clauses(item);
    Token open = next(); // '{', checked by parse_header_clauses
    parse_body(item, open);
    next(); // '}', checked by parse_body
    const Token& description = peek();
    if (description.kind != Tok::String)
      throw error(description,
                  fmt::format("expected the description string of '{}' after its '}}', found {}",
                              item.name, show(description)));
    item.description = next().text;
    const Token& after = peek();
    if (after.kind != Tok::Newline && after.kind != Tok::End && after.kind != Tok::Semicolon)
      throw error(after, fmt::format("unexpected {} after the description of '{}': expected "
                                     "end of line",
                                     show(after), item.name));
    return item;
  }

  void parse_header_clauses(ScheduleItem& item) {
    static const std::vector<std::string> keywords = {"AS", "BEFORE", "AFTER", "WHILE", "IF"};
    while (true) {
      skip_newlines();
      const Token& t = peek();
      if (t.kind == Tok::LBrace) return;
      std::string word = t.kind == Tok::Word ? support::upper(t.text) : "";
      if (word == "AS") {
        next();
        item.alias = expect_identifier("an alias after AS").text;
      } else if (word == "BEFORE" || word == "AFTER") {
        next();
        parse_name_list(word == "BEFORE" ? item.before : item.after, word);
      } else if (word == "WHILE" || word == "IF") {
        next();
        const Token& v = peek();
        if (v.kind != Tok::Word)
          throw error(v, fmt::format("expected a variable name after {}, found {}", word, show(v)));
        (word == "WHILE" ? item.while_var : item.if_var) = next().text;
      } else {
        std::vector<Note> notes;
        if (t.kind == Tok::Word) notes = support::did_you_mean(t.text, keywords);
        throw error(t,
                    fmt::format("unexpected {} in the schedule of '{}': expected AS, BEFORE, "
                                "AFTER, WHILE, IF or '{{'",
                                show(t), item.name),
                    std::move(notes));
      }
    }
  }

  // BEFORE x, BEFORE (x y), BEFORE (x, y).
  void parse_name_list(std::vector<std::string>& out, const std::string& keyword) {
    if (peek().kind != Tok::LParen) {
      out.push_back(expect_identifier(fmt::format("a name after {}", keyword), true).text);
      return;
    }
    Token open = next();
    bool any = false;
    while (true) {
      const Token& t = peek();
      if (t.kind == Tok::RParen) {
        next();
        break;
      }
      if (t.kind == Tok::Comma || t.kind == Tok::Newline) {
        next();
        continue;
      }
      if (t.kind == Tok::Word && is_reference(t.text)) {
        out.push_back(next().text);
        any = true;
        continue;
      }
      if (t.kind == Tok::End || t.kind == Tok::LBrace)
        throw error(open, fmt::format("unclosed '(' after {}: expected ')'", keyword));
      throw error(t,
                  fmt::format("expected a name or ')' in the {} list, found {}", keyword, show(t)));
    }
    if (!any) throw error(open, fmt::format("empty {} list: expected at least one name", keyword));
  }

  void parse_body(ScheduleItem& item, const Token& open) {
    bool have_lang = false;
    while (true) {
      const Token& t = peek();
      if (t.kind == Tok::Newline || t.kind == Tok::Semicolon) {
        next();
        continue;
      }
      if (t.kind == Tok::RBrace) return;
      if (t.kind == Tok::End)
        throw error(open, fmt::format("unterminated '{{' of '{}': expected '}}' before the end "
                                      "of the file",
                                      item.name));
      if (is_word(t, "SCHEDULE"))
        throw error(open,
                    fmt::format("unterminated '{{' of '{}': expected '}}' before the next SCHEDULE",
                                item.name),
                    {Note{loc(t), "the next SCHEDULE is here"}});
      if (t.kind != Tok::Word)
        throw error(t, fmt::format("unexpected {} in the body of '{}': expected a clause "
                                   "(LANG, STORAGE, SYNC, OPTIONS, ...) or '}}'",
                                   show(t), item.name));
      Token key_token = next();
      std::string key = support::upper(key_token.text);
      bool known = false;
      for (const std::string& k : clause_names()) known = known || k == key;
      if (!known)
        throw error(key_token,
                    fmt::format("unknown clause '{}' in the body of '{}': expected one of {}",
                                key_token.text, item.name, fmt::join(clause_names(), ", ")),
                    support::did_you_mean(key_token.text, clause_names()));
      const Token& colon = peek();
      if (colon.kind != Tok::Colon)
        throw error(colon, fmt::format("expected ':' after {}, found {}", key, show(colon)));
      next();
      std::vector<std::string> values = parse_values(key);
      if (key == "LANG") {
        if (have_lang) throw error(key_token, fmt::format("LANG given twice for '{}'", item.name));
        if (values.size() != 1)
          throw error(key_token, fmt::format("LANG of '{}' needs exactly one language, found {}",
                                             item.name, values.size()));
        item.lang = values[0];
        have_lang = true;
      } else if (key == "STORAGE") {
        item.storage.insert(item.storage.end(), values.begin(), values.end());
      } else if (key == "SYNC") {
        item.sync.insert(item.sync.end(), values.begin(), values.end());
      } else if (key == "OPTIONS" || key == "OPTION") {
        for (const std::string& v : values) item.options.push_back(support::lower(v));
      }
      // TRIGGERS, READS, WRITES, TAGS, INVALIDATES: accepted; they do not change what runs.
    }
  }

  // The values of a clause up to the end of the line, ';' or '}': words, commas between
  // them, and a parenthesised qualifier glued to a word (`ADMBase::lapse(everywhere)`).
  std::vector<std::string> parse_values(const std::string& key) {
    std::vector<std::string> values;
    while (true) {
      const Token& t = peek();
      switch (t.kind) {
      case Tok::Newline:
      case Tok::Semicolon:
      case Tok::RBrace:
      case Tok::End: return values;
      case Tok::Comma: next(); break;
      case Tok::Word:
      case Tok::String: values.push_back(next().text); break; // TAGS: index="1 2"
      case Tok::LParen: {
        if (values.empty() || t.space_before)
          throw error(t, fmt::format("unexpected '(' in {}: a qualifier follows a name "
                                     "directly, as in g(everywhere)",
                                     key));
        Token open = next();
        std::string qualifier = "(";
        while (peek().kind != Tok::RParen) {
          const Token& q = peek();
          if (q.kind == Tok::Newline || q.kind == Tok::End)
            throw error(open, fmt::format("unclosed '(' in {}: expected ')'", key));
          if (q.kind == Tok::Word && qualifier.back() != '(') qualifier += ' ';
          qualifier += next().text;
        }
        next();
        values.back() += qualifier + ")";
        break;
      }
      default: throw error(t, fmt::format("unexpected {} in {}: expected names", show(t), key));
      }
    }
  }

  void parse_top_level_storage() {
    next(); // STORAGE
    const Token& colon = peek();
    if (colon.kind != Tok::Colon)
      throw error(colon, fmt::format("expected ':' after STORAGE, found {}", show(colon)));
    next();
    parse_values("STORAGE");
    const Token& t = peek();
    if (t.kind == Tok::RBrace) throw error(t, "unexpected '}' at the top level");
  }

  std::shared_ptr<const SourceFile> file_;
  std::string thorn_;
  Lexer lexer_;
  std::deque<Token> buffer_;
};

} // namespace

std::vector<ScheduleItem> parse_schedule_ccl(const std::shared_ptr<const SourceFile>& source,
                                             const std::string& thorn) {
  return Parser(source, thorn).parse();
}

} // namespace saguaro::schedule
