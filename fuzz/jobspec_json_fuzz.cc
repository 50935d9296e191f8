// Fuzzes the REST API's job spec decoder (what lockstepd reads from POST /api/v1/jobs), then the
// range check on what decodes. Properties: decoding and validating never crash; a spec that
// decodes, encoded again, decodes to an equal spec (the store keeps specs as this JSON, so a
// spec that changed on the way would change a job across a restart).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "jobspec/job_spec.h"
#include "jobspec/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  lockstep::Result<lockstep::jobspec::JobSpec> spec = lockstep::jobspec::JobSpecFromJson(text);
  if (!spec.ok()) {
    FUZZ_CHECK(spec.status().message().rfind("job spec: ", 0) == 0);
    return 0;
  }
  // Both kinds of caller: an operator may give a negative nice, a user may not.
  (void)lockstep::jobspec::Validate(*spec, {.caller_is_operator = true});
  (void)lockstep::jobspec::Validate(*spec, {.caller_is_operator = false});

  const std::string encoded = lockstep::jobspec::JobSpecToJson(*spec);
  lockstep::Result<lockstep::jobspec::JobSpec> again =
      lockstep::jobspec::JobSpecFromJson(encoded);
  if (!again.ok()) std::fprintf(stderr, "re-decoding failed: %s\n", again.status().ToString().c_str());
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(*again == *spec);
  FUZZ_CHECK(lockstep::jobspec::JobSpecToJson(*again) == encoded);
  return 0;
}
