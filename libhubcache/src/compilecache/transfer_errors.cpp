#include "hubcache/compilecache/transfer_errors.hpp"

#include "hubcache/error.hpp"

namespace hubcache::compilecache {

bool stops_the_run(const std::exception_ptr& error)
{
  try {
    std::rethrow_exception(error);
  } catch (const RemoteError&) {
    return true;
  } catch (const AuthError&) {
    return true;
  } catch (const RepoNotFound&) {
    return true;
  } catch (const NoSpace&) {
    return true; // every later write would fail alike
  } catch (...) {
    return false;
  }
}

std::string message_of(const std::exception_ptr& error)
{
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

} // namespace hubcache::compilecache
