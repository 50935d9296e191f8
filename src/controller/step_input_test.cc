// StepInputs on its own: what srun writes reaches every reading node in order, bounded, with
// resends skipped, the terminal's size versioned, and waiters answered by writes, reads, the
// step's end and their deadlines.
#include "controller/step_input.h"

#include <gtest/gtest.h>

#include <future>

#include "common/base64.h"

namespace lockstep::controller {
namespace {

using namespace std::chrono_literals;
using Key = StepInputs::Key;

// A call's answer, waiting for it (from the timer thread when it was kept as a waiter).
template <typename Call>
Result<nlohmann::json> Answer(Call call) {
  std::promise<Result<nlohmann::json>> p;
  call([&p](Result<nlohmann::json> r) { p.set_value(std::move(r)); });
  return p.get_future().get();
}

StepInputWrite Bytes(std::uint64_t offset, std::string data, bool eof = false) {
  StepInputWrite w;
  w.offset = offset, w.data = std::move(data), w.eof = eof;
  return w;
}

std::string Data(const Result<nlohmann::json>& r) {
  return *Base64Decode(r->value("data", ""));
}

TEST(StepInputs, BytesReachEveryReaderInOrderAndResendsAreSkipped) {
  StepInputs in;
  const Key k{7, 0};
  in.Open(k, {"n1", "n2"}, 0, 0);
  auto w = Answer([&](auto d) { in.Write(k, Bytes(0, "hello "), 0ms, d); });
  ASSERT_TRUE(w.ok());
  EXPECT_EQ((*w)["offset"], 6);
  // A resend of what was taken plus more: only the new bytes are added.
  w = Answer([&](auto d) { in.Write(k, Bytes(0, "hello world", true), 0ms, d); });
  EXPECT_EQ((*w)["offset"], 11);
  auto r1 = Answer([&](auto d) { in.Read(k, "n1", 0, 0, 0ms, d); });
  EXPECT_EQ(Data(r1), "hello world");
  EXPECT_TRUE((*r1)["eof"].get<bool>());
  auto r2 = Answer([&](auto d) { in.Read(k, "n2", 6, 0, 0ms, d); });
  EXPECT_EQ(Data(r2), "world");
  // A write past the end is refused, as are bytes after the end of file.
  EXPECT_FALSE(Answer([&](auto d) { in.Write(k, Bytes(50, "x"), 0ms, d); }).ok());
  EXPECT_FALSE(Answer([&](auto d) { in.Write(k, Bytes(11, "x"), 0ms, d); }).ok());
  // A node that runs no reading task gets nothing.
  auto other = Answer([&](auto d) { in.Read(k, "n3", 0, 0, 0ms, d); });
  EXPECT_EQ(other.status().code(), StatusCode::kPermissionDenied);
}

TEST(StepInputs, AFullBufferMakesTheWriterWaitUntilEveryReaderTookBytes) {
  StepInputs in;
  const Key k{7, 1};
  in.Open(k, {"n1", "n2"}, 0, 0);
  const std::string big(StepInputs::kCapacity + 10, 'x');
  auto w = Answer([&](auto d) { in.Write(k, Bytes(0, big), 0ms, d); });
  EXPECT_EQ((*w)["offset"], StepInputs::kCapacity);  // took what fits
  std::promise<Result<nlohmann::json>> waiting;
  in.Write(k, Bytes(StepInputs::kCapacity, "yyyyyyyyyy"), 10s,
           [&](Result<nlohmann::json> r) { waiting.set_value(std::move(r)); });
  auto fut = waiting.get_future();
  // One reader taking bytes is not enough: the other still needs them.
  (void)Answer([&](auto d) { in.Read(k, "n1", StepInputs::kCapacity, 0, 0ms, d); });
  EXPECT_EQ(fut.wait_for(100ms), std::future_status::timeout);
  (void)Answer([&](auto d) { in.Read(k, "n2", 1000, 0, 0ms, d); });
  ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(fut.get()->value("offset", 0ULL), StepInputs::kCapacity);  // room now: srun resends
}

TEST(StepInputs, ReadersWaitForBytesTheSizeOrTheEndOfTheStep) {
  StepInputs in;
  const Key k{8, 0};
  in.Open(k, {"n1"}, 24, 80);
  auto first = Answer([&](auto d) { in.Read(k, "n1", 0, 0, 10s, d); });
  EXPECT_EQ((*first)["rows"], 24);  // a size it has not seen: answered at once
  const std::uint64_t seen = (*first)["winsize"];
  std::promise<Result<nlohmann::json>> p;
  in.Read(k, "n1", 0, seen, 10s, [&](Result<nlohmann::json> r) { p.set_value(std::move(r)); });
  auto fut = p.get_future();
  EXPECT_EQ(fut.wait_for(50ms), std::future_status::timeout);
  StepInputWrite resize;
  resize.winsize = std::make_pair(40, 120);
  (void)Answer([&](auto d) { in.Write(k, resize, 0ms, d); });
  ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
  auto r = fut.get();
  EXPECT_EQ((*r)["cols"], 120);
  EXPECT_GT((*r)["winsize"].get<std::uint64_t>(), seen);
  // The step ends: a waiting reader is answered closed, and so is every later call.
  std::promise<Result<nlohmann::json>> q;
  in.Read(k, "n1", 0, (*r)["winsize"], 10s,
          [&](Result<nlohmann::json> a) { q.set_value(std::move(a)); });
  in.Close(k);
  auto closed = q.get_future().get();
  EXPECT_TRUE((*closed)["closed"].get<bool>());
  EXPECT_FALSE(in.IsOpen(k));
  // A wait that ends with nothing new answers with no bytes.
  const Key k2{8, 1};
  in.Open(k2, {"n1"}, 0, 0);
  auto empty = Answer([&](auto d) { in.Read(k2, "n1", 0, 0, 20ms, d); });
  EXPECT_EQ(Data(empty), "");
  EXPECT_FALSE((*empty)["eof"].get<bool>());
}

TEST(StepInputs, BadWritesAreRefusedNamingTheField) {
  EXPECT_FALSE(DecodeStepInputWrite({{"offset", -1}}).ok());
  EXPECT_FALSE(DecodeStepInputWrite({{"data", "!!"}}).ok());
  EXPECT_FALSE(DecodeStepInputWrite({{"rows", 5}}).ok());
  Result<StepInputWrite> bad = DecodeStepInputWrite({{"bogus", 1}});
  EXPECT_NE(bad.status().message().find("'bogus'"), std::string::npos);
  EXPECT_FALSE(DecodeStepInputRequest({{"input", "x1"}}).ok());
  EXPECT_FALSE(DecodeStepInputRequest({{"pty", true}, {"stream", true}}).ok());
  Result<StepInputRequest> ok = DecodeStepInputRequest({{"input", "3"}, {"stream", true}});
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(ok->Forwards(3));
  EXPECT_FALSE(ok->Forwards(0));
}

}  // namespace
}  // namespace lockstep::controller

namespace lockstep::controller {
namespace {

StepInputWrite Appended(std::string data, bool eof = false) {
  StepInputWrite w;
  w.append = true, w.data = std::move(data), w.eof = eof;
  return w;
}

// sattach's bytes go after what the input holds, and srun's offsets stay srun's own: srun's
// resend is still skipped, its new bytes still added.
TEST(StepInputs, SattachAppendsWithoutMovingSrunsOffsets) {
  StepInputs in;
  const Key k{9, 0};
  in.Open(k, {"n1"}, 0, 0);
  auto w = Answer([&](auto d) { in.Write(k, Bytes(0, "srun1 "), 0ms, d); });
  EXPECT_EQ((*w)["offset"], 6);
  w = Answer([&](auto d) { in.Write(k, Appended("typed "), 0ms, d); });
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ((*w)["taken"], 6);
  w = Answer([&](auto d) { in.Write(k, Bytes(0, "srun1 srun2 "), 0ms, d); });
  EXPECT_EQ((*w)["offset"], 12);  // "srun1 " skipped as a resend, "srun2 " added
  auto r = Answer([&](auto d) { in.Read(k, "n1", 0, 0, 0ms, d); });
  EXPECT_EQ(Data(r), "srun1 typed srun2 ");
  // sattach's end of input ends it for the tasks; no bytes may follow.
  w = Answer([&](auto d) { in.Write(k, Appended("", true), 0ms, d); });
  EXPECT_TRUE((*w)["eof"].get<bool>());
  EXPECT_FALSE(Answer([&](auto d) { in.Write(k, Appended("late"), 0ms, d); }).ok());
  r = Answer([&](auto d) { in.Read(k, "n1", 18, 0, 0ms, d); });
  EXPECT_TRUE((*r)["eof"].get<bool>());
}

TEST(StepInputs, AppendsTakeNoOffset) {
  Result<StepInputWrite> ok = DecodeStepInputWrite({{"append", true}, {"data", "aGk="}});
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(ok->append);
  EXPECT_FALSE(DecodeStepInputWrite({{"append", true}, {"offset", 0}}).ok());
  EXPECT_FALSE(DecodeStepInputWrite({{"append", "yes"}}).ok());
}

}  // namespace
}  // namespace lockstep::controller
