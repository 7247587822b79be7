// The dashboard's views (private to server/pages/), one file each, called by
// the router in pages.cpp once it has matched the path, checked the method
// and the session, and parsed the query. pages.hpp lists their addresses.
//
// A *_view function makes the part of a read-only page below the header
// (pages.cpp keeps it in the page cache and renders it); the others answer
// the request themselves.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "server/pages/view_support.hpp"

namespace perfgate::server::pages {

// overview_view.cpp: benchmarks x testbeds with sparklines, recent comparisons, open alerts.
page_view overview_view(page_state& p, const query_params& q);

// The series page's parameters checked (400 naming the bad one) without
// reading the store: before the page cache is asked.
void check_series_request(const query_params& q);
// series_view.cpp: one benchmark's counter over time, a line per branch and testbed.
page_view series_view(page_state& p, const query_params& q);

// comparison_view.cpp: a stored comparison, its distributions and histories.
page_view comparison_view(page_state& p, std::int64_t id, const query_params& q);
// A comparison's stored flame graph SVG (?benchmark=), id as in the path.
response flame_graph_file(page_state& p, const std::string& id, const query_params& q);
// ?base=&head=: runs the comparison (a write: needs a session), 303 to it.
response compare_page(page_state& p, const query_params& q);

// alerts_view.cpp: the alerts inbox and its triage form's post (id as in the path).
response alerts_page(page_state& p, const query_params& q);
response triage(page_state& p, const std::string& id);

// run_view.cpp: one run, its counters' samples and its environment (id as in the path).
page_view run_view(page_state& p, const std::string& id);

// signin_view.cpp: the sign-in form, its post, and sign-out.
response signin_page(page_state& p, const std::optional<std::string>& next, std::string_view problem = {},
                     http::status status = http::status::ok);
response signin_post(page_state& p);
response signout(page_state& p);

} // namespace perfgate::server::pages
