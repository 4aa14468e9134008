#include "support/diagnostics.hpp"

#include "support/text.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace saguaro::support {

namespace {

// A control byte (not a tab) as the escape the quoted line shows for it.
bool is_control(unsigned char c) {
  return (c < 0x20 && c != '\t') || c == 0x7f;
}
std::string escape(unsigned char c) {
  return fmt::format("\\x{:02x}", c);
}

} // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (is_control(static_cast<unsigned char>(c)))
      out += escape(static_cast<unsigned char>(c));
    else
      out += c;
  }
  return out;
}

std::string render_diagnostic(const SourceLoc& loc, std::string_view severity,
                              std::string_view raw_message) {
  // Control bytes (a NUL above all) are shown escaped: a NUL would end what() for every reader
  // that takes it as a C string, and the quoted line with it.
  const std::string message = printable(raw_message);
  if (!loc.valid()) {
    if (loc.file)
      return fmt::format("{}: {}: {}\n", printable(loc.file->name()), severity, message);
    if (severity == "note") return fmt::format("note: {}\n", message);
    return fmt::format("saguaro: {}: {}\n", severity, message);
  }
  std::string out = fmt::format("{}:{}:{}: {}: {}\n", printable(loc.file->name()), loc.line,
                                loc.column, severity, message);
  std::string_view text = loc.file->line(loc.line);
  // Columns count bytes. The caret line keeps tabs, gives a multi-byte UTF-8 character one
  // space and an escaped control byte the width of its escape, so the caret lines up under
  // the quoted text.
  std::string caret;
  for (int c = 1; c < loc.column; ++c) {
    std::size_t i = static_cast<std::size_t>(c - 1);
    const unsigned char b = i < text.size() ? static_cast<unsigned char>(text[i]) : ' ';
    if ((b & 0xC0) == 0x80) continue;
    if (is_control(b))
      caret += std::string(escape(b).size(), ' ');
    else
      caret += b == '\t' ? '\t' : ' ';
  }
  caret += '^';
  for (int i = 1; i < loc.length; ++i) caret += '~';
  out += fmt::format("  {}\n  {}\n", printable(text), caret);
  return out;
}

std::string render(const Diagnostic& diagnostic) {
  std::string out = render_diagnostic(diagnostic.loc, diagnostic.severity, diagnostic.message);
  for (const Note& note : diagnostic.notes)
    out += render_diagnostic(note.loc, "note", note.message);
  return out;
}

namespace {
std::string render_all(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const Diagnostic& d : diagnostics) out += render(d);
  return out;
}

std::vector<Diagnostic> at_least_one(std::vector<Diagnostic> diagnostics) {
  if (diagnostics.empty()) diagnostics.push_back(Diagnostic{"error", {}, "invalid input", {}});
  return diagnostics;
}
} // namespace

InputError::InputError(SourceLoc loc, std::string message, std::vector<Note> notes)
    : InputError(std::vector<Diagnostic>{
          Diagnostic{"error", std::move(loc), std::move(message), std::move(notes)}}) {}

InputError::InputError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(render_all(at_least_one(diagnostics))),
      diagnostics_(at_least_one(std::move(diagnostics))) {}

void DiagnosticList::add(Diagnostic diagnostic) {
  if (kept_.size() < kMaxKept)
    kept_.push_back(std::move(diagnostic));
  else
    ++more_;
}

void DiagnosticList::add(const InputError& error) {
  for (const Diagnostic& d : error.diagnostics()) add(d);
}

std::vector<Diagnostic> DiagnosticList::take() {
  std::vector<Diagnostic> out = std::move(kept_);
  if (more_ > 0) out.push_back({"note", {}, fmt::format("{} more problems not shown", more_), {}});
  kept_.clear();
  more_ = 0;
  return out;
}

void DiagnosticList::throw_if_any() {
  if (!empty()) throw InputError(take());
}

std::string describe_character(char c) {
  if (std::isprint(static_cast<unsigned char>(c))) return fmt::format("'{}'", c);
  return fmt::format("byte 0x{:02x}", static_cast<unsigned char>(c));
}

std::string nearest_name(std::string_view name, const std::vector<std::string>& candidates) {
  auto common_prefix = [](std::string_view a, std::string_view b) {
    std::size_t n = 0;
    while (n < a.size() && n < b.size() && to_lower(a[n]) == to_lower(b[n])) ++n;
    return n;
  };
  // Edit distance counting a swap of neighbouring letters as one edit (optimal string
  // alignment), case-insensitive: `xmni` is one typo away from `xmin`.
  auto distance = [](std::string_view a, std::string_view b) {
    auto same = [&](std::size_t i, std::size_t j) { return to_lower(a[i]) == to_lower(b[j]); };
    const std::size_t w = b.size() + 1;
    std::vector<std::size_t> d((a.size() + 1) * w);
    for (std::size_t i = 0; i <= a.size(); ++i) d[i * w] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i)
      for (std::size_t j = 1; j <= b.size(); ++j) {
        std::size_t v = std::min({d[(i - 1) * w + j] + 1, d[i * w + j - 1] + 1,
                                  d[(i - 1) * w + j - 1] + (same(i - 1, j - 1) ? 0 : 1)});
        if (i > 1 && j > 1 && same(i - 1, j - 2) && same(i - 2, j - 1))
          v = std::min(v, d[(i - 2) * w + j - 2] + 1);
        d[i * w + j] = v;
      }
    return d[a.size() * w + b.size()];
  };
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(1, name.size() / 3) + 1;
  for (const std::string& candidate : candidates) {
    // The distance is at least the difference in length: most candidates are out at once.
    // The table costs |name| x |candidate|; past kMaxCells a suggestion is not worth it (a
    // million-character name is not a typo).
    constexpr std::size_t kMaxCells = std::size_t(1) << 22;
    const std::size_t gap = name.size() > candidate.size() ? name.size() - candidate.size()
                                                           : candidate.size() - name.size();
    if (gap > best_distance || (name.size() + 1) * (candidate.size() + 1) > kMaxCells) continue;
    std::size_t d = distance(name, candidate);
    // At equal distance the one that begins like the name: `V` suggests `V2`, not `x`.
    if (d < best_distance || (d == best_distance && !best.empty() &&
                              common_prefix(name, candidate) > common_prefix(name, best))) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

std::vector<Note> did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  std::string near = nearest_name(name, candidates);
  if (near.empty()) return {};
  return {Note{{}, fmt::format("did you mean '{}'?", near)}};
}

} // namespace saguaro::support
