// Source text and diagnostics for the EDL front end: the program's one diagnostic type
// (support/diagnostics.hpp) under the names the front end has always used.
//
// Every error a user can cause names file:line:col, quotes the line with a caret under the
// culprit and says what was expected, in the style of LLVM's diagnostics.
#pragma once

#include "support/diagnostics.hpp"

namespace saguaro::edl {

using support::describe_character;
using support::did_you_mean;
using support::nearest_name;
using support::Note;
using support::render_diagnostic;
using support::SourceFile;
using support::SourceLoc;

// A user error in EDL input. The same type as every other input's (support::InputError), so a
// caller catching one catches all.
using EdlError = support::InputError;

} // namespace saguaro::edl
