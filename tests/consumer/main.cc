// Uses the installed public API; exits non-zero when anything is off.
#include <tensorweave/tensorweave.h>

#include <cstdio>

int main() {
  auto config =
      tw::RunConfig::Resolve({"--ps_hosts=localhost:2222", "--worker_hosts=localhost:2223",
                              "--job_name=worker", "--task_index=0"},
                             std::nullopt);
  if (!config.ok() || !config->is_chief() || config->num_ps() != 1) {
    std::fprintf(stderr, "consumer: unexpected RunConfig\n");
    return 1;
  }
  tw::Tensor t = tw::Tensor::FromVector<float>({1, 2, 3, 4}, tw::TensorShape({2, 2}));
  auto row = t.Slice(1, 2);
  if (!row.ok() || row->flat<float>()[1] != 4.0f) {
    std::fprintf(stderr, "consumer: unexpected tensor slice\n");
    return 1;
  }
  auto device = tw::DeviceName::Parse("/job:ps/task:0");
  if (!device.ok() || device->ToString() != "/job:ps/task:0") return 1;
  // The training API: a gradient built and run in one process.
  tw::Scope root = tw::Scope::NewRootScope();
  tw::train::ModelVariables vars;
  auto w = vars.Add(root, "w", tw::DT_FLOAT, {}, 3.0f);
  auto loss = tw::ops::Square(root, tw::ops::ReadVariable(root, w));
  auto grads = tw::Gradients(root, {loss}, {w.handle});
  if (!grads.ok() || !(*grads)[0].exists()) return 1;
  tw::ClientSession session(root);
  if (!session.Run({}, {}, {vars.InitOp(root)}).ok()) return 1;
  auto g = session.Run({}, {(*grads)[0].dense});
  if (!g.ok() || (*g)[0].scalar<float>() != 6.0f) {
    std::fprintf(stderr, "consumer: unexpected gradient\n");
    return 1;
  }
  std::printf("consumer: %s\n", config->Summary().c_str());
  return 0;
}
