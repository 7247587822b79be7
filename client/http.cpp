#include "client/http.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <memory>

// The protocol bitmask options are deprecated from libcurl 7.85 on, but the
// libcurl loaded at run time may be older than the headers (see
// restrict_protocols).
#define CURL_DISABLE_DEPRECATION
#include <curl/curl.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include "model/error.hpp"

namespace perfgate::client {

namespace {

// Largest response body we accept. GitHub's biggest answers we read are
// comment pages (100 comments of up to 65,536 characters each, JSON-escaped),
// so 64 MiB leaves room.
constexpr std::size_t body_limit = 64u * 1024 * 1024;
// Redirects followed: GitHub redirects renamed repositories once; more is a loop.
constexpr long max_redirects = 5;

constexpr const char* user_agent = "perfgate/0.1 (+https://github.com/perfgate/perfgate)";

constexpr std::array<std::string_view, 7> methods = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"};

bool iequals(std::string_view a, std::string_view b)
{
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
        return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
    });
}

[[noreturn]] void bad_url(std::string_view url, std::string_view why)
{
    throw error(errors::http_bad_url, fmt::format("bad URL '{}': {}", url, why));
}

// --- URLs: checked here, so a typo is a usage error naming the URL ---------

struct parsed_url {
    bool tls = false;
    std::string host; // without brackets for IPv6 literals
    std::string port;
    std::string target; // path and query, at least "/"
    bool default_port = true;
    std::string normalized; // what is sent: no fragment, at least "/" as path
};

parsed_url parse_url(std::string_view url)
{
    parsed_url out;
    auto scheme_end = url.find("://");
    if (scheme_end == std::string_view::npos) bad_url(url, "expected http://HOST[:PORT]/PATH or https://...");
    std::string_view scheme = url.substr(0, scheme_end);
    if (iequals(scheme, "https")) {
        out.tls = true;
        out.port = "443";
    } else if (iequals(scheme, "http")) {
        out.port = "80";
    } else {
        bad_url(url, fmt::format("unsupported scheme '{}' (only http and https)", scheme));
    }

    std::string_view rest = url.substr(scheme_end + 3);
    auto path_start = rest.find_first_of("/?#");
    std::string_view authority = rest.substr(0, path_start);
    std::string_view target = path_start == std::string_view::npos ? std::string_view{} : rest.substr(path_start);
    // A fragment is never sent to the server (RFC 9110 §7.1).
    if (auto hash = target.find('#'); hash != std::string_view::npos) target = target.substr(0, hash);
    if (authority.find('@') != std::string_view::npos) {
        bad_url(url, "user:password@ in URLs is not supported; pass credentials as a header");
    }
    if (authority.empty()) bad_url(url, "no host");

    std::string_view host = authority;
    std::string_view port;
    if (authority.front() == '[') { // IPv6 literal, RFC 3986 §3.2.2
        auto close = authority.find(']');
        if (close == std::string_view::npos) bad_url(url, "unterminated '[' in host");
        host = authority.substr(1, close - 1);
        std::string_view after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') bad_url(url, "unexpected characters after ']'");
            port = after.substr(1);
        }
    } else if (auto colon = authority.rfind(':'); colon != std::string_view::npos) {
        host = authority.substr(0, colon);
        port = authority.substr(colon + 1);
    }
    if (host.empty()) bad_url(url, "no host");
    if (!port.empty()) {
        unsigned value = 0;
        auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
        if (ec != std::errc{} || end != port.data() + port.size() || value == 0 || value > 65535) {
            bad_url(url, fmt::format("bad port '{}'", port));
        }
        out.default_port = port == out.port;
        out.port = std::string(port);
    }
    out.host = std::string(host);
    out.target = target.empty() ? "/" : std::string(target);
    if (out.target.front() == '?') out.target.insert(0, "/");
    out.normalized = fmt::format("{}://{}{}", out.tls ? "https" : "http", authority, out.target);
    return out;
}

// --- libcurl plumbing ------------------------------------------------------

// libcurl is loaded by the first request, not when perfgate starts: with
// the ~25 libraries it needs (TLS, HTTP/2, SSH, Kerberos, LDAP, IDN, ...)
// it cost every perfgate process ~5 ms of CPU in the dynamic linker
// (measured with `perf record` on `perfgate run`), though most runs
// (measure and gate locally, compare files) never speak HTTP. Only the
// functions below are used; each is looked up once.
struct curl_api {
    decltype(&::curl_global_init) global_init = nullptr;
    decltype(&::curl_easy_init) easy_init = nullptr;
    decltype(&::curl_easy_cleanup) easy_cleanup = nullptr;
    decltype(&::curl_easy_reset) easy_reset = nullptr;
    decltype(&::curl_easy_setopt) easy_setopt = nullptr;
    decltype(&::curl_easy_getinfo) easy_getinfo = nullptr;
    decltype(&::curl_easy_perform) easy_perform = nullptr;
    decltype(&::curl_easy_strerror) easy_strerror = nullptr;
    decltype(&::curl_slist_append) slist_append = nullptr;
    decltype(&::curl_slist_free_all) slist_free_all = nullptr;
};

// The SONAME perfgate was built against (libcurl4's, since 2006).
constexpr const char* libcurl_soname = "libcurl.so.4";

template <class F>
void look_up(void* lib, F& fn, const char* name)
{
    fn = reinterpret_cast<F>(::dlsym(lib, name));
    if (!fn) throw error(errors::http_unreachable, fmt::format("{} has no {}: {}", libcurl_soname, name, ::dlerror()));
}

curl_api load_curl()
{
    // Never closed: libcurl's global state lives until exit.
    void* lib = ::dlopen(libcurl_soname, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        throw error(errors::http_unreachable,
                    fmt::format("cannot load {} for HTTP ({}); install it: apt-get install libcurl4", libcurl_soname,
                                ::dlerror()));
    }
    curl_api api;
    look_up(lib, api.global_init, "curl_global_init");
    look_up(lib, api.easy_init, "curl_easy_init");
    look_up(lib, api.easy_cleanup, "curl_easy_cleanup");
    look_up(lib, api.easy_reset, "curl_easy_reset");
    look_up(lib, api.easy_setopt, "curl_easy_setopt");
    look_up(lib, api.easy_getinfo, "curl_easy_getinfo");
    look_up(lib, api.easy_perform, "curl_easy_perform");
    look_up(lib, api.easy_strerror, "curl_easy_strerror");
    look_up(lib, api.slist_append, "curl_slist_append");
    look_up(lib, api.slist_free_all, "curl_slist_free_all");
    // curl_global_init is not thread-safe in older libcurl: once, before any handle.
    if (api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        throw error(errors::http_unreachable, "libcurl failed to initialise (curl_global_init)");
    }
    return api;
}

// Loaded and initialised once (a failed load is retried by the next call).
const curl_api& curl()
{
    static const curl_api api = load_curl();
    return api;
}

struct curl_deleter {
    void operator()(CURL* h) const noexcept { curl().easy_cleanup(h); }
    void operator()(curl_slist* l) const noexcept { curl().slist_free_all(l); }
};
using easy_handle = std::unique_ptr<CURL, curl_deleter>;
using header_list = std::unique_ptr<curl_slist, curl_deleter>;

// One handle per thread: libcurl keeps its connections (and TLS sessions)
// with the handle, so consecutive requests to one host reuse a connection.
CURL* thread_handle()
{
    thread_local easy_handle handle;
    if (!handle) {
        handle.reset(curl().easy_init());
        if (!handle) throw error(errors::http_unreachable, "libcurl could not create a handle (out of memory?)");
    }
    curl().easy_reset(handle.get()); // options only: the connection cache stays
    return handle.get();
}

struct transfer {
    http_response response;
    bool too_large = false;
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user)
{
    auto* t = static_cast<transfer*>(user);
    const std::size_t n = size * count;
    if (t->response.body.size() + n > body_limit) {
        t->too_large = true;
        return 0; // aborts the transfer with CURLE_WRITE_ERROR
    }
    t->response.body.append(data, n);
    return n;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user)
{
    auto* t = static_cast<transfer*>(user);
    const std::size_t n = size * count;
    std::string_view line(data, n);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
    if (line.starts_with("HTTP/")) {
        // A new response (after a redirect or a 100 Continue): keep only the last one's headers.
        t->response.headers.clear();
        return n;
    }
    auto colon = line.find(':');
    if (colon == std::string_view::npos) return n;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    t->response.headers.emplace_back(std::string(line.substr(0, colon)), std::string(value));
    return n;
}

template <class T>
void set(CURL* h, CURLoption option, T value)
{
    if (curl().easy_setopt(h, option, value) != CURLE_OK) {
        throw error(errors::http_unreachable, fmt::format("libcurl refused option {}", static_cast<int>(option)));
    }
}

// http and https only, also for redirects. libcurl 7.85 takes them as text
// and deprecates the bitmask; an older libcurl (Ubuntu 22.04 has 7.81) knows
// only the bitmask. The headers perfgate is built with do not say which
// libcurl it loads at run time (the release binary built on Debian 12 runs
// on Ubuntu 22.04), so an unknown option falls back to the bitmask.
void restrict_protocols(CURL* h)
{
#if LIBCURL_VERSION_NUM >= 0x075500
    const CURLcode rc = curl().easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    if (rc == CURLE_OK) {
        set(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
        return;
    }
    if (rc != CURLE_UNKNOWN_OPTION) {
        throw error(errors::http_unreachable,
                    fmt::format("libcurl refused option {}", static_cast<int>(CURLOPT_PROTOCOLS_STR)));
    }
#endif
    set(h, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
    set(h, CURLOPT_REDIR_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
}

const char* env_value(const char* name)
{
    const char* v = std::getenv(name);
    return v && *v ? v : nullptr;
}

// Which step failed, in the words a user can act on.
std::string describe_failure(CURLcode rc, CURL* h, const char* detail, const http_request& req)
{
    std::string text = *detail ? std::string(detail) : std::string(curl().easy_strerror(rc));
    long os_errno = 0;
    curl().easy_getinfo(h, CURLINFO_OS_ERRNO, &os_errno);
    // The system's word for a failed connect ("Connection refused") says more than libcurl's.
    if (rc == CURLE_COULDNT_CONNECT && os_errno != 0 &&
        text.find(std::strerror(static_cast<int>(os_errno))) == std::string::npos) {
        text += fmt::format(" ({})", std::strerror(static_cast<int>(os_errno)));
    }
    switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST: return "resolve failed: " + text;
    case CURLE_COULDNT_RESOLVE_PROXY: return "resolving the proxy failed: " + text;
    case CURLE_COULDNT_CONNECT: return "connect failed: " + text;
    case CURLE_OPERATION_TIMEDOUT: return fmt::format("timed out after {} ms ({})", req.timeout.count(), text);
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH: return "TLS handshake failed: " + text;
    case CURLE_TOO_MANY_REDIRECTS: return fmt::format("more than {} redirects: {}", max_redirects, text);
    default: return text;
    }
}

} // namespace

std::optional<std::string> http_response::header(std::string_view name) const
{
    for (const auto& [key, value] : headers) {
        if (iequals(key, name)) return value;
    }
    return std::nullopt;
}

http_response http_send(const http_request& req)
{
    http_outcome out = http_try(req);
    if (out.response) return std::move(*out.response);
    throw error(out.failure == http_failure::response ? errors::http_bad_response : errors::http_unreachable,
                out.message);
}

namespace {

http_failure failure_of(CURLcode rc)
{
    switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY: return http_failure::resolve;
    case CURLE_COULDNT_CONNECT: return http_failure::connect;
    case CURLE_OPERATION_TIMEDOUT: return http_failure::timeout;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH: return http_failure::tls;
    default: return http_failure::other;
    }
}

} // namespace

http_outcome http_try(const http_request& req)
{
    const parsed_url url = parse_url(req.url);
    if (std::find(methods.begin(), methods.end(), req.method) == methods.end()) {
        throw error(errors::http_bad_method, fmt::format("unknown HTTP method '{}' for {}", req.method, req.url));
    }

    CURL* h = thread_handle();
    transfer t;
    std::array<char, CURL_ERROR_SIZE> detail{};
    const std::string target_url = url.normalized;
    set(h, CURLOPT_URL, target_url.c_str());
    set(h, CURLOPT_ERRORBUFFER, detail.data());
    set(h, CURLOPT_NOSIGNAL, 1L); // threads: no SIGALRM for DNS timeouts
    restrict_protocols(h);
    set(h, CURLOPT_FOLLOWLOCATION, req.follow_redirects ? 1L : 0L);
    set(h, CURLOPT_MAXREDIRS, max_redirects);
    // "::ADDR:PORT": any host and port of the URL connect there (an IPv6
    // address in brackets); "" as the proxy overrides the environment's.
    header_list connect_to;
    if (!req.connect_address.empty()) {
        const bool v6 = req.connect_address.find(':') != std::string::npos;
        const std::string entry = fmt::format("::{}{}{}:{}", v6 ? "[" : "", req.connect_address, v6 ? "]" : "",
                                              req.connect_port);
        connect_to.reset(curl().slist_append(nullptr, entry.c_str()));
        if (!connect_to) throw error(errors::http_unreachable, "libcurl: out of memory building CONNECT_TO");
        set(h, CURLOPT_CONNECT_TO, connect_to.get());
        set(h, CURLOPT_PROXY, "");
    }
    set(h, CURLOPT_TIMEOUT_MS, static_cast<long>(req.timeout.count()));
    set(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(req.timeout.count()));
    set(h, CURLOPT_USERAGENT, user_agent);
    set(h, CURLOPT_WRITEFUNCTION, &on_body);
    set(h, CURLOPT_WRITEDATA, static_cast<void*>(&t));
    set(h, CURLOPT_HEADERFUNCTION, &on_header);
    set(h, CURLOPT_HEADERDATA, static_cast<void*>(&t));
    // Trust stores named by the environment, as OpenSSL and curl's own tool read them.
    // A request's own CA file comes first (thread_handle resets the handle, so
    // it never outlives its request).
    if (!req.ca_file.empty()) set(h, CURLOPT_CAINFO, req.ca_file.c_str());
    else if (const char* file = env_value("SSL_CERT_FILE")) set(h, CURLOPT_CAINFO, file);
    else if (const char* bundle = env_value("CURL_CA_BUNDLE")) set(h, CURLOPT_CAINFO, bundle);
    if (const char* dir = env_value("SSL_CERT_DIR")) set(h, CURLOPT_CAPATH, dir);

    if (req.method == "HEAD") {
        set(h, CURLOPT_NOBODY, 1L);
    } else if (req.method == "GET") {
        set(h, CURLOPT_HTTPGET, 1L);
    } else {
        set(h, CURLOPT_CUSTOMREQUEST, req.method.c_str());
        if (!req.body.empty() || req.method != "DELETE") {
            set(h, CURLOPT_POSTFIELDS, req.body.data());
            set(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
        }
    }

    header_list headers;
    auto add = [&](const std::string& line) {
        curl_slist* next = curl().slist_append(headers.get(), line.c_str());
        if (!next) throw error(errors::http_unreachable, "libcurl: out of memory building headers");
        (void)headers.release();
        headers.reset(next);
    };
    add("Expect:"); // no 100-continue round trip: our bodies are small and the servers ours
    for (const auto& [name, value] : req.headers) {
        if (name.find_first_of(":\r\n") != std::string::npos || value.find_first_of("\r\n") != std::string::npos) {
            throw error(errors::http_bad_header,
                        fmt::format("header '{}' for {}: no CR, LF or ':' in names", name, req.url));
        }
        add(value.empty() ? name + ";" : name + ": " + value);
    }
    set(h, CURLOPT_HTTPHEADER, headers.get());

    const CURLcode rc = curl().easy_perform(h);
    set(h, CURLOPT_HTTPHEADER, static_cast<curl_slist*>(nullptr));
    set(h, CURLOPT_ERRORBUFFER, static_cast<char*>(nullptr));
    if (connect_to) set(h, CURLOPT_CONNECT_TO, static_cast<curl_slist*>(nullptr));
    http_outcome out;
    if (t.too_large) {
        out.failure = http_failure::response;
        out.message = fmt::format("{} {}: response body over the {} MiB limit", req.method, req.url, body_limit >> 20);
        return out;
    }
    if (rc != CURLE_OK) {
        out.failure = failure_of(rc);
        out.message = fmt::format("{} {}: {}", req.method, req.url, describe_failure(rc, h, detail.data(), req));
        return out;
    }
    long status = 0;
    curl().easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    t.response.status = static_cast<int>(status);
    out.response = std::move(t.response);
    return out;
}

std::string url_encode(std::string_view s)
{
    // RFC 3986 §2.3: unreserved characters stay, everything else is %XX.
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u) || c == '-' || c == '.' || c == '_' || c == '~') {
            out += c;
        } else {
            out += fmt::format("%{:02X}", u);
        }
    }
    return out;
}

} // namespace perfgate::client
