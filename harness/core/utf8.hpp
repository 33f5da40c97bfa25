#pragma once
// UTF-8 as XML 1.0 and JSON writers need it. Text from guests, tools and file names need not be
// UTF-8; libvirt refuses an XML document that carries such bytes raw.
#include <cstddef>
#include <string>
#include <string_view>

namespace abvm {

// Offset of the first byte that does not start a well-formed UTF-8 character (overlong forms,
// UTF-16 surrogates, code points beyond U+10FFFF and the non-characters U+FFFE/U+FFFF count as
// malformed), or std::string_view::npos when all of `s` is well-formed.
std::size_t first_invalid_utf8(std::string_view s);

// `s` with every byte that first_invalid_utf8 would stop at replaced by U+FFFD, so that the text
// is well-formed in that sense (a JSON line read back gives the same text; XML takes it).
std::string to_well_formed_utf8(std::string_view s);

}  // namespace abvm
