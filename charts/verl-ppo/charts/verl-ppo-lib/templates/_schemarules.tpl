{{/*
The values schema as rules: verl-ppo.schemaRules walks the values against verl-ppo.schema (generated from
schemas/values.schema.yaml by `python -m generator schema`) and records each broken constraint through
verl-ppo.rule as `field=value: <x-messages[keyword]>. Fix: <the node's x-fix, else x-fixes[keyword]>` (always x-fixes for
type and required: the structure's fix),
with {got} {want} {limit} {keys} {field} filled in as generator/schemafindings.py fills them for
`generator check`. JSON schema draft 7 semantics for the keywords the source uses; patterns are Go RE2
(as Helm's own schema check read them). Called by verl-ppo.validate with
(dict "Values" "chart" "umbrella" "state"): the whole schema under the umbrella, a component's section
(with the release-wide global section) where it is installed alone.
*/}}
{{- define "verl-ppo.schemaRules" -}}
{{- $root := include "verl-ppo.schema" . | fromJson -}}
{{- $node := $root -}}
{{- if not .umbrella -}}
{{- $node = deepCopy (dig "properties" .chart dict $root) -}}
{{- if hasKey $node "properties" -}}{{- $_ := set $node.properties "global" $root.properties.global -}}{{- end -}}
{{- end -}}
{{- include "verl-ppo.schemaWalk" (dict "node" $node "value" .Values "path" "" "root" $root "state" .state) -}}
{{- end -}}

{{/* One value against one schema node: (dict "node" "value" "path" "root" "state"). */}}
{{- define "verl-ppo.schemaWalk" -}}
{{- $node := .node -}}
{{- if kindIs "map" $node -}}
{{- with get $node "$ref" -}}{{- $node = index $.root.definitions (trimPrefix "#/definitions/" .) -}}{{- end -}}
{{- $value := .value -}}
{{- $got := include "verl-ppo.schemaType" $value -}}
{{- $at := dict "node" $node "value" $value "path" .path "root" .root "state" .state -}}
{{- with $node.type -}}
{{- $types := ternary (list .) . (kindIs "string" .) -}}
{{- if not (or (has $got $types) (and (eq $got "integer") (has "number" $types))) -}}
{{- include "verl-ppo.schemaBroken" (dict "keyword" "type" "at" $at) -}}
{{- end -}}
{{- end -}}
{{- range $keyword := list "enum" "const" -}}
{{- if hasKey $node $keyword -}}
{{- $allowed := ternary (get $node $keyword) (list (get $node $keyword)) (eq $keyword "enum") -}}
{{- $json := toJson $value -}}
{{- $found := false -}}
{{- range $allowed -}}{{- if eq (toJson .) $json -}}{{- $found = true -}}{{- end -}}{{- end -}}
{{- if not $found -}}{{- include "verl-ppo.schemaBroken" (dict "keyword" $keyword "limit" (get $node $keyword) "at" $at) -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- if eq $got "string" -}}
{{- with $node.pattern -}}
{{- if not (regexMatch . $value) -}}{{- include "verl-ppo.schemaBroken" (dict "keyword" "pattern" "limit" . "at" $at) -}}{{- end -}}
{{- end -}}
{{- if or (hasKey $node "minLength") (hasKey $node "maxLength") -}}
{{- $length := len (splitList "" $value) -}}
{{- if and (hasKey $node "minLength") (lt $length (int $node.minLength)) -}}
{{- include "verl-ppo.schemaBroken" (dict "keyword" "minLength" "limit" $node.minLength "at" $at) -}}
{{- end -}}
{{- if and (hasKey $node "maxLength") (gt $length (int $node.maxLength)) -}}
{{- include "verl-ppo.schemaBroken" (dict "keyword" "maxLength" "limit" $node.maxLength "at" $at) -}}
{{- end -}}
{{- end -}}
{{- else if or (eq $got "integer") (eq $got "number") -}}
{{- $number := float64 $value -}}
{{- range $keyword := list "minimum" "maximum" "exclusiveMinimum" "exclusiveMaximum" -}}
{{- if hasKey $node $keyword -}}
{{- $limit := float64 (get $node $keyword) -}}
{{- $broken := dict "minimum" (lt $number $limit) "maximum" (gt $number $limit) "exclusiveMinimum" (le $number $limit) "exclusiveMaximum" (ge $number $limit) -}}
{{- if get $broken $keyword -}}{{- include "verl-ppo.schemaBroken" (dict "keyword" $keyword "limit" (get $node $keyword) "at" $at) -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- else if eq $got "array" -}}
{{- if and (hasKey $node "minItems") (lt (len $value) (int $node.minItems)) -}}
{{- include "verl-ppo.schemaBroken" (dict "keyword" "minItems" "limit" $node.minItems "at" $at) -}}
{{- end -}}
{{- if and (hasKey $node "maxItems") (gt (len $value) (int $node.maxItems)) -}}
{{- include "verl-ppo.schemaBroken" (dict "keyword" "maxItems" "limit" $node.maxItems "at" $at) -}}
{{- end -}}
{{- if $node.uniqueItems -}}
{{- $items := list -}}
{{- range $value -}}{{- $items = append $items (toJson .) -}}{{- end -}}
{{- if ne (len $items) (len (uniq $items)) -}}{{- include "verl-ppo.schemaBroken" (dict "keyword" "uniqueItems" "at" $at) -}}{{- end -}}
{{- end -}}
{{- with $node.items -}}
{{- range $index, $item := $value -}}
{{- include "verl-ppo.schemaWalk" (dict "node" $node.items "value" $item "path" (printf "%s[%d]" $.path $index) "root" $.root "state" $.state) -}}
{{- end -}}
{{- end -}}
{{- else if eq $got "object" -}}
{{- range $key := $node.required -}}
{{- if not (hasKey $value $key) -}}
{{- include "verl-ppo.schemaBroken" (dict "keyword" "required" "path" (include "verl-ppo.schemaPath" (dict "path" $.path "key" $key)) "value" "" "at" $at) -}}
{{- end -}}
{{- end -}}
{{- $properties := $node.properties | default dict -}}
{{- range $key, $item := $value -}}
{{- $path := include "verl-ppo.schemaPath" (dict "path" $.path "key" $key) -}}
{{- $matched := hasKey $properties $key -}}
{{- if $matched -}}
{{- include "verl-ppo.schemaWalk" (dict "node" (get $properties $key) "value" $item "path" $path "root" $.root "state" $.state) -}}
{{- end -}}
{{- range $pattern, $schema := $node.patternProperties -}}
{{- if regexMatch $pattern $key -}}
{{- $matched = true -}}
{{- include "verl-ppo.schemaWalk" (dict "node" $schema "value" $item "path" $path "root" $.root "state" $.state) -}}
{{- end -}}
{{- end -}}
{{- $others := $node.additionalProperties -}}
{{- if and (not $matched) (kindIs "bool" $others) (not $others) -}}
{{- include "verl-ppo.schemaBroken" (dict "keyword" "additionalProperties" "path" $path "value" $item "at" $at) -}}
{{- else if and (not $matched) (kindIs "map" $others) -}}
{{- include "verl-ppo.schemaWalk" (dict "node" $others "value" $item "path" $path "root" $.root "state" $.state) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $node.allOf -}}
{{- include "verl-ppo.schemaWalk" (dict "node" . "value" $value "path" $.path "root" $.root "state" $.state) -}}
{{- end -}}
{{- with $node.anyOf -}}
{{- include "verl-ppo.schemaAnyOf" (dict "forms" . "at" $at) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* anyOf: one form must fit. None does: the last form's first broken keyword says what, the node's x-fix how. */}}
{{- define "verl-ppo.schemaAnyOf" -}}
{{- $at := .at -}}
{{- $fits := false -}}
{{- $last := list -}}
{{- range $form := .forms -}}
{{- if not $fits -}}
{{- $scratch := dict "findings" list -}}
{{- include "verl-ppo.schemaWalk" (dict "node" $form "value" $at.value "path" $at.path "root" $at.root "state" $scratch) -}}
{{- $fits = empty $scratch.findings -}}
{{- $last = $scratch.findings -}}
{{- end -}}
{{- end -}}
{{- if not $fits -}}
{{- include "verl-ppo.rule" (dict "state" $at.state "field" $at.path "value" (include "verl-ppo.schemaShown" $at.value) "problem" (first $last).problem "fix" (get $at.node "x-fix")) -}}
{{- end -}}
{{- end -}}

{{/* Records one broken keyword: (dict "keyword" "limit" "at" <the walk's node, value, path, root, state>
     [ "path" "value": a map's key instead ]), in the schema's words. */}}
{{- define "verl-ppo.schemaBroken" -}}
{{- $at := .at -}}
{{- $node := $at.node -}}
{{- $path := ternary .path $at.path (hasKey . "path") -}}
{{- $value := ternary .value $at.value (hasKey . "value") -}}
{{- $types := get $at.root "x-types" -}}
{{- $wanted := list -}}
{{- range (ternary (list $node.type) ($node.type | default list) (kindIs "string" $node.type)) -}}{{- $wanted = append $wanted (get $types .) -}}{{- end -}}
{{- $limit := .limit -}}
{{- if kindIs "slice" $limit -}}
{{- $shown := list -}}
{{- range $limit -}}{{- $shown = append $shown (include "verl-ppo.schemaShown" .) -}}{{- end -}}
{{- $limit = join ", " $shown -}}
{{- else if ne .keyword "pattern" -}}
{{- $limit = include "verl-ppo.schemaShown" $limit -}}
{{- end -}}
{{- $keys := list -}}
{{- range (keys ($node.properties | default dict) | sortAlpha) -}}{{- $keys = append $keys (include "verl-ppo.schemaShown" .) -}}{{- end -}}
{{- $words := dict "{got}" (get $types (include "verl-ppo.schemaType" $value)) "{want}" (join " or " $wanted) "{limit}" $limit "{keys}" (join ", " $keys) "{field}" $path -}}
{{- $problem := get (get $at.root "x-messages") .keyword -}}
{{- $fix := get (get $at.root "x-fixes") .keyword -}}
{{- if and (get $node "x-fix") (not (has .keyword (list "type" "required"))) -}}{{- $fix = get $node "x-fix" -}}{{- end -}}
{{- range $placeholder, $text := $words -}}
{{- $problem = replace $placeholder $text $problem -}}
{{- $fix = replace $placeholder $text $fix -}}
{{- end -}}
{{- include "verl-ppo.rule" (dict "state" $at.state "field" $path "value" (include "verl-ppo.schemaShown" $value) "problem" $problem "fix" $fix) -}}
{{- end -}}

{{/* A value's JSON schema type: integer for a whole number (Helm reads numbers as float64 or int64). */}}
{{- define "verl-ppo.schemaType" -}}
{{- if kindIs "map" . -}}object
{{- else if kindIs "slice" . -}}array
{{- else if kindIs "string" . -}}string
{{- else if kindIs "bool" . -}}boolean
{{- else if kindIs "invalid" . -}}null
{{- else if or (kindIs "float64" .) (kindIs "float32" .) -}}{{- ternary "integer" "number" (eq (floor .) (float64 .)) -}}
{{- else -}}integer
{{- end -}}
{{- end -}}

{{/* A value as findings print it (as generator/schemafindings.py's shown): text as it is ("" when empty, as
     JSON when it holds a control character), whole numbers without a fraction, maps and lists as JSON;
     at most 60 characters. */}}
{{- define "verl-ppo.schemaShown" -}}
{{- $text := "" -}}
{{- if kindIs "string" . -}}
{{- $text = ternary "\"\"" (ternary (toRawJson .) . (regexMatch "[\\x00-\\x1f\\x7f]" .)) (eq . "") -}}
{{- else if or (kindIs "map" .) (kindIs "slice" .) (kindIs "invalid" .) -}}
{{- $text = toRawJson . -}}
{{- else -}}
{{- $text = include "verl-ppo.scalar" . -}}
{{- end -}}
{{- $characters := splitList "" $text -}}
{{- if gt (len $characters) 60 -}}{{- printf "%s..." (join "" (slice $characters 0 57)) -}}{{- else -}}{{- $text -}}{{- end -}}
{{- end -}}

{{/* The field of a map's key: (dict "path" "key"); a key with a control character as JSON. */}}
{{- define "verl-ppo.schemaPath" -}}
{{- $key := ternary (toRawJson .key) .key (regexMatch "[\\x00-\\x1f\\x7f]" .key) -}}
{{- ternary $key (printf "%s.%s" .path $key) (eq .path "") -}}
{{- end -}}
