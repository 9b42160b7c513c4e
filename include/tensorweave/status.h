// Status and StatusOr for every fallible tensorweave call, error constructors that build
// their message from any mix of strings and numbers, and the propagation macros.
//
// tw::Status is absl::Status: canonical codes only, the detail (node, task, field) in the
// message. Nothing in tensorweave throws; errors travel as values. Status and StatusOr are
// values: copy them freely, across threads too (they are thread-compatible, like int).
//
// What the codes mean across tensorweave (TensorFlow's meanings, which its users test for):
//   InvalidArgument     the caller's input is wrong (a graph, a feed, a flag, a request);
//                       the message names the node, field or flag. Never retried.
//   NotFound            a named thing does not exist (a file, a task, a resource).
//   AlreadyExists       a name is taken (an op or a gradient registered twice).
//   FailedPrecondition  the state does not allow it yet: an uninitialized variable, a
//                       server that has stopped.
//   OutOfRange          a closed queue has no more elements (the end of an input).
//   Unavailable         a task cannot be reached, or the cluster did not come up in time;
//                       worth retrying (the monitored session does).
//   Aborted             the other side lost what this call relied on: a task restarted
//                       (another incarnation), a session the master no longer has.
//   Cancelled           the caller (or Close, or a server stopping) ended the call.
//   DeadlineExceeded    a step's timeout passed.
//   PermissionDenied    a path outside the directories a task may touch.
//   DataLoss            stored bytes are damaged (a checkpoint's CRC32C does not match).
//   ResourceExhausted   a size beyond what the task will allocate.
//   Internal            a bug in tensorweave; please report it.
#ifndef TENSORWEAVE_STATUS_H_
#define TENSORWEAVE_STATUS_H_

#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace tw {

using Status = absl::Status;
template <typename T>
using StatusOr = absl::StatusOr<T>;

inline Status OkStatus() { return absl::OkStatus(); }

namespace internal {
// absl::StrCat takes absl::string_view, which on Debian's abseil is not std::string_view;
// this turns a std::string_view argument into something StrCat accepts.
template <typename T>
decltype(auto) ToStrCatArg(const T& v) {
  if constexpr (std::is_convertible_v<const T&, std::string_view> &&
                !std::is_convertible_v<const T&, absl::string_view>) {
    return std::string(std::string_view(v));
  } else {
    return (v);
  }
}

template <typename... Args>
std::string StrCatAny(const Args&... args) {
  return absl::StrCat(ToStrCatArg(args)...);
}
}  // namespace internal

// errors::InvalidArgument("task ", 3, " of job \"", job, "\"") and friends: one per
// canonical code that tensorweave uses.
namespace errors {
#define TW_DECLARE_ERROR(Name)                              \
  template <typename... Args>                               \
  Status Name(const Args&... args) {                        \
    return absl::Name##Error(internal::StrCatAny(args...)); \
  }
TW_DECLARE_ERROR(InvalidArgument)
TW_DECLARE_ERROR(NotFound)
TW_DECLARE_ERROR(AlreadyExists)
TW_DECLARE_ERROR(FailedPrecondition)
TW_DECLARE_ERROR(OutOfRange)
TW_DECLARE_ERROR(Unimplemented)
TW_DECLARE_ERROR(Internal)
TW_DECLARE_ERROR(Unavailable)
TW_DECLARE_ERROR(Aborted)
TW_DECLARE_ERROR(Cancelled)
TW_DECLARE_ERROR(DeadlineExceeded)
TW_DECLARE_ERROR(ResourceExhausted)
TW_DECLARE_ERROR(PermissionDenied)
TW_DECLARE_ERROR(DataLoss)
TW_DECLARE_ERROR(Unknown)
#undef TW_DECLARE_ERROR

// Returns `status` with `prefix` put before its message; OK stays OK.
Status Annotate(const Status& status, std::string_view prefix);
}  // namespace errors

// Code predicates, the same functions as absl's (so unqualified calls are not ambiguous).
using absl::IsAborted;
using absl::IsCancelled;
using absl::IsDataLoss;
using absl::IsDeadlineExceeded;
using absl::IsFailedPrecondition;
using absl::IsInvalidArgument;
using absl::IsNotFound;
using absl::IsOutOfRange;
using absl::IsUnavailable;

}  // namespace tw

#define TW_INTERNAL_CONCAT_IMPL(a, b) a##b
#define TW_INTERNAL_CONCAT(a, b) TW_INTERNAL_CONCAT_IMPL(a, b)

// Returns from the enclosing function when `expr` (a Status) is not OK. The local's name
// is unique per use, so a use inside a lambda inside another use does not shadow it.
#define TW_RETURN_IF_ERROR(expr) \
  TW_INTERNAL_RETURN_IF_ERROR(TW_INTERNAL_CONCAT(tw_status_, __COUNTER__), expr)
#define TW_INTERNAL_RETURN_IF_ERROR(status, expr) \
  do {                                            \
    ::tw::Status status = (expr);                 \
    if (!status.ok()) return status;              \
  } while (false)

// TW_ASSIGN_OR_RETURN(auto x, MakeX()); or TW_ASSIGN_OR_RETURN(x, MakeX());
// Evaluates a StatusOr, returns its status on error, else moves its value into `lhs`.
#define TW_ASSIGN_OR_RETURN(lhs, rexpr) \
  TW_INTERNAL_ASSIGN_OR_RETURN(TW_INTERNAL_CONCAT(tw_statusor_, __LINE__), lhs, rexpr)
#define TW_INTERNAL_ASSIGN_OR_RETURN(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                 \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()

#endif  // TENSORWEAVE_STATUS_H_
