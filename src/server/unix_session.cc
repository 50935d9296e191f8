// The Unix socket transport: the kernel says who the peer is.
#include <boost/beast/core/basic_stream.hpp>

#include "server/http_session.h"
#include "server/peer_credentials.h"
#include "server/sessions.h"

namespace lockstep::server {
namespace {

using UnixStream = boost::beast::basic_stream<boost::asio::local::stream_protocol>;

class UnixSession : public HttpSession<UnixSession> {
 public:
  UnixSession(std::shared_ptr<ServerCore> core, boost::asio::local::stream_protocol::socket s)
      : HttpSession(std::move(core)), stream_(std::move(s)) {}

  UnixStream& stream() { return stream_; }

  // Who is at the other end, before any byte is read: an unknown peer is nobody.
  void Begin() {
    const auto& read = options().read_peer_credentials_for_test;
    int fd = stream_.socket().native_handle();
    Result<Caller> peer = read ? read(fd) : ReadPeerCredentials(fd);
    if (!peer.ok()) return Close();
    caller() = *peer;
    caller().user.clear();
    caller().transport = Transport::kUnixSocket;
    ReadRequestHeaders();
  }

  // The peer was known from the start.
  void Authorize() { ReadBody(); }

 private:
  UnixStream stream_;
};

}  // namespace

void ServeUnixConnection(std::shared_ptr<ServerCore> core,
                         boost::asio::local::stream_protocol::socket socket) {
  auto session = std::make_shared<UnixSession>(std::move(core), std::move(socket));
  session->Run(Transport::kUnixSocket);
}

}  // namespace lockstep::server
