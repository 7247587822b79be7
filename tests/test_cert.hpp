// A self-signed certificate for TLS tests, made with the openssl CLI in a
// temp directory (removed on destruction). san is an X.509 subjectAltName
// list such as "DNS:localhost,IP:127.0.0.1". Clients trust it through
// SSL_CERT_FILE=cert, which client/http.cpp honours.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>

#include <doctest/doctest.h>

namespace perfgate::test {

struct test_cert {
    std::filesystem::path dir, cert, key;

    explicit test_cert(const std::string& san)
    {
        dir = std::filesystem::temp_directory_path() /
              ("perfgate-tls-" + std::to_string(::getpid()) + "-" + std::to_string(std::hash<std::string>{}(san)));
        std::filesystem::create_directories(dir);
        cert = dir / "cert.pem";
        key = dir / "key.pem";
        std::string cmd = "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=perfgate-test -addext "
                          "subjectAltName=" +
                          san + " -keyout " + key.string() + " -out " + cert.string() + " >/dev/null 2>&1";
        REQUIRE(std::system(cmd.c_str()) == 0);
    }
    ~test_cert() { std::filesystem::remove_all(dir); }
    test_cert(const test_cert&) = delete;
    test_cert& operator=(const test_cert&) = delete;
};

} // namespace perfgate::test
