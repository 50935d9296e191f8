// Routing of the REST API: one HTTP request in, one response out (docs/api.md).
#pragma once

#include <boost/beast/http.hpp>

#include "controller/controller.h"

namespace lockstep::controller {

boost::beast::http::response<boost::beast::http::string_body> HandleRequest(
    Controller& controller, const Caller& caller,
    const boost::beast::http::request<boost::beast::http::string_body>& request);

}  // namespace lockstep::controller
