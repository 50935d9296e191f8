// Test-only: the one polling wait of lockstep's tests, for the end-to-end tests (tests/) and the
// tests against a real kube-apiserver (backend/kubernetes/) alike. Header-only, so that any test
// target may include it without a library of its own.
#pragma once

#include <chrono>
#include <thread>

namespace lockstep::testing {

// Waits for an observable condition (a state, a file, a pid gone, an object on the apiserver),
// looking every `every`, until `timeout`; whether it held. Tests wait on what they then assert,
// never for a fixed time: the poll interval only bounds how late the wait notices. To assert
// that something did NOT happen, wait first for a positive event proving that the component has
// handled the input (a pass barrier, a settle, a log line), then assert.
template <typename Condition>
bool WaitFor(Condition done, std::chrono::milliseconds timeout,
             std::chrono::milliseconds every = std::chrono::milliseconds(50)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(every);
  }
  return true;
}

}  // namespace lockstep::testing
