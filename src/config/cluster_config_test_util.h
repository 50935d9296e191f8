// Helpers shared by the cluster config tests: parse YAML text as "cluster.yaml" and check errors.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "config/cluster_config.h"

namespace lockstep::config::test {

// The repository's root: LOCKSTEP_SOURCE_DIR (set by ctest), else found from this file's path.
inline std::string SourceDir() {
  if (const char* dir = std::getenv("LOCKSTEP_SOURCE_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path().string();
}

// Raw strings in the tests start with a newline for readability; line 1 is the line after it.
inline Result<ClusterConfig> Parse(std::string_view text) {
  if (!text.empty() && text.front() == '\n') text.remove_prefix(1);
  return ParseClusterConfig(text, "cluster.yaml");
}

// The error of parsing `text`; fails the test when it parses.
inline std::string ErrorOf(std::string_view text) {
  Result<ClusterConfig> r = Parse(text);
  EXPECT_FALSE(r.ok()) << "parsed, but should not have:\n" << text;
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  return r.status().message();
}

// Four nodes n1..n4, on lines 1-4; what follows starts on line 5.
inline constexpr std::string_view kFourNodes = R"(
nodes:
  - names: n[1-4]
    cpus: 8
    memory: 64G
)";

inline std::string WithNodes(std::string_view rest) {
  std::string s(kFourNodes);
  if (!rest.empty() && rest.front() == '\n') rest.remove_prefix(1);
  return s + std::string(rest);
}

}  // namespace lockstep::config::test
