# FindRE2: Google's RE2 (re2/re2.h, libre2), regular expressions matched in time linear in the
# input without recursion; Debian's libre2-dev ships a pkg-config file but no CMake package.
# Defines RE2_FOUND, RE2_INCLUDE_DIR, RE2_LIBRARY and the imported target RE2::RE2.
#
# Searched, besides the system: RE2_ROOT (a CMake variable or environment variable) and
# CMAKE_PREFIX_PATH, each a prefix holding include/re2/re2.h and lib/[<arch>/]libre2.so; e.g.
# the Debian packages that scripts/device-debs.sh --unpack puts in .debs/root/usr on a machine
# without them.

set(_re2_hints)
foreach(_re2_root IN ITEMS "${RE2_ROOT}" "$ENV{RE2_ROOT}")
  if(_re2_root)
    list(APPEND _re2_hints "${_re2_root}")
  endif()
endforeach()

find_path(RE2_INCLUDE_DIR re2/re2.h HINTS ${_re2_hints} PATH_SUFFIXES include)
find_library(RE2_LIBRARY NAMES re2 HINTS ${_re2_hints}
  PATH_SUFFIXES lib "lib/${CMAKE_LIBRARY_ARCHITECTURE}" lib64)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(RE2 REQUIRED_VARS RE2_LIBRARY RE2_INCLUDE_DIR)

if(RE2_FOUND AND NOT TARGET RE2::RE2)
  find_package(Threads REQUIRED) # RE2 locks its lazily built automata
  add_library(RE2::RE2 UNKNOWN IMPORTED)
  set_target_properties(RE2::RE2 PROPERTIES
    IMPORTED_LOCATION "${RE2_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${RE2_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES Threads::Threads)
endif()

mark_as_advanced(RE2_INCLUDE_DIR RE2_LIBRARY)
