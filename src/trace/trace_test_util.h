// Helpers for the trace reader tests: where the shared real traces are, and scratch files.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace lockstep::trace::testing {

// The shared data folder: $LOCKSTEP_SHARED_DIR/data (set by ctest), else the checkout's
// neighbour /work/main/../shared/data.
inline std::filesystem::path SharedDataDir() {
  const char* env = std::getenv("LOCKSTEP_SHARED_DIR");
  std::filesystem::path base = env != nullptr && *env != '\0' ? env : "/work/main/../shared";
  return base / "data";
}

// The path of a shared trace, or "" when it is absent (the caller then skips).
inline std::string SharedTrace(std::string_view relative) {
  std::filesystem::path p = SharedDataDir() / relative;
  return std::filesystem::exists(p) ? p.string() : std::string();
}

#define LOCKSTEP_SKIP_IF_ABSENT(path, name)                                        \
  if ((path).empty()) {                                                            \
    GTEST_SKIP() << "the shared data is absent: " << (name) << " not found under " \
                 << ::lockstep::trace::testing::SharedDataDir()                     \
                 << " (set LOCKSTEP_SHARED_DIR to the folder holding data/)";      \
  }

// A fresh directory under the system temp dir, removed with the object.
class ScratchDir {
 public:
  ScratchDir() {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            (std::string("lockstep_") + info->test_suite_name() + "_" + info->name() + "_" +
             std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  std::string File(std::string_view name) const { return (path_ / name).string(); }

  // Writes `content` to `name`, gzip-compressed with zlib; returns the path.
  std::string WriteGzip(std::string_view name, std::string_view content) const {
    std::string path = File(name);
    gzFile gz = gzopen(path.c_str(), "wb");
    EXPECT_NE(gz, nullptr) << path;
    if (gz == nullptr) return path;
    EXPECT_EQ(gzwrite(gz, content.data(), static_cast<unsigned>(content.size())),
              static_cast<int>(content.size()));
    EXPECT_EQ(gzclose(gz), Z_OK);
    return path;
  }

  std::string WritePlain(std::string_view name, std::string_view content) const {
    std::string path = File(name);
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace lockstep::trace::testing
