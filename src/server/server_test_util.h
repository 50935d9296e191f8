// Test helpers for the server's tests: a temporary directory, raw clients for the Unix socket
// and TLS, a self-signed certificate, and a handler and an authenticator the tests script.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "server/handler.h"
#include "server/server.h"

namespace lockstep::server::testing {

// A fresh directory under the system's temporary directory, removed with its contents.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Options for a server in `dir` with short deadlines, small limits and no TCP.
ServerOptions TestOptions(const std::string& dir);

// A request for `target` (GET without a body, POST with one) that asks for keep-alive.
Request MakeRequest(const std::string& target, const std::string& body = "",
                    const std::string& token = "");

// True when the peer closes the connection (EOF or reset) within `limit`: reads and discards
// until then. False when data keeps coming or nothing happens within the limit.
bool ClosedByPeer(int fd, std::chrono::seconds limit = std::chrono::seconds(20));

// A blocking HTTP client over one Unix socket connection.
class UnixClient {
 public:
  explicit UnixClient(const std::string& socket_path);
  // The answer, or an error code (the connection closed, say).
  Result<Response> Call(const Request& request);
  // Sends bytes as they are (a half request, say).
  void SendRaw(const std::string& bytes);
  int fd() { return socket_.native_handle(); }

 private:
  boost::asio::io_context io_;
  boost::asio::local::stream_protocol::socket socket_{io_};
  boost::beast::flat_buffer buffer_;
};

// A blocking HTTPS client over one TCP connection, trusting any certificate.
class TlsClient {
 public:
  explicit TlsClient(int port);
  Result<Response> Call(const Request& request);
  int fd() { return stream_.next_layer().native_handle(); }

 private:
  boost::asio::io_context io_;
  boost::asio::ssl::context ctx_{boost::asio::ssl::context::tls_client};
  boost::asio::ssl::stream<boost::asio::ip::tcp::socket> stream_{io_, ctx_};
  boost::beast::flat_buffer buffer_;
};

// A plain TCP connection to 127.0.0.1:port that does nothing unless told (no TLS handshake).
int ConnectTcp(int port);
// A connected Unix socket that does nothing unless told.
int ConnectUnix(const std::string& path);

// Writes a self-signed certificate and its key to PREFIX.crt and PREFIX.key.
bool MakeSelfSigned(const std::string& prefix);

// Answers "/quick" at once with {"uid": caller.uid, "transport": "unix"|"tls", "body": body};
// holds "/hold" requests until ReleaseHeld; drops the Responder of "/drop"; counts every call.
class ScriptedHandler : public Handler {
 public:
  void Handle(Request request, Caller caller, Responder respond) override;
  // Waits until `n` requests are held; false after `limit`.
  bool WaitForHeld(std::size_t n, std::chrono::seconds limit = std::chrono::seconds(20));
  // Answers every held request with 200 {"released": true}.
  void ReleaseHeld();
  std::size_t calls();

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<Responder> held_;  // guarded by mu_
  std::size_t calls_ = 0;        // guarded by mu_
};

// "good" is uid 1000 (alice); "broken" fails with Unavailable; anything else is refused.
class TestAuthenticator : public Authenticator {
 public:
  void Authenticate(std::string token, Done done) override;
};

}  // namespace lockstep::server::testing
