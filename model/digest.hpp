// The one SHA-256 helper of the project (OpenSSL EVP): token hashes,
// comparison request keys and testbed fingerprints all go through it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace perfgate::model {

// Lowercase hex of n bytes.
std::string to_hex(const unsigned char* bytes, std::size_t n);

// Lowercase hex SHA-256 (64 digits) of data. Error "crypto.failed" if
// OpenSSL fails (it does not for SHA-256 short of memory exhaustion).
std::string sha256_hex(std::string_view data);

} // namespace perfgate::model
