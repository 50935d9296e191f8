# Declarative helpers in the manner of abseil's absl_cc_library: one call declares a library, a
# test or a binary with its sources and dependencies.
#
# Layering is enforced by include paths. Code includes headers as "folder/file.h" from src/, but
# src/ itself is never on an include path: each library publishes only its own folder, through a
# directory of its own under build/include that holds a symbolic link to that folder. A target
# therefore sees the headers of its own folder and of the libraries it depends on, and a wrong
# include (the engine reaching into the controller, a backend into lockstepd) fails to build.

# lockstep_expose(target folder [folder...]): `target` sees, and publishes to its dependents,
# src/<folder> as "<folder>/...". A folder may also name a single header (backend/backend.h).
function(lockstep_expose target)
  set(root ${CMAKE_BINARY_DIR}/include/${target})
  foreach(folder ${ARGN})
    get_filename_component(parent ${root}/${folder} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    if(NOT EXISTS ${root}/${folder})
      file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${folder} ${root}/${folder} SYMBOLIC)
    endif()
  endforeach()
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "EXECUTABLE")
    target_include_directories(${target} PRIVATE ${root})
  elseif(type STREQUAL "INTERFACE_LIBRARY")
    target_include_directories(${target} INTERFACE ${root})
  else()
    target_include_directories(${target} PUBLIC ${root})
  endif()
endfunction()

# The folder of the current CMakeLists.txt (or .cmake file) relative to src/.
function(lockstep_current_folder out)
  file(RELATIVE_PATH folder ${PROJECT_SOURCE_DIR}/src ${CMAKE_CURRENT_LIST_DIR})
  set(${out} ${folder} PARENT_SCOPE)
endfunction()

# lockstep_cc_library(NAME name SRCS ... DEPS ... [FOLDER folder]): a static library that
# publishes its folder (default: the folder of the calling file).
function(lockstep_cc_library)
  cmake_parse_arguments(L "" "NAME;FOLDER" "SRCS;DEPS" ${ARGN})
  add_library(${L_NAME} STATIC ${L_SRCS})
  if(NOT L_FOLDER)
    lockstep_current_folder(L_FOLDER)
  endif()
  lockstep_expose(${L_NAME} ${L_FOLDER})
  target_link_libraries(${L_NAME} PUBLIC ${L_DEPS})
endfunction()

# lockstep_cc_binary(NAME name SRCS ... DEPS ...): a program; it sees its own folder.
function(lockstep_cc_binary)
  cmake_parse_arguments(B "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${B_NAME} ${B_SRCS})
  lockstep_current_folder(folder)
  lockstep_expose(${B_NAME} ${folder})
  target_link_libraries(${B_NAME} PRIVATE ${B_DEPS})
endfunction()

# lockstep_cc_test(NAME name SRCS ... DEPS ... [LABELS ...]): a GoogleTest program that sees its
# own folder and its dependencies (tests/ may include "tests/...").
function(lockstep_cc_test)
  if(NOT LOCKSTEP_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(T "" "NAME" "SRCS;DEPS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SRCS})
  file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_LIST_DIR})
  if(rel MATCHES "^src/")
    lockstep_current_folder(folder)
    lockstep_expose(${T_NAME} ${folder})
  else()
    target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR})
  endif()
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
  target_include_directories(${F_NAME} PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_options(${F_NAME} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_options(${F_NAME} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(${F_NAME} PRIVATE ${F_DEPS})
endfunction()
