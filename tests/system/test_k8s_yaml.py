"""Program arguments come through `tw k8s tfjob` and `tw launch` unchanged, whatever they
are: the manifest read back by a strict YAML 1.2 reader (ruamel.yaml) and by a YAML 1.1 one
(PyYAML, as Kubernetes' decoder reads YAML) gives the exact words; `tw launch` gives them to
the program as given."""

import json
import subprocess
import sys

import pytest

# Words that are numbers, booleans or YAML syntax in some reader, and words CLI11 would
# read as lists ("[64,32]", "[]"), separators, escapes and a second "--".
WORDS = ["--listen", ":8080", "[64,32]", "[]", "{a: 1}", "a,b", "--sizes=[1,2]", "- x", "-",
         "--", "? q", "a: b", "#not-a-comment", "x #y", "'single'", '"double"', "back\\slash",
         "tab\there", "line\nbreak", "&anchor", "*alias", "!tag", "%directive", "@at", "`tick",
         "|", ">", "2222", "true", "off", "null", "~", "", " padded ", "1e3", "0x1f", "1:20",
         "<<", "\u00fcnicode"]


def tfjob(tw_tool, words, env_value):
    out = subprocess.run(
        [tw_tool, "k8s", "tfjob", "--name", "args", "--image", "registry.example/tw:1",
         "--cluster", "chief=1,worker=2", "--env", "TRICKY=" + env_value, "--", "prog"] + words,
        capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def containers(doc):
    specs = doc["spec"]["tfReplicaSpecs"]
    assert sorted(specs) == ["Chief", "Worker"]
    return [specs[r]["template"]["spec"]["containers"][0] for r in sorted(specs)]


def check(doc, words, env_value):
    assert doc["apiVersion"] == "kubeflow.org/v1" and doc["kind"] == "TFJob"
    for c in containers(doc):
        assert "command" not in c  # the image's ENTRYPOINT (tini) stays
        assert c["args"] == ["prog"] + words
        assert {e["name"]: e["value"] for e in c["env"]}["TRICKY"] == env_value


def test_manifest_words_under_yaml_1_2_and_1_1(tw_tool):
    ruamel = pytest.importorskip("ruamel.yaml", reason="scripts/setup.sh installs "
                                 "python3-ruamel.yaml")
    yaml = pytest.importorskip("yaml", reason="scripts/setup.sh installs python3-yaml")
    env_value = "[64,32]: #x"
    text = tfjob(tw_tool, WORDS, env_value)
    strict = ruamel.YAML(typ="safe", pure=True)
    strict.version = (1, 2)
    check(strict.load(text), WORDS, env_value)
    check(yaml.safe_load(text), WORDS, env_value)  # YAML 1.1, as Kubernetes reads it


def test_tw_launch_passes_every_word_unchanged(tw_tool):
    program = "import json, sys; print(json.dumps(sys.argv[1:]))"
    out = subprocess.run([tw_tool, "launch", "--cluster", "worker=1", "--", sys.executable,
                          "-c", program] + WORDS, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    line = [l for l in out.stdout.splitlines() if l.startswith("[worker:0] [")][0]
    assert json.loads(line[len("[worker:0] "):]) == WORDS


def test_words_before_dashes_are_refused(tw_tool):
    out = subprocess.run([tw_tool, "k8s", "tfjob", "--name", "a", "--image", "i", "--cluster",
                          "worker=2", "stray", "--", "prog"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 1
    assert 'unexpected "stray" before --' in out.stderr
    out = subprocess.run([tw_tool, "launch", "--cluster", "worker=1", "prog"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    assert "put the program after --" in out.stderr


# The "restricted" Pod Security Standard (kubernetes.io/docs/concepts/security/
# pod-security-standards), the checks a namespace enforcing it applies to every pod.
RESTRICTED_VOLUME_TYPES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                           "persistentVolumeClaim", "projected", "secret"}


def restricted_violations(pod):
    found = []
    pod_ctx = pod.get("securityContext") or {}
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(key):
            found.append(key)
    for volume in pod.get("volumes") or []:
        kinds = set(volume) - {"name"}
        if not kinds <= RESTRICTED_VOLUME_TYPES:
            found.append("volume %s of type %s" % (volume["name"], sorted(kinds)))
    for c in pod["containers"]:
        ctx = c.get("securityContext") or {}
        if ctx.get("privileged"):
            found.append("privileged")
        if ctx.get("allowPrivilegeEscalation") is not False:
            found.append("allowPrivilegeEscalation not false")
        if "ALL" not in ((ctx.get("capabilities") or {}).get("drop") or []):
            found.append("capabilities not dropped")
        if set((ctx.get("capabilities") or {}).get("add") or []) - {"NET_BIND_SERVICE"}:
            found.append("capabilities added")
        if not (ctx.get("runAsNonRoot", pod_ctx.get("runAsNonRoot")) is True):
            found.append("runAsNonRoot not true")
        if ctx.get("runAsUser", pod_ctx.get("runAsUser")) == 0:
            found.append("runs as root")
        seccomp = (ctx.get("seccompProfile") or pod_ctx.get("seccompProfile") or {})
        if seccomp.get("type") not in ("RuntimeDefault", "Localhost"):
            found.append("no seccomp profile")
        if any(p.get("hostPort") for p in c.get("ports") or []):
            found.append("hostPort")
    return found


def test_platform_manifest_passes_the_restricted_pod_security_level(tw_tool):
    ruamel = pytest.importorskip("ruamel.yaml", reason="scripts/setup.sh installs "
                                 "python3-ruamel.yaml")
    out = subprocess.run(
        [tw_tool, "k8s", "tfjob", "--name", "train", "--image", "registry.example/tw:1",
         "--cluster", "chief=1,worker=2,ps=1", "--restart", "exit-code",
         "--checkpoint-pvc", "train-ckpt", "--checkpoint-size", "10Gi",
         "--tls-secret", "train-tls", "--cpu", "2", "--memory", "4Gi", "--cpu-limit", "4",
         "--readiness-probe", "--active-deadline", "86400", "--ttl-after-finished", "3600",
         "--", "tw", "server", "--tls-ca=/etc/tensorweave/tls/ca.pem"],
        capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    strict = ruamel.YAML(typ="safe", pure=True)
    strict.version = (1, 2)
    tfjob, claim = list(strict.load_all(out.stdout))
    assert claim["kind"] == "PersistentVolumeClaim"
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
    for name, replica in tfjob["spec"]["tfReplicaSpecs"].items():
        pod = replica["template"]["spec"]
        assert restricted_violations(pod) == [], name
        mounts = {m["name"]: m for m in pod["containers"][0]["volumeMounts"]}
        assert mounts["checkpoints"]["mountPath"] == "/ckpt"
        assert mounts["tls"]["readOnly"] is True
    # The checker does see a pod that breaks the level.
    bad = dict(pod, hostNetwork=True, volumes=[{"name": "h", "hostPath": {"path": "/"}}])
    assert "hostNetwork" in restricted_violations(bad)
    assert any("hostPath" in v for v in restricted_violations(bad))
