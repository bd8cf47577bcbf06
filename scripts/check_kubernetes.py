"""Static checks of the Kubernetes manifests in deploy/, for a CI without a cluster.

Every document is validated strictly (unknown fields are errors) against the Kubernetes
OpenAPI schemas that kubernetes-validate bundles, for the oldest and the newest version we
claim, then checked against what docs/deploy.md promises: several replicas, a non-root
pod with a read-only root file system, resources, liveness on `/healthz` and readiness on
`/readyz`, the work directory mounted read-only, the shared state either on a
ReadWriteMany claim at the data directory (deploy/) or in PostgreSQL, its URL from a
Secret and no ReadWriteMany claim (deploy/postgres/), and a Service that reaches the pods.

Usage: python -m scripts.check_kubernetes [DIRECTORY ...]   (default: deploy and deploy/postgres)
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import kubernetes_validate
import yaml

ROOT = Path(__file__).resolve().parent.parent
KUBERNETES_VERSIONS = ("1.29", "1.37")
WORKDIR_MOUNT = "/workspace"
DATA_MOUNT = "/data"
DATABASE_VARIABLE = "COMPACT_DATABASE_URL"

Manifest = Mapping[str, Any]


def load_manifests(directory: Path) -> list[tuple[str, Manifest]]:
    """(file name, document) for every document of every *.yaml file, in name order."""
    manifests = []
    for path in sorted(directory.glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if document is not None:
                manifests.append((path.name, document))
    return manifests


def schema_problems(name: str, manifest: Manifest) -> list[str]:
    problems = []
    for version in KUBERNETES_VERSIONS:
        try:
            kubernetes_validate.validate(dict(manifest), version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            where = ".".join(str(p) for p in exc.path) or "(document)"
            problems.append(f"{name}: {where}: {exc.message} (Kubernetes {version})")
        except kubernetes_validate.SchemaNotFoundError as exc:
            problems.append(f"{name}: {exc.message}")
    return problems


def _of_kind(manifests: Sequence[Manifest], kind: str) -> list[Manifest]:
    return [m for m in manifests if m.get("kind") == kind]


def _probe_path(container: Manifest, probe: str) -> str | None:
    path = ((container.get(probe) or {}).get("httpGet") or {}).get("path")
    return path if isinstance(path, str) else None


def _port_matches(reference: object, container: Manifest) -> bool:
    """A probe's or Service's port names or numbers one of the container's ports."""
    ports = container.get("ports") or []
    return any(reference in (p.get("name"), p.get("containerPort")) for p in ports)


def deployment_problems(deployment: Manifest, claims: Mapping[str, Manifest]) -> list[str]:
    """Every broken rule of the Deployment; `claims` are the PVCs by name."""
    problems: list[str] = []
    spec = deployment.get("spec") or {}
    pod = (spec.get("template") or {}).get("spec") or {}
    if (spec.get("replicas") or 1) < 2:
        problems.append("fewer than 2 replicas")
    pod_security = pod.get("securityContext") or {}
    if pod_security.get("runAsNonRoot") is not True or pod_security.get("runAsUser") == 0:
        problems.append("the pod does not set runAsNonRoot: true with a non-zero runAsUser")
    containers = pod.get("containers") or []
    if len(containers) != 1:
        return [*problems, f"expected one container, found {len(containers)}"]
    container = containers[0]
    security = container.get("securityContext") or {}
    if security.get("readOnlyRootFilesystem") is not True:
        problems.append("the root file system is not read-only")
    if security.get("allowPrivilegeEscalation") is not False:
        problems.append("allowPrivilegeEscalation is not false")
    resources = container.get("resources") or {}
    requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
    if not {"cpu", "memory"} <= requests.keys() or "memory" not in limits:
        problems.append("resources need cpu and memory requests and a memory limit")
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        if _probe_path(container, probe) != path:
            problems.append(f"{probe} does not GET {path}")
        elif not _port_matches(container[probe]["httpGet"].get("port"), container):
            problems.append(f"{probe} does not target a port of the container")

    volumes = {v.get("name"): v for v in pod.get("volumes") or []}
    mounts = {m.get("mountPath"): m for m in container.get("volumeMounts") or []}
    env = {e.get("name"): e.get("value") for e in container.get("env") or []}
    for path, variable in ((WORKDIR_MOUNT, "COMPACT_WORKDIR"), (DATA_MOUNT, "COMPACT_DATA_DIR")):
        if path not in mounts:
            problems.append(f"nothing is mounted at {path}")
        if env.get(variable, path) != path:
            problems.append(f"{variable} is {env[variable]!r}, not the mount {path}")
    if WORKDIR_MOUNT in mounts and mounts[WORKDIR_MOUNT].get("readOnly") is not True:
        problems.append(f"the work directory {WORKDIR_MOUNT} is not mounted readOnly")
    database = next(
        (e for e in container.get("env") or [] if e.get("name") == DATABASE_VARIABLE), None
    )
    if database is not None:
        return problems + _database_problems(database, mounts, volumes)
    if DATA_MOUNT in mounts:
        volume = volumes.get(mounts[DATA_MOUNT].get("name")) or {}
        claim_name = (volume.get("persistentVolumeClaim") or {}).get("claimName")
        claim = claims.get(claim_name) if isinstance(claim_name, str) else None
        if claim is None:
            problems.append(f"{DATA_MOUNT} is not a PersistentVolumeClaim defined in deploy/")
        elif "ReadWriteMany" not in (claim.get("spec") or {}).get("accessModes", []):
            problems.append(f"claim {claim_name!r} for {DATA_MOUNT} is not ReadWriteMany")
    return problems


def _database_problems(
    variable: Manifest, mounts: Mapping[Any, Manifest], volumes: Mapping[Any, Manifest]
) -> list[str]:
    """The shared shape on PostgreSQL: the URL (it holds a password) from a Secret, and
    no claim at the data directory (the database replaces the shared volume)."""
    problems = []
    if "secretKeyRef" not in (variable.get("valueFrom") or {}):
        problems.append(f"{DATABASE_VARIABLE} does not come from a Secret (secretKeyRef)")
    if DATA_MOUNT in mounts:
        volume = volumes.get(mounts[DATA_MOUNT].get("name")) or {}
        if "persistentVolumeClaim" in volume:
            problems.append(f"{DATA_MOUNT} is a claim; with {DATABASE_VARIABLE} it needs none")
    return problems


def service_problems(service: Manifest, deployment: Manifest) -> list[str]:
    problems = []
    template = (deployment.get("spec") or {}).get("template") or {}
    labels = (template.get("metadata") or {}).get("labels") or {}
    selector = (service.get("spec") or {}).get("selector") or {}
    if not selector or any(labels.get(k) != v for k, v in selector.items()):
        problems.append("the Service selector does not match the Deployment's pod labels")
    container = ((template.get("spec") or {}).get("containers") or [{}])[0]
    for port in (service.get("spec") or {}).get("ports") or []:
        if not _port_matches(port.get("targetPort", port.get("port")), container):
            problems.append(f"Service port {port.get('port')} targets no container port")
    return problems


def manifest_problems(manifests: Sequence[tuple[str, Manifest]]) -> list[str]:
    """Schema problems of each document, then the rules across them."""
    problems = [p for name, manifest in manifests for p in schema_problems(name, manifest)]
    documents = [m for _, m in manifests]
    deployments = _of_kind(documents, "Deployment")
    services = _of_kind(documents, "Service")
    claims = {
        (m.get("metadata") or {}).get("name", ""): m
        for m in _of_kind(documents, "PersistentVolumeClaim")
    }
    if len(deployments) != 1 or len(services) != 1:
        return [*problems, "expected one Deployment and one Service"]
    problems += [f"Deployment: {p}" for p in deployment_problems(deployments[0], claims)]
    problems += [f"Service: {p}" for p in service_problems(services[0], deployments[0])]
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "directories",
        nargs="*",
        type=Path,
        default=[ROOT / "deploy", ROOT / "deploy" / "postgres"],
    )
    args = parser.parse_args(argv)
    failed = False
    for directory in args.directories:
        manifests = load_manifests(directory)
        problems = manifest_problems(manifests)
        for problem in problems:
            print(f"{directory.name}/{problem}")
        if not problems:
            versions = " and ".join(KUBERNETES_VERSIONS)
            print(
                f"{directory.name}: {len(manifests)} manifests valid for Kubernetes "
                f"{versions}; every rule holds"
            )
        failed = failed or bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
