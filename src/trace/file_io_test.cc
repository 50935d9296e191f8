#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "trace/chunk_reader.h"
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

TEST(ChunkReaderTest, SizeHintIsTheTextSizeWhereTheFileTellsIt) {
  ScratchDir dir;
  const std::string content(300000, 'x');  // compresses far more than text does
  Result<internal::ChunkReader> plain =
      internal::ChunkReader::Open(dir.WritePlain("a.txt", content));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->size_hint(), content.size());

  std::string text;
  for (int i = 0; i < 20000; ++i) text += std::to_string(i * 7919 % 100003) + " 552.21\n";
  Result<internal::ChunkReader> gz = internal::ChunkReader::Open(dir.WriteGzip("t.gz", text));
  ASSERT_TRUE(gz.ok());
  EXPECT_EQ(gz->size_hint(), text.size());

  // A trailer claiming more than text could ever compress to is not believed.
  Result<internal::ChunkReader> runs = internal::ChunkReader::Open(dir.WriteGzip("x.gz", content));
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(runs->size_hint(), 0u);
  std::string whole;
  while (true) {
    Result<std::string_view> chunk = runs->Next();
    ASSERT_TRUE(chunk.ok());
    if (chunk->empty()) break;
    whole.append(*chunk);
  }
  EXPECT_EQ(whole, content) << "the hint only sizes; the text is read whole all the same";
}

TEST(ChunkReaderTest, GzipPiecesComeInOrderAndAReaderMayStopEarly) {
  ScratchDir dir;
  std::string text;
  for (int i = 0; i < 400000; ++i) text += std::to_string(i) + "\n";  // about 20 pieces
  const std::string path = dir.WriteGzip("n.gz", text);
  {
    Result<internal::ChunkReader> reader = internal::ChunkReader::Open(path);
    ASSERT_TRUE(reader.ok());
    std::string whole;
    std::size_t pieces = 0;
    while (true) {
      Result<std::string_view> chunk = reader->Next();
      ASSERT_TRUE(chunk.ok()) << chunk.status().ToString();
      if (chunk->empty()) break;
      whole.append(*chunk);
      ++pieces;
    }
    EXPECT_EQ(whole, text);
    EXPECT_GT(pieces, 4u) << "more pieces than the inflating thread has buffers";
    EXPECT_TRUE(reader->Next()->empty()) << "the end stays the end";
  }
  // A parser that fails on its first piece drops the reader while the thread is still inflating.
  for (int i = 0; i < 20; ++i) {
    Result<internal::ChunkReader> reader = internal::ChunkReader::Open(path);
    ASSERT_TRUE(reader.ok());
    Result<std::string_view> first = reader->Next();
    ASSERT_TRUE(first.ok());
    EXPECT_EQ(*first, std::string_view(text).substr(0, first->size()));
  }
}

}  // namespace
}  // namespace lockstep::trace
