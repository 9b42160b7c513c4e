# tensorweave: the two commands a newcomer needs are `make demo` and `make test`.
# Every target installs missing Debian packages (scripts/setup.sh) and configures first.

BUILD       ?= build
SAN_BUILD   ?= build-sanitize
JOBS        ?= $(shell nproc)
# Warnings are errors in CI (CI=true) and when asked for with WERROR=ON.
WERROR      ?= $(if $(filter true,$(CI)),ON,OFF)
FUZZ_SECONDS ?= 30
SOURCES      = $(shell git ls-files --cached --others --exclude-standard '*.cc' '*.h' 2>/dev/null)

.PHONY: all setup configure build test demo demo-python wordcount-demo sanitize-configure sanitize-test fuzz install-check image-check format format-check clean

all: build

setup:
	@bash scripts/setup.sh

configure: setup
	@cmake -S . -B $(BUILD) -G Ninja -DTW_WERROR=$(WERROR) $(CMAKE_ARGS) > $(BUILD).configure.log 2>&1 \
	  || { cat $(BUILD).configure.log; exit 1; }

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# Every test (unit and integration), in parallel; ctest prints the summary line.
test: build
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

demo: build
	@bash scripts/demo.sh $(BUILD)

demo-python: build
	@bash scripts/demo_python.sh $(BUILD)

wordcount-demo: build
	@bash scripts/wordcount_demo.sh $(BUILD)

# Unit tests again under AddressSanitizer + UndefinedBehaviorSanitizer (clang), plus the
# libFuzzer targets for FUZZ_SECONDS each.
sanitize-configure: setup
	@CC=clang-14 CXX=clang++-14 cmake -S . -B $(SAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Debug \
	  -DTW_SANITIZE=ON -DTW_FUZZ=ON -DTW_BUILD_BENCHMARKS=OFF -DTW_BUILD_PYTHON=OFF \
	  -DTW_WERROR=$(WERROR) \
	  -DTW_FUZZ_SECONDS=$(FUZZ_SECONDS) > $(SAN_BUILD).configure.log 2>&1 \
	  || { cat $(SAN_BUILD).configure.log; exit 1; }

sanitize-test: sanitize-configure
	@cmake --build $(SAN_BUILD) -j $(JOBS)
	@ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir $(SAN_BUILD) --output-on-failure -j $(JOBS) -L unit

fuzz: sanitize-configure
	@cmake --build $(SAN_BUILD) -j $(JOBS)
	@ASAN_OPTIONS=allocator_may_return_null=1 ctest --test-dir $(SAN_BUILD) --output-on-failure -L fuzz

# Installs into a scratch prefix and builds a separate project against it with
# find_package(tensorweave).
install-check: build
	@bash scripts/install_check.sh $(BUILD)

# Builds the Dockerfile's image with podman (no Docker engine needed) and checks it: needs
# root, the network to deb.debian.org, and 5-7 minutes on 2 cores (most of it a release
# build inside the image).
image-check:
	@bash scripts/setup.sh image
	@bash scripts/image_check.sh

format:
	@clang-format -i $(SOURCES)

# Formatting, the layer order of includes (scripts/check_layers.py), and that every
# repository path the docs name exists (scripts/check_doc_paths.py).
format-check:
	@clang-format --dry-run --Werror $(SOURCES) && echo "format-check: ok"
	@python3 scripts/check_layers.py
	@python3 scripts/check_doc_paths.py

clean:
	@rm -rf $(BUILD) $(SAN_BUILD) $(BUILD).configure.log $(SAN_BUILD).configure.log
