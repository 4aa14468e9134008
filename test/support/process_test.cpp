// Running programs without a shell: both streams together, or kept apart.
#include "support/process.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace saguaro::support {
namespace {

TEST(Process, RunCommandMergesStreams) {
  CommandResult r = run_command({"sh", "-c", "echo out; echo err >&2; exit 7"});
  EXPECT_EQ(r.status, 7);
  EXPECT_NE(r.output.find("out"), std::string::npos);
  EXPECT_NE(r.output.find("err"), std::string::npos);
}

TEST(Process, SeparateStreams) {
  SeparateResult r = run_command_separately({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
}

TEST(Process, SeparateStreamsLargeOutputOnBoth) {
  // More than a pipe's buffer on both streams: neither may block the other.
  SeparateResult r = run_command_separately(
      {"sh", "-c",
       "i=0; while [ $i -lt 20000 ]; do echo xxxxxxxxxx; echo yyyyyyyyyy >&2; "
       "i=$((i+1)); done"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.size(), 20000u * 11);
  EXPECT_EQ(r.err.size(), 20000u * 11);
}

TEST(Process, ArgumentsAreNotParsedByAShell) {
  SeparateResult r = run_command_separately({"printf", "%s|", "a b", "$HOME", "'q'"});
  EXPECT_EQ(r.out, "a b|$HOME|'q'|");
}

TEST(Process, MissingProgram) {
  EXPECT_THROW(run_command_separately({"saguaro-no-such-program"}), std::runtime_error);
  EXPECT_FALSE(program_exists("saguaro-no-such-program"));
  EXPECT_TRUE(program_exists("sh"));
  EXPECT_TRUE(program_exists("/bin/sh"));
  EXPECT_FALSE(program_exists("/no/such/dir/sh"));
  EXPECT_FALSE(program_exists(""));
}

} // namespace
} // namespace saguaro::support
