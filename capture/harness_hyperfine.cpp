// hyperfine's output (capture/harness.hpp): not read yet.
#include "capture/harness.hpp"
#include "capture/suite_builder.hpp"

namespace perfgate::capture {

sample_set parse_hyperfine_json(std::string_view, std::string_view source)
{
    detail::bad_input(source, "", "the hyperfine format is not supported yet");
}

} // namespace perfgate::capture
