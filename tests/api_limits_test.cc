// End to end: lockstepd's API server under the bounds of docs/api.md ("Limits") and its error
// messages, as a local user would meet them over the Unix socket: an idle-connection flood
// beyond the cap, an over-limit body, and requests whose parameters or fields are malformed
// (answered with the parameter or field named, never an exception's text).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cluster_harness.h"

namespace lockstep::testing {
namespace {

namespace http = boost::beast::http;

struct Answer {
  unsigned status = 0;
  std::string error;  // the body's "error", or the transport's error
  std::string body;
};

// One request on a connection of its own.
Answer Call(const std::string& socket, http::verb verb, const std::string& target,
            const std::string& body = "") {
  boost::asio::io_context io;
  boost::asio::local::stream_protocol::socket s(io);
  boost::system::error_code ec;
  s.connect(boost::asio::local::stream_protocol::endpoint(socket), ec);
  if (ec) return {0, "connect: " + ec.message(), ""};
  http::request<http::string_body> req{verb, target, 11};
  req.set(http::field::host, "lockstepd");
  req.body() = body;
  req.prepare_payload();
  http::write(s, req, ec);
  http::response<http::string_body> res;
  boost::beast::flat_buffer buffer;
  if (!ec) http::read(s, buffer, res, ec);
  if (ec) return {0, "exchange: " + ec.message(), ""};
  nlohmann::json j = nlohmann::json::parse(res.body(), nullptr, false);
  std::string error = j.is_object() ? j.value("error", "") : "";
  return {res.result_int(), error, res.body()};
}

int ConnectUnix(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

class ApiLimitsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // lockstepd (which inherits it) gets the usual soft limit of 1024 descriptors, below its
    // connection cap: the flood below runs it out of descriptors, as it would on most hosts.
    // This process takes its hard limit, for the flood.
    rlimit rl{};
    ::getrlimit(RLIMIT_NOFILE, &rl);
    rlimit daemon = rl;
    daemon.rlim_cur = std::min<rlim_t>(1024, rl.rlim_max);
    ::setrlimit(RLIMIT_NOFILE, &daemon);
    cluster_ = new Cluster();
    bool started = cluster_->Start();
    ::setrlimit(RLIMIT_NOFILE, &rl);
    ASSERT_TRUE(started);
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  static std::string Socket() { return cluster_->dir() + "/lockstepd.sock"; }
  static Cluster* cluster_;
};

Cluster* ApiLimitsTest::cluster_ = nullptr;

TEST_F(ApiLimitsTest, IdleConnectionsBeyondTheCapDoNotStopOtherClients) {
  rlimit rl{};
  ::getrlimit(RLIMIT_NOFILE, &rl);
  if (rl.rlim_cur < 1300) GTEST_SKIP() << "RLIMIT_NOFILE " << rl.rlim_cur << " is too low";
  std::vector<int> flood;
  for (int i = 0; i < 1100; ++i) {  // beyond lockstepd's descriptors and its cap of 1024
    int fd = ConnectUnix(Socket());
    ASSERT_GE(fd, 0) << "connection " << i;
    flood.push_back(fd);
  }
  nlohmann::json nodes = cluster_->Get("/api/v1/nodes");
  EXPECT_FALSE(nodes.contains("error")) << nodes.dump();
  EXPECT_EQ(nodes["nodes"].size(), 2u);
  CommandResult squeue = cluster_->Run({"squeue"});
  EXPECT_EQ(squeue.exit_code, 0) << squeue.err;
  for (int fd : flood) ::close(fd);
}

TEST_F(ApiLimitsTest, AnOverLimitBodyGets413WithTheLimit) {
  Answer a = Call(Socket(), http::verb::post, "/api/v1/jobs", std::string((16 << 20) + 1, ' '));
  EXPECT_EQ(a.status, 413u) << a.error;
  EXPECT_NE(a.error.find("16777216 bytes"), std::string::npos) << a.body;
}

TEST_F(ApiLimitsTest, MalformedParametersAndFieldsAreNamedNeverAnException) {
  struct Case {
    http::verb verb;
    std::string target, body, error;
  };
  const std::vector<Case> cases = {
      {http::verb::get, "/api/v1/agent/commands?agent=x&wait_ms=soon", "", "wait_ms: not a number"},
      {http::verb::get, "/api/v1/jobs/1/steps/0/output?offset=zz", "", "offset: not a number"},
      {http::verb::get, "/api/v1/jobs/1/steps/0/output?wait_ms=99999999999999999999", "",
       "wait_ms: out of range"},
      {http::verb::get, "/api/v1/accounting?start=yesterday", "", "start: not a number"},
      {http::verb::post, "/api/v1/jobs/1/cancel", R"({"signal": "TERM"})",
       "field signal: expected a 32-bit integer"},
      {http::verb::post, "/api/v1/jobs/1/steps", R"({"argv": ["x"], "ntasks": "4"})",
       "field ntasks: expected a 32-bit integer"},
      {http::verb::post, "/api/v1/jobs/1/steps", R"({"argv": ["x"], "env": {"A": 1}})",
       "field env: expected an object of strings"},
      {http::verb::post, "/api/v1/nodes/node001/state", R"({"state": 3})",
       "field state: expected a string"},
      {http::verb::post, "/api/v1/jobs/1/cancel", "[1, 2]",
       "the request body must be a JSON object"},
      // Issue 27: a number beyond a double's range was a 500 with the JSON library's text.
      {http::verb::post, "/api/v1/jobs", R"({"ntasks": 1e999, "script": "#!/bin/sh\n"})",
       "job spec: 'ntasks' is a number out of range"},
      {http::verb::post, "/api/v1/jobs", R"({"dependencies": [{"job": 1}, {"job": -1e400}]})",
       "job spec: 'dependencies[1].job' is a number out of range"},
  };
  for (const Case& c : cases) {
    Answer a = Call(Socket(), c.verb, c.target, c.body);
    EXPECT_EQ(a.status, 400u) << c.target << " " << c.body << ": " << a.body;
    EXPECT_EQ(a.error, c.error) << c.target << " " << c.body;
    EXPECT_EQ(a.body.find("exception"), std::string::npos) << a.body;
    EXPECT_EQ(a.body.find("stoi"), std::string::npos) << a.body;
  }
}

// Issue 27: GET /api/v1/nodes/NAME answered every node, whatever NAME was.
TEST_F(ApiLimitsTest, RegressionANodeByNameIsThatNodeOrNotFound) {
  Answer all = Call(Socket(), http::verb::get, "/api/v1/nodes");
  ASSERT_EQ(all.status, 200u) << all.body;
  const nlohmann::json nodes = nlohmann::json::parse(all.body)["nodes"];
  ASSERT_GE(nodes.size(), 2u);
  const std::string name = nodes[1]["name"];
  Answer one = Call(Socket(), http::verb::get, "/api/v1/nodes/" + name);
  ASSERT_EQ(one.status, 200u) << one.body;
  const nlohmann::json got = nlohmann::json::parse(one.body)["nodes"];
  ASSERT_EQ(got.size(), 1u) << one.body;
  EXPECT_EQ(got[0]["name"], name);
  Answer none = Call(Socket(), http::verb::get, "/api/v1/nodes/nosuch");
  EXPECT_EQ(none.status, 404u) << none.body;
  EXPECT_EQ(none.error, "no such node: nosuch") << none.body;
  EXPECT_EQ(Call(Socket(), http::verb::get, "/api/v1/nodes/" + name + "/x").status, 404u);
}

}  // namespace
}  // namespace lockstep::testing
