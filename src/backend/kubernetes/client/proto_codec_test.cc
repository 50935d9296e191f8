#include "backend/kubernetes/client/proto_codec.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "k8s_runtime.pb.h"

namespace lockstep::kube {
namespace {

using Json = nlohmann::json;

// A stand-in kind for the codec's tests: its message is a ListMeta whose selfLink is the
// object's name and resourceVersion its version. A thing named "refused" is refused, as a Pod
// decoder refuses a pod whose name is not UTF-8.
Result<Json> DecodeThing(std::string_view message) {
  pb::ListMeta m;
  if (!m.ParseFromArray(message.data(), static_cast<int>(message.size())))
    return InvalidArgument("not a thing");
  if (m.selflink() == "refused") return InvalidArgument("a refused thing");
  return Json{{"metadata", {{"name", m.selflink()}, {"resourceVersion", m.resourceversion()}}}};
}

std::string ThingMessage(const std::string& name, const std::string& rv) {
  pb::ListMeta m;
  m.set_selflink(name);
  m.set_resourceversion(rv);
  return m.SerializeAsString();
}

std::string Thing(const std::string& name, const std::string& rv) {
  return EncodeProtoEnvelope("v1", "Thing", ThingMessage(name, rv));
}

std::string StatusEnvelope(int code, const std::string& reason, const std::string& message) {
  pb::Status s;
  s.set_status("Failure");
  s.set_code(code);
  s.set_reason(reason);
  s.set_message(message);
  return EncodeProtoEnvelope("v1", "Status", s.SerializeAsString());
}

// Appends a length-delimited field (wire type 2) to `out`.
void AppendField(int field, const std::string& bytes, std::string* out) {
  out->push_back(static_cast<char>(field << 3 | 2));
  std::size_t n = bytes.size();
  while (n >= 0x80) {
    out->push_back(static_cast<char>(n | 0x80));
    n >>= 7;
  }
  out->push_back(static_cast<char>(n));
  *out += bytes;
}

std::string ThingListOf(const std::vector<std::string>& names) {
  pb::ListMeta meta;
  meta.set_resourceversion("42");
  meta.set_continue_("next-page");
  std::string body;
  AppendField(1, meta.SerializeAsString(), &body);
  for (std::size_t i = 0; i < names.size(); ++i)
    AppendField(2, ThingMessage(names[i], std::to_string(10 + i)), &body);
  return EncodeProtoEnvelope("v1", "ThingList", body);
}

// Things named t0, t1...
std::string ThingList(int items) {
  std::vector<std::string> names;
  for (int i = 0; i < items; ++i) names.push_back("t" + std::to_string(i));
  return ThingListOf(names);
}

TEST(ProtoCodecTest, DecodesAnObjectInItsEnvelope) {
  Result<Json> t = DecodeProtoObject(Thing("a", "7"), &DecodeThing);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ((*t)["kind"], "Thing");
  EXPECT_EQ((*t)["apiVersion"], "v1");
  EXPECT_EQ((*t)["metadata"]["name"], "a");
  EXPECT_EQ((*t)["metadata"]["resourceVersion"], "7");
}

TEST(ProtoCodecTest, DecodesAStatusWithoutADecoder) {
  Result<Json> st = DecodeProtoObject(StatusEnvelope(410, "Expired", "too old"), nullptr);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ((*st)["kind"], "Status");
  EXPECT_EQ((*st)["code"], 410);
  EXPECT_EQ((*st)["reason"], "Expired");
  EXPECT_EQ((*st)["message"], "too old");
}

TEST(ProtoCodecTest, RefusesWhatIsNotAnEnvelope) {
  EXPECT_FALSE(DecodeProtoObject(R"({"kind":"Pod"})", &DecodeThing).ok());
  EXPECT_FALSE(DecodeProtoObject(std::string("k8s\0\xff\xff", 6), &DecodeThing).ok());
  EXPECT_FALSE(DecodeProtoObject(Thing("a", "1"), nullptr).ok());  // no decoder for Thing
}

TEST(ProtoCodecTest, StreamsAListItemByItem) {
  std::istringstream in(ThingList(3));
  std::vector<std::string> names;
  Result<Json> list = ParseProtoListStream(
      in, &DecodeThing, [&](Json item) { names.push_back(item["metadata"]["name"]); });
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(names, (std::vector<std::string>{"t0", "t1", "t2"}));
  EXPECT_EQ((*list)["kind"], "ThingList");
  EXPECT_EQ((*list)["metadata"]["resourceVersion"], "42");
  EXPECT_EQ((*list)["metadata"]["continue"], "next-page");
  EXPECT_TRUE((*list)["items"].empty());
}

// An object the decoder refuses must not keep an informer from ever completing its list.
TEST(ProtoCodecTest, LeavesOutAListItemItsDecoderRefuses) {
  std::istringstream in(ThingListOf({"a", "refused", "c"}));
  std::vector<std::string> names;
  Result<Json> list = ParseProtoListStream(
      in, &DecodeThing, [&](Json item) { names.push_back(item["metadata"]["name"]); });
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(names, (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ((*list)["metadata"]["resourceVersion"], "42");
}

TEST(ProtoCodecTest, ATruncatedListIsAnError) {
  const std::string whole = ThingList(5);
  for (std::size_t cut : {std::size_t{2}, std::size_t{12}, whole.size() / 2, whole.size() - 1}) {
    std::istringstream in(whole.substr(0, cut));
    int items = 0;
    Result<Json> list = ParseProtoListStream(in, &DecodeThing, [&](Json) { ++items; });
    EXPECT_FALSE(list.ok()) << "cut at " << cut;
    EXPECT_LT(items, 5);
  }
}

TEST(ProtoCodecTest, ParsesWatchFramesFedInAnyPieces) {
  const std::string stream = EncodeProtoWatchFrameForTest("ADDED", Thing("a", "10")) +
                             EncodeProtoWatchFrameForTest("MODIFIED", Thing("a", "11")) +
                             EncodeProtoWatchFrameForTest("BOOKMARK", Thing("", "15")) +
                             EncodeProtoWatchFrameForTest("DELETED", Thing("a", "16")) +
                             EncodeProtoWatchFrameForTest("ERROR", StatusEnvelope(410, "Gone", ""));
  for (std::size_t piece : {std::size_t{1}, std::size_t{7}, stream.size()}) {
    ProtoWatchEventParser parser(&DecodeThing);
    std::vector<WatchEvent> events;
    for (std::size_t i = 0; i < stream.size(); i += piece) {
      Result<std::vector<WatchEvent>> got = parser.Feed(std::string_view(stream).substr(i, piece));
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      for (WatchEvent& e : *got) events.push_back(std::move(e));
    }
    EXPECT_TRUE(parser.Finish().ok());
    ASSERT_EQ(events.size(), 5u) << "pieces of " << piece;
    EXPECT_EQ(events[0].type, WatchEventType::kAdded);
    EXPECT_EQ(events[0].object["metadata"]["name"], "a");
    EXPECT_EQ(events[1].type, WatchEventType::kModified);
    EXPECT_EQ(events[1].ResourceVersion(), "11");
    EXPECT_EQ(events[2].type, WatchEventType::kBookmark);
    EXPECT_EQ(events[2].ResourceVersion(), "15");
    EXPECT_EQ(events[3].type, WatchEventType::kDeleted);
    EXPECT_EQ(events[4].type, WatchEventType::kError);
    EXPECT_EQ(events[4].object["code"], 410);
  }
}

TEST(ProtoCodecTest, SkipsAMalformedFrameAndGoesOn) {
  ProtoWatchEventParser parser(&DecodeThing);
  const std::string bad = EncodeProtoWatchFrameForTest("ADDED", "not an envelope");
  const std::string unknown_type = EncodeProtoWatchFrameForTest("RENAMED", Thing("a", "1"));
  Result<std::vector<WatchEvent>> got = parser.Feed(bad + unknown_type);
  EXPECT_FALSE(got.ok());
  got = parser.Feed(EncodeProtoWatchFrameForTest("ADDED", Thing("b", "2")));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].object["metadata"]["name"], "b");
}

// As an error, the event would end the watch, which would start again before it and meet it
// again, forever: the events after it would never come.
TEST(ProtoCodecTest, LeavesOutAWatchEventItsDecoderRefuses) {
  ProtoWatchEventParser parser(&DecodeThing);
  Result<std::vector<WatchEvent>> got =
      parser.Feed(EncodeProtoWatchFrameForTest("ADDED", Thing("a", "10")) +
                  EncodeProtoWatchFrameForTest("ADDED", Thing("refused", "11")) +
                  EncodeProtoWatchFrameForTest("MODIFIED", Thing("a", "12")));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].ResourceVersion(), "10");
  EXPECT_EQ((*got)[1].ResourceVersion(), "12");
}

// A Status carries the apiserver's text, which may quote what a client sent in protobuf.
TEST(ProtoCodecTest, AStatusMessageThatIsNotUtf8ComesWithReplacementCharacters) {
  Result<Json> st =
      DecodeProtoObject(StatusEnvelope(404, "NotFound", "pods \"caf\xe9\" not found"), nullptr);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ((*st)["message"], "pods \"caf\xef\xbf\xbd\" not found");
  EXPECT_NO_THROW((void)st->dump());
}

TEST(ProtoCodecTest, AStreamEndingInsideAFrameIsAnError) {
  ProtoWatchEventParser parser(&DecodeThing);
  const std::string frame = EncodeProtoWatchFrameForTest("ADDED", Thing("a", "10"));
  Result<std::vector<WatchEvent>> got = parser.Feed(frame.substr(0, frame.size() - 3));
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->empty());
  EXPECT_FALSE(parser.Finish().ok());
}

TEST(ProtoCodecTest, RefusesAnImpossibleFrameLength) {
  ProtoWatchEventParser parser(&DecodeThing);
  EXPECT_FALSE(parser.Feed(std::string("\x7f\xff\xff\xff", 4)).ok());
}

}  // namespace
}  // namespace lockstep::kube
