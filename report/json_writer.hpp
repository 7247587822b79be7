// JSON text written straight from values, for the report (json_stream.cpp,
// to_json_text): a compare's reply and stored row without building a
// nlohmann::json tree first (the tree's allocations were a fifth of a fresh
// compare's CPU).
//
// The text is byte for byte what nlohmann::json's dump(-1, ' ', false,
// error_handler_t::replace) gives the same document, so stored and served
// reports are one format whichever way they were made: objects are written
// with their keys in ascending byte order (the order of nlohmann::json's
// std::map; checked, a key out of order throws), numbers with nlohmann's own
// shortest round-trip conversion (Grisu2, detail::to_chars; not the same
// digits as std::to_chars in every case), non-finite numbers as null, and
// strings that are not plain printable ASCII are escaped by nlohmann::json
// itself. tests/test_gate.cpp holds the two to the same bytes.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perfgate::report {

class json_writer {
public:
    explicit json_writer(std::string& out) : out_(out) {}

    json_writer& begin_object() { return open(true); }
    json_writer& end_object() { return close(true); }
    json_writer& begin_array() { return open(false); }
    json_writer& end_array() { return close(false); }
    // The next member's key: greater than the object's previous key (keys
    // are compared as bytes). The view must stay valid until end_object.
    json_writer& key(std::string_view k);

    json_writer& null();
    json_writer& boolean(bool v);
    json_writer& number(double v);                       // null when not finite
    json_writer& number(const std::optional<double>& v); // null when absent or not finite
    template <std::integral T>
    requires(!std::same_as<T, bool>) json_writer& integer(T v)
    {
        before_value();
        append_integer(static_cast<std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>>(v));
        return *this;
    }
    json_writer& string(std::string_view s);
    // A whole JSON text as the next value (a subtree made by nlohmann::json).
    json_writer& raw(std::string_view text);

    // Shorthands for a member: key(k) then the value.
    template <typename T>
    json_writer& member(std::string_view k, const T& v)
    {
        key(k);
        if constexpr (std::same_as<T, bool>) {
            return boolean(v);
        } else if constexpr (std::integral<T>) {
            return integer(v);
        } else if constexpr (std::same_as<T, double> || std::same_as<T, std::optional<double>>) {
            return number(v);
        } else {
            return string(v);
        }
    }

private:
    json_writer& open(bool object);
    json_writer& close(bool object);
    void before_value();
    void append_string(std::string_view s);
    void append_integer(std::int64_t v);
    void append_integer(std::uint64_t v);

    struct frame {
        bool object;
        bool empty = true;
        std::string_view last_key;
    };
    std::string& out_;
    std::vector<frame> open_;
    bool after_key_ = false;
};

} // namespace perfgate::report
