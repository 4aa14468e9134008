# FindGLPK: the GNU Linear Programming Kit (glpk.h, libglpk); CMake ships no module for it.
# Defines GLPK_FOUND, GLPK_VERSION, GLPK_INCLUDE_DIR, GLPK_LIBRARY and the imported target
# GLPK::GLPK.
#
# Searched, besides the system: GLPK_ROOT (a CMake variable or environment variable) and
# CMAKE_PREFIX_PATH, each a prefix holding include/glpk.h and lib/[<arch>/]libglpk.so; e.g.
# the Debian packages that scripts/device-debs.sh --unpack puts in .debs/root/usr on a machine
# without GLPK (see bench/README.md).

set(_glpk_hints)
foreach(_glpk_root IN ITEMS "${GLPK_ROOT}" "$ENV{GLPK_ROOT}")
  if(_glpk_root)
    list(APPEND _glpk_hints "${_glpk_root}")
  endif()
endforeach()

find_path(GLPK_INCLUDE_DIR glpk.h HINTS ${_glpk_hints} PATH_SUFFIXES include)
find_library(GLPK_LIBRARY NAMES glpk HINTS ${_glpk_hints}
  PATH_SUFFIXES lib "lib/${CMAKE_LIBRARY_ARCHITECTURE}" lib64)

if(GLPK_INCLUDE_DIR AND EXISTS "${GLPK_INCLUDE_DIR}/glpk.h")
  file(STRINGS "${GLPK_INCLUDE_DIR}/glpk.h" _glpk_version_lines
    REGEX "^#define[ \t]+GLP_(MAJOR|MINOR)_VERSION[ \t]+[0-9]+")
  string(REGEX REPLACE ".*GLP_MAJOR_VERSION[ \t]+([0-9]+).*" "\\1" _glpk_major "${_glpk_version_lines}")
  string(REGEX REPLACE ".*GLP_MINOR_VERSION[ \t]+([0-9]+).*" "\\1" _glpk_minor "${_glpk_version_lines}")
  set(GLPK_VERSION "${_glpk_major}.${_glpk_minor}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(GLPK
  REQUIRED_VARS GLPK_LIBRARY GLPK_INCLUDE_DIR
  VERSION_VAR GLPK_VERSION)

if(GLPK_FOUND AND NOT TARGET GLPK::GLPK)
  add_library(GLPK::GLPK UNKNOWN IMPORTED)
  set_target_properties(GLPK::GLPK PROPERTIES
    IMPORTED_LOCATION "${GLPK_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${GLPK_INCLUDE_DIR}")
endif()

mark_as_advanced(GLPK_INCLUDE_DIR GLPK_LIBRARY)
