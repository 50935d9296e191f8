// One lockstepd per state directory. A second one started on the same directory (by hand, or by
// a script that did not see the first) would serve its own jobs from the same store and take
// over the pid file, so that `lockstep down` stops only one of them. lockstepd holds an
// exclusive flock(2) on STATE_DIR/lockstepd.lock for its whole life; the kernel drops it when
// the process ends, however it ends, so a crash never leaves a stale lock. The file holds the
// holder's pid, for the refusal's message.
#pragma once

#include <string>

#include "common/status.h"

namespace lockstep::lockstepd {

// Takes the lock of `state_dir` (created 0700 when missing). The descriptor is the lock: keep
// it open as long as the directory is served. FailedPrecondition naming the holder's pid when
// another process holds it.
Result<int> LockStateDir(const std::string& state_dir);

}  // namespace lockstep::lockstepd
