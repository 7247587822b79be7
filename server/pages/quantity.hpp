// The dashboard's number rule lives in report/quantity.hpp (shared with the
// CLI and the webhook bodies); the pages call it by its old name.
#pragma once

#include "report/quantity.hpp"

namespace perfgate::server::pages {

using report::quantity;
using report::quantity_digits;

} // namespace perfgate::server::pages
