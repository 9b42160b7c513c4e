// The seeds' parameter-server trainer: one program for the ps and worker tasks of a cluster,
// training a Fashion-MNIST classifier (examples/mnist_model.h) between them.
//
//   tw launch --cluster ps=1,worker=2 -- build/examples/mnist_ps --max_steps=3000
//   mnist_ps --ps_hosts=localhost:2222 --worker_hosts=localhost:2223,localhost:2224
//            --job_name=worker --task_index=0     (one such command per task)
//
// --model=conv trains TF's deep-MNIST conv net (examples/mnist_model.h) instead of the MLP,
// with Adam and a learning rate halved every two epochs.
//
// ps tasks serve the model's variables until the chief stops the cluster. Workers (and a
// chief task, if the cluster has one) each read their own shard of the training set,
// reshuffled every epoch (from the Debian dataset's files, fed to each step; or with
// --train_files from TFRecord files through a tf.data pipeline in the graph,
// examples/mnist_input.h), and train with a MonitoredTrainingSession: asynchronously with
// Adagrad by default, or with synchronous replicas (--sync). The chief (chief:0, else
// worker:0) initializes or restores the model, writes checkpoints into --checkpoint_dir,
// prints a progress line every --log_every steps, evaluates the 10,000 test images at the
// end and prints `test accuracy: 0.NNNN` as its last line. With a --checkpoint_dir the chief
// also writes summaries there for TensorBoard (`tensorboard --logdir <checkpoint_dir>`): the
// batch's loss and accuracy every --save_summaries_steps global steps, global_step/sec every
// --log_every steps, and the test accuracy of each evaluation. It then waits (up to a minute)
// for the other workers to report that they are done and stops the ps tasks, so every task
// exits by itself, with code 0 on success.
#include <glob.h>
#include <stdio.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_format.h"
#include "examples/example_server.h"
#include "examples/fashion_mnist.h"
#include "examples/mnist_input.h"
#include "examples/mnist_model.h"
#include "tensorweave/ops/cwise_math_ops.h"
#include "tensorweave/tensorweave.h"
#include "tensorweave/train/device_setter.h"
#include "tensorweave/train/monitored_session.h"
#include "tensorweave/train/sync_replicas.h"

namespace tw::examples {
namespace {

struct Flags {
  int64_t max_steps = 3000;
  int64_t batch_size = 100;
  std::string model = "mlp";  // or "conv": MnistArchitecture
  std::string optimizer;      // "adagrad" or "adam"; empty: the model's (adagrad, adam)
  float learning_rate = 0;    // 0: the model's (0.1 for the MLP, 0.002 for the conv net)
  int64_t decay_steps = -1;   // halve the learning rate every so many global steps;
                              // -1: the model's (never for the MLP, 1200 for the conv net)
  int64_t warmup_steps = -1;  // raise the learning rate linearly over the first steps;
                              // -1: the model's (none for the MLP, 300 for the conv net)
  float keep_prob = 0.5f;     // the conv net's dropout while training
  std::string data_dir = DefaultFashionMnistDir();
  std::vector<std::string> train_files;  // TFRecord files: read through tf.data
  std::string checkpoint_dir;
  bool sync = false;
  int replicas_to_aggregate = 0;  // 0: every worker
  int64_t log_every = 200;
  int64_t eval_every = 0;  // 0: evaluate only at the end
  int64_t save_every = 1000;
  int64_t save_summaries_steps = 100;
  int64_t seed = 0;
  std::string tls_ca, tls_cert, tls_key, tls_server_name;
  TlsOptions tls;  // loaded from the four above: the server's and every session's
};

// The files named, with patterns (*, ?, [...]) expanded in sorted order; NotFound naming a
// pattern that matches nothing.
StatusOr<std::vector<std::string>> ExpandPatterns(const std::vector<std::string>& patterns) {
  std::vector<std::string> files;
  for (const std::string& pattern : patterns) {
    if (pattern.find_first_of("*?[") == std::string::npos) {
      files.push_back(pattern);
      continue;
    }
    glob_t found{};
    const int rc = glob(pattern.c_str(), 0, nullptr, &found);
    for (size_t i = 0; rc == 0 && i < found.gl_pathc; ++i) files.emplace_back(found.gl_pathv[i]);
    globfree(&found);
    if (rc != 0) return errors::NotFound("no file matches ", pattern);
  }
  return files;
}

// Whole lines, one write each, so that tw launch never splits one.
void Say(const std::string& line) {
  const std::string text = line + "\n";
  fwrite(text.data(), 1, text.size(), stdout);
  fflush(stdout);
}
// Prints `s` (which says what failed: While) and returns the exit code 1.
int Fail(const Status& s) {
  const std::string text = "mnist_ps: " + std::string(s.message()) + "\n";
  fwrite(text.data(), 1, text.size(), stderr);
  fflush(stderr);
  return 1;
}
// `s` with `what` before its message.
Status While(const std::string& what, const Status& s) { return errors::Annotate(s, what + ": "); }
int Fail(const std::string& what, const Status& s) { return Fail(While(what, s)); }

constexpr char kDoneQueue[] = "mnist_ps_workers_done";

// Accuracy of the model on the whole test set, in batches (of 500: the conv net's first
// layer makes 100 KB of activations per image).
StatusOr<double> Evaluate(ClientSession& session, const MnistModel& model,
                          const ImageDataset& test) {
  constexpr int64_t kEvalBatch = 500;
  int64_t correct = 0;
  for (int64_t begin = 0; begin < test.size; begin += kEvalBatch) {
    TW_ASSIGN_OR_RETURN(Batch batch,
                        ExampleRange(test, begin, std::min(test.size, begin + kEvalBatch)));
    TW_ASSIGN_OR_RETURN(
        std::vector<Tensor> out,
        session.Run({{model.images, batch.images}, {model.labels, batch.labels}}, {model.correct}));
    correct += out[0].scalar<int32_t>();
  }
  return static_cast<double>(correct) / static_cast<double>(test.size);
}

int RunPs(Server& server) {
  Say("ps task serving the model's variables at " + server.target());
  server.Join();
  return 0;
}

// What a training task is: its task, whether it is the chief, and its shard of the training
// set (workers and the chief share it: the chief is shard 0 when the cluster has a chief job).
struct Role {
  std::string job;
  int index = 0;
  bool is_chief = false;
  int num_workers = 0;  // training tasks, the chief included
  int shard = 0;
  std::string worker_device;
};

Role RoleOf(const RunConfig& config) {
  Role role{.job = config.task_type(),
            .index = config.task_index(),
            .is_chief = config.is_chief(),
            .num_workers = config.num_workers()};
  const bool has_chief_job = config.cluster().HasJob("chief");
  role.shard = (role.job == "worker" && has_chief_job) ? role.index + 1 : role.index;
  role.worker_device = DeviceName{.job = role.job, .task = role.index}.ToString();
  return role;
}

// This task's shard of the training set, reshuffled every epoch.
StatusOr<BatchIterator> TrainingShard(const Flags& flags, const Role& role) {
  auto train = LoadFashionMnist(flags.data_dir, "train");
  if (!train.ok()) return While("loading the training set", train.status());
  auto data = std::make_shared<const ImageDataset>(std::move(*train));
  auto batches =
      BatchIterator::Create(data, {.num_shards = role.num_workers,
                                   .shard_index = role.shard,
                                   .seed = static_cast<uint64_t>(flags.seed + role.shard)});
  if (!batches.ok()) return While("sharding the training set", batches.status());
  return batches;
}

// One training task's graph: the model, its variables on the ps tasks (a replica device
// setter), its train op (asynchronous, or synchronous replicas with --sync) and summaries,
// the training session's hooks, and the queue on ps:0 where the workers report that they are
// done. Built in place by BuildTraining: the session and the synchronous replicas keep the
// address of `variables`.
struct TrainingGraph {
  Scope root = Scope::NewRootScope();
  train::ModelVariables variables;
  MnistModel model;
  Output summary;  // the batch's loss and accuracy, for TensorBoard
  Operation train_op;
  std::unique_ptr<train::SyncReplicas> sync;  // with --sync
  int aggregate = 0;                          // gradients per update with --sync
  std::vector<std::unique_ptr<train::SessionRunHook>> hooks;
  Operation report_done;          // a worker's report
  std::vector<Output> wait_done;  // the chief's wait for every other worker's
};

Status BuildTraining(const RunConfig& config, Server& server, const Flags& flags, const Role& role,
                     TrainingGraph* g) {
  const ClusterSpec& cluster = config.cluster();
  auto setter = train::ReplicaDeviceSetter(cluster, {.worker_device = role.worker_device});
  if (!setter.ok()) return While("device setter", setter.status());
  const Scope model_scope = g->root.WithDeviceFunction(*setter);
  const bool conv = flags.model == "conv";
  MnistModelOptions model_options{
      .architecture = conv ? MnistArchitecture::kConv : MnistArchitecture::kMlp,
      .seed = flags.seed};
  if (!flags.train_files.empty()) {
    // The pipeline runs on this worker, beside the step that takes its batches.
    auto batches = MnistRecordBatches(g->root.WithDevice(role.worker_device), flags.train_files,
                                      {.batch_size = flags.batch_size,
                                       .num_shards = role.num_workers,
                                       .shard_index = role.shard,
                                       .seed = flags.seed + role.shard});
    if (!batches.ok()) return While("the input pipeline", batches.status());
    model_options.images = batches->images;
    model_options.labels = batches->labels;
  }
  g->model = BuildMnistModel(model_scope, &g->variables, model_options);
  const MnistModel& model = g->model;
  const std::string optimizer_name =
      flags.optimizer.empty() ? (conv ? "adam" : "adagrad") : flags.optimizer;
  const float learning_rate = flags.learning_rate > 0 ? flags.learning_rate : (conv ? 2e-3f : 0.1f);
  auto optimizer = optimizer_name == "adam" ? train::AdamOptimizer(learning_rate)
                                            : train::AdagradOptimizer(learning_rate);
  const int64_t decay_steps = flags.decay_steps >= 0 ? flags.decay_steps : (conv ? 1200 : 0);
  const int64_t warmup_steps = flags.warmup_steps >= 0 ? flags.warmup_steps : (conv ? 300 : 0);
  if (decay_steps > 0 || warmup_steps > 0) {
    const Output step = ops::Cast(model_scope, model.step, DT_FLOAT);
    Output rate = ops::Const(model_scope, Tensor::Scalar<float>(learning_rate));
    if (decay_steps > 0) {  // tf.train.exponential_decay(rate 0.5, staircase=True)
      const Output halvings =
          ops::Floor(model_scope, ops::Div(model_scope, step, static_cast<float>(decay_steps)));
      rate = ops::Mul(model_scope, rate, ops::Pow(model_scope, 0.5f, halvings));
    }
    if (warmup_steps > 0) {  // times min(1, (step + 1) / warmup_steps)
      rate = ops::Mul(model_scope, rate,
                      ops::Minimum(model_scope, 1.0f,
                                   ops::Div(model_scope, ops::Add(model_scope, step, 1.0f),
                                            static_cast<float>(warmup_steps))));
    }
    optimizer->SetLearningRate(ops::Identity(model_scope.WithOpName("learning_rate"), rate));
  }
  // TensorBoard's curves, computed with the training step on this worker.
  g->summary = ops::MergeSummary(
      model_scope.WithOpName("summaries"),
      {ops::ScalarSummary(model_scope.WithOpName("loss_summary"), std::string("loss"), model.loss),
       ops::ScalarSummary(model_scope.WithOpName("accuracy_summary"), std::string("accuracy"),
                          model.accuracy)});
  g->hooks.push_back(train::StopAtStepHook(flags.max_steps));
  g->hooks.push_back(train::NanTensorHook(model.loss));
  g->aggregate = flags.replicas_to_aggregate > 0 ? flags.replicas_to_aggregate : role.num_workers;
  if (flags.sync) {
    auto grads = optimizer->ComputeGradients(model_scope, model.loss, g->variables);
    if (!grads.ok()) return While("gradients", grads.status());
    auto made = train::SyncReplicas::Create(model_scope, optimizer.get(), *grads, &g->variables,
                                            model.global_step,
                                            {.replicas_to_aggregate = g->aggregate,
                                             .total_num_replicas = role.num_workers,
                                             .worker_device = role.worker_device});
    if (!made.ok()) return While("synchronous replicas", made.status());
    g->sync = std::move(*made);
    g->train_op = g->sync->train_op();
    g->hooks.push_back(g->sync->MakeHook(
        role.is_chief,
        {.target = server.target(), .device_filters = config.device_filters(), .tls = flags.tls}));
  } else {
    auto op = optimizer->Minimize(model_scope, model.loss, &g->variables, model.global_step);
    if (!op.ok()) return While("optimizer", op.status());
    g->train_op = *op;
  }
  // Shared with every worker: each reports here when done, so the chief stops the cluster
  // only once nobody trains any more.
  const Scope on_ps0 =
      g->root.WithDevice(cluster.HasJob("ps") ? "/job:ps/task:0" : role.worker_device);
  ops::Queue done = ops::FIFOQueue(on_ps0, {DT_INT32}, {.shapes = {{}}, .shared_name = kDoneQueue});
  g->report_done = ops::QueueEnqueue(g->root, done, {Tensor::Scalar<int32_t>(role.shard)});
  g->wait_done = ops::QueueDequeueMany(g->root, done, std::max(role.num_workers - 1, 1));
  return OkStatus();
}

// The test accuracy as a summary too, beside the training curves (only the chief has a
// summary writer, and only with a --checkpoint_dir).
Status RecordTestAccuracy(train::MonitoredTrainingSession& session, double accuracy, int64_t step) {
  EventFileWriter* writer = session.summary_writer();
  if (writer == nullptr) return OkStatus();
  return writer->AddScalar("test_accuracy", static_cast<float>(accuracy), step);
}

// How a training loop went, for the chief's rate line.
struct Progress {
  absl::Time start;
  absl::Duration evaluating;  // excluded from the training time
  int64_t local_steps = 0, first_step = -1, last_step = 0;
  // The global steps other workers made while this one evaluated are excluded with the
  // evaluation time: counting them would credit the training rate with steps made in time
  // it does not count.
  int64_t steps_while_evaluating = 0;
};

// Trains until the session should stop (or, with --sync, until the token queue closes). The
// chief also evaluates on `test` every --eval_every global steps and prints a progress line
// every --log_every local steps. Errors say what failed (While).
// `batches` feeds each step; null when the graph's pipeline gives them (--train_files).
StatusOr<Progress> Train(train::MonitoredTrainingSession& session, BatchIterator* batches,
                         const TrainingGraph& g, const Flags& flags, bool is_chief,
                         const ImageDataset* test) {
  const MnistModel& model = g.model;
  Progress p{.start = absl::Now()};
  int64_t next_eval = flags.eval_every;
  int64_t evaluated_at = -1;  // the global step an evaluation began after
  while (!session.ShouldStop()) {
    ClientSession::FeedList feed;
    if (batches != nullptr) {
      auto batch = batches->Next(flags.batch_size);
      if (!batch.ok()) return While("reading a batch", batch.status());
      feed = {{model.images, batch->images}, {model.labels, batch->labels}};
    }
    if (model.keep_prob.op().valid()) {
      feed.emplace_back(model.keep_prob, Tensor::Scalar<float>(flags.keep_prob));
    }
    auto out = session.Run(feed, {model.loss, model.accuracy, model.step}, {g.train_op});
    if (!out.ok()) {
      // Synchronous training ends by closing the token queue: a worker waiting for a token
      // then learns that training is over.
      if (g.sync != nullptr && IsOutOfRange(out.status())) break;
      return While("training step", out.status());
    }
    ++p.local_steps;
    p.last_step = (*out)[2].scalar<int64_t>();
    if (p.first_step < 0) p.first_step = p.last_step;
    if (evaluated_at >= 0) {  // this step is ours; the others since the evaluation are not
      p.steps_while_evaluating += std::max<int64_t>(0, p.last_step - evaluated_at - 1);
      evaluated_at = -1;
    }
    if (is_chief && flags.eval_every > 0 && p.last_step >= next_eval) {
      const absl::Time eval_start = absl::Now();
      const double trained = absl::ToDoubleSeconds(eval_start - p.start - p.evaluating);
      auto accuracy = Evaluate(*session.raw_session(), model, *test);
      if (!accuracy.ok()) return While("evaluating", accuracy.status());
      p.evaluating += absl::Now() - eval_start;
      evaluated_at = p.last_step;
      Status recorded = RecordTestAccuracy(session, *accuracy, p.last_step);
      if (!recorded.ok()) return While("writing a summary", recorded);
      Say(absl::StrFormat("eval at step %d: test accuracy %.4f after %.1f s of training",
                          p.last_step, *accuracy, trained));
      while (next_eval <= p.last_step) next_eval += flags.eval_every;
    }
    if (is_chief && p.local_steps % flags.log_every == 0) {
      const double secs = absl::ToDoubleSeconds(absl::Now() - p.start - p.evaluating);
      Say(absl::StrFormat("step %d: loss %.4f, batch accuracy %.3f, %.0f examples/s (this worker)",
                          (*out)[2].scalar<int64_t>(), (*out)[0].scalar<float>(),
                          (*out)[1].scalar<float>(),
                          static_cast<double>(p.local_steps * flags.batch_size) / secs));
    }
  }
  return p;
}

// A worker that is not the chief: closes its session and reports done to the chief.
int FinishWorker(const RunConfig& config, Server& server, const Flags& flags, const Role& role,
                 const TrainingGraph& g, train::MonitoredTrainingSession& session,
                 const Progress& progress) {
  Status closed = session.Close();
  if (!closed.ok()) return Fail("closing the training session", closed);
  ClientSession reporter(
      g.root,
      {.target = server.target(), .device_filters = config.device_filters(), .tls = flags.tls});
  auto reported = reporter.Run({}, {}, {g.report_done});
  if (!reported.ok()) return Fail("reporting done", reported.status());
  Say(absl::StrFormat("worker %d done after %d local steps", role.index, progress.local_steps));
  return 0;
}

// The chief: prints the training rate, evaluates the test set, closes its session (the final
// checkpoint and summaries), waits up to a minute for the other workers' reports, then stops
// the ps tasks and this task's server and prints the test accuracy as its last line.
int FinishChief(const RunConfig& config, Server& server, const Flags& flags, const Role& role,
                const TrainingGraph& g, train::MonitoredTrainingSession& session,
                const Progress& progress, const ImageDataset& test) {
  // Each global step consumes one batch, or one per aggregated replica when synchronous.
  const int64_t examples_per_step = flags.batch_size * (g.sync != nullptr ? g.aggregate : 1);
  const double train_secs =
      absl::ToDoubleSeconds(absl::Now() - progress.start - progress.evaluating);
  const int64_t trained =
      progress.last_step - progress.first_step + 1 - progress.steps_while_evaluating;
  Say(absl::StrFormat(
      "trained %d global steps in %.1f s: %.0f examples/s (all workers; %d more steps were made "
      "during evaluations)",
      trained, train_secs, static_cast<double>(trained * examples_per_step) / train_secs,
      progress.steps_while_evaluating));
  auto accuracy = Evaluate(*session.raw_session(), g.model, test);
  if (!accuracy.ok()) return Fail("evaluating", accuracy.status());
  Status recorded = RecordTestAccuracy(session, *accuracy, progress.last_step);
  if (!recorded.ok()) return Fail("writing a summary", recorded);
  Status closed = session.Close();  // the final checkpoint and summaries
  if (!closed.ok()) return Fail("closing the training session", closed);
  if (role.num_workers > 1) {
    ClientSession waiter(
        g.root,
        {.target = server.target(), .device_filters = config.device_filters(), .tls = flags.tls});
    auto waited = waiter.Run({}, g.wait_done, {}, {.timeout = absl::Minutes(1)});
    if (!waited.ok()) Fail("waiting for the other workers (stopping anyway)", waited.status());
  }
  // The other workers have reported and are exiting by themselves: stop the ps tasks and
  // this task's server.
  const ClusterSpec& cluster = config.cluster();
  if (cluster.HasJob("ps")) {
    ClusterSpec ps_tasks;
    Status s = ps_tasks.AddJob("ps", cluster.job_map().find("ps")->second);
    if (s.ok()) s = StopClusterServers(ps_tasks, flags.tls);
    if (!s.ok()) Fail("stopping the ps tasks", s);
  }
  server.Stop();
  Say(absl::StrFormat("test accuracy: %.4f", *accuracy));
  return 0;
}

int RunWorker(const RunConfig& config, Server& server, const Flags& flags) {
  const Role role = RoleOf(config);
  StatusOr<BatchIterator> batches = errors::Unavailable("reading --train_files");
  if (flags.train_files.empty()) {
    batches = TrainingShard(flags, role);
    if (!batches.ok()) return Fail(batches.status());
  }
  TrainingGraph g;
  if (Status built = BuildTraining(config, server, flags, role, &g); !built.ok()) {
    return Fail(built);
  }
  auto session = train::MonitoredTrainingSession::Create(
      {.scope = g.root,
       .variables = &g.variables,
       .global_step = g.model.global_step,
       .summary = g.summary},
      {.target = server.target(),
       .is_chief = role.is_chief,
       .checkpoint_dir = flags.checkpoint_dir,
       .save_checkpoint_steps = flags.checkpoint_dir.empty() ? 0 : flags.save_every,
       // Summaries go into checkpoint_dir (none without one), written by the chief only.
       .save_summaries_steps = flags.save_summaries_steps,
       .log_step_count_steps = flags.log_every,
       .session_options = {.device_filters = config.device_filters(), .tls = flags.tls}},
      std::move(g.hooks));
  if (!session.ok()) return Fail("creating the training session", session.status());
  StatusOr<ImageDataset> test = errors::Unavailable("no test set: not the chief");
  if (role.is_chief) {
    test = LoadFashionMnist(flags.data_dir, "t10k");
    if (!test.ok()) return Fail("loading the test set", test.status());
  }
  auto progress = Train(**session, batches.ok() ? &*batches : nullptr, g, flags, role.is_chief,
                        test.ok() ? &*test : nullptr);
  if (!progress.ok()) return Fail(progress.status());
  if (g.sync != nullptr) g.sync->Stop();
  if (!role.is_chief) return FinishWorker(config, server, flags, role, g, **session, *progress);
  return FinishChief(config, server, flags, role, g, **session, *progress, *test);
}

int Main(int argc, char** argv) {
  auto config = RunConfig::FromEnvironment(argc, argv);
  if (!config.ok()) return Fail("configuration", config.status());
  Flags flags;
  CLI::App app("mnist_ps: parameter-server training on Fashion-MNIST");
  app.add_option("--max_steps", flags.max_steps, "global steps to train")
      ->check(CLI::PositiveNumber);
  app.add_option("--batch_size", flags.batch_size, "examples per step and worker")
      ->check(CLI::PositiveNumber);
  app.add_option("--model", flags.model,
                 "mlp (784-256-10) or conv (TF's deep MNIST: two 5x5 conv and pool layers, "
                 "dense 1024 with dropout, dense 10)")
      ->check(CLI::IsMember({"mlp", "conv"}));
  app.add_option("--optimizer", flags.optimizer,
                 "adagrad or adam (default: adagrad for mlp, "
                 "adam for conv)")
      ->check(CLI::IsMember({"adagrad", "adam"}));
  app.add_option("--learning_rate", flags.learning_rate,
                 "the optimizer's learning rate (default: 0.1 for mlp, 0.002 for conv)")
      ->check(CLI::PositiveNumber);
  app.add_option("--decay_steps", flags.decay_steps,
                 "halve the learning rate every so many global steps (0: never; default: "
                 "never for mlp, 1200 (two epochs of batches of 100) for conv)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--warmup_steps", flags.warmup_steps,
                 "raise the learning rate linearly from 0 over so many global steps (asynchronous "
                 "workers' first large Adam steps, taken on the same weights, can otherwise kill "
                 "the ReLUs; default: none for mlp, 300 for conv)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--keep_prob", flags.keep_prob,
                 "conv: the probability that dropout keeps a unit while training")
      ->check(CLI::Range(0.0f, 1.0f).description("in (0, 1]"));
  app.add_option("--data_dir", flags.data_dir, "where the Fashion-MNIST .gz files are");
  app.add_option("--train_files", flags.train_files,
                 "TFRecord files of tf.train.Examples to train on, read through tf.data "
                 "(examples/python/make_tfrecords.py writes them); the test set still comes "
                 "from --data_dir; patterns (*) are expanded")
      ->delimiter(',');
  app.add_option("--checkpoint_dir", flags.checkpoint_dir,
                 "checkpoints (none when empty); give it to the ps tasks too: each task's "
                 "server lets graphs write only there");
  app.add_flag("--sync", flags.sync, "synchronous replicas instead of asynchronous updates");
  app.add_option("--replicas_to_aggregate", flags.replicas_to_aggregate,
                 "with --sync: gradients per update (default: every worker)");
  app.add_option("--log_every", flags.log_every, "steps between progress lines")
      ->check(CLI::PositiveNumber);
  app.add_option("--eval_every", flags.eval_every,
                 "global steps between test-set evaluations by the chief (0: only at the end)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--save_every", flags.save_every, "steps between checkpoints")
      ->check(CLI::PositiveNumber);
  app.add_option("--save_summaries_steps", flags.save_summaries_steps,
                 "global steps between loss and batch accuracy summaries in --checkpoint_dir "
                 "(0: none)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--seed", flags.seed, "initial weights and shuffling (0: random weights)");
  app.add_option("--tls_ca", flags.tls_ca, "mutual TLS: PEM file of the cluster CA");
  app.add_option("--tls_cert", flags.tls_cert,
                 "mutual TLS: PEM certificate of this task, signed by the CA");
  app.add_option("--tls_key", flags.tls_key, "mutual TLS: PEM private key of --tls_cert");
  app.add_option("--tls_server_name", flags.tls_server_name,
                 "mutual TLS: the name every task's certificate carries, when it does not "
                 "name the task's address");
  std::vector<std::string> args = config->unused_args();
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
  // CLI11 reports parse problems as exceptions; this is the one place they are caught.
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  auto files = ExpandPatterns(flags.train_files);
  if (!files.ok()) return Fail("--train_files", files.status());
  flags.train_files = *std::move(files);
  auto tls = ExampleTls(flags.tls_ca, flags.tls_cert, flags.tls_key, flags.tls_server_name);
  if (!tls.ok()) return Fail("TLS", tls.status());
  flags.tls = *std::move(tls);
  const std::string job = config->task_type();
  ServerOptions options = ExampleServerOptions(config->cluster(), job, config->task_index(),
                                               config->runtime_settings());
  options.tls = flags.tls;
  if (job == "ps") options.stop_when_chief_unreachable = absl::Seconds(30);
  // The ps tasks write their variables' shards of each checkpoint, the chief merges them,
  // and a worker's input pipeline reads the training files: the places this task lets
  // graphs touch files.
  if (!flags.checkpoint_dir.empty()) options.allowed_directories = {flags.checkpoint_dir};
  if (job != "ps") {
    for (const std::string& file : flags.train_files) {
      options.allowed_directories.push_back(std::filesystem::absolute(file).parent_path().string());
    }
  }
  auto server = Server::Create(config->cluster(), job, config->task_index(), options);
  if (!server.ok()) return Fail("creating the server", server.status());
  Status started = (*server)->Start();
  if (!started.ok()) return Fail("starting the server", started);
  if (job == "ps") return RunPs(**server);
  if (job != "worker" && job != "chief" && job != "master") {
    return Fail("role", errors::InvalidArgument("job '", job, "' is not ps, worker or chief"));
  }
  return RunWorker(*config, **server, flags);
}

}  // namespace
}  // namespace tw::examples

int main(int argc, char** argv) { return tw::examples::Main(argc, argv); }
