# MOESIM_FUZZ=ON: instrument every C++ target for libFuzzer (coverage), ASan
# and UBSan. Needs clang with libFuzzer (Debian: clang-16 and
# libclang-rt-16-dev; tests/fuzz/build.sh installs them).
#
# libstdc++ 12 declares std::expected only when __cpp_concepts >= 202002L.
# clang 16 to 18 implement what <expected> needs (P0848, conditionally
# trivial special members) but still advertise 201907L, so the macro is
# raised for them; clang 14 and 15 lack P0848 and cannot compile moesim.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "MOESIM_FUZZ needs clang (libFuzzer); got "
                      "${CMAKE_CXX_COMPILER_ID}: pass -DCMAKE_CXX_COMPILER=clang++-16")
endif()
include(CheckCXXSourceCompiles)
set(MOESIM_EXPECTED_PROBE "#include <expected>
#include <string>
std::expected<std::string, int> F(int x) {
  if (x) return std::unexpected(x);
  return std::string(\"ok\");
}
int main() { return F(0)->size() == 2 ? 0 : 1; }")
check_cxx_source_compiles("${MOESIM_EXPECTED_PROBE}" MOESIM_HAVE_EXPECTED)
if(NOT MOESIM_HAVE_EXPECTED)
  set(CMAKE_REQUIRED_FLAGS "-U__cpp_concepts -D__cpp_concepts=202002L")
  check_cxx_source_compiles("${MOESIM_EXPECTED_PROBE}"
                            MOESIM_HAVE_EXPECTED_WITH_CONCEPTS_MACRO)
  unset(CMAKE_REQUIRED_FLAGS)
  if(NOT MOESIM_HAVE_EXPECTED_WITH_CONCEPTS_MACRO)
    message(FATAL_ERROR "${CMAKE_CXX_COMPILER} cannot compile libstdc++'s "
                        "<expected> (clang >= 16 can)")
  endif()
  add_compile_options(-U__cpp_concepts -D__cpp_concepts=202002L)
endif()
add_compile_options(
  "$<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link,address,undefined;-fno-sanitize-recover=undefined;-fno-omit-frame-pointer;-g>")
add_link_options(-fsanitize=address,undefined)
