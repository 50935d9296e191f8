// The server on TCP with TLS: bearer tokens checked before any handler runs, the handshake
// deadline, and the TCP share of the connection cap, where unauthenticated connections go first.
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
using testing::TlsClient;

class ServerTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_ = testing::TestOptions(dir_.path());
    ASSERT_TRUE(testing::MakeSelfSigned(dir_.path() + "/server"));
    options_.listen = "127.0.0.1:0";
    options_.tls_cert = dir_.path() + "/server.crt";
    options_.tls_key = dir_.path() + "/server.key";
  }
  void StartServer() {
    auto s = Server::Start(options_, handler_, &authenticator_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
    ASSERT_GT(server_->tcp_port(), 0);
  }
  void TearDown() override {
    server_.reset();
    for (int fd : fds_) ::close(fd);
  }
  int ConnectTcp() {
    int fd = testing::ConnectTcp(server_->tcp_port());
    fds_.push_back(fd);
    return fd;
  }

  testing::TempDir dir_;
  ServerOptions options_;
  testing::ScriptedHandler handler_;
  testing::TestAuthenticator authenticator_;
  std::unique_ptr<Server> server_;
  std::vector<int> fds_;
};

TEST_F(ServerTlsTest, RequestsWithoutAValidTokenGet401BeforeAnyHandlerRuns) {
  StartServer();
  struct Case {
    std::string token;
    http::status status;
    std::string error;
  };
  for (const Case& c : {Case{"", http::status::unauthorized, "no bearer token"},
                        Case{"forged", http::status::unauthorized, "invalid token"},
                        Case{"broken", http::status::service_unavailable, "store is down"}}) {
    TlsClient client(server_->tcp_port());
    Result<Response> res = client.Call(MakeRequest("/quick", "{}", c.token));
    ASSERT_TRUE(res.ok()) << c.token << ": " << res.status().message();
    EXPECT_EQ(res->result(), c.status) << c.token;
    EXPECT_NE(res->body().find(c.error), std::string::npos) << res->body();
    if (c.status == http::status::unauthorized)
      EXPECT_NE((*res)[http::field::www_authenticate].find("Bearer"), std::string::npos);
  }
  EXPECT_EQ(handler_.calls(), 0u);
}

TEST_F(ServerTlsTest, AValidTokenNamesTheCallerOnEveryRequestOfAKeptAliveConnection) {
  StartServer();
  TlsClient client(server_->tcp_port());
  for (int i = 0; i < 3; ++i) {
    Result<Response> res = client.Call(MakeRequest("/quick", "", "good"));
    ASSERT_TRUE(res.ok()) << res.status().message();
    ASSERT_EQ(res->result(), http::status::ok);
    auto body = nlohmann::json::parse(res->body());
    EXPECT_EQ(body["uid"], 1000);
    EXPECT_EQ(body["transport"], "tls");
  }
  EXPECT_EQ(server_->tcp_connection_count(), 1u);
}

TEST_F(ServerTlsTest, AnOverLimitBodyGets413) {
  StartServer();
  TlsClient client(server_->tcp_port());
  Result<Response> res = client.Call(MakeRequest("/quick", std::string(5000, 'z'), "good"));
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->result(), http::status::payload_too_large);
  EXPECT_NE(res->body().find("1024"), std::string::npos);
}

TEST_F(ServerTlsTest, AStalledHandshakeIsClosedAtItsDeadline) {
  options_.tls_handshake_timeout = std::chrono::milliseconds(100);
  StartServer();
  int silent = ConnectTcp();
  ASSERT_GE(silent, 0);
  EXPECT_TRUE(ClosedByPeer(silent));
  // A client that starts a handshake record and stops halfway.
  int slow = ConnectTcp();
  ASSERT_GE(slow, 0);
  const char partial[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01};
  ASSERT_EQ(::write(slow, partial, sizeof partial), static_cast<ssize_t>(sizeof partial));
  EXPECT_TRUE(ClosedByPeer(slow));
}

TEST_F(ServerTlsTest, UnauthenticatedConnectionsAreClosedFirstWhenTcpIsFull) {
  options_.tls_handshake_timeout = std::chrono::minutes(10);  // only pressure closes the flood
  StartServer();
  TlsClient known(server_->tcp_port());  // authenticated before the flood, then idle
  ASSERT_TRUE(known.Call(MakeRequest("/quick", "", "good")).ok());
  for (std::size_t i = 0; i < 3 * options_.max_tcp_connections; ++i) ASSERT_GE(ConnectTcp(), 0);
  TlsClient newcomer(server_->tcp_port());
  Result<Response> res = newcomer.Call(MakeRequest("/quick", "", "good"));
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->result(), http::status::ok);
  // The oldest connection, authenticated, was kept; unauthenticated ones made room.
  Result<Response> again = known.Call(MakeRequest("/quick", "", "good"));
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->result(), http::status::ok);
  EXPECT_TRUE(ClosedByPeer(fds_.front()));
  EXPECT_LE(server_->tcp_connection_count(), options_.max_tcp_connections);
  // The Unix socket keeps its share.
  testing::UnixClient local(options_.socket_path);
  Result<Response> mine = local.Call(MakeRequest("/quick"));
  ASSERT_TRUE(mine.ok()) << mine.status().message();
  EXPECT_EQ(mine->result(), http::status::ok);
}

TEST_F(ServerTlsTest, TlsFilesWithoutListenAndListenWithoutThemAreRefused) {
  ServerOptions no_listen = options_;
  no_listen.listen.clear();
  EXPECT_FALSE(Server::Start(no_listen, handler_, &authenticator_).ok());
  ServerOptions no_key = options_;
  no_key.tls_key.clear();
  EXPECT_FALSE(Server::Start(no_key, handler_, &authenticator_).ok());
  ServerOptions bad_cert = options_;
  bad_cert.tls_cert = dir_.path() + "/missing.crt";
  auto s = Server::Start(bad_cert, handler_, &authenticator_);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("--tls-cert"), std::string::npos);
  EXPECT_EQ(::access(options_.socket_path.c_str(), F_OK), -1);  // no socket file left behind
}

}  // namespace
}  // namespace lockstep::server
