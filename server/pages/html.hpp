// Building HTML without concatenating user data into markup.
//
// One escaping path: a page is written through html::writer, whose only
// ways to add text are
//   - markup: a string literal of the source (consteval: a std::string or a
//     runtime string_view does not convert), written as is;
//   - text(), and every argument of f(): escaped for element content and
//     quoted attribute values (& < > " ');
//   - json_data(): a JSON document for <script type="application/json">,
//     with < > & written as \u003c \u003e \u0026 so no value can close the
//     element.
// URLs built from names go through url_query() (percent-encoding) and are
// then escaped like any text.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json_fwd.hpp>

namespace perfgate::server::html {

// A fragment of markup written in the source code.
class markup {
public:
    template <std::size_t N>
    consteval markup(const char (&literal)[N]) : text_(literal, N - 1)
    {} // NOLINT: implicit by design

    [[nodiscard]] constexpr std::string_view view() const { return text_; }

private:
    std::string_view text_;
};

// & < > " ' as character references.
std::string escape(std::string_view text);

// application/x-www-form-urlencoded component encoding (RFC 3986 unreserved
// characters kept, everything else %XX): for query values and path segments.
std::string url_encode(std::string_view value);

// "?k1=v1&k2=v2" from pairs with non-empty values (empty ones are left out).
std::string url_query(std::initializer_list<std::pair<std::string_view, std::string_view>> params);

class writer {
public:
    writer& operator<<(markup m)
    {
        out_ += m.view();
        return *this;
    }
    writer& text(std::string_view s);
    // pattern is markup; every argument is formatted, then escaped.
    template <typename... Args>
    writer& f(markup pattern, const Args&... args)
    {
        out_ += fmt::format(fmt::runtime(pattern.view()), escape(fmt::format("{}", args))...);
        return *this;
    }
    writer& json_data(const nlohmann::json& data);
    // Another writer's output (built through the same escaping path).
    writer& append(const writer& other)
    {
        out_ += other.out_;
        return *this;
    }

    void reserve(std::size_t bytes) { out_.reserve(bytes); }
    [[nodiscard]] const std::string& str() const { return out_; }
    [[nodiscard]] std::string take() { return std::move(out_); }

private:
    std::string out_;
};

} // namespace perfgate::server::html
