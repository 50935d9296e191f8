#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "trace/trace.h"
#include "trace/trace_test_util.h"

namespace lockstep::trace {
namespace {

using testing::ScratchDir;

TEST(ReadFileMaybeGzipTest, PlainFile) {
  ScratchDir dir;
  const std::string content = "line one\nline two\n";
  Result<std::string> r = ReadFileMaybeGzip(dir.WritePlain("a.txt", content));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, content);
}

TEST(ReadFileMaybeGzipTest, GzipFileIsDecompressed) {
  ScratchDir dir;
  std::string content;
  for (int i = 0; i < 200000; ++i) content += std::to_string(i) + "\n";  // several chunks
  Result<std::string> r = ReadFileMaybeGzip(dir.WriteGzip("a.txt.gz", content));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, content);
}

TEST(ReadFileMaybeGzipTest, EmptyFiles) {
  ScratchDir dir;
  EXPECT_EQ(*ReadFileMaybeGzip(dir.WritePlain("e.txt", "")), "");
  EXPECT_EQ(*ReadFileMaybeGzip(dir.WriteGzip("e.gz", "")), "");
}

TEST(ReadFileMaybeGzipTest, MissingFileNamesPathAndReason) {
  ScratchDir dir;
  for (const char* name : {"missing.swf", "missing.swf.gz"}) {
    const std::string path = dir.File(name);
    Result<std::string> r = ReadFileMaybeGzip(path);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
    EXPECT_NE(r.status().message().find(path), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("No such file"), std::string::npos) << r.status().message();
  }
}

TEST(ReadFileMaybeGzipTest, DirectoryIsAnError) {
  ScratchDir dir;
  std::filesystem::create_directories(dir.File("d.gz"));
  std::filesystem::create_directories(dir.File("d"));
  for (const char* name : {"d", "d.gz"}) {
    Result<std::string> r = ReadFileMaybeGzip(dir.File(name));
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.status().code(), StatusCode::kIoError);
    EXPECT_NE(r.status().message().find(dir.File(name)), std::string::npos);
  }
}

TEST(ReadFileMaybeGzipTest, TruncatedGzipIsAnError) {
  ScratchDir dir;
  std::string content(100000, 'x');
  for (std::size_t i = 0; i < content.size(); i += 7) content[i] = static_cast<char>('a' + i % 26);
  const std::string gz_path = dir.WriteGzip("full.gz", content);
  ASSERT_EQ(*ReadFileMaybeGzip(gz_path), content);
  // Cut the compressed file in half.
  const auto size = std::filesystem::file_size(gz_path);
  std::filesystem::resize_file(gz_path, size / 2);
  Result<std::string> r = ReadFileMaybeGzip(gz_path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(gz_path), std::string::npos);
  EXPECT_NE(r.status().message().find("cannot decompress"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace lockstep::trace
