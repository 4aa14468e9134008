// The EDL parser's class, shared by its files (internal to edl/): parser.cpp (the thorn, token
// access, indices and expressions) and parser_sections.cpp (options, declarations, parameters,
// groups, derivative definitions, calculations and equations).
#pragma once

#include "edl/ast.hpp"
#include "edl/lexer.hpp"

#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace saguaro::edl {

bool is_function_name(const std::string& name);
// Kranc's rule for operators used outside a derivatives block: D then lower-case letters and
// digits. A derivatives block may define an operator of any name (`PDstandard2nd`).
bool looks_like_operator(const std::string& name);

class Parser {
public:
  explicit Parser(std::shared_ptr<const SourceFile> file);
  Thorn parse();

private:
  // ---- token access (parser.cpp) -------------------------------------------------------------
  const Token& peek(std::size_t ahead = 0) const {
    std::size_t i = std::min(pos_ + ahead, tokens_.size() - 1);
    return tokens_[i];
  }
  const Token& next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  SourceLoc loc(const Token& t) const { return SourceLoc{file_, t.line, t.column, t.length}; }
  static std::string show(const Token& t);
  EdlError error(const Token& t, const std::string& message) const;
  void skip_newlines() {
    while (peek().is(TokenKind::Newline)) next();
  }
  void end_of_line();
  void expect_word(std::string_view word, const std::string& what);
  const Token& expect(TokenKind kind, const std::string& what);
  std::string parse_uname(const std::string& what);
  // ---- error recovery (parser.cpp) -------------------------------------------------------------
  // An error is recorded and parsing goes on: every syntax error of a file is reported in one
  // run. Errors on a line the lexer already rejected are dropped (they would repeat it).
  void record(const EdlError& e);
  // Whether the last error recorded is at `t` (an end of file is reported once).
  bool reported_at(const Token& t) const;
  bool at_line_start() const { return pos_ == 0 || tokens_[pos_ - 1].is(TokenKind::Newline); }
  bool at_section_keyword() const {
    return at_line_start() && (peek().is_name("begin") || peek().is_name("end"));
  }
  // After an error: the expression state reset, and the rest of the line skipped unless the
  // parser stands at a `begin` or `end` that starts a line. Consumes at least one token when
  // the parser has not moved since `before` (so that no loop can spin in place).
  void recover(std::size_t before);
  // Runs `parse`; an error in it is recorded and the parser recovers from `before`. Returns
  // whether it parsed without error.
  template <class Parse>
  bool attempt(std::size_t before, Parse&& parse) {
    try {
      parse();
      return true;
    } catch (const EdlError& e) {
      record(e);
      recover(before);
      return false;
    }
  }
  // The lines of section `word` up to its `end WORD` (closed there): each read by
  // line(failed), under attempt(); `failed` says whether the previous line had an error (or was
  // skipped after one: line() returns true to keep that state). An end of file or a new
  // section's `begin` ends the section too, reported (`eof_note` and `begin_note` end those
  // messages). Returns whether the section was closed by its `end`.
  template <class Line>
  bool section_lines(const std::string& word, const std::string& eof_note,
                     const std::string& begin_note, Line&& line) {
    bool failed = false;
    while (true) {
      skip_newlines();
      const Token& t = peek();
      if (t.is_name("end")) {
        close_section(word);
        return true;
      }
      if (t.is(TokenKind::End)) {
        record(error(t, "unexpected end of file: expected 'end " + word + "'" + eof_note));
        return false;
      }
      if (t.is_name("begin") && at_line_start()) {
        record(error(t, "expected 'end " + word + "' before a new section" + begin_note));
        return false;
      }
      if (!attempt(pos_, [&] { failed = line(failed); })) failed = true;
    }
  }
  void skip_line();
  // `begin WORD` of an unknown section: its lines up to its `end` line, or to a `begin` line.
  void skip_unknown_section();
  void parse_thorn_items(Thorn& thorn);
  // `end WORD` closing a section; the section is closed even when the line is wrong.
  void close_section(const std::string& word);

  void collect_operator_names();
  void collect_inherited_names();
  // A name as written, glued back together with `_` where it is an inherited variable's
  // (`w_lorentz`, `Y_e`).
  std::string parse_name(const Token& first);

  // ---- sections (parser_sections.cpp) ---------------------------------------------------------
  void parse_option(Thorn& thorn);
  void parse_section(Thorn& thorn);
  void parse_tensor_list(std::vector<TensorRef>& list, const std::string& word);
  void parse_group(Thorn& thorn);
  void parse_group_line(GroupDecl& group);
  TensorRef parse_declared_tensor();
  ParameterDecl parse_parameter();
  ParameterDecl parse_kranc_parameter();
  void parse_keyword_values(ParameterDecl& p);
  ExprPtr parse_range_end(bool lower);
  DerivativeDef parse_derivative_def();
  CalculationDecl parse_calculation();
  void parse_calculation_header(CalculationDecl& calc);
  Equation parse_equation();

  // ---- indices and expressions (parser.cpp) ---------------------------------------------------
  std::vector<Index> parse_indices();
  void parse_shifted_group(std::vector<Index>& indices, bool upper);
  void add_index(std::vector<Index>& indices, Index index);
  void skip_continuation();
  void skip_after_operator();
  static ExprPtr make(Expr::Kind kind, SourceLoc loc, std::vector<ExprPtr> args);
  static ExprPtr bounded(std::shared_ptr<Expr> e);
  ExprPtr parse_expression();
  ExprPtr parse_sum();
  EdlError unclosed(const Token& paren) const;
  bool starts_primary(const Token& t) const;
  ExprPtr parse_term();
  ExprPtr parse_unary();
  ExprPtr parse_power();
  ExprPtr parse_primary();
  ExprPtr parse_number(const Token& t);
  ExprPtr parse_parenthesized(const Token& t);
  ExprPtr parse_derivative(const Token& name);
  ExprPtr parse_call(const Token& name);

  // Nesting is bounded so that no input can exhaust the stack of the recursive passes.
  struct NestingGuard {
    Parser& p;
    NestingGuard(Parser& parser, const Token& t) : p(parser) {
      if (++p.nesting_ > kMaxNesting)
        throw p.error(t, fmt::format("expression nested more than {} levels deep; split it with "
                                     "temporaries",
                                     kMaxNesting));
    }
    ~NestingGuard() { --p.nesting_; }
  };

  std::shared_ptr<const SourceFile> file_;
  std::vector<Token> tokens_;
  std::vector<support::Diagnostic> lexer_errors_;
  std::set<int> lexer_error_lines_;
  std::vector<support::Diagnostic> errors_; // the parser's, in file order
  std::size_t pos_ = 0;
  bool stop_at_to_ = false;
  bool in_definition_ = false; // a derivative definition: shifted indices allowed
  bool in_algebra_ = false;    // an operator-form definition: operators are values
  std::set<std::string> operators_;
  std::set<std::string> inherited_names_; // inherited variables whose names hold `_`
  std::vector<Token> open_parens_;
  int nesting_ = 0;
  static constexpr int kMaxNesting = 256;
  static constexpr int kMaxHeight = 4000; // see bounded(); 7000 overflowed an ASan build
  // Indices per tensor: every rank expands to 3^rank components (rank 18 took 8.8 GB).
  static constexpr std::size_t kMaxRank = 6;
  static constexpr int kMaxShift = 64;
};

} // namespace saguaro::edl
