// A check for fuzz targets: an invariant the parser promises, broken, is a finding.
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(expr)                                                                   \
  do {                                                                                     \
    if (!(expr)) {                                                                         \
      std::fprintf(stderr, "fuzz check failed at %s:%d: %s\n", __FILE__, __LINE__, #expr); \
      std::abort();                                                                        \
    }                                                                                      \
  } while (0)
