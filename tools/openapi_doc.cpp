// perfgate_openapi: writes docs/openapi.json from the route table and the
// wire types' schemas (server/openapi.hpp).
//
//   perfgate_openapi                 the document on standard output
//   perfgate_openapi --output FILE   the document into FILE
//   perfgate_openapi --check FILE    exit 1 unless FILE is the document
//
// The build target openapi_doc regenerates docs/openapi.json in the source
// tree; the ctest openapi_doc_up_to_date runs --check on it.
#include "server/openapi.hpp"
#include "tools/generated_doc.hpp"

int main(int argc, char** argv)
{
    return perfgate::tools::generated_doc_main(
        {"perfgate_openapi", "the route table (server/router.cpp) and the wire schemas (api/schemas.cpp)",
         "openapi_doc"},
        perfgate::server::openapi_text(), argc, argv);
}
