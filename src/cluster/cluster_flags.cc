#include "src/cluster/cluster_flags.h"

#include <map>

#include "src/base/json.h"
#include "src/base/strings.h"
#include "src/cluster/cluster_json.h"

namespace tw {
namespace {

constexpr std::string_view kHostsSuffix = "_hosts";

bool IsClusterFlag(std::string_view name) {
  return name == "cluster" || name == "cluster_spec" || name == "job_name" ||
         name == "task_index" || name == "task_id" ||
         (name.size() > kHostsSuffix.size() && name.ends_with(kHostsSuffix));
}

std::vector<std::string> SplitAddresses(std::string_view list, char separator) {
  std::vector<std::string> out;
  for (std::string_view a : Split(list, separator)) out.emplace_back(StripWhitespace(a));
  return out;
}

// --cluster_spec=ps|a:1;a:2,worker|b:1 (TensorFlow's std server form).
StatusOr<ClusterSpec> ParseClusterSpecFlag(std::string_view value) {
  ClusterSpec spec;
  for (std::string_view entry : Split(value, ',')) {
    if (StripWhitespace(entry).empty()) continue;
    const size_t bar = entry.find('|');
    if (bar == std::string_view::npos) {
      return errors::InvalidArgument("--cluster_spec: job entry \"", entry,
                                     "\" has no '|'; the form is NAME|HOST:PORT;HOST:PORT,...");
    }
    const std::string job(StripWhitespace(entry.substr(0, bar)));
    Status s = spec.AddJob(job, SplitAddresses(entry.substr(bar + 1), ';'));
    if (!s.ok()) return errors::Annotate(s, "--cluster_spec: ");
  }
  return spec;
}

StatusOr<int> ParseTaskIndexFlag(std::string_view flag, std::string_view value) {
  std::optional<int> v = ParseNonNegativeInt(StripWhitespace(value));
  if (!v) {
    return errors::InvalidArgument("--", flag, " must be an integer >= 0, got \"", value, "\"");
  }
  return *v;
}

}  // namespace

StatusOr<ClusterFlags> ParseClusterFlags(const std::vector<std::string>& args) {
  ClusterFlags flags;
  std::map<std::string, std::string> values;  // flag name -> value, each given once
  std::vector<std::string> order;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      flags.unused.insert(flags.unused.end(), args.begin() + static_cast<long>(i), args.end());
      break;
    }
    if (!arg.starts_with("--")) {
      flags.unused.push_back(arg);
      continue;
    }
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    if (!IsClusterFlag(name)) {
      flags.unused.push_back(arg);
      continue;
    }
    std::string value;
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return errors::InvalidArgument("--", name, " needs a value");
    }
    const std::string key = name == "task_id" ? "task_index" : name;
    if (!values.emplace(key, value).second) {
      return errors::InvalidArgument("--", name, " is given more than once");
    }
    order.push_back(key);
  }

  // The cluster comes from exactly one form: --cluster, --cluster_spec, or --<job>_hosts.
  std::string cluster_form;
  auto claim_cluster = [&](const std::string& form) -> Status {
    if (!cluster_form.empty() && cluster_form != form) {
      return errors::InvalidArgument(cluster_form, " and ", form,
                                     " both define the cluster; use one form");
    }
    cluster_form = form;
    if (!flags.cluster) flags.cluster = ClusterSpec();
    return OkStatus();
  };
  for (const std::string& key : order) {
    const std::string& value = values[key];
    if (key == "cluster") {
      TW_RETURN_IF_ERROR(claim_cluster("--cluster"));
      TW_ASSIGN_OR_RETURN(nlohmann::json json, ParseJsonStrict(value, "--cluster"));
      TW_ASSIGN_OR_RETURN(flags.cluster, ClusterSpecFromJsonValue(json, "--cluster"));
    } else if (key == "cluster_spec") {
      TW_RETURN_IF_ERROR(claim_cluster("--cluster_spec"));
      TW_ASSIGN_OR_RETURN(flags.cluster, ParseClusterSpecFlag(value));
    } else if (key == "job_name") {
      const std::string job(StripWhitespace(value));
      if (job.empty()) return errors::InvalidArgument("--job_name is empty");
      flags.job_name = job;
    } else if (key == "task_index") {
      TW_ASSIGN_OR_RETURN(flags.task_index, ParseTaskIndexFlag(key, value));
    } else {
      // --<job>_hosts; an empty value means "no such job" (a common launcher pitfall).
      TW_RETURN_IF_ERROR(claim_cluster("--<job>_hosts"));
      if (StripWhitespace(value).empty()) continue;
      const std::string job = key.substr(0, key.size() - kHostsSuffix.size());
      Status s = flags.cluster->AddJob(job, SplitAddresses(value, ','));
      if (!s.ok()) return errors::Annotate(s, "--" + key + ": ");
    }
  }
  return flags;
}

}  // namespace tw
