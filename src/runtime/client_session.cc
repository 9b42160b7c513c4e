#include "tensorweave/session.h"

namespace tw {

ClientSession::ClientSession(const Scope& scope, const SessionOptions& options) : scope_(scope) {
  auto session = Session::Create(options);
  if (session.ok()) {
    session_ = *std::move(session);
  } else {
    create_status_ = session.status();
  }
}

ClientSession::~ClientSession() {
  if (session_) session_->Close().IgnoreError();
}

Status ClientSession::SendNewNodes(StepCancellation* cancellation) {
  TW_RETURN_IF_ERROR(create_status_);
  // mu_ orders the sends (each Extend carries the nodes after the last one sent), so it is
  // held across Extend, which may wait for the cluster; Close never takes it, and ends such
  // a wait (the session cancels its call in flight).
  absl::MutexLock lock(&mu_);
  TW_ASSIGN_OR_RETURN(proto::GraphDef fresh, scope_.NodesSince(nodes_sent_));
  if (fresh.node_size() == 0) return OkStatus();
  TW_RETURN_IF_ERROR(session_->Extend(fresh, cancellation));
  nodes_sent_ += fresh.node_size();
  return OkStatus();
}

StatusOr<std::vector<Tensor>> ClientSession::Run(const FeedList& feeds,
                                                 const std::vector<Output>& fetches,
                                                 const std::vector<Operation>& targets,
                                                 const RunOptions& options) {
  TW_RETURN_IF_ERROR(SendNewNodes(options.cancellation));
  std::vector<std::pair<std::string, Tensor>> feed_names;
  feed_names.reserve(feeds.size());
  for (const auto& [output, value] : feeds) feed_names.emplace_back(output.name(), value);
  std::vector<std::string> fetch_names, target_names;
  for (const Output& f : fetches) fetch_names.push_back(f.name());
  for (const Operation& t : targets) target_names.push_back(t.name());
  std::vector<Tensor> outputs;
  TW_RETURN_IF_ERROR(session_->Run(options, feed_names, fetch_names, target_names, &outputs));
  return outputs;
}

Status ClientSession::Close() {
  TW_RETURN_IF_ERROR(create_status_);
  return session_->Close();
}

StatusOr<std::vector<DeviceAttributes>> ClientSession::ListDevices() {
  TW_RETURN_IF_ERROR(SendNewNodes(nullptr));
  return session_->ListDevices();
}

}  // namespace tw
