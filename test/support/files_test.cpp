// write_atomically: the file appears whole or not at all, and no temporary is left behind.
#include "support/files.hpp"
#include "support/hash.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

namespace saguaro::support {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("saguaro-support-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  return out;
}

TEST(WriteAtomically, ReplacesTheFileAndLeavesNoTemporary) {
  const fs::path dir = fresh_dir("replace");
  write_atomically(dir / "a.txt", "one", "test");
  write_atomically(dir / "a.txt", std::string("two\0three", 9), "test");
  EXPECT_EQ(read_file_bytes(dir / "a.txt"), std::string("two\0three", 9));
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"a.txt"});
  fs::remove_all(dir);
}

TEST(WriteAtomically, AFailedWriterKeepsTheOldFileAndRemovesItsTemporary) {
  const fs::path dir = fresh_dir("fail");
  write_atomically(dir / "a.txt", "good", "test");
  fs::path seen;
  EXPECT_THROW(write_atomically(
                   dir / "a.txt",
                   [&](const fs::path& tmp) {
                     seen = tmp;
                     write_atomically(tmp, "partial", "test");
                     throw std::runtime_error("the writer failed");
                   },
                   AtomicWrite{"test"}),
               std::runtime_error);
  EXPECT_EQ(seen.parent_path(), dir);
  EXPECT_NE(seen.filename().string().find("a.txt.tmp."), std::string::npos);
  EXPECT_EQ(read_file_bytes(dir / "a.txt"), "good");
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"a.txt"});
  fs::remove_all(dir);
}

TEST(WriteAtomically, AFixedDurableTemporary) {
  const fs::path dir = fresh_dir("fixed");
  fs::path seen;
  write_atomically(
      dir / "c.h5",
      [&](const fs::path& tmp) {
        seen = tmp;
        write_atomically(tmp, "data", "test");
      },
      AtomicWrite{"test", dir / "c.h5.tmp", true});
  EXPECT_EQ(seen, dir / "c.h5.tmp");
  EXPECT_EQ(read_file_bytes(dir / "c.h5"), "data");
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"c.h5"});
  fs::remove_all(dir);
}

// The version a write replaces stays as `previous`; the file never disappears.
TEST(WriteAtomically, KeepsTheReplacedVersion) {
  const fs::path dir = fresh_dir("previous");
  auto write = [&](const std::string& bytes) {
    write_atomically(
        dir / "f.h5",
        [&](const fs::path& tmp) {
          EXPECT_EQ(tmp, dir / "f.h5.tmp");
          write_atomically(tmp, bytes, "test");
        },
        AtomicWrite{"test", dir / "f.h5.tmp", true, dir / "f.h5.prev"});
  };
  write("one"); // nothing to keep yet
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"f.h5"});
  write("two");
  EXPECT_EQ(read_file_bytes(dir / "f.h5"), "two");
  EXPECT_EQ(read_file_bytes(dir / "f.h5.prev"), "one");
  write("three");
  EXPECT_EQ(read_file_bytes(dir / "f.h5"), "three");
  EXPECT_EQ(read_file_bytes(dir / "f.h5.prev"), "two");
  std::vector<std::string> names = names_in(dir);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"f.h5", "f.h5.prev"}));

  // A failed write changes neither.
  EXPECT_THROW(write_atomically(
                   dir / "f.h5", [](const fs::path&) { throw std::runtime_error("no"); },
                   AtomicWrite{"test", dir / "f.h5.tmp", false, dir / "f.h5.prev"}),
               std::runtime_error);
  EXPECT_EQ(read_file_bytes(dir / "f.h5"), "three");
  EXPECT_EQ(read_file_bytes(dir / "f.h5.prev"), "two");
  fs::remove_all(dir);
}

TEST(WriteAtomically, AnUnwritableDirectoryIsAnError) {
  try {
    write_atomically("/no/such/dir/x", "bytes", "the test");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("the test: cannot write /no/such/dir/x.tmp.", 0), 0u)
        << e.what();
  }
  EXPECT_THROW(read_file_bytes("/no/such/dir/x"), std::runtime_error);
}

TEST(UniqueTemporary, NamesDiffer) {
  EXPECT_NE(unique_temporary("/a/b"), unique_temporary("/a/b"));
  EXPECT_EQ(unique_temporary("/a/b").rfind("/a/b.tmp.", 0), 0u);
}

TEST(Hash, Fnv1a64) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ull);
  EXPECT_EQ(fnv1a64("bar", fnv1a64("foo")), fnv1a64("foobar"));
  EXPECT_EQ(hex_key(0xabcull), "0000000000000abc");
}

} // namespace
} // namespace saguaro::support
