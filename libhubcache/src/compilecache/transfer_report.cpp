#include "hubcache/compilecache/transfer_report.hpp"

#include <unordered_set>

namespace hubcache::compilecache {

void list_planned_after_run(TransferReport& report)
{
  report.planned = report.transferred;
  std::unordered_set<std::string> listed(report.planned.begin(), report.planned.end());
  for (const auto& error : report.errors) {
    if (listed.insert(error.path).second) {
      report.planned.push_back(error.path);
    }
  }
}

} // namespace hubcache::compilecache
