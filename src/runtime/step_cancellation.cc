#include "src/framework/cancellation.h"
#include "tensorweave/session.h"

namespace tw {

StepCancellation::StepCancellation() : manager_(std::make_unique<CancellationManager>()) {}
StepCancellation::~StepCancellation() = default;
void StepCancellation::Cancel() { manager_->StartCancel(); }
bool StepCancellation::IsCancelled() const { return manager_->IsCancelled(); }

}  // namespace tw
