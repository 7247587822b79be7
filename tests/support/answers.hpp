// Every answer the server suites receive (support/server.hpp's send(), the
// router suite's calls), recorded for the ctest openapi_answers: it
// validates each against docs/openapi.json (status, content type, JSON
// Schema; tests/openapi/check_answers.py) and prints the share validated.
//
// One JSON line per answer, appended to
// BUILD/tests/api-answers/ENGINE/PID.jsonl (ENGINE: sqlite or postgresql,
// support/database.hpp). The check removes what it has read.
#pragma once

#include <string>
#include <string_view>

namespace perfgate::test {

void record_answer(std::string_view method, std::string_view target, unsigned status, std::string_view content_type,
                   std::string_view body);

} // namespace perfgate::test
