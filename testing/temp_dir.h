// A fresh directory under $TMPDIR (or /tmp) for one test, removed with everything in it
// when the object goes.
#ifndef TENSORWEAVE_TESTING_TEMP_DIR_H_
#define TENSORWEAVE_TESTING_TEMP_DIR_H_

#include <stdlib.h>

#include <filesystem>
#include <string>

namespace tw::testing {

class ScopedTempDir {
 public:
  // `prefix` names the directory ("tw_saver" -> /tmp/tw_saver_XXXXXX); path() is empty
  // when it could not be made.
  explicit ScopedTempDir(const std::string& prefix) {
    const char* tmp = getenv("TMPDIR");
    std::string templ = std::string(tmp != nullptr ? tmp : "/tmp") + "/" + prefix + "_XXXXXX";
    if (mkdtemp(templ.data()) != nullptr) path_ = templ;
  }
  ~ScopedTempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace tw::testing

#endif  // TENSORWEAVE_TESTING_TEMP_DIR_H_
