// The examples as a user runs them: `hello` on its own, and `wordcount` as a whole cluster
// under the real `tw launch`, its total checked against `LC_ALL=C wc -w` run here on the
// same files.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/subprocess.h"

namespace tw {
namespace {

namespace fs = std::filesystem;
using testing::BuiltProgram;
using ::testing::HasSubstr;
using testing::ProcessResult;
using testing::RunProcess;

constexpr char kCorpusDir[] = "/usr/share/doc/linux-doc-6.1";

// A string literal with its NUL bytes, without the terminating one.
template <size_t N>
std::string Bytes(const char (&literal)[N]) {
  return std::string(literal, N - 1);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// What task `task` ("reduce:0") wrote on the stream that `tw launch` output is, in order.
std::vector<std::string> TaskLines(const std::string& launcher_output, const std::string& task) {
  const std::string prefix = "[" + task + "] ";
  std::vector<std::string> lines;
  for (const std::string& line : Lines(launcher_output)) {
    if (line.rfind(prefix, 0) == 0) lines.push_back(line.substr(prefix.size()));
  }
  return lines;
}

// The launcher's summary: task -> how it ended ("exited 0").
std::map<std::string, std::string> TaskEndings(const std::string& launcher_err) {
  std::map<std::string, std::string> endings;
  const std::regex line(R"(^tw launch:\s+([a-z]+:[0-9]+)\s+(.*)$)");
  bool in_summary = false;
  for (const std::string& l : Lines(launcher_err)) {
    if (l.rfind("tw launch: summary after", 0) == 0) in_summary = true;
    std::smatch m;
    if (in_summary && std::regex_match(l, m, line)) endings[m[1]] = m[2];
  }
  return endings;
}

// `LC_ALL=C wc -w` over `files`: the number on its total line (the only line for one file).
int64_t WcTotal(const std::vector<std::string>& files, const fs::path& scratch) {
  const fs::path list = scratch / "wc-files0";
  {
    std::ofstream out(list, std::ios::binary);
    for (const std::string& f : files) out << f << '\0';
  }
  auto wc = RunProcess({"/usr/bin/wc", "-w", "--files0-from=" + list.string()}, {{"LC_ALL", "C"}},
                       absl::Seconds(60));
  EXPECT_TRUE(wc.ok()) << wc.status();
  if (!wc.ok()) return -1;
  EXPECT_EQ(wc->exit_code, 0) << wc->err;
  const std::vector<std::string> lines = Lines(wc->out);
  EXPECT_FALSE(lines.empty());
  if (lines.empty()) return -1;
  return std::stoll(lines.back());
}

class ExamplesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "_" + info->name();
    std::replace(name.begin(), name.end(), '/', '_');
    dir_ = fs::path(::testing::TempDir()) / ("examples_" + name + "_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "corpus");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes `content` to corpus/<name> and returns the absolute path.
  std::string Write(const std::string& name, const std::string& content) {
    const fs::path path = dir_ / "corpus" / name;
    std::ofstream(path, std::ios::binary) << content;
    return path.string();
  }

  std::string WriteList(const std::vector<std::string>& paths) {
    const fs::path list = dir_ / "list";
    std::ofstream out(list, std::ios::binary);
    for (const std::string& p : paths) out << p << '\n';
    return list.string();
  }

  // `tw launch --cluster files=1,reduce=1,map=MAPS -- wordcount LIST`, to its end.
  ProcessResult LaunchWordcount(int maps, const std::string& list) {
    auto result =
        RunProcess({BuiltProgram("tools/tw"), "launch", "--cluster",
                    "files=1,reduce=1,map=" + std::to_string(maps), "--",
                    BuiltProgram("examples/wordcount"), list},
                   {{"NO_COLOR", std::nullopt}, {"TF_CONFIG", std::nullopt}}, absl::Seconds(120));
    EXPECT_TRUE(result.ok()) << result.status();
    if (!result.ok()) return ProcessResult{};
    EXPECT_FALSE(result->timed_out) << result->out << result->err;
    return *result;
  }

  // Runs the word count and checks a clean success: every task exited 0, and the reduce
  // task's last line is the total, which is returned.
  int64_t CountWithCluster(int maps, const std::string& list) {
    const ProcessResult r = LaunchWordcount(maps, list);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    std::map<std::string, std::string> expected = {{"files:0", "exited 0"},
                                                   {"reduce:0", "exited 0"}};
    for (int i = 0; i < maps; ++i) expected["map:" + std::to_string(i)] = "exited 0";
    EXPECT_EQ(TaskEndings(r.err), expected) << r.err;
    EXPECT_THAT(Lines(r.err).back(), HasSubstr("tw launch: job succeeded")) << r.err;
    const std::vector<std::string> reduce = TaskLines(r.out, "reduce:0");
    EXPECT_FALSE(reduce.empty()) << r.out;
    if (reduce.empty()) return -1;
    std::smatch m;
    const std::regex final_line("final total: ([0-9]+)");
    EXPECT_TRUE(std::regex_match(reduce.back(), m, final_line)) << r.out;
    return m.empty() ? -1 : std::stoll(m[1]);
  }

  // Files that trip up word counters: every whitespace byte, empty files, no final newline,
  // NUL, control and non-ASCII bytes, CRLF, file names with spaces, tabs and non-UTF-8
  // bytes, a file larger than the read buffer, and enough small files to need many batches.
  std::vector<std::string> MakeTrickyCorpus() {
    std::vector<std::string> files;
    files.push_back(Write("whitespace with spaces.txt", "  a\tb\v\vc\f\rd\r\n e  \n\n\t f\x0b"));
    files.push_back(Write("empty", ""));
    files.push_back(Write("only-space", " \n\t\n"));
    files.push_back(Write("no trailing newline", "last words here"));
    files.push_back(Write(" leading and trailing spaces ", Bytes("a\0b \0 c\0\0 d\0")));
    files.push_back(Write("tab\tin name", "crlf\r\nline two\r\n"));
    files.push_back(Write("non-utf8-\xff\xfe", "caf\xc3\xa9 na\xefve \xe2\x80\x94 done"));
    std::string all_bytes;
    for (int b = 0; b < 256; ++b) {
      all_bytes += "x";
      all_bytes += static_cast<char>(b);
      all_bytes += "y ";
      all_bytes += static_cast<char>(b);
      all_bytes += " \n";
    }
    files.push_back(Write("all byte values", all_bytes));
    std::mt19937 rng(7);
    std::string big(1536 * 1024, ' ');
    const std::string alphabet = Bytes("abcdefgh   \n\t\0\x01\x80\xff");
    for (char& c : big)
      c = (rng() % 50 == 0) ? alphabet[rng() % alphabet.size()] : "wxyz "[rng() % 5];
    files.push_back(Write("big random", big));
    for (int i = 0; i < 150; ++i) {
      std::string words;
      for (int w = 0; w < i; ++w) words += "w" + std::to_string(w) + (w % 9 ? " " : "\n");
      files.push_back(Write("small-" + std::to_string(i), words));
    }
    return files;
  }

  fs::path dir_;
};

TEST(HelloTest, PrintsTheGreetingAndExitsZero) {
  auto r = RunProcess({BuiltProgram("examples/hello")}, {}, absl::Seconds(30));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 0) << r->err;
  EXPECT_EQ(r->out, "Hello, distributed tensorweave!\n");
}

class WordcountTest : public ExamplesTest, public ::testing::WithParamInterface<int> {};

TEST_P(WordcountTest, TotalEqualsWcOnATrickyCorpus) {
  const std::vector<std::string> files = MakeTrickyCorpus();
  const int64_t expected = WcTotal(files, dir_);
  ASSERT_GT(expected, 1000);
  // Empty lines in the list are ignored.
  std::vector<std::string> listed = files;
  listed.insert(listed.begin() + 3, "");
  EXPECT_EQ(CountWithCluster(GetParam(), WriteList(listed)), expected);
}

INSTANTIATE_TEST_SUITE_P(Maps, WordcountTest, ::testing::Values(1, 2),
                         [](const auto& p) { return std::to_string(p.param) + "map"; });

TEST_F(ExamplesTest, UnreadableFilesAreNamedAndFailTheJob) {
  const std::string good = Write("good", "one two three\n");
  const std::string missing = (dir_ / "corpus" / "missing file").string();
  const std::string directory = (dir_ / "corpus").string();
  const ProcessResult r = LaunchWordcount(2, WriteList({good, missing, directory, good}));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("cannot read " + missing + ": No such file or directory"));
  EXPECT_THAT(r.err, HasSubstr("cannot read " + directory + ": Is a directory"));
  EXPECT_THAT(r.err, HasSubstr("[reduce:0] error: 2 of 4 input files could not be read"));
  EXPECT_THAT(r.err, HasSubstr("the total of the others is 6"));
  for (const std::string& line : TaskLines(r.out, "reduce:0")) {
    EXPECT_THAT(line, ::testing::Not(HasSubstr("final total"))) << r.out;
  }
  EXPECT_THAT(Lines(r.err).back(), HasSubstr("job failed: reduce:0 exited with code 1")) << r.err;
}

TEST_F(ExamplesTest, MissingListFileFailsTheJobNamingIt) {
  const std::string list = (dir_ / "no-such-list").string();
  const ProcessResult r = LaunchWordcount(1, list);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("[files:0] files: cannot read list file " + list +
                               ": No such file or directory"));
}

TEST(WordcountUsageTest, WithoutAClusterItSaysHowToRunIt) {
  auto r = RunProcess({BuiltProgram("examples/wordcount"), "list"}, {{"TF_CONFIG", std::nullopt}},
                      absl::Seconds(30));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 2);
  EXPECT_THAT(r->err, HasSubstr("needs a cluster with the jobs files (1 task), reduce (1 task)"));
  EXPECT_THAT(r->err, HasSubstr("tw launch --cluster files=1,reduce=1,map=2 --success reduce:0 -- "
                                "wordcount"));
}

// The real corpus of `make wordcount-demo` and the benchmark, when the package is installed
// (scripts/setup.sh installs it): about 3,200 files, 24 MB.
// mnist_ps's mutual TLS flags go together, and a file that cannot be used is named; both
// are bad configuration (exit 1) found before any server starts.
TEST(MnistPsTlsFlagsTest, IncompleteOrUnreadableTlsIsABadConfigurationNamingWhatIsWrong) {
  auto partial = RunProcess({BuiltProgram("examples/mnist_ps"), "--tls_ca=/nonexistent/ca.pem"});
  ASSERT_TRUE(partial.ok()) << partial.status();
  EXPECT_EQ(partial->exit_code, 1) << partial->err;
  EXPECT_THAT(partial->err, HasSubstr("--tls_cert is missing"));
  auto unreadable =
      RunProcess({BuiltProgram("examples/mnist_ps"), "--tls_ca=/nonexistent/ca.pem",
                  "--tls_cert=/nonexistent/task.pem", "--tls_key=/nonexistent/task.key"});
  ASSERT_TRUE(unreadable.ok()) << unreadable.status();
  EXPECT_EQ(unreadable->exit_code, 1) << unreadable->err;
  EXPECT_THAT(unreadable->err, HasSubstr("/nonexistent/ca.pem"));
}

TEST_F(ExamplesTest, TotalEqualsWcOnTheLinuxDocumentation) {
  if (!fs::exists(kCorpusDir)) GTEST_SKIP() << kCorpusDir << " is missing (package linux-doc-6.1)";
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(kCorpusDir)) {
    const std::string path = entry.path().string();
    if (entry.is_regular_file() && path.size() > 8 &&
        path.compare(path.size() - 8, 8, ".rst.txt") == 0) {
      files.push_back(path);
    }
  }
  std::sort(files.begin(), files.end());
  ASSERT_GT(files.size(), 3000u);
  const int64_t expected = WcTotal(files, dir_);
  ASSERT_GT(expected, 1000000);
  const std::string list = WriteList(files);
  for (int maps : {1, 2, 4}) {
    EXPECT_EQ(CountWithCluster(maps, list), expected) << maps << " map tasks";
  }
}

}  // namespace
}  // namespace tw
