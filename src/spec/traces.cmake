list(APPEND SPEC_SRCS
  ${CMAKE_CURRENT_SOURCE_DIR}/file_io.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/trace_text.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/trace_swf.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/trace_alibaba.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/trace_csv.cc)
list(APPEND SPEC_TESTS
  ${CMAKE_CURRENT_SOURCE_DIR}/trace_swf_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/trace_alibaba_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/trace_csv_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/trace_text_test.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/file_io_test.cc)
