// Routing of the REST API: one HTTP request in, one response out (docs/api.md).
#pragma once

#include <boost/beast/http.hpp>

#include "controller/controller.h"
#include "controller/tokens.h"

namespace lockstep::controller {

boost::beast::http::response<boost::beast::http::string_body> HandleRequest(
    Controller& controller, const Caller& caller,
    const boost::beast::http::request<boost::beast::http::string_body>& request);

// POST /api/v1/tokens {"user": NAME, "lifespan": SECONDS} (both optional): a new bearer token
// for the caller, or for NAME when the caller is an operator (docs/api.md). ApiService sends it
// only requests from its Unix socket.
boost::beast::http::response<boost::beast::http::string_body> HandleTokenRequest(
    Controller& controller, TokenRegistry& tokens, const Caller& caller,
    const boost::beast::http::request<boost::beast::http::string_body>& request, Time now);

}  // namespace lockstep::controller
