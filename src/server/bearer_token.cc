#include "server/bearer_token.h"

#include <cctype>
#include <string_view>

namespace lockstep::server {

std::string BearerToken(const Request& request) {
  auto it = request.find(boost::beast::http::field::authorization);
  if (it == request.end()) return "";
  std::string_view v(it->value().data(), it->value().size());
  constexpr std::string_view kScheme = "bearer ";
  if (v.size() <= kScheme.size()) return "";
  for (std::size_t i = 0; i < kScheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(v[i])) != kScheme[i]) return "";
  v.remove_prefix(kScheme.size());
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  return std::string(v);
}

}  // namespace lockstep::server
