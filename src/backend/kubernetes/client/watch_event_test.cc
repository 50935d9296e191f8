#include "backend/kubernetes/client/watch_event.h"

#include <gtest/gtest.h>

namespace lockstep::kube {
namespace {

const std::string kStream =
    R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"10"}}})"
    "\n"
    R"({"type":"MODIFIED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"11"},"x":"é"}})"
    "\n"
    R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"15"}}})"
    "\n"
    R"({"type":"DELETED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"16"}}})"
    "\n"
    R"j({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired","message":"too old resource version: 1 (5)"}})j"
    "\n";

std::vector<WatchEvent> FeedInPieces(const std::string& stream, size_t piece) {
  WatchEventParser p;
  std::vector<WatchEvent> all;
  for (size_t i = 0; i < stream.size(); i += piece) {
    Result<std::vector<WatchEvent>> got = p.Feed(std::string_view(stream).substr(i, piece));
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    if (got.ok()) all.insert(all.end(), got->begin(), got->end());
  }
  EXPECT_TRUE(p.Finish().ok());
  return all;
}

TEST(WatchEventParser, AnySplitGivesTheSameEvents) {
  for (size_t piece : {size_t{1}, size_t{2}, size_t{7}, size_t{64}, size_t{100000}}) {
    std::vector<WatchEvent> ev = FeedInPieces(kStream, piece);
    ASSERT_EQ(ev.size(), 5u) << "piece " << piece;
    EXPECT_EQ(ev[0].type, WatchEventType::kAdded);
    EXPECT_EQ(ev[0].ResourceVersion(), "10");
    EXPECT_EQ(ev[1].type, WatchEventType::kModified);
    EXPECT_EQ(ev[1].object["x"], "é");
    EXPECT_EQ(ev[2].type, WatchEventType::kBookmark);
    EXPECT_EQ(ev[2].ResourceVersion(), "15");
    EXPECT_EQ(ev[3].type, WatchEventType::kDeleted);
    EXPECT_EQ(ev[4].type, WatchEventType::kError);
    EXPECT_EQ(ev[4].object["code"], 410);
  }
}

TEST(WatchEventParser, PartialEventStaysBuffered) {
  WatchEventParser p;
  Result<std::vector<WatchEvent>> got = p.Feed(R"({"type":"ADDED","obj)");
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->empty());
  EXPECT_GT(p.buffered(), 0u);
  EXPECT_FALSE(p.Finish().ok());
  got = p.Feed("ect\":{}}\n\n");
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ(p.buffered(), 0u);
  EXPECT_TRUE(p.Finish().ok());
}

TEST(WatchEventParser, MalformedLinesAreErrors) {
  WatchEventParser p;
  EXPECT_FALSE(p.Feed("not json\n").ok());
  EXPECT_FALSE(p.Feed(R"({"type":"SOMETHING","object":{}})"
                      "\n")
                   .ok());
  EXPECT_FALSE(p.Feed(R"({"object":{}})"
                      "\n")
                   .ok());
  // The parser continues after a bad line.
  Result<std::vector<WatchEvent>> got = p.Feed(R"({"type":"ADDED","object":{}})"
                                               "\n");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->size(), 1u);
}

TEST(WatchEventParser, FinalEventWithoutNewline) {
  WatchEventParser p;
  ASSERT_TRUE(p.Feed(R"({"type":"ADDED","object":{}})").ok());
  EXPECT_TRUE(p.Finish().ok());
}

}  // namespace
}  // namespace lockstep::kube
