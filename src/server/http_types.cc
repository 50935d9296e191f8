#include "server/http_types.h"

#include <nlohmann/json.hpp>
#include <string>

namespace lockstep::server {

Response JsonError(boost::beast::http::status status, std::string_view message) {
  Response res{status, 11};
  res.set(boost::beast::http::field::content_type, "application/json");
  // Messages may quote what a client sent: bytes that are not UTF-8 become U+FFFD.
  res.body() = nlohmann::json{{"error", std::string(message)}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  res.prepare_payload();
  return res;
}

}  // namespace lockstep::server
