// param.ccl into the registry's declarations: the syntax is ccl/'s (ccl/param_ccl.hpp); here its
// ranges and defaults get their values and are checked, through the reader's hooks, so that
// every error is raised where the reader meets its cause.
#include "ccl/param_ccl.hpp"
#include "param/detail.hpp"

#include <fmt/format.h>

namespace saguaro::param {

using support::InputError;
using support::SourceFile;

namespace {

Type type_of(ccl::ParamType type) {
  switch (type) {
  case ccl::ParamType::Int: return Type::Int;
  case ccl::ParamType::Real: return Type::Real;
  case ccl::ParamType::Keyword: return Type::Keyword;
  case ccl::ParamType::Boolean: return Type::Boolean;
  case ccl::ParamType::String: return Type::String;
  }
  return Type::String;
}

Access access_of(ccl::ParamAccess access) {
  switch (access) {
  case ccl::ParamAccess::Global: return Access::Global;
  case ccl::ParamAccess::Restricted: return Access::Restricted;
  case ccl::ParamAccess::Private: return Access::Private;
  case ccl::ParamAccess::Shares: return Access::Shares;
  }
  return Access::Private;
}

// A range item's value: INT and REAL bounds parsed, a STRING's regular expression checked.
RangeItem range_item(Type type, const ccl::ParamRange& range) {
  RangeItem item;
  item.text = range.text;
  item.description = range.description;
  if (type == Type::Keyword) return item;
  if (type == Type::String) {
    if (const std::string why = detail::pattern_error(item.text); !why.empty())
      throw InputError(range.loc,
                       fmt::format("'{}' is not a valid regular expression: {}", item.text, why));
    return item;
  }
  std::string problem = detail::parse_numeric_range(item.text, type, item);
  if (!problem.empty())
    throw InputError(range.loc, "invalid range " + problem,
                     {{{},
                       "ranges are written 'lo:hi' or 'lo:hi:step' with '*' for no bound, "
                       "'(' or ')' for an open end, '[' or ']' for a closed one"}});
  return item;
}

Value parse_default(const ccl::ParamDecl& written, const Declaration& decl) {
  const std::string& text = written.default_text;
  const support::SourceLoc& at = written.default_loc;
  switch (decl.type) {
  case Type::Int: {
    bool not_integral = false, too_large = false;
    std::optional<long> v = detail::parse_int(detail::trim(text), &not_integral, &too_large);
    if (!v)
      throw InputError(
          at, fmt::format("the default '{}' of INT {} is not an integer", text, decl.name));
    return *v;
  }
  case Type::Real: {
    std::optional<double> v = detail::parse_real(detail::trim(text));
    if (!v)
      throw InputError(at,
                       fmt::format("the default '{}' of REAL {} is not a number", text, decl.name));
    return *v;
  }
  case Type::Boolean: {
    std::optional<bool> v = detail::parse_bool(text);
    if (!v)
      throw InputError(at, fmt::format("the default '{}' of BOOLEAN {} is not a boolean: expected "
                                       "yes, no, true, false, 1 or 0",
                                       text, decl.name));
    return *v;
  }
  case Type::Keyword: {
    for (const RangeItem& r : decl.ranges)
      if (support::iequals(r.text, text)) return r.text;
    if (!decl.ranges.empty())
      throw InputError(at,
                       fmt::format("the default \"{}\" of KEYWORD {} is not one of its keywords",
                                   text, decl.name));
    return text;
  }
  case Type::String: return text;
  }
  return text;
}

// The registry's declaration of one written in `thorn`'s param.ccl.
Declaration declaration(const ccl::ParamDecl& written, const std::string& thorn) {
  Declaration decl;
  decl.thorn = thorn;
  decl.name = written.name;
  decl.type = type_of(written.type);
  decl.description = written.description;
  decl.access = access_of(written.access);
  decl.steerable = written.steerable;
  decl.array_size = written.array_size;
  decl.loc = written.loc;
  for (const ccl::ParamRange& range : written.ranges)
    decl.ranges.push_back(range_item(decl.type, range));
  decl.default_value = parse_default(written, decl);
  if (!detail::value_allowed(decl, decl.default_value))
    throw InputError(written.default_loc,
                     fmt::format("the default {} of {} is outside its range",
                                 detail::format_value(decl.default_value, true), decl.name),
                     {{{}, "allowed: " + detail::format_ranges(decl)}});
  return decl;
}

} // namespace

std::vector<Declaration> parse_param_ccl(const std::shared_ptr<const SourceFile>& source,
                                         const std::string& thorn) {
  std::vector<Declaration> out;
  ccl::ParamCclHooks hooks;
  hooks.range = [](ccl::ParamType type, const ccl::ParamRange& range) {
    (void)range_item(type_of(type), range);
  };
  hooks.declared = [&](const ccl::ParamDecl& written) {
    out.push_back(declaration(written, thorn));
  };
  ccl::read_param_ccl(source, hooks);
  return out;
}

} // namespace saguaro::param
