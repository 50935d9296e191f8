# Declarative helpers in the manner of abseil's absl_cc_library: one call declares a library, a
# test or a binary with its sources and dependencies.

# lockstep_cc_library(NAME name SRCS ... DEPS ...)
function(lockstep_cc_library)
  cmake_parse_arguments(L "" "NAME" "SRCS;DEPS" ${ARGN})
  add_library(${L_NAME} STATIC ${L_SRCS})
  target_include_directories(${L_NAME} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${L_NAME} PUBLIC ${L_DEPS})
endfunction()

# lockstep_cc_test(NAME name SRCS ... DEPS ... [LABELS ...])
function(lockstep_cc_test)
  if(NOT LOCKSTEP_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(T "" "NAME" "SRCS;DEPS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SRCS})
  target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${T_NAME} PRIVATE ${T_DEPS} GTest::gtest GTest::gtest_main)
  add_test(NAME ${T_NAME} COMMAND ${T_NAME})
  set_tests_properties(${T_NAME} PROPERTIES
    ENVIRONMENT "LOCKSTEP_SOURCE_DIR=${PROJECT_SOURCE_DIR};LOCKSTEP_SHARED_DIR=${PROJECT_SOURCE_DIR}/../shared")
  if(T_LABELS)
    set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}")
  endif()
endfunction()

# lockstep_cc_fuzzer(NAME name SRCS ... DEPS ...): a libFuzzer target (clang only).
function(lockstep_cc_fuzzer)
  cmake_parse_arguments(F "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${F_NAME} ${F_SRCS})
  target_include_directories(${F_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(${F_NAME} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_options(${F_NAME} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(${F_NAME} PRIVATE ${F_DEPS})
endfunction()
