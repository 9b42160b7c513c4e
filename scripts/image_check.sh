#!/usr/bin/env bash
# Builds the Dockerfile's image and checks what it promises, on a machine without a Docker
# engine: podman builds it with chroot isolation (no daemon, no OCI runtime), from Debian
# 12 base images made here by debootstrap, since no registry is reachable. Images, layers
# and podman's state live in a scratch directory that is removed at the end, also on
# failure or interrupt.
#
#   sudo bash scripts/image_check.sh          (make image-check; setup.sh image installs
#                                              podman and debootstrap)
#
# Checked in the built image's file system (chroot, new PID namespace, host loopback):
#   - every installed program and library (the Python extension too) finds its shared
#     libraries (a runtime package left out of the Dockerfile would show here, not on a
#     cluster);
#   - no compiler, CMake or -dev package (grpcpp, absl headers) reached the runtime stage;
#   - the image runs as the numeric user 1000, with tini as its entry point, exposing 2222;
#   - a task without a SIGTERM handler (mnist_ps --job_name=ps) ignores SIGTERM as PID 1,
#     and stops at once when tini is PID 1, with 143 (128 + SIGTERM);
#   - the examples' data is where mnist_ps reads it: a ps task and a chief train 50 steps
#     in the image, and the ps task exits when the chief stops it.
#
# The base images differ from Docker Hub's debian:12 and debian:12-slim in what is left
# out of them (debootstrap's minbase), not in the packages the Dockerfile installs.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "image-check: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap, chroot, unshare)"
for tool in podman debootstrap unshare chroot; do
  command -v "$tool" > /dev/null || fail "$tool is missing: bash scripts/setup.sh image"
done

scratch=$(mktemp -d /var/tmp/tw-image-check.XXXXXX)
podman=(podman --root "$scratch/storage" --runroot "$scratch/run" --tmpdir "$scratch/tmp")
task_pid=""
cleanup() {
  # A task still running in the image (a check that failed) goes first: it holds the mount.
  if [ -n "$task_pid" ]; then
    kill -KILL "$task_pid" 2> /dev/null || true
    wait "$task_pid" 2> /dev/null || true
  fi
  "${podman[@]}" image unmount --all > /dev/null 2>&1 || true
  "${podman[@]}" rmi --all --force > /dev/null 2>&1 || true
  # Whatever podman left mounted under the scratch directory, then the directory.
  grep -o " $scratch[^ ]*" /proc/self/mounts | sort -r | xargs -r -n 1 umount -l 2> /dev/null || true
  rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
echo "image-check: debootstrap of Debian 12 (minbase) as debian:12 and debian:12-slim"
mirror=http://deb.debian.org/debian
debootstrap --variant=minbase bookworm "$scratch/rootfs" "$mirror" > "$scratch/debootstrap.log" 2>&1 ||
  { tail -20 "$scratch/debootstrap.log" >&2; fail "debootstrap failed"; }
rm -f "$scratch/rootfs/etc/apt/sources.list"
cat > "$scratch/rootfs/etc/apt/sources.list.d/debian.sources" << EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
rm -rf "$scratch/rootfs/var/cache/apt/archives/"*.deb "$scratch/rootfs/var/lib/apt/lists/"*
tar -C "$scratch/rootfs" -c . | "${podman[@]}" import --quiet --change 'CMD ["bash"]' - \
  docker.io/library/debian:12 > /dev/null
"${podman[@]}" tag docker.io/library/debian:12 docker.io/library/debian:12-slim
rm -rf "$scratch/rootfs"

echo "image-check: building the image (a release build of the whole project)"
start=$(date +%s)
"${podman[@]}" build --isolation chroot --pull=never -t tensorweave:check . > "$scratch/build.log" 2>&1 ||
  { tail -40 "$scratch/build.log" >&2; fail "the image does not build"; }
echo "image-check: built in $(($(date +%s) - start)) s"

config=$("${podman[@]}" image inspect tensorweave:check --format \
  '{{.Config.User}} {{json .Config.Entrypoint}} {{json .Config.ExposedPorts}}')
[[ "$config" == '1000:1000 ["/usr/bin/tini","--"] {"2222/tcp":{}}' ]] ||
  fail "user, entry point or port: $config"

root=$("${podman[@]}" image mount tensorweave:check)
[ -x "$root/usr/local/bin/tw" ] || fail "no /usr/local/bin/tw in the image"

# Shared libraries: ldd in the image, for every installed program and shared library.
ldd_out=$(chroot "$root" sh -ec 'for f in /usr/local/bin/* $(find /usr/local/lib -name "*.so*" -type f); do
  ldd "$f" | sed "s|^|$f: |"; done') || fail "ldd failed in the image: $ldd_out"
grep -q "libtensorweave" <<< "$ldd_out" || fail "ldd showed no program linking libtensorweave"
missing=$(grep "not found" <<< "$ldd_out" || true)
[ -z "$missing" ] || fail "libraries missing in the runtime image: $missing"
for f in /usr/bin/g++ /usr/bin/cc /usr/bin/cmake /usr/include/grpcpp /usr/include/absl; do
  [ ! -e "$root$f" ] || fail "the runtime image has $f: a build package reached it"
done

# Runs `$@` in the image as user 1000, as PID 1 of a new PID namespace; sets task_pid (the
# unshare process, whose child is that PID 1).
start_in_image() {
  unshare --pid --fork --kill-child chroot --userspec=1000:1000 "$root" "$@" \
    > "$scratch/task.log" 2>&1 &
  task_pid=$!
}
# Waits until the task's output has `text` (at most 60 s).
await_output() {
  for _ in $(seq 600); do
    grep -q "$1" "$scratch/task.log" && return
    kill -0 "$task_pid" 2> /dev/null || fail "the task ended: $(tail -5 "$scratch/task.log")"
    sleep 0.1
  done
  fail "the task did not print \"$1\" within 60 s: $(tail -5 "$scratch/task.log")"
}
# Sends SIGTERM to the task's PID 1 and gives it `seconds` to end; sets outcome to its exit
# status, or to "running".
terminate_within() {
  local seconds=$1 pid1
  pid1=$(cut -d " " -f 1 "/proc/$task_pid/task/$task_pid/children" 2> /dev/null || true)
  [ -n "$pid1" ] || fail "the task's PID 1 is gone: $(tail -5 "$scratch/task.log")"
  kill -TERM "$pid1"
  outcome=running
  for _ in $(seq $((seconds * 10))); do
    if ! kill -0 "$task_pid" 2> /dev/null; then
      outcome=0
      wait "$task_pid" || outcome=$?
      return
    fi
    sleep 0.1
  done
}
data=/usr/share/datasets/fashion-mnist
ps_task=(/usr/local/bin/mnist_ps --ps_hosts=127.0.0.1:0 --worker_hosts=127.0.0.1:1
  --job_name=ps --task_index=0)

# As PID 1 without tini, SIGTERM has no effect on a program without a handler of its own.
start_in_image env HOME=/home/tensorweave "${ps_task[@]}"
await_output "started /job:ps/task:0"
terminate_within 2
if [ "$outcome" != running ]; then
  cat "$scratch/task.log" >&2
  fail "mnist_ps as PID 1 should have ignored SIGTERM, yet it ended ($outcome)"
fi
kill -KILL "$task_pid" 2> /dev/null || true
wait "$task_pid" 2> /dev/null || true
task_pid=""

# With tini as PID 1 (the image's entry point) it stops at once.
start_in_image /usr/bin/tini -- env HOME=/home/tensorweave "${ps_task[@]}"
await_output "started /job:ps/task:0"
terminate_within 5
[ "$outcome" = 143 ] || { cat "$scratch/task.log" >&2; fail "under tini, SIGTERM gave: $outcome"; }
task_pid=""

# The examples' data, and a short one-process training that reads it.
for f in train-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz; do
  [ -e "$root$data/$f" ] || fail "no $data/$f in the image"
done
# Two distinct free ports, both held until both are known.
read -r ps_port worker_port < <(/usr/bin/python3 -c '
import socket
held = [socket.socket() for _ in range(2)]
for s in held: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in held))')
hosts=(--ps_hosts=127.0.0.1:$ps_port --worker_hosts=127.0.0.1:$worker_port)
start_in_image /usr/bin/tini -- env HOME=/home/tensorweave /usr/local/bin/mnist_ps \
  "${hosts[@]}" --job_name=ps --task_index=0
# The chief trains, evaluates and stops the ps task, which then exits by itself.
timeout 300 chroot --userspec=1000:1000 "$root" env HOME=/home/tensorweave \
  /usr/local/bin/mnist_ps "${hosts[@]}" --job_name=worker --task_index=0 --max_steps=50 > "$scratch/train.log" 2>&1 ||
  { tail -20 "$scratch/train.log" "$scratch/task.log" >&2; fail "mnist_ps did not train in the image"; }
grep -q "test accuracy:" "$scratch/train.log" || fail "no test accuracy: $(tail -5 "$scratch/train.log")"
for _ in $(seq 50); do kill -0 "$task_pid" 2> /dev/null || break; sleep 0.1; done
if kill -0 "$task_pid" 2> /dev/null; then
  kill -KILL "$task_pid"
  fail "the ps task did not exit when the chief stopped it"
fi
wait "$task_pid" || fail "the ps task exited with $?: $(tail -5 "$scratch/task.log")"
task_pid=""
echo "image-check: ok (user 1000, tini stops a task at SIGTERM with 143, libraries, data)"
