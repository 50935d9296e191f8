#include "server/listen.h"

#include <openssl/ssl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace lockstep::server {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = asio::ip::tcp;

Result<std::pair<std::string, std::string>> SplitHostPort(const std::string& s) {
  std::size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == s.size())
    return InvalidArgument("--listen " + s + ": expected HOST:PORT");
  std::string host = s.substr(0, colon), port = s.substr(colon + 1);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 ||
      std::stoi(port) > 65535)
    return InvalidArgument("--listen " + s + ": the port is not a number from 0 to 65535");
  return std::make_pair(host, port);
}

Status LoadTlsContext(ssl::context& tls, const std::string& cert, const std::string& key) {
  boost::system::error_code ec;
  tls.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                      ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                      ssl::context::single_dh_use,
                  ec);
  tls.use_certificate_chain_file(cert, ec);
  if (ec) return InvalidArgument("cannot load --tls-cert " + cert + ": " + ec.message());
  tls.use_private_key_file(key, ssl::context::pem, ec);
  if (ec) return InvalidArgument("cannot load --tls-key " + key + ": " + ec.message());
  if (SSL_CTX_check_private_key(tls.native_handle()) != 1)
    return InvalidArgument("--tls-key " + key + " does not match --tls-cert " + cert);
  return Status::Ok();
}

Result<tcp::acceptor> ListenTcp(const asio::any_io_executor& executor, const std::string& listen) {
  Result<std::pair<std::string, std::string>> hp = SplitHostPort(listen);
  if (!hp.ok()) return hp.status();
  boost::system::error_code ec;
  tcp::resolver resolver(executor);
  auto endpoints = resolver.resolve(hp->first, hp->second, tcp::resolver::passive, ec);
  if (ec || endpoints.empty())
    return InvalidArgument("--listen " + listen + ": " + (ec ? ec.message() : "no address"));
  tcp::endpoint ep = endpoints.begin()->endpoint();
  tcp::acceptor acceptor(executor);
  acceptor.open(ep.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(ep, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return IoError("cannot listen on " + listen + ": " + ec.message());
  return acceptor;
}

Result<asio::local::stream_protocol::acceptor> ListenUnix(const asio::any_io_executor& executor,
                                                          const std::string& path) {
  ::unlink(path.c_str());
  boost::system::error_code ec;
  asio::local::stream_protocol::endpoint ep(path);
  asio::local::stream_protocol::acceptor acceptor(executor);
  acceptor.open(ep.protocol(), ec);
  if (!ec) acceptor.bind(ep, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return IoError("cannot listen on " + path + ": " + ec.message());
  ::chmod(path.c_str(), 0777);
  return acceptor;
}

}  // namespace lockstep::server
