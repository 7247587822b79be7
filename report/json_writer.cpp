#include "report/json_writer.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

#include <nlohmann/json.hpp>

#include "model/error.hpp"

namespace perfgate::report {

void json_writer::before_value()
{
    if (after_key_) {
        after_key_ = false;
        return;
    }
    PERFGATE_CHECK(open_.empty() || !open_.back().object); // an object's value needs its key first
    if (!open_.empty()) {
        if (!open_.back().empty) out_ += ',';
        open_.back().empty = false;
    }
}

json_writer& json_writer::open(bool object)
{
    before_value();
    out_ += object ? '{' : '[';
    open_.push_back({object, true, {}});
    return *this;
}

json_writer& json_writer::close(bool object)
{
    PERFGATE_CHECK(!open_.empty() && open_.back().object == object && !after_key_);
    open_.pop_back();
    out_ += object ? '}' : ']';
    return *this;
}

json_writer& json_writer::key(std::string_view k)
{
    PERFGATE_CHECK(!open_.empty() && open_.back().object && !after_key_);
    frame& f = open_.back();
    // nlohmann::json's objects are std::maps of std::string: ascending bytes.
    PERFGATE_CHECK(f.empty || f.last_key < k);
    if (!f.empty) out_ += ',';
    f.empty = false;
    f.last_key = k;
    append_string(k);
    out_ += ':';
    after_key_ = true;
    return *this;
}

json_writer& json_writer::null()
{
    before_value();
    out_ += "null";
    return *this;
}

json_writer& json_writer::boolean(bool v)
{
    before_value();
    out_ += v ? "true" : "false";
    return *this;
}

json_writer& json_writer::number(double v)
{
    if (!std::isfinite(v)) return null();
    before_value();
    // nlohmann::json's serializer::dump_float for IEEE doubles.
    std::array<char, 64> buf{};
    char* end = nlohmann::detail::to_chars(buf.data(), buf.data() + buf.size(), v);
    out_.append(buf.data(), end);
    return *this;
}

json_writer& json_writer::number(const std::optional<double>& v) { return v ? number(*v) : null(); }

void json_writer::append_integer(std::int64_t v)
{
    std::array<char, 24> buf{};
    auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v);
    out_.append(buf.data(), end);
}

void json_writer::append_integer(std::uint64_t v)
{
    std::array<char, 24> buf{};
    auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v);
    out_.append(buf.data(), end);
}

json_writer& json_writer::string(std::string_view s)
{
    before_value();
    append_string(s);
    return *this;
}

void json_writer::append_string(std::string_view s)
{
    const bool plain = std::all_of(s.begin(), s.end(), [](char ch) {
        const auto u = static_cast<unsigned char>(ch);
        return u >= 0x20 && u < 0x7f && ch != '"' && ch != '\\';
    });
    if (plain) {
        out_ += '"';
        out_ += s;
        out_ += '"';
    } else {
        // Escapes, UTF-8 checks and replacement exactly as a dump does them.
        out_ += nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
}

json_writer& json_writer::raw(std::string_view text)
{
    before_value();
    out_ += text;
    return *this;
}

} // namespace perfgate::report
