// The HTTP messages the server reads and writes: Beast's, with whole bodies in strings.
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>
#include <string_view>

namespace lockstep::server {

using Request = boost::beast::http::request<boost::beast::http::string_body>;
using Response = boost::beast::http::response<boost::beast::http::string_body>;

// A response whose body is {"error": message} (docs/api.md's error form).
Response JsonError(boost::beast::http::status status, std::string_view message);

}  // namespace lockstep::server
