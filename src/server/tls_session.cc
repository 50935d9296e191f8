// The TCP transport: TLS, and a bearer token on every request.
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "server/bearer_token.h"
#include "server/http_session.h"
#include "server/sessions.h"

namespace lockstep::server {
namespace {

namespace http = boost::beast::http;
using TlsStream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

Response Unauthorized(const std::string& message, const char* challenge) {
  Response res = JsonError(http::status::unauthorized, message);
  res.set(http::field::www_authenticate, challenge);
  return res;
}

class TlsSession : public HttpSession<TlsSession> {
 public:
  TlsSession(std::shared_ptr<ServerCore> core, boost::asio::ip::tcp::socket s)
      : HttpSession(core), stream_(boost::beast::tcp_stream(std::move(s)), core->tls) {}

  TlsStream& stream() { return stream_; }

  void Begin() {
    boost::system::error_code ignored;
    Lowest().socket().set_option(boost::asio::ip::tcp::no_delay(true), ignored);
    Lowest().expires_after(options().tls_handshake_timeout);
    stream_.async_handshake(boost::asio::ssl::stream_base::server,
                            [self = shared_from_this()](boost::system::error_code ec) {
                              auto& s = static_cast<TlsSession&>(*self);
                              if (s.closed()) return;
                              if (ec) return s.Close();
                              s.ReadRequestHeaders();
                            });
  }

  // Every request carries its own token: a connection is not a login. 401 before any route.
  void Authorize() {
    std::string token = BearerToken(request_header());
    if (token.empty() && request_header().method() == http::verb::get) {
      const std::string_view target(request_header().target().data(),
                                    request_header().target().size());
      auto page = options().public_pages.find(std::string(target.substr(0, target.find('?'))));
      if (page != options().public_pages.end()) {
        Response res{http::status::ok, 11};
        res.set(http::field::content_type, "text/html; charset=utf-8");
        res.body() = page->second;
        return Refuse(std::move(res));  // answered, then closed: it opened no session
      }
    }
    if (token.empty())
      return Refuse(Unauthorized("no bearer token (Authorization: Bearer <token>)", "Bearer"));
    auto self = shared_from_this();
    core().authenticator->Authenticate(std::move(token), [self](Result<Caller> who) {
      auto& s = static_cast<TlsSession&>(*self);
      s.core().PostUnlessStopped(s.executor(), [self, who = std::move(who)] {
        static_cast<TlsSession&>(*self).OnAuthenticated(who);
      });
    });
  }

 private:
  void OnAuthenticated(const Result<Caller>& who) {
    if (closed()) return;
    if (!who.ok()) {
      if (who.status().code() == StatusCode::kPermissionDenied)
        return Refuse(Unauthorized(who.status().message(), "Bearer error=\"invalid_token\""));
      return Refuse(JsonError(http::status::service_unavailable, who.status().message()));
    }
    caller() = *who;
    caller().transport = Transport::kTls;
    core().connections.MarkAuthenticated(id());
    ReadBody();
  }

  TlsStream stream_;
};

}  // namespace

void ServeTlsConnection(std::shared_ptr<ServerCore> core, boost::asio::ip::tcp::socket socket) {
  auto session = std::make_shared<TlsSession>(std::move(core), std::move(socket));
  session->Run(Transport::kTls);
}

}  // namespace lockstep::server
