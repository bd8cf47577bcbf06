from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from scripts.check_kubernetes import load_manifests, manifest_problems, schema_problems

# Compiles and runs external tools (tsc, the Kubernetes schemas): CI's slow step runs it.
pytestmark = pytest.mark.slow

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"

Manifests = list[tuple[str, Any]]


@pytest.fixture(scope="module")
def shipped() -> Manifests:
    return load_manifests(DEPLOY)


@pytest.fixture
def manifests(shipped: Manifests) -> Manifests:
    return copy.deepcopy(shipped)


def of_kind(manifests: Manifests, kind: str, name: str | None = None) -> Any:
    return next(
        m
        for _, m in manifests
        if m["kind"] == kind and (name is None or m["metadata"]["name"] == name)
    )


def container(manifests: Manifests) -> Any:
    return of_kind(manifests, "Deployment")["spec"]["template"]["spec"]["containers"][0]


def test_the_shipped_manifests_are_valid_and_keep_every_rule(shipped: Manifests) -> None:
    assert [(name, m["kind"]) for name, m in shipped] == [
        ("deployment.yaml", "Deployment"),
        ("pvc.yaml", "PersistentVolumeClaim"),
        ("pvc.yaml", "PersistentVolumeClaim"),
        ("service.yaml", "Service"),
    ]
    assert manifest_problems(shipped) == []


def test_an_unknown_field_fails_the_strict_schema_for_both_versions(manifests: Manifests) -> None:
    probe = container(manifests)
    probe["readinesProbe"] = probe.pop("readinessProbe")
    assert manifest_problems(manifests) == [
        f"deployment.yaml: spec.template.spec.containers.0: Additional properties are not "
        f"allowed ('readinesProbe' was unexpected) (Kubernetes {version})"
        for version in ("1.29", "1.37")
    ] + ["Deployment: readinessProbe does not GET /readyz"]


def test_a_wrong_type_names_its_path() -> None:
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "x"},
        "spec": {"ports": [{"port": "eighty"}]},
    }
    assert schema_problems("service.yaml", service) == [
        f"service.yaml: spec.ports.0.port: 'eighty' is not of type 'integer' (Kubernetes {v})"
        for v in ("1.29", "1.37")
    ]


def test_one_replica_is_not_several(manifests: Manifests) -> None:
    of_kind(manifests, "Deployment")["spec"]["replicas"] = 1
    assert manifest_problems(manifests) == ["Deployment: fewer than 2 replicas"]


def test_probes_must_be_wired_to_healthz_and_readyz(manifests: Manifests) -> None:
    probes = container(manifests)
    probes["livenessProbe"]["httpGet"]["path"] = "/readyz"
    probes["readinessProbe"]["httpGet"]["port"] = 9090
    assert manifest_problems(manifests) == [
        "Deployment: livenessProbe does not GET /healthz",
        "Deployment: readinessProbe does not target a port of the container",
    ]


def test_root_and_a_writable_root_file_system_are_refused(manifests: Manifests) -> None:
    pod = of_kind(manifests, "Deployment")["spec"]["template"]["spec"]
    pod["securityContext"]["runAsNonRoot"] = False
    del container(manifests)["securityContext"]["readOnlyRootFilesystem"]
    del container(manifests)["resources"]["limits"]
    assert manifest_problems(manifests) == [
        "Deployment: the pod does not set runAsNonRoot: true with a non-zero runAsUser",
        "Deployment: the root file system is not read-only",
        "Deployment: resources need cpu and memory requests and a memory limit",
    ]


def test_the_work_directory_must_be_mounted_read_only(manifests: Manifests) -> None:
    mounts = container(manifests)["volumeMounts"]
    next(m for m in mounts if m["mountPath"] == "/workspace")["readOnly"] = False
    assert manifest_problems(manifests) == [
        "Deployment: the work directory /workspace is not mounted readOnly"
    ]


def test_the_shared_data_claim_must_be_read_write_many(manifests: Manifests) -> None:
    claim = of_kind(manifests, "PersistentVolumeClaim", "context-compact-data")
    claim["spec"]["accessModes"] = ["ReadWriteOnce"]
    assert manifest_problems(manifests) == [
        "Deployment: claim 'context-compact-data' for /data is not ReadWriteMany"
    ]


def test_the_data_directory_must_match_its_mount(manifests: Manifests) -> None:
    env = container(manifests)["env"]
    next(e for e in env if e["name"] == "COMPACT_DATA_DIR")["value"] = "/var/data"
    assert manifest_problems(manifests) == [
        "Deployment: COMPACT_DATA_DIR is '/var/data', not the mount /data"
    ]


def test_the_service_must_reach_the_pods(manifests: Manifests) -> None:
    service = of_kind(manifests, "Service")
    service["spec"]["selector"] = {"app": "other"}
    service["spec"]["ports"][0]["targetPort"] = "metrics"
    assert manifest_problems(manifests) == [
        "Service: the Service selector does not match the Deployment's pod labels",
        "Service: Service port 8080 targets no container port",
    ]


def test_the_postgres_shape_keeps_every_rule_with_no_shared_claim() -> None:
    shipped = load_manifests(DEPLOY / "postgres")
    assert [(name, m["kind"]) for name, m in shipped] == [
        ("deployment.yaml", "Deployment"),
        ("service.yaml", "Service"),
    ]
    assert manifest_problems(shipped) == []
    volumes = of_kind(shipped, "Deployment")["spec"]["template"]["spec"]["volumes"]
    claims = [
        v["persistentVolumeClaim"]["claimName"] for v in volumes if "persistentVolumeClaim" in v
    ]
    assert claims == ["agent-workspace"]


def test_the_database_url_must_come_from_a_secret_and_data_needs_no_claim() -> None:
    manifests = load_manifests(DEPLOY / "postgres")
    env = container(manifests)["env"]
    url = next(e for e in env if e["name"] == "COMPACT_DATABASE_URL")
    del url["valueFrom"]
    url["value"] = "postgresql://compact:secret@db/compact"
    pod = of_kind(manifests, "Deployment")["spec"]["template"]["spec"]
    data = next(v for v in pod["volumes"] if v["name"] == "data")
    del data["emptyDir"]
    data["persistentVolumeClaim"] = {"claimName": "context-compact-data"}
    assert manifest_problems(manifests) == [
        "Deployment: COMPACT_DATABASE_URL does not come from a Secret (secretKeyRef)",
        "Deployment: /data is a claim; with COMPACT_DATABASE_URL it needs none",
    ]
