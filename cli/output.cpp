#include "cli/output.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <iostream>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/cli.hpp"
#include "model/error.hpp"
#include "model/file.hpp"

namespace perfgate::cli {

report_format parse_format(std::string_view s)
{
    if (s == "text") return report_format::text;
    if (s == "json") return report_format::json;
    if (s == "markdown" || s == "md") return report_format::markdown;
    if (s == "junit") return report_format::junit;
    throw error(errors::usage_bad_value, fmt::format("--format: expected text, json, markdown or junit, got '{}'", s));
}

std::string render(const gate::report& r, report_format format, const report::markdown_options& md)
{
    switch (format) {
    case report_format::json:
        return report::to_json(r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    case report_format::markdown: return report::render_markdown(r, md);
    case report_format::junit: return report::render_junit(r);
    case report_format::text: return report::render_text(r, false);
    }
    return {};
}

void emit_report(const gate::report& r, report_format format, const std::optional<std::string>& output_path,
                 const report::markdown_options& md)
{
    const bool colour = format == report_format::text && ::isatty(STDOUT_FILENO) == 1 &&
                        std::getenv("NO_COLOR") == nullptr;
    const std::string plain = render(r, format, md);
    std::fputs(colour ? report::render_text(r, true).c_str() : plain.c_str(), stdout);
    std::fflush(stdout);
    if (output_path) {
        std::ofstream out(*output_path, std::ios::binary | std::ios::trunc);
        if (!(out << plain) || !out.flush()) {
            throw error(errors::input_unwritable, fmt::format("{}: cannot write the report", *output_path));
        }
    }
}

void print_error(std::string_view text) noexcept
{
    std::fwrite(text.data(), 1, text.size(), stderr);
    std::fflush(stderr);
}

void finish_stdout()
{
    std::cout.flush();
    errno = 0;
    if (std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout.good()) {
        const int err = errno;
        std::clearerr(stdout);
        throw error(errors::io_stdout, fmt::format("cannot write to standard output{}: the report is lost",
                                                   err ? fmt::format(" ({})", std::strerror(err)) : std::string()));
    }
}

int verdict_exit_code(gate::verdict v, bool fail_on_inconclusive)
{
    switch (v) {
    case gate::verdict::pass: return exit_pass;
    case gate::verdict::fail: return exit_regression;
    case gate::verdict::inconclusive: return fail_on_inconclusive ? exit_inconclusive : exit_pass;
    }
    return exit_pass;
}

std::string iso_time(std::int64_t unix_seconds)
{
    return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(static_cast<std::time_t>(unix_seconds)));
}

gate::report load_report(const std::string& path)
{
    nlohmann::json j = nlohmann::json::parse(model::read_text_file(path), nullptr, false);
    if (j.is_discarded()) throw error(errors::input_bad_report, fmt::format("{}: not a JSON document", path));
    try {
        return report::report_from_json(j);
    } catch (const error& e) {
        throw error(errors::input_bad_report, fmt::format("{}: {}", path, e.what()));
    } catch (const nlohmann::json::exception& e) {
        throw error(errors::input_bad_report, fmt::format("{}: {}", path, e.what()));
    }
}

} // namespace perfgate::cli
