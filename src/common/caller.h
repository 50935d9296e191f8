// Who is asking lockstepd: a user known by the kernel (SO_PEERCRED on the Unix socket) or by a
// bearer token (TCP). Backends never act as a Caller: they report through backend::EventSink
// and admit pods through backend::Admission, identities no request can present.
#pragma once

#include <cstdint>
#include <string>

namespace lockstep {

struct Caller {
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::string user;
};

}  // namespace lockstep
