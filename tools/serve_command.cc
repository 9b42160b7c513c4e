// `tw serve SAVED_MODEL_DIR`: TF Serving's REST predict API over a SavedModel, on
// cpp-httplib (as the tasks' metrics endpoints), so that a model can be tried without TF
// Serving. The API itself is src/saved_model/rest_predict.h.
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "httplib.h"
#include "src/saved_model/rest_predict.h"
#include "tensorweave/saved_model.h"
#include "tools/commands.h"

namespace tw::tools {
namespace {

struct ServeOptions {
  std::string model_dir;
  std::string model_name = "default";
  std::string bind_host = "0.0.0.0";
  int port = 8501;
  std::string tags = "serve";
  int threads = 0;
};

// The directory of the SavedModel to serve and its version: `dir` itself when it holds
// saved_model.pb(txt) (version 1, or its name when that is a number), else its
// highest-numbered subdirectory that does, as TF Serving picks versions under a base path.
bool ResolveVersion(const std::string& dir, std::string* model, int64_t* version) {
  namespace fs = std::filesystem;
  auto has_model = [](const fs::path& p) {
    std::error_code ec;
    return fs::exists(p / "saved_model.pb", ec) || fs::exists(p / "saved_model.pbtxt", ec);
  };
  const fs::path base(dir);
  if (has_model(base)) {
    *model = dir;
    if (!absl::SimpleAtoi(base.filename().string(), version)) *version = 1;
    return true;
  }
  int64_t best = -1;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(base, ec)) {
    int64_t v = 0;
    if (absl::SimpleAtoi(entry.path().filename().string(), &v) && v > best &&
        has_model(entry.path())) {
      best = v;
    }
  }
  if (best < 0) return false;
  *model = (base / std::to_string(best)).string();
  *version = best;
  return true;
}

int RunServe(const ServeOptions& opt) {
  std::string model_dir;
  int64_t version = 0;
  if (!ResolveVersion(opt.model_dir, &model_dir, &version)) {
    std::cerr << "tw serve: " << opt.model_dir
              << " holds no saved_model.pb, nor a numbered version directory with one\n";
    return 1;
  }
  // Stop signals are taken by a thread of our own (sigwait), so stopping runs in normal code.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  const std::vector<std::string> tags = absl::StrSplit(opt.tags, ',', absl::SkipEmpty());
  auto bundle = LoadSavedModel({.num_threads = opt.threads}, model_dir, tags);
  if (!bundle.ok()) {
    std::cerr << "tw serve: cannot load " << model_dir << ": " << bundle.status().message() << "\n";
    return 1;
  }
  const saved_model::RestPredictor predictor(bundle->get(), opt.model_name, version);
  httplib::Server server;
  server.set_socket_options([](int sock) {  // no SO_REUSEPORT: one server per port
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  // A response's headers and body are separate writes: without TCP_NODELAY, Nagle's
  // algorithm holds the body until the client's delayed ACK (40 ms a request).
  server.set_tcp_nodelay(true);
  const std::string model_path = "/v1/models/" + opt.model_name;
  auto send = [](httplib::Response& res, const saved_model::RestResponse& r) {
    res.status = r.http_status;
    res.set_content(r.body, "application/json");
  };
  server.Post(R"(/v1/models/([^/:]+)(/versions/\d+)?:predict)",
              [&](const httplib::Request& req, httplib::Response& res) {
                if (req.matches[1] != opt.model_name) {
                  send(res, {404, R"({"error": "no model of that name is served here"})"});
                  return;
                }
                send(res, predictor.Predict(req.body));
              });
  server.Get(R"(/v1/models/([^/:]+))", [&](const httplib::Request& req, httplib::Response& res) {
    if (req.matches[1] != opt.model_name) {
      send(res, {404, R"({"error": "no model of that name is served here"})"});
      return;
    }
    send(res, predictor.Status());
  });
  const int port = opt.port == 0 ? server.bind_to_any_port(opt.bind_host)
                   : server.bind_to_port(opt.bind_host, opt.port) ? opt.port
                                                                  : -1;
  if (port <= 0) {
    std::cerr << "tw serve: cannot listen on " << opt.bind_host << ":" << opt.port
              << " (is the port in use?)\n";
    return 200;  // as tw server: a port not bound is worth retrying
  }
  std::printf("tw serve: model %s (%s, version %lld) at http://%s:%d%s:predict\n",
              opt.model_name.c_str(), model_dir.c_str(), static_cast<long long>(version),
              opt.bind_host.c_str(), port, model_path.c_str());
  std::fflush(stdout);
  std::thread stopper([&server, stop_signals] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    // httplib's stop() does nothing before the accept loop runs.
    while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    server.stop();
  });
  server.listen_after_bind();
  stopper.join();
  return 0;
}

}  // namespace

void AddServeCommand(CLI::App& app, int* exit_code) {
  auto opt = std::make_shared<ServeOptions>();
  CLI::App* cmd =
      app.add_subcommand("serve", "Serve a SavedModel with TF Serving's REST predict API");
  cmd->add_option("model_dir", opt->model_dir,
                  "A SavedModel directory, or a base directory of numbered versions (the "
                  "highest is served)")
      ->required();
  cmd->add_option("--model_name", opt->model_name, "The name in /v1/models/NAME:predict")
      ->capture_default_str();
  cmd->add_option("--bind-host", opt->bind_host, "Host to listen on")->capture_default_str();
  cmd->add_option("--port", opt->port, "Port (0: any free port, printed at start)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--tags", opt->tags, "The MetaGraphDef's tags, ','-separated")
      ->capture_default_str();
  cmd->add_option("--threads", opt->threads, "Compute threads (0: one per core)")
      ->check(CLI::Range(0, 1024));
  cmd->footer(
      "Example:\n"
      "  tw serve /models/fashion --model_name=fashion --port=8501\n"
      "  curl -d '{\"instances\": [[0.1, 0.2]]}' "
      "localhost:8501/v1/models/fashion:predict\n"
      "Requests: {\"signature_name\": ..., \"instances\": [...]} (rows) or {\"inputs\": ...}\n"
      "(columns); GET /v1/models/NAME gives the model's status. Stops on SIGTERM or SIGINT.");
  cmd->callback([opt, exit_code] { *exit_code = RunServe(*opt); });
}

}  // namespace tw::tools
