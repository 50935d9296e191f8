// Test helpers for the sbatch parser: a fixture with a fake file system, a submit directory and
// a fixed "now".
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "jobspec/sbatch.h"

namespace lockstep::jobspec::testing {

inline constexpr Time kNow = 1'700'000'000;  // 2023-11-14 22:13:20 UTC

class SbatchFixture : public ::testing::Test {
 protected:
  SbatchFixture() {
    in.cwd = "/home/alice/run";
    in.now = kNow;
    in.read_file = [this](const std::string& path) -> Result<std::string> {
      read_paths.push_back(path);
      auto it = files.find(path);
      if (it == files.end()) return NotFound(path + ": No such file or directory");
      return it->second;
    };
  }

  // A script in the submit directory, and the argument that names it.
  std::string Script(const std::string& body, const std::string& name = "train.sbatch") {
    files[in.cwd + "/" + name] = body;
    return name;
  }

  Result<JobSpec> Parse(std::vector<std::string> args) {
    in.args = std::move(args);
    return ParseSbatch(in);
  }

  // Parses args and expects success.
  JobSpec Ok(std::vector<std::string> args) {
    Result<JobSpec> r = Parse(std::move(args));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : JobSpec{};
  }

  // Parses args and expects an InvalidArgument; returns its message.
  std::string Error(std::vector<std::string> args) {
    Result<JobSpec> r = Parse(std::move(args));
    EXPECT_FALSE(r.ok());
    if (r.ok()) return "";
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
    return r.status().message();
  }

  SbatchInput in;
  std::map<std::string, std::string> files;
  std::vector<std::string> read_paths;
};

}  // namespace lockstep::jobspec::testing
