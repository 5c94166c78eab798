"""What the values schema says about a broken constraint: `field=value: <message>. Fix: <sentence>`.

The words are the schema's own (schemas/values.schema.yaml): `x-messages` per keyword, the node's `x-fix`,
else `x-fixes` per keyword, with {got} {want} {limit} {keys} {field} filled in. The charts' values.schema.json
carry the same fix sentences in their descriptions (generator/schema.py); Helm refuses in its own words.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterator

import jsonschema

from generator.finding import Finding

# Keywords whose failure no generic sentence can mend: each node holding one carries its own x-fix.
NEEDS_OWN_FIX = ("pattern", "anyOf", "const")
# Keywords of the values' structure: their fix is always x-fixes' (a node's x-fix mends its value).
STRUCTURE = ("type", "required")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def shown(value: Any) -> str:
    """A value as the findings print it: text as it is ('""' when empty, as JSON when it holds a control
    character), whole numbers without a fraction, maps and lists as JSON; at most 60 characters."""
    if isinstance(value, str):
        text = '""' if value == "" else json.dumps(value, ensure_ascii=False) if _CONTROL.search(value) else value
    elif isinstance(value, bool) or value is None:
        text = json.dumps(value)
    elif isinstance(value, float) and value.is_integer():
        text = str(int(value))
    elif isinstance(value, (dict, list)):
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    else:
        text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def field_path(parts: list[Any]) -> str:
    """`a.b[0].c` from a JSON path; a key with a control character as JSON."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            key = json.dumps(part, ensure_ascii=False) if _CONTROL.search(part) else part
            text = f"{text}.{key}" if text else key
    return text


def type_of(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    return {float: "number", str: "string", dict: "object", list: "array", type(None): "null"}[type(value)]


def _listed(items: list[Any]) -> str:
    return ", ".join(shown(item) for item in items)


# A component's section holds what Helm hands every subchart (`global`, the library's section): not settings to
# suggest there.
_HELM_SECTION = {"$ref": "#/definitions/helmGlobal"}


def _known_keys(node: dict[str, Any]) -> str:
    return _listed(sorted(key for key, child in node.get("properties", {}).items() if child != _HELM_SECTION))


class Wording:
    """The schema's sentences, filled in for one broken keyword."""

    def __init__(self, root: dict[str, Any]):
        self.messages, self.fixes, self.types = root["x-messages"], root["x-fixes"], root["x-types"]

    def _words(self, keyword: str, node: dict[str, Any], field: str, value: Any = None) -> dict[str, str]:
        wanted = node.get("type")
        limit = node.get(keyword)
        return {"{got}": self.types[type_of(value)],
                "{want}": " or ".join(self.types[t] for t in ([wanted] if isinstance(wanted, str) else wanted or [])),
                "{limit}": (_listed(limit) if isinstance(limit, list)
                            else shown(limit) if keyword != "pattern" else str(limit)),
                "{keys}": _known_keys(node), "{field}": field}

    def fix(self, keyword: str, node: dict[str, Any], field: str = "") -> str:
        """x-fixes[keyword] filled in for this node (the generic fix, without the node's own x-fix)."""
        return _filled(self.fixes.get(keyword, ""), self._words(keyword, node, field))

    def finding(self, keyword: str, node: dict[str, Any], path: list[Any], value: Any) -> Finding:
        field = field_path(path)
        words = self._words(keyword, node, field, value)
        # A node's own x-fixes (e.g. how to write a namespace of digits as text) before the schema's.
        fixes = {**self.fixes, **node.get("x-fixes", {})}
        fix = fixes.get(keyword, "") if keyword in STRUCTURE or "x-fix" not in node else node["x-fix"]
        return Finding(field, shown(value), _filled(self.messages[keyword], words), _filled(fix, words))


def _filled(sentence: str, words: dict[str, str]) -> str:
    for placeholder, text in words.items():
        sentence = sentence.replace(placeholder, text)
    return sentence


def _extra_keys(node: dict[str, Any], instance: dict[str, Any]) -> list[str]:
    patterns = node.get("patternProperties", {})
    return sorted(key for key in instance
                  if key not in node.get("properties", {}) and not any(re.search(p, key) for p in patterns))


def _keyword_rank(root: dict[str, Any], error: jsonschema.ValidationError) -> int:
    messages = list(root["x-messages"])
    return messages.index(error.validator) if error.validator in messages else len(messages)


def _findings(error: jsonschema.ValidationError, root: dict[str, Any], wording: Wording) -> Iterator[Finding]:
    path, node, keyword = list(error.absolute_path), error.schema, str(error.validator)
    if keyword == "additionalProperties":
        for key in _extra_keys(node, error.instance):
            yield wording.finding(keyword, node, [*path, key], error.instance[key])
    elif keyword == "required":
        for key in (key for key in node["required"] if key not in error.instance):
            yield wording.finding(keyword, node, [*path, key], "")
    elif keyword == "anyOf":
        # None of the forms fits: the last form's first broken keyword says what, the anyOf node's x-fix how.
        last = max(sub.relative_schema_path[0] for sub in error.context)
        first = min((sub for sub in error.context if sub.relative_schema_path[0] == last),
                    key=lambda sub: _keyword_rank(root, sub))
        inner = next(_findings(first, root, wording))
        yield Finding(field_path(path), shown(error.instance), inner.problem, node["x-fix"])
    else:
        yield wording.finding(keyword, node, path, error.instance)


def findings(schema: dict[str, Any], values: dict[str, Any]) -> list[Finding]:
    """Every broken constraint of `values` under `schema` (the source)."""
    wording = Wording(schema)
    errors = jsonschema.Draft7Validator(schema).iter_errors(values)
    # A dict keeps one of each finding (required: one error per key), in order.
    found = {finding: None for error in errors for finding in _findings(error, schema, wording)}
    return sorted(found, key=lambda finding: finding.field)


def mistyped(schema: dict[str, Any], values: dict[str, Any]) -> bool:
    """Whether a value is not of a kind its node allows (text for a number, a map given as a list): the chart's
    cross-field rules read values as the schema types them, so past such a value their findings are echoes."""
    def wrong_kind(error: jsonschema.ValidationError) -> bool:
        return error.validator == "type" or (error.validator == "anyOf" and all(
            sub.validator in ("type", "const", "enum") for sub in error.context))
    return any(wrong_kind(error) for error in jsonschema.Draft7Validator(schema).iter_errors(values))


def unfixed(schema: Any, where: str = "#", covered: bool = False) -> list[str]:
    """Nodes whose constraint has no fix sentence: a pattern, const or anyOf without x-fix (an anyOf's x-fix
    covers its forms), a closed map without properties (its keys follow patterns), or an x-fix beside $ref
    (JSON schema ignores it there)."""
    if isinstance(schema, list):
        return [found for index, item in enumerate(schema) for found in unfixed(item, f"{where}/{index}", covered)]
    if not isinstance(schema, dict):
        return []
    own = "x-fix" in schema
    missing = []
    if "$ref" in schema and own:
        missing.append(f"{where}: x-fix beside $ref is ignored; put it on the definition")
    needs = [keyword for keyword in NEEDS_OWN_FIX if keyword in schema]
    if schema.get("additionalProperties") is False and not schema.get("properties"):
        needs.append("additionalProperties")
    if needs and not (own or covered):
        missing.append(f"{where}: {', '.join(needs)} without x-fix")
    for key, child in schema.items():
        if not key.startswith("x-"):
            missing += unfixed(child, f"{where}/{key}", covered or (own and "anyOf" in schema))
    return missing
