#include "support/source.hpp"

#include "support/diagnostics.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace saguaro::support {

SourceFile::SourceFile(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {
  line_starts_.push_back(0);
  for (std::size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n' && i + 1 < text_.size()) line_starts_.push_back(i + 1);
}

std::shared_ptr<const SourceFile> SourceFile::load(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw InputError({}, "cannot read '" + path + "': not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError({}, "cannot open '" + path + "'");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return std::make_shared<const SourceFile>(path, buffer.str());
}

std::string_view SourceFile::line(int line_number) const {
  if (line_number < 1 || line_number > line_count()) return {};
  std::size_t begin = line_starts_[line_number - 1];
  std::size_t end = text_.find('\n', begin);
  if (end == std::string::npos) end = text_.size();
  if (end > begin && text_[end - 1] == '\r') --end;
  return std::string_view(text_).substr(begin, end - begin);
}

SourceLoc loc_from_zero_based(const std::shared_ptr<const SourceFile>& file, int line, int column,
                              int length) {
  if (line < 0) return SourceLoc{file, 0, 0, length};
  return SourceLoc{file, line + 1, column + 1, length};
}

} // namespace saguaro::support
