#include "examples/word_counter.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tw::examples {
namespace {

namespace fs = std::filesystem;

// The rule of coreutils' wc.c in the C locale, written as plainly as possible: a word is
// counted when a printable non-space byte follows a separator or the start; other
// non-printable bytes change nothing.
int64_t ReferenceCount(const std::string& text) {
  int64_t words = 0;
  bool in_word = false;
  for (unsigned char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r') {
      in_word = false;
    } else if (c >= 0x21 && c <= 0x7e) {
      if (!in_word) ++words;
      in_word = true;
    }
  }
  return words;
}

// A string literal with its NUL bytes, without the terminating one.
template <size_t N>
std::string Bytes(const char (&literal)[N]) {
  return std::string(literal, N - 1);
}

int64_t Count(const std::string& s) { return CountWords(s.data(), s.size()); }

TEST(WordCounterTest, SimpleText) {
  EXPECT_EQ(Count(""), 0);
  EXPECT_EQ(Count("hello"), 1);
  EXPECT_EQ(Count("  hello   world \n"), 2);
  EXPECT_EQ(Count("a\tb\nc\vd\fe\rf g"), 7);
  EXPECT_EQ(Count("no trailing newline"), 3);
}

TEST(WordCounterTest, NeutralBytesNeitherStartNorEndWords) {
  EXPECT_EQ(Count(Bytes("\0")), 0);
  EXPECT_EQ(Count(Bytes("a\0b")), 1);
  EXPECT_EQ(Count(Bytes("a \0 b")), 2);
  EXPECT_EQ(Count("\x01\x7f\x80\xff"), 0);
  EXPECT_EQ(Count("caf\xc3\xa9 cr\xc3\xa8me"), 2);  // UTF-8 letters are neutral in C
  EXPECT_EQ(Count("\xc3\xa9"), 0);
}

TEST(WordCounterTest, EveryByteValueAgreesWithTheRule) {
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    for (const std::string& s : {std::string(1, c), std::string("x") + c + "y",
                                 std::string("x ") + c + " y", std::string(100, c) + "z"}) {
      EXPECT_EQ(Count(s), ReferenceCount(s)) << "byte " << b;
    }
  }
}

// Random text with long stretches without neutral bytes (the block fast path) and some
// with them, counted in one piece and in random pieces.
TEST(WordCounterTest, RandomTextInRandomPiecesMatchesTheReference) {
  std::mt19937 rng(42);
  const std::string alphabets[] = {
      "ab ",                            // short words
      "abcdefghijklmnopqrstuvwxyz \n",  // text
      Bytes("a \t\n\v\f\r\x01\x80"),    // every class, often
      Bytes("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa \0"),
  };
  for (int round = 0; round < 200; ++round) {
    const std::string& alphabet = alphabets[round % 4];
    std::string text(std::uniform_int_distribution<int>(0, 3000)(rng), ' ');
    for (char& c : text) c = alphabet[rng() % alphabet.size()];
    EXPECT_EQ(Count(text), ReferenceCount(text)) << "round " << round;
    WordCounter pieces;
    for (size_t at = 0; at < text.size();) {
      const size_t n = std::min<size_t>(text.size() - at, rng() % 150);
      pieces.Add(text.data() + at, n);
      at += n;
    }
    EXPECT_EQ(pieces.words(), ReferenceCount(text)) << "round " << round;
  }
}

TEST(WordCounterTest, WordsAcrossBlockBoundaries) {
  for (size_t len = 60; len < 140; ++len) {
    std::string text(len, 'w');
    for (size_t gap = 0; gap < len; gap += 7) text[gap] = ' ';
    EXPECT_EQ(Count(text), ReferenceCount(text)) << len;
    text[len / 2] = '\0';
    EXPECT_EQ(Count(text), ReferenceCount(text)) << len;
  }
}

class FileWordCounterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("word_counter_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& content) {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << content;
    return path.string();
  }
  fs::path dir_;
};

TEST_F(FileWordCounterTest, CountsWordsAndBytesWithAnyBufferSize) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "word" + std::to_string(i) + (i % 10 ? " " : "\n");
  text += Bytes("tail\0end");
  const std::string path = Write("words.txt", text);
  for (size_t buffer : {1, 2, 3, 63, 64, 65, 4096, 1 << 20}) {
    FileWordCounter counter(buffer);
    auto count = counter.Count(path);
    ASSERT_TRUE(count.ok()) << count.status();
    EXPECT_EQ(count->words, 1001) << "buffer " << buffer;
    EXPECT_EQ(count->bytes, static_cast<int64_t>(text.size()));
  }
}

TEST_F(FileWordCounterTest, EmptyFile) {
  FileWordCounter counter;
  auto count = counter.Count(Write("empty", ""));
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(count->words, 0);
  EXPECT_EQ(count->bytes, 0);
}

TEST_F(FileWordCounterTest, ErrorsNameThePathAndTheReason) {
  FileWordCounter counter;
  const std::string missing = (dir_ / "no such file").string();
  auto count = counter.Count(missing);
  EXPECT_TRUE(IsNotFound(count.status())) << count.status();
  EXPECT_EQ(count.status().message(), "cannot read " + missing + ": No such file or directory");
  auto directory = counter.Count(dir_.string());
  EXPECT_FALSE(directory.ok());
  EXPECT_EQ(directory.status().message(), "cannot read " + dir_.string() + ": Is a directory");
}

}  // namespace
}  // namespace tw::examples
