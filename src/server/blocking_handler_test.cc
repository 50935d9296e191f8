#include "server/blocking_handler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace lockstep::server {
namespace {

namespace http = boost::beast::http;

// Collects what Responders deliver.
class CollectingSink : public ResponseSink {
 public:
  void Deliver(Response response) override {
    std::lock_guard<std::mutex> lock(mu_);
    responses_.push_back(std::move(response));
    changed_.notify_all();
  }
  std::vector<Response> WaitFor(std::size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait_for(lock, std::chrono::seconds(20), [&] { return responses_.size() >= n; });
    return responses_;
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<Response> responses_;
};

// A function that blocks until opened, and records how many ran at once.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  int running = 0, most = 0, started = 0;

  Response Pass() {
    std::unique_lock<std::mutex> lock(mu);
    ++started;
    most = std::max(most, ++running);
    cv.notify_all();
    cv.wait(lock, [&] { return open; });
    --running;
    Response res{http::status::ok, 11};
    res.body() = "passed";
    return res;
  }
};

TEST(BlockingHandlerTest, RunsAtMostPoolSizeFunctionsAtOnceAndAnswersEachRequest) {
  Gate gate;
  auto sink = std::make_shared<CollectingSink>();
  {
    WorkerPool pool(2);
    BlockingHandler handler(pool, [&](const Request&, const Caller&) { return gate.Pass(); });
    for (int i = 0; i < 3; ++i) handler.Handle(Request{}, Caller{}, Responder(sink));
    {
      std::unique_lock<std::mutex> lock(gate.mu);
      ASSERT_TRUE(
          gate.cv.wait_for(lock, std::chrono::seconds(20), [&] { return gate.running == 2; }));
      EXPECT_EQ(gate.started, 2);  // the third waits in the queue
      gate.open = true;
      gate.cv.notify_all();
    }
    std::vector<Response> answers = sink->WaitFor(3);
    ASSERT_EQ(answers.size(), 3u);
    for (const Response& r : answers) EXPECT_EQ(r.body(), "passed");
  }
  EXPECT_EQ(gate.most, 2);
}

TEST(WorkerPoolTest, StartsThreadsOnDemandAndEndsThoseLeftIdle) {
  Gate gate;
  WorkerPool pool(8, std::chrono::milliseconds(20));
  EXPECT_EQ(pool.threads(), 0u);  // nothing started before there is work
  for (int i = 0; i < 3; ++i) pool.Post([&] { gate.Pass(); });
  {
    std::unique_lock<std::mutex> lock(gate.mu);
    ASSERT_TRUE(
        gate.cv.wait_for(lock, std::chrono::seconds(20), [&] { return gate.running == 3; }));
    EXPECT_EQ(pool.threads(), 3u);
    gate.open = true;
    gate.cv.notify_all();
  }
  EXPECT_TRUE(pool.WaitForThreadsAtMostForTest(0, std::chrono::seconds(20)));
}

TEST(BlockingHandlerTest, AnExceptionBecomesA500WithoutItsText) {
  auto sink = std::make_shared<CollectingSink>();
  WorkerPool pool(1);
  BlockingHandler handler(
      pool, [](const Request&, const Caller&) -> Response { throw std::invalid_argument("stoi"); });
  handler.Handle(Request{}, Caller{}, Responder(sink));
  std::vector<Response> answers = sink->WaitFor(1);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].result(), http::status::internal_server_error);
  EXPECT_EQ(answers[0].body().find("stoi"), std::string::npos);
}

TEST(ResponderTest, TheFirstAnswerWinsAndAnUnansweredRequestGets500) {
  auto sink = std::make_shared<CollectingSink>();
  {
    Responder r(sink);
    Responder copy = r;
    copy.Respond(Response{http::status::ok, 11});
    r.Respond(Response{http::status::not_found, 11});
    EXPECT_TRUE(r.answered());
  }
  { Responder forgotten(sink); }
  std::vector<Response> answers = sink->WaitFor(2);
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0].result(), http::status::ok);
  EXPECT_EQ(answers[1].result(), http::status::internal_server_error);
  EXPECT_NE(answers[1].body().find("not answered"), std::string::npos);
}

}  // namespace
}  // namespace lockstep::server
