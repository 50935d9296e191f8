// The bearer token of a request (RFC 6750's Authorization header).
#pragma once

#include <string>

#include "server/http_types.h"

namespace lockstep::server {

// The token of "Authorization: Bearer <token>" (the scheme in any case, spaces around the
// token ignored), or empty when there is none.
std::string BearerToken(const Request& request);

}  // namespace lockstep::server
