// md5_hex (guest/records.hpp): the checksum of every record line, MD5 as RFC 1321 defines it.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "guest/records.hpp"

namespace abvm {
namespace {

// ---- MD5 (RFC 1321), compact: records are short and few. ----
constexpr std::array<std::uint32_t, 64> kMd5K = [] {
  // floor(abs(sin(i + 1)) * 2^32), tabulated in RFC 1321.
  return std::array<std::uint32_t, 64>{
      0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
      0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
      0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
      0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
      0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
      0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
      0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
      0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};
}();
constexpr std::array<int, 64> kMd5S = {7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
                                       5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
                                       4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
                                       6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};

std::uint32_t rotl(std::uint32_t x, int c) { return (x << c) | (x >> (32 - c)); }

// Streaming MD5: the parser hashes a candidate record as two pieces (a head and a tail) without
// building it, and nothing is copied or padded in a second buffer.
class Md5 {
 public:
  void update(std::string_view data) {
    length_ += data.size();
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    std::size_t n = data.size();
    if (used_ > 0) {
      const std::size_t take = std::min(64 - used_, n);
      std::memcpy(buf_.data() + used_, p, take);
      used_ += take;
      p += take;
      n -= take;
      if (used_ < 64) return;
      block(buf_.data());
      used_ = 0;
    }
    for (; n >= 64; p += 64, n -= 64) block(p);
    std::memcpy(buf_.data(), p, n);
    used_ = n;
  }

  std::string hex() {
    const std::uint64_t bits = length_ * 8;
    const unsigned char pad = 0x80;
    update(std::string_view(reinterpret_cast<const char*>(&pad), 1));
    while (used_ != 56) update(std::string_view("\0", 1));
    for (int i = 0; i < 8; ++i) buf_[used_++] = static_cast<unsigned char>((bits >> (8 * i)) & 0xff);
    block(buf_.data());
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out(32, '0');
    for (std::size_t i = 0; i < 16; ++i) {
      const unsigned byte = (h_[i / 4] >> (8 * (i % 4))) & 0xff;
      out[2 * i] = kHex[byte >> 4];
      out[2 * i + 1] = kHex[byte & 15];
    }
    return out;
  }

 private:
  void block(const unsigned char* p) {
    std::uint32_t m[16];
    for (std::size_t i = 0; i < 16; ++i) {
      m[i] = p[4 * i] | (p[4 * i + 1] << 8) | (p[4 * i + 2] << 16) | (static_cast<std::uint32_t>(p[4 * i + 3]) << 24);
    }
    std::uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3];
    for (int i = 0; i < 64; ++i) {
      std::uint32_t f;
      int g;
      if (i < 16) { f = (b & c) | (~b & d); g = i; }
      else if (i < 32) { f = (d & b) | (~d & c); g = (5 * i + 1) % 16; }
      else if (i < 48) { f = b ^ c ^ d; g = (3 * i + 5) % 16; }
      else { f = c ^ (b | ~d); g = (7 * i) % 16; }
      const std::uint32_t next = b + rotl(a + f + kMd5K[static_cast<std::size_t>(i)] + m[g], kMd5S[static_cast<std::size_t>(i)]);
      a = d; d = c; c = b; b = next;
    }
    h_[0] += a; h_[1] += b; h_[2] += c; h_[3] += d;
  }

  std::array<std::uint32_t, 4> h_ = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
  std::array<unsigned char, 64> buf_{};
  std::size_t used_ = 0;
  std::uint64_t length_ = 0;
};

}  // namespace

std::string md5_hex(std::string_view data) {
  Md5 md5;
  md5.update(data);
  return md5.hex();
}

}  // namespace abvm
