// Source files and places in them, shared by every reader of user input: EDL, .par,
// param.ccl/schedule.ccl and the YAML of mapping files and device descriptions.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace saguaro::support {

// One loaded source file; keeps line starts so a location can quote its line.
class SourceFile {
public:
  SourceFile(std::string name, std::string text);
  static std::shared_ptr<const SourceFile> load(const std::string& path); // throws InputError

  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }
  std::string_view line(int line_number) const; // 1-based, without the newline (or CR LF)
  int line_count() const { return static_cast<int>(line_starts_.size()); }

private:
  std::string name_, text_;
  std::vector<std::size_t> line_starts_;
};

// A position in a source file: 1-based line and column (columns count bytes); `length` is how
// many characters the caret underlines. With a file but no line it names just the file.
struct SourceLoc {
  std::shared_ptr<const SourceFile> file;
  int line = 0;
  int column = 0;
  int length = 1;

  bool valid() const { return file != nullptr && line > 0; }
};

// A place given 0-based, as YAML marks give it; a negative line names just the file.
SourceLoc loc_from_zero_based(const std::shared_ptr<const SourceFile>& file, int line, int column,
                              int length = 1);

} // namespace saguaro::support
