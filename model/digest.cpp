#include "model/digest.hpp"

#include <array>

#include <openssl/evp.h>

#include "model/error.hpp"

namespace perfgate::model {

std::string to_hex(const unsigned char* bytes, std::size_t n)
{
    static constexpr char digits[] = "0123456789abcdef";
    std::string out(2 * n, '\0');
    for (std::size_t i = 0; i < n; ++i) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 0xf];
    }
    return out;
}

std::string sha256_hex(std::string_view data)
{
    std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
    unsigned int len = 0;
    if (EVP_Digest(data.data(), data.size(), md.data(), &len, EVP_sha256(), nullptr) != 1) {
        throw error(errors::crypto_failed, "SHA-256 failed (OpenSSL EVP_Digest)");
    }
    return to_hex(md.data(), len);
}

} // namespace perfgate::model
