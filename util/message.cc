#include "util/message.h"

#include <cstdio>

namespace moesim::util {
namespace {

// Length of the valid UTF-8 sequence starting at text[i], or 0.
size_t Utf8Length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) {
    return static_cast<unsigned char>(text[k]);
  };
  const unsigned char c = byte(i);
  size_t n = 0;
  if (c >= 0xC2 && c <= 0xDF)
    n = 2;
  else if (c >= 0xE0 && c <= 0xEF)
    n = 3;
  else if (c >= 0xF0 && c <= 0xF4)
    n = 4;
  else
    return 0;
  if (i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  // Overlong 3- and 4-byte forms, surrogates and code points past U+10FFFF.
  if (c == 0xE0 && byte(i + 1) < 0xA0) return 0;
  if (c == 0xED && byte(i + 1) > 0x9F) return 0;
  if (c == 0xF0 && byte(i + 1) < 0x90) return 0;
  if (c == 0xF4 && byte(i + 1) > 0x8F) return 0;
  return n;
}

std::string Escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c >= 0x80) {
      if (const size_t n = Utf8Length(text, i); n > 0) {
        out.append(text.substr(i, n));
        i += n;
        continue;
      }
    }
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02X", c);
      out += hex;
    }
    ++i;
  }
  return out;
}

// Cuts at a byte that does not start inside a UTF-8 sequence.
size_t Boundary(std::string_view text, size_t at) {
  while (at > 0 && at < text.size() &&
         (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80)
    --at;
  return at;
}

}  // namespace

std::string ShowableMessage(std::string_view message) {
  std::string out = Escape(message);
  if (out.size() <= kMaxMessageBytes) return out;
  const size_t head = Boundary(out, kMaxMessageBytes * 6 / 10);
  const size_t tail = Boundary(out, out.size() - kMaxMessageBytes * 3 / 10);
  return out.substr(0, head) + " ... [" + std::to_string(tail - head) +
         " bytes cut] ... " + out.substr(tail);
}

std::string Excerpt(std::string_view value, size_t max_bytes) {
  std::string out = Escape(value);
  if (out.size() <= max_bytes) return out;
  return out.substr(0, Boundary(out, max_bytes)) + "...";
}

std::string Quoted(std::string_view value) {
  std::string out(1, '\'');
  out += Excerpt(value);
  out += '\'';
  return out;
}

}  // namespace moesim::util
