// The server on its Unix socket: keep-alive, limits, deadlines, the connection cap, peers that
// cannot be read, and long polls that hold no thread. Deadlines are short here; the tests wait
// on conditions (a connection closed by the server, a number of held requests), never on time.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "server/server.h"
#include "server/server_test_util.h"

namespace lockstep::server {
namespace {

namespace http = boost::beast::http;
using testing::ClosedByPeer;
using testing::MakeRequest;
using testing::UnixClient;

class ServerUnixTest : public ::testing::Test {
 protected:
  void SetUp() override { options_ = testing::TestOptions(dir_.path()); }
  void StartServer() {
    auto s = Server::Start(options_, handler_, nullptr);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
  }
  void TearDown() override {
    server_.reset();
    for (int fd : fds_) ::close(fd);
  }
  int Connect() {
    int fd = testing::ConnectUnix(options_.socket_path);
    fds_.push_back(fd);
    return fd;
  }

  testing::TempDir dir_;
  ServerOptions options_;
  testing::ScriptedHandler handler_;
  std::unique_ptr<Server> server_;
  std::vector<int> fds_;
};

TEST_F(ServerUnixTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  StartServer();
  UnixClient client(options_.socket_path);
  for (int i = 0; i < 4; ++i) {
    Result<Response> res = client.Call(MakeRequest("/quick", "request " + std::to_string(i)));
    ASSERT_TRUE(res.ok()) << "request " << i << ": " << res.status().message();
    EXPECT_EQ(res->result(), http::status::ok);
    EXPECT_TRUE(res->keep_alive());
    auto body = nlohmann::json::parse(res->body());
    EXPECT_EQ(body["body"], "request " + std::to_string(i));
    EXPECT_EQ(body["uid"], ::getuid());  // the peer's uid, from the kernel
    EXPECT_EQ(body["transport"], "unix");
  }
  EXPECT_EQ(server_->connection_count(), 1u);
}

TEST_F(ServerUnixTest, AnOverLimitBodyGets413NamingTheLimit) {
  StartServer();
  UnixClient client(options_.socket_path);
  Result<Response> res = client.Call(MakeRequest("/quick", std::string(4096, 'x')));
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->result(), http::status::payload_too_large);
  auto body = nlohmann::json::parse(res->body());
  EXPECT_NE(body["error"].get<std::string>().find("limit of 1024 bytes"), std::string::npos)
      << res->body();
  EXPECT_FALSE(res->keep_alive());
  EXPECT_EQ(handler_.calls(), 0u);
}

TEST_F(ServerUnixTest, AChunkedBodyThatGrowsOverTheLimitGets413) {
  StartServer();
  UnixClient client(options_.socket_path);
  Request req = MakeRequest("/quick", std::string(2000, 'y'));
  req.chunked(true);
  Result<Response> res = client.Call(req);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->result(), http::status::payload_too_large);
  EXPECT_EQ(handler_.calls(), 0u);
}

TEST_F(ServerUnixTest, OverLimitHeadersGet431NamingTheLimit) {
  StartServer();
  UnixClient client(options_.socket_path);
  Request req = MakeRequest("/quick");
  req.set("X-Padding", std::string(options_.max_header_bytes, 'h'));
  Result<Response> res = client.Call(req);
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->result(), http::status::request_header_fields_too_large);
  EXPECT_NE(res->body().find("limit of 16384 bytes"), std::string::npos) << res->body();
  EXPECT_EQ(handler_.calls(), 0u);
}

TEST_F(ServerUnixTest, HalfAHeaderIsClosedAtTheHeaderDeadline) {
  options_.header_timeout = std::chrono::milliseconds(100);
  StartServer();
  int fd = Connect();
  ASSERT_GE(fd, 0);
  std::string half = "GET /quick HTTP/1.1\r\nHost: lockstepd\r\n";
  ASSERT_EQ(::write(fd, half.data(), half.size()), static_cast<ssize_t>(half.size()));
  EXPECT_TRUE(ClosedByPeer(fd));
  EXPECT_EQ(handler_.calls(), 0u);
}

TEST_F(ServerUnixTest, AnIdleKeptAliveConnectionIsClosedAtTheIdleDeadline) {
  options_.idle_timeout = std::chrono::milliseconds(100);
  StartServer();
  UnixClient client(options_.socket_path);
  Result<Response> res = client.Call(MakeRequest("/quick"));
  ASSERT_TRUE(res.ok());
  EXPECT_TRUE(ClosedByPeer(client.fd()));
}

TEST_F(ServerUnixTest, APeerWhoseCredentialsCannotBeReadIsRefused) {
  options_.read_peer_credentials_for_test = [](int) -> Result<Caller> {
    return IoError("SO_PEERCRED failed");
  };
  StartServer();
  UnixClient client(options_.socket_path);
  Result<Response> res = client.Call(MakeRequest("/quick"));
  EXPECT_FALSE(res.ok());
  EXPECT_EQ(handler_.calls(), 0u);
}

TEST_F(ServerUnixTest, AFloodOfIdleConnectionsBeyondTheCapDoesNotStopAWellBehavedClient) {
  options_.header_timeout = std::chrono::minutes(10);  // the flood is not rescued by deadlines
  StartServer();
  for (std::size_t i = 0; i < 3 * options_.max_connections; ++i) ASSERT_GE(Connect(), 0);
  UnixClient client(options_.socket_path);
  Result<Response> res = client.Call(MakeRequest("/quick"));
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->result(), http::status::ok);
  EXPECT_LE(server_->connection_count(), options_.max_connections);
  EXPECT_TRUE(ClosedByPeer(fds_.front()));  // the oldest idle connections made room
}

TEST_F(ServerUnixTest, BusyConnectionsAreKeptAndANewOneIsRefusedWhenAllAreBusy) {
  StartServer();
  std::vector<std::unique_ptr<UnixClient>> pollers;
  std::vector<std::thread> threads;
  std::vector<Result<Response>> answers(options_.max_connections, IoError("none"));
  for (std::size_t i = 0; i < options_.max_connections; ++i)
    pollers.push_back(std::make_unique<UnixClient>(options_.socket_path));
  for (std::size_t i = 0; i < options_.max_connections; ++i)
    threads.emplace_back([&, i] { answers[i] = pollers[i]->Call(MakeRequest("/hold")); });
  ASSERT_TRUE(handler_.WaitForHeld(options_.max_connections));
  int refused = Connect();
  EXPECT_TRUE(ClosedByPeer(refused));
  handler_.ReleaseHeld();
  for (auto& t : threads) t.join();
  for (const auto& a : answers) {
    ASSERT_TRUE(a.ok()) << a.status().message();
    EXPECT_EQ(a->result(), http::status::ok);
  }
}

TEST_F(ServerUnixTest, LongPollsOnTheAsyncInterfaceHoldNoThread) {
  options_.io_threads = 1;
  const std::size_t polls = 6;  // more than the I/O threads, fewer than the cap
  StartServer();
  std::vector<std::unique_ptr<UnixClient>> pollers;
  std::vector<std::thread> threads;
  std::vector<Result<Response>> answers(polls, IoError("none"));
  for (std::size_t i = 0; i < polls; ++i)
    pollers.push_back(std::make_unique<UnixClient>(options_.socket_path));
  for (std::size_t i = 0; i < polls; ++i)
    threads.emplace_back([&, i] { answers[i] = pollers[i]->Call(MakeRequest("/hold")); });
  ASSERT_TRUE(handler_.WaitForHeld(polls));
  UnixClient quick(options_.socket_path);
  Result<Response> res = quick.Call(MakeRequest("/quick"));
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->result(), http::status::ok);
  handler_.ReleaseHeld();
  for (auto& t : threads) t.join();
  for (const auto& a : answers) ASSERT_TRUE(a.ok() && a->result() == http::status::ok);
}

TEST_F(ServerUnixTest, ARequestTheHandlerForgetsIsAnswered500) {
  StartServer();
  UnixClient client(options_.socket_path);
  Result<Response> res = client.Call(MakeRequest("/drop"));
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->result(), http::status::internal_server_error);
}

TEST_F(ServerUnixTest, AnAnswerAfterTheServerStoppedIsDropped) {
  StartServer();
  UnixClient client(options_.socket_path);
  std::thread poll([&] { (void)client.Call(MakeRequest("/hold")); });
  ASSERT_TRUE(handler_.WaitForHeld(1));
  server_.reset();  // closes the held connection: the client's call ends
  poll.join();
  handler_.ReleaseHeld();  // must neither crash nor write anywhere
  EXPECT_EQ(::access(options_.socket_path.c_str(), F_OK), -1);
}

TEST_F(ServerUnixTest, AStaleSocketFileIsReplaced) {
  StartServer();
  server_.reset();
  FILE* f = std::fopen(options_.socket_path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  StartServer();
  UnixClient client(options_.socket_path);
  ASSERT_TRUE(client.Call(MakeRequest("/quick")).ok());
}

}  // namespace
}  // namespace lockstep::server
