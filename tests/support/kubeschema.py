"""Strict validation of rendered objects, as the API server's strict field validation would do it:
core kinds against the Kubernetes OpenAPI (swagger) document, custom resources against their CRD's
openAPIV3Schema. Unknown fields are errors; a kind with no schema is an error, never a pass."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema

from support import yamlload

GroupVersionKind = tuple[str, str, str]


def _closed(schema: Any) -> Any:
    """Copy of a schema where every object that lists its properties rejects others, unless it
    preserves unknown fields or is a map (additionalProperties given)."""
    if isinstance(schema, list):
        return [_closed(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    result = {key: _closed(value) for key, value in schema.items()}
    if "properties" in result and "additionalProperties" not in result and not result.get(
        "x-kubernetes-preserve-unknown-fields"
    ):
        result["additionalProperties"] = False
    return result


def _openapi_types(schema: Any) -> Any:
    """Swagger's string-typed IntOrString and Quantity accept numbers on the wire."""
    if isinstance(schema, list):
        return [_openapi_types(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    result = {key: _openapi_types(value) for key, value in schema.items()}
    if result.get("format") == "int-or-string":
        result["type"] = ["string", "integer"]
    return result


class Validator:
    def __init__(self, swagger: Path, crds: list[Path]) -> None:
        document = json.loads(swagger.read_text())
        definitions = _closed(_openapi_types(document["definitions"]))
        # Quantity is a string in swagger but a number is accepted (nvidia.com/gpu: 2).
        definitions["io.k8s.apimachinery.pkg.api.resource.Quantity"] = {"type": ["string", "number"]}
        self.schemas: dict[GroupVersionKind, dict[str, Any]] = {}
        for definition in definitions.values():
            for gvk in definition.get("x-kubernetes-group-version-kind", []):
                schema = dict(definition)
                schema["definitions"] = definitions
                self.schemas[(gvk["group"], gvk["version"], gvk["kind"])] = schema
        for crd_path in crds:
            crd = yamlload.load(crd_path.read_text())
            group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
            for version in crd["spec"]["versions"]:
                schema = copy.deepcopy(version["schema"]["openAPIV3Schema"])
                # metadata of a custom resource is ObjectMeta; the CRD leaves it open.
                schema.setdefault("properties", {})["metadata"] = {
                    "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
                }
                schema = _closed(schema)
                schema["definitions"] = definitions
                self.schemas[(group, version["name"], kind)] = schema
        # One validator per kind: it keeps the $refs it resolved (the swagger definitions) across objects.
        self._validators: dict[GroupVersionKind, jsonschema.Draft7Validator] = {}

    def errors(self, obj: dict[str, Any]) -> list[str]:
        api_version = obj.get("apiVersion", "")
        group, _, version = api_version.rpartition("/")
        key = (group, version, obj.get("kind", ""))
        name = f"{obj.get('kind')}/{obj.get('metadata', {}).get('name')}"
        if key not in self.schemas:
            return [f"{name}: no schema for {api_version} {obj.get('kind')} (refusing to pass it unchecked)"]
        if key not in self._validators:
            self._validators[key] = jsonschema.Draft7Validator(self.schemas[key])
        validator = self._validators[key]
        return [
            f"{name}: at {'.'.join(map(str, error.absolute_path)) or '(root)'}: {error.message}"
            for error in validator.iter_errors(obj)
        ]
