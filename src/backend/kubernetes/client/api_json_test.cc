#include "backend/kubernetes/client/api_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <sstream>
#include <vector>

namespace lockstep::kube {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

// A body that arrives in chunks, counting how many were read.
class ChunkedBody : public ResponseStream {
 public:
  ChunkedBody(const std::string& body, std::size_t chunk) {
    for (std::size_t i = 0; i < body.size(); i += chunk) chunks_.push_back(body.substr(i, chunk));
  }
  int status() const override { return 200; }
  Result<std::string> ReadSome(std::chrono::milliseconds) override {
    if (fail_after_ >= 0 && read_ >= fail_after_)
      return Status(StatusCode::kUnavailable, "connection reset");
    if (chunks_.empty()) return std::string();
    ++read_;
    std::string c = std::move(chunks_.front());
    chunks_.pop_front();
    return c;
  }
  void Cancel() override {}
  int read() const { return read_; }
  void FailAfter(int chunks) { fail_after_ = chunks; }

 private:
  std::deque<std::string> chunks_;
  int read_ = 0;
  int fail_after_ = -1;
};

const char* kPodList = R"({"kind":"PodList","apiVersion":"v1",
  "metadata":{"resourceVersion":"4711"},
  "items":[
    {"metadata":{"name":"a","labels":{"x":"1"}},"spec":{"containers":[{"name":"c","args":["1",2,3.5,true,null]}]}},
    {"metadata":{"name":"b"},"spec":{"items":[{"nested":"not a list item"}]}},
    {"metadata":{"name":"c"}}
  ]})";

TEST(ParseListStream, HandsOverEachItemInOrderAndReturnsTheListWithoutThem) {
  std::istringstream in(kPodList);
  std::vector<Json> items;
  Result<Json> list = ParseListStream(in, [&](Json item) { items.push_back(std::move(item)); });
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ((*list)["kind"], "PodList");
  EXPECT_EQ((*list)["metadata"]["resourceVersion"], "4711");
  EXPECT_EQ((*list)["items"], Json::array());
  ASSERT_EQ(items.size(), 3u);
  // Each item is exactly what nlohmann's own parser makes of it.
  const Json whole = Json::parse(kPodList);
  for (std::size_t i = 0; i < items.size(); ++i) EXPECT_EQ(items[i], whole["items"][i]) << i;
  EXPECT_EQ(items[1]["spec"]["items"][0]["nested"], "not a list item");
}

TEST(ParseListStream, EmptyAndMissingItems) {
  int calls = 0;
  std::istringstream empty(R"({"kind":"NodeList","items":[]})");
  Result<Json> a = ParseListStream(empty, [&](Json) { ++calls; });
  ASSERT_TRUE(a.ok());
  std::istringstream none(R"({"kind":"NodeList","items":null,"metadata":{}})");
  Result<Json> b = ParseListStream(none, [&](Json) { ++calls; });
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(calls, 0);
  EXPECT_EQ((*a)["items"], Json::array());
}

TEST(ParseListStream, MalformedInputNamesTheByte) {
  std::vector<std::string> names;
  std::istringstream in(R"({"items":[{"metadata":{"name":"a"}},{"metadata":{"name":)");
  Result<Json> list =
      ParseListStream(in, [&](Json item) { names.push_back(item["metadata"]["name"]); });
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(list.status().message(), HasSubstr("malformed JSON list at byte"));
  EXPECT_EQ(names, std::vector<std::string>{"a"});  // what was whole came through
  std::istringstream array("[1,2]");
  EXPECT_THAT(ParseListStream(array, [](Json) {}).status().message(),
              HasSubstr("must be an object"));
}

const char* kWithManagedFields = R"({"items":[
  {"metadata":{"name":"a","managedFields":[{"manager":"kubectl","fieldsV1":{"f:spec":{"f:x":{}}}}],
   "labels":{"managedFields":"a label, kept"}},
   "spec":{"managedFields":"not metadata, kept"}},
  {"metadata":{"managedFields":null,"name":"b"}}]})";

TEST(ParseListStream, DropsOnlyTheItemsMetadataManagedFields) {
  std::vector<Json> items;
  std::istringstream in(kWithManagedFields);
  ListStreamOptions o;
  o.drop_managed_fields = true;
  ASSERT_TRUE(ParseListStream(in, [&](Json item) { items.push_back(std::move(item)); }, o).ok());
  ASSERT_EQ(items.size(), 2u);
  Json a = Json::parse(kWithManagedFields)["items"][0];
  a["metadata"].erase("managedFields");
  EXPECT_EQ(items[0], a);
  EXPECT_EQ(items[1], Json::parse(R"({"metadata":{"name":"b"}})"));
  // Kept when not asked.
  items.clear();
  std::istringstream again(kWithManagedFields);
  ASSERT_TRUE(ParseListStream(again, [&](Json item) { items.push_back(std::move(item)); }).ok());
  EXPECT_EQ(items[0], Json::parse(kWithManagedFields)["items"][0]);
}

TEST(ParseApiJson, AWatchEventsObjectWithoutManagedFields) {
  const std::string event =
      R"({"type":"MODIFIED","object":{"kind":"Pod","metadata":{"name":"p","managedFields":[{}],)"
      R"("uid":"u"},"status":{"phase":"Running"}}})";
  Result<Json> j = ParseApiJson(event, 2, true);
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  Json expected = Json::parse(event);
  expected["object"]["metadata"].erase("managedFields");
  EXPECT_EQ(*j, expected);
  EXPECT_EQ(*ParseApiJson(event, 2, false), Json::parse(event));
  EXPECT_THAT(ParseApiJson(R"({"type":)", 2, true).status().message(),
              HasSubstr("malformed JSON at byte"));
}

TEST(ResponseStreamBuf, ItemsArriveBeforeTheBodyEnds) {
  ChunkedBody body(kPodList, 16);
  ResponseStreamBuf buf(&body, std::chrono::milliseconds(1000));
  std::istream in(&buf);
  std::vector<int> chunks_read_at_item;
  Result<Json> list =
      ParseListStream(in, [&](Json) { chunks_read_at_item.push_back(body.read()); });
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_TRUE(buf.error().ok());
  ASSERT_EQ(chunks_read_at_item.size(), 3u);
  const int total = static_cast<int>((std::string(kPodList).size() + 15) / 16);
  // Each pod is handed over once its own bytes are in, long before the body ends.
  const std::string text = kPodList;
  // Chunks holding everything before pod b: pod a is whole by then.
  const int chunks_before_b = static_cast<int>((text.find(R"({"metadata":{"name":"b")") + 15) / 16);
  EXPECT_LE(chunks_read_at_item[0], chunks_before_b);
  EXPECT_LT(chunks_read_at_item[0], chunks_read_at_item[2]);
  EXPECT_LT(chunks_read_at_item[0], total - 5);
  EXPECT_EQ(body.read(), total);
}

TEST(ResponseStreamBuf, AReadErrorEndsTheStreamAndIsKept) {
  ChunkedBody body(kPodList, 16);
  body.FailAfter(5);
  ResponseStreamBuf buf(&body, std::chrono::milliseconds(1000));
  std::istream in(&buf);
  Result<Json> list = ParseListStream(in, [](Json) {});
  EXPECT_FALSE(list.ok());
  EXPECT_EQ(buf.error().code(), StatusCode::kUnavailable);
  EXPECT_THAT(buf.error().message(), HasSubstr("connection reset"));
}

}  // namespace
}  // namespace lockstep::kube
