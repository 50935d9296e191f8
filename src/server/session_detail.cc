#include <boost/beast/http/error.hpp>
#include <string>

#include "server/http_session.h"

namespace lockstep::server::session_detail {

bool IsMalformedRequest(const boost::system::error_code& ec) {
  namespace http = boost::beast::http;
  if (ec.category() != http::make_error_code(http::error::bad_method).category()) return false;
  // A stream that ended, at a request's start or in its middle, is a close, not a bad request.
  return ec != http::error::end_of_stream && ec != http::error::partial_message;
}

Response BodyTooLarge(std::uint64_t limit) {
  std::string mib = limit % (1u << 20) == 0 ? " (" + std::to_string(limit >> 20) + " MiB)" : "";
  return JsonError(
      boost::beast::http::status::payload_too_large,
      "the request body is larger than the limit of " + std::to_string(limit) + " bytes" + mib);
}

}  // namespace lockstep::server::session_detail
